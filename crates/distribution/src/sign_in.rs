//! Signing in to a registry with credentials, done by cordon itself so it decides where they go:
//! one `GET /v2/` and its `WWW-Authenticate` challenges, parsed strictly (schemes in any case,
//! several challenges in one header or several headers, quoted values with commas). A Bearer
//! challenge must name exactly one token service (`realm`), reachable over HTTPS (or plain HTTP on
//! this machine); cordon asks it for a token with the credentials and hands the registry client
//! only that token, so the client never signs in on its own and never sees the password. A
//! registry that asks for Basic gets the credentials directly (they are its own); one that asks
//! for nothing gets none. The challenge counts only when the registry's own origin gave it: a
//! `/v2/` redirected to another host is refused.

use crate::credentials::SecretListener;
use crate::source::{url_allowed, without_userinfo};
use crate::{DistributionError, transfer};
use oci_client::secrets::RegistryAuth;

/// The most bytes of a token service's answer read.
const MAX_TOKEN_RESPONSE_BYTES: u64 = 1 << 20;

/// What a registry asked for in answer to `GET /v2/`.
#[derive(Debug, PartialEq, Eq)]
enum Challenge {
    None,
    Basic,
    Bearer {
        realm: String,
        service: Option<String>,
    },
}

/// The credentials to give the registry client for `registry` (`host[:port]`): a token cordon
/// fetched, the Basic credentials, or none.
pub async fn sign_in(
    registry: &str,
    scheme: &str,
    repository: &str,
    push: bool,
    auth: RegistryAuth,
    reference_text: &str,
    on_secret: SecretListener<'_>,
) -> Result<RegistryAuth, DistributionError> {
    let RegistryAuth::Basic(user, password) = auth else {
        return Ok(auth);
    };
    let failed = |reason: String| DistributionError::Registry {
        what: "the sign-in",
        reference: format!("oci://{reference_text}"),
        reason,
    };
    let client = transfer::client()?;
    let probe = format!("{scheme}://{registry}/v2/");
    let response = client
        .get(&probe)
        .send()
        .await
        .map_err(|err| failed(err.to_string()))?;
    // The challenge must be the registry's own: one a redirect led to (another host's
    // `WWW-Authenticate` naming its own token service) would decide where the password goes.
    let same_origin =
        reqwest::Url::parse(&probe).is_ok_and(|asked| asked.origin() == response.url().origin());
    if !same_origin {
        return Err(failed(format!(
            "its /v2/ redirected to {}, another origin; the credentials for {registry} are sent only where {registry} itself says",
            without_userinfo(response.url().as_str())
        )));
    }
    let headers: Vec<String> = response
        .headers()
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|value| value.to_str().ok().map(str::to_string))
        .collect();
    let challenge = if response.status() == reqwest::StatusCode::UNAUTHORIZED {
        parse_challenges(&headers).map_err(failed)?
    } else {
        Challenge::None
    };
    match challenge {
        Challenge::None => Ok(RegistryAuth::Anonymous),
        Challenge::Basic => Ok(RegistryAuth::Basic(user, password)),
        Challenge::Bearer { realm, service } => {
            let url = reqwest::Url::parse(&realm)
                .ok()
                .filter(url_allowed)
                .ok_or_else(|| {
                    failed(format!(
                        "its token service {} is not https:// (or is plain http:// on another machine), so the credentials for {registry} are not sent there",
                        without_userinfo(&realm)
                    ))
                })?;
            let actions = if push { "pull,push" } else { "pull" };
            let mut query = vec![("scope", format!("repository:{repository}:{actions}"))];
            if let Some(service) = service {
                query.push(("service", service));
            }
            let response = client
                .get(url)
                .query(&query)
                .basic_auth(user, Some(password))
                .send()
                .await
                .map_err(|err| failed(err.to_string()))?;
            if !response.status().is_success() {
                return Err(failed(format!(
                    "the token service refused the credentials (HTTP {})",
                    response.status()
                )));
            }
            let body =
                transfer::read_capped(response, MAX_TOKEN_RESPONSE_BYTES, "the token").await?;
            let answer: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|err| failed(format!("the token service's answer is not JSON: {err}")))?;
            let token = answer
                .get("token")
                .or_else(|| answer.get("access_token"))
                .and_then(serde_json::Value::as_str)
                .filter(|token| !token.is_empty())
                .ok_or_else(|| failed("the token service gave no token".into()))?;
            on_secret(token);
            Ok(RegistryAuth::Bearer(token.to_string()))
        }
    }
}

