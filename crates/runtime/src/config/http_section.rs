//! `[[plugins.ID.http]]`: one outbound HTTP grant (origin, methods, path prefix, secret headers
//! filled from the host's environment), checked and turned into an [`HttpGrant`].

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHttpGrant {
    origin: String,
    methods: Option<Vec<String>>,
    path_prefix: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    private: bool,
}

impl RawHttpGrant {
    /// A typed grant; `${env:NAME}` in header values is read from the host environment now. A
    /// variable that is not set is added to `unset` (its header left empty): the plugin is then
    /// refused at load, saying so, rather than a surprise at call time or the whole config failing.
    pub(super) fn validate(
        self,
        secrets: &crate::report::secrets::Secrets,
        unset: &mut Vec<String>,
    ) -> Result<HttpGrant, KeyError> {
        let (scheme, host, port) =
            HttpGrant::parse_origin(&self.origin).map_err(|m| (".origin".to_string(), m))?;
        let methods: Option<Vec<String>> = self
            .methods
            .map(|methods| methods.iter().map(|m| m.to_ascii_uppercase()).collect());
        if let Some(method) = methods
            .iter()
            .flatten()
            .find(|method| crate::capabilities::net::request_path::is_never_sent(method))
        {
            return Err((
                ".methods".into(),
                format!(
                    "{method} is never sent: TRACE and TRACK echo the request (secret headers included) back, CONNECT opens a tunnel past every check"
                ),
            ));
        }
        if let Some(prefix) = &self.path_prefix {
            if !prefix.starts_with('/') {
                return Err((
                    ".path_prefix".into(),
                    format!("{prefix:?} must start with /"),
                ));
            }
            if let Some(problem) = prefix
                .split('/')
                .find_map(crate::capabilities::net::request_path::ambiguous_segment)
            {
                return Err((
                    ".path_prefix".into(),
                    format!("{prefix:?} has {problem}; write the path as the server names it"),
                ));
            }
        }
        let mut headers = Vec::new();
        for (name, template) in &self.headers {
            let key = format!(".headers.{name}");
            let header = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| (key.clone(), format!("{name:?} is not a header name")))?;
            if header == http::header::HOST {
                return Err((
                    key,
                    "the Host header always names the granted origin and cannot be set".into(),
                ));
            }
            let unset_before = unset.len();
            let (value, parts) = expand_env(template, Some(unset)).map_err(|m| (key.clone(), m))?;
            let incomplete = unset.len() > unset_before;
            // What comes from the environment, and the value of any header but the harmless
            // ones, are secrets: no output of cordon shows them. `Accept = "application/json"`
            // is not, and masking it would hide ordinary words in every result.
            if !incomplete && (!parts.is_empty() || carries_credentials(name)) {
                secrets.register_header_value(&value);
            }
            parts.iter().for_each(|part| secrets.register(part));
            let value = http::HeaderValue::from_str(&value)
                .map_err(|_| (key, "the value is not a valid header value".to_string()))?;
            headers.push(SecretHeader {
                name: header,
                value,
                template: template.clone(),
            });
        }
        Ok(HttpGrant {
            scheme,
            host,
            port,
            methods,
            path_prefix: self.path_prefix,
            headers,
            private: self.private,
        })
    }
}

/// Whether a header of this name carries credentials, so its value is a secret even when written
/// in cordon.toml itself: every header but those known to carry none (content negotiation, caching,
/// the client's name, API versions). Deny by default: a list of credential words always misses
/// some (`X-Pwd`, `X-Sig`, `X-Jwt`).
pub fn carries_credentials(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    const HARMLESS: &[&str] = &[
        "accept",
        "accept-charset",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "content-encoding",
        "content-language",
        "content-type",
        "dnt",
        "from",
        "pragma",
        "prefer",
        "user-agent",
        "x-requested-with",
    ];
    !(HARMLESS.contains(&name.as_str()) || name.ends_with("-version"))
}

/// `template` with every `${env:NAME}` replaced by the host's value of NAME, and the values put
/// in (each one a secret for the caller to register with [`crate::report::secrets::Secrets`]).
pub fn expand_env_parts(template: &str) -> Result<(String, Vec<String>), String> {
    expand_env(template, None)
}

/// As [`expand_env_parts`], but with `unset` given a variable that is not set is added to it and
/// read as empty instead of being an error (the grant holding it is then unavailable).
pub(super) fn expand_env(
    template: &str,
    mut unset: Option<&mut Vec<String>>,
) -> Result<(String, Vec<String>), String> {
    let mut parts = Vec::new();
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("${env:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 6..];
        let end = after
            .find('}')
            .ok_or_else(|| "an unclosed ${env:...}".to_string())?;
        let name = &after[..end];
        match (std::env::var(name), unset.as_deref_mut()) {
            (Ok(value), _) => {
                out.push_str(&value);
                parts.push(value);
            }
            (Err(_), Some(unset)) => unset.push(name.to_string()),
            (Err(_), None) => return Err(format!("the environment variable {name} is not set")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok((out, parts))
}

#[cfg(test)]
mod tests {
    use super::carries_credentials;

    #[test]
    fn every_header_carries_credentials_but_the_known_harmless_ones() {
        for name in [
            "Authorization",
            "X-Api",
            "X-Pwd",
            "X-Sig",
            "X-Jwt",
            "X-Hmac",
            "X-Otp",
            "Private-Token",
            "Cookie",
        ] {
            assert!(carries_credentials(name), "{name}");
        }
        for name in [
            "Accept",
            "content-type",
            "User-Agent",
            "X-GitHub-Api-Version",
            "anthropic-version",
        ] {
            assert!(!carries_credentials(name), "{name}");
        }
    }
}