/// The registry's challenges, from every `WWW-Authenticate` header. Bearer wins over Basic; a
/// Bearer challenge whose realm or service is given more than once (differently) is refused.
fn parse_challenges(headers: &[String]) -> Result<Challenge, String> {
    let mut bearer = false;
    let mut basic = false;
    let mut realms: Vec<String> = Vec::new();
    let mut services: Vec<String> = Vec::new();
    for header in headers {
        for item in split_outside_quotes(header) {
            let item = item.trim();
            // `Scheme key=value`, `Scheme`, or a further `key=value` of the current challenge.
            let (scheme, parameter) = match item.split_once(char::is_whitespace) {
                Some((first, rest)) if !first.contains('=') => (Some(first), rest.trim()),
                _ if !item.contains('=') => (Some(item), ""),
                _ => (None, item),
            };
            if let Some(scheme) = scheme {
                match scheme.to_ascii_lowercase().as_str() {
                    "bearer" => bearer = true,
                    "basic" => basic = true,
                    _ => {}
                }
            }
            let Some((key, value)) = parameter.split_once('=') else {
                continue;
            };
            let value = unquote(value.trim());
            match key.trim().to_ascii_lowercase().as_str() {
                "realm" if !realms.contains(&value) => realms.push(value),
                "service" if !services.contains(&value) => services.push(value),
                _ => {}
            }
        }
    }
    if !bearer {
        return Ok(if basic {
            Challenge::Basic
        } else {
            Challenge::None
        });
    }
    // Every realm counts (a Basic challenge's too): which one a client would use is not certain.
    match (realms.as_slice(), services.as_slice()) {
        ([realm], [] | [_]) => Ok(Challenge::Bearer {
            realm: realm.clone(),
            service: services.first().cloned(),
        }),
        ([], _) => Err("it asks for a Bearer token but names no token service (realm)".into()),
        _ => Err(format!(
            "its challenge names {} token services and {} services; it must name one",
            realms.len(),
            services.len()
        )),
    }
}

/// `text` split at the commas that are not inside double quotes.
fn split_outside_quotes(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (index, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn unquote(value: &str) -> String {
    match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(headers: &[&str]) -> Result<Challenge, String> {
        parse_challenges(&headers.iter().map(|h| h.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn challenges_parse_in_any_case_and_any_order() {
        let bearer = Challenge::Bearer {
            realm: "https://auth.example.com/token".into(),
            service: Some("registry.example.com".into()),
        };
        assert_eq!(
            parse(&[
                r#"Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a:pull,push""#
            ]),
            Ok(bearer)
        );
        assert!(matches!(
            parse(&[r#"bearer realm="http://x/t""#]),
            Ok(Challenge::Bearer { .. })
        ));
        // Two realms (the Basic challenge's counts too): ambiguous, refused.
        assert!(parse(&[r#"Basic realm="r", Bearer realm="http://x/t""#]).is_err());
        assert!(parse(&[r#"Bearer realm="https://ok/t",service="s",realm="http://x/t""#]).is_err());
        assert!(matches!(
            parse(&[r#"Bearer xrealm="https://ok/t",realm="http://x/t""#]),
            Ok(Challenge::Bearer { realm, .. }) if realm == "http://x/t"
        ));
        assert_eq!(parse(&[r#"Basic realm="registry""#]), Ok(Challenge::Basic));
        assert_eq!(parse(&[]), Ok(Challenge::None));
        assert!(parse(&["Bearer service=\"s\""]).is_err());
    }
}
