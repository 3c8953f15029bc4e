//! A Wassette policy's network hosts as origins, and whether a deny covers an allowed one. Hosts
//! are compared as origins, not as text: the scheme (a deny without one covers every scheme), the
//! host name in lower case without a trailing dot, the port (443 for HTTPS when none is written; a
//! deny without a port covers every port). A wildcard deny (`*.example.com`) covers the names it
//! matches and the apex too; a CIDR deny covers the addresses in it and every host name (what a
//! name resolves to is not known here); a deny that cannot be read covers everything.

use super::name_pattern;
use std::net::IpAddr;

/// An allowed host as the HTTPS origin cordon would grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct AllowedOrigin {
    host: Host,
    port: u16,
}

impl AllowedOrigin {
    /// As `[plugins.NAME] http` writes it: `https://host`, with the port when it is not 443.
    pub fn as_grant(&self) -> String {
        let host = match &self.host {
            Host::Ip(IpAddr::V6(v6)) => format!("[{v6}]"),
            Host::Ip(IpAddr::V4(v4)) => v4.to_string(),
            Host::Name(name) => name.clone(),
        };
        if self.port == 443 {
            format!("https://{host}")
        } else {
            format!("https://{host}:{}", self.port)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    Ip(IpAddr),
    /// Lower case, no trailing dot; in a deny, possibly a pattern.
    Name(String),
}

/// A host rule taken apart.
struct Parsed {
    scheme: Option<String>,
    host: Host,
    port: Option<u16>,
}

/// The allowed `text` (`api.example.com`, `https://api.example.com:8443/path`) as an origin.
pub(super) fn allowed_origin(text: &str) -> Result<AllowedOrigin, String> {
    let parsed = parse(text, false)?;
    match parsed.scheme.as_deref() {
        None | Some("https") => {}
        Some("http") => {
            return Err(
                "plain http is not proposed (cordon proposes HTTPS only); grant the http:// origin by hand in [plugins.NAME] http if you mean it"
                    .into(),
            );
        }
        Some(other) => return Err(format!("scheme {other} is not HTTP")),
    }
    Ok(AllowedOrigin {
        host: parsed.host,
        port: parsed.port.unwrap_or(443),
    })
}

/// Why the deny `text` covers `allowed`, or `None` when it provably does not.
pub(super) fn host_deny_covers(text: &str, allowed: &AllowedOrigin) -> Option<String> {
    if let Some(range) = text
        .trim()
        .parse::<Cidr>()
        .ok()
        .filter(|_| text.contains('/'))
    {
        return cidr_deny_covers(&range, allowed, text);
    }
    let deny = match parse(text, true) {
        Ok(deny) => deny,
        Err(reason) => {
            return Some(format!(
                "the policy denies {text:?}, which cordon cannot read ({reason}), so no host is proposed"
            ));
        }
    };
    // A deny for plain http leaves the HTTPS origin alone; one for any other scheme names the
    // host all the same, and is held to cover it.
    if deny.scheme.as_deref() == Some("http") {
        return None;
    }
    if deny.port.is_some_and(|port| port != allowed.port) {
        return None;
    }
    let same_host = match (&deny.host, &allowed.host) {
        (Host::Ip(denied), Host::Ip(granted)) => denied == granted,
        (Host::Name(pattern), Host::Name(name)) if name_pattern::is_pattern(pattern) => {
            name_pattern::matches(pattern, name)
                || pattern
                    .strip_prefix("*.")
                    .is_some_and(|apex| name_pattern::matches(apex, name))
        }
        (Host::Name(denied), Host::Name(name)) => denied == name,
        (Host::Name(pattern), Host::Ip(ip)) => name_pattern::matches(pattern, &ip.to_string()),
        (Host::Ip(_), Host::Name(_)) => {
            return Some(format!(
                "the policy denies the address {text:?}, and the name may resolve to it (it cannot be proven disjoint)"
            ));
        }
    };
    same_host.then(|| format!("the policy denies {text:?}"))
}

/// Why the CIDR deny `text` covers `allowed`, or `None` when the address is outside it.
pub(super) fn cidr_deny_covers(
    range: &Cidr,
    allowed: &AllowedOrigin,
    text: &str,
) -> Option<String> {
    match &allowed.host {
        Host::Ip(ip) => range
            .contains(*ip)
            .then(|| format!("the policy denies {text:?}, which holds this address")),
        Host::Name(_) => Some(format!(
            "the policy denies the range {text:?}, and the name may resolve into it (it cannot be proven disjoint)"
        )),
    }
}

/// Why the deny `{ cidr: text }` covers `allowed`, or `None` when it provably does not.
pub(super) fn cidr_text_deny_covers(text: &str, allowed: &AllowedOrigin) -> Option<String> {
    match text.trim().parse::<Cidr>() {
        Ok(range) => cidr_deny_covers(&range, allowed, text),
        Err(reason) => Some(format!(
            "the policy denies the range {text:?}, which cordon cannot read ({reason}), so no host is proposed"
        )),
    }
}

/// `scheme://host:port/…` or `host[:port]`; a deny (`pattern`) may use `*` and `?` in the name.
fn parse(text: &str, pattern: bool) -> Result<Parsed, String> {
    let text = text.trim();
    let (scheme, rest) = match text.split_once("://") {
        Some((scheme, rest)) => (Some(scheme.to_ascii_lowercase()), rest),
        None => (None, text),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() {
        return Err("no host".into());
    }
    if authority.contains('@') {
        return Err("credentials in a host".into());
    }
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let (inside, after) = bracketed
            .split_once(']')
            .ok_or("an IPv6 address without its closing ]")?;
        let address: std::net::Ipv6Addr = inside
            .parse()
            .map_err(|_| format!("{inside:?} is not an IPv6 address"))?;
        let port = match after {
            "" => None,
            _ => Some(
                after
                    .strip_prefix(':')
                    .ok_or("text after the IPv6 address")?,
            ),
        };
        (Host::Ip(IpAddr::V6(address)), port)
    } else {
        let (name, port) = match authority.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (authority, None),
        };
        if port.is_some_and(|port| port.contains(':')) {
            return Err("an IPv6 address goes in brackets ([::1])".into());
        }
        let name = name.to_ascii_lowercase();
        let name = name.strip_suffix('.').unwrap_or(&name).to_string();
        if name.is_empty() {
            return Err("no host".into());
        }
        if let Ok(ip) = name.parse::<IpAddr>() {
            (Host::Ip(ip), port)
        } else {
            if name.contains('*') && !pattern {
                return Err(
                    "a wildcard host; cordon grants exact origins, so list each host".into(),
                );
            }
            let valid = name.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || matches!(c, '.' | '-' | '_')
                    || (pattern && matches!(c, '*' | '?'))
            });
            if !valid {
                return Err("not a host name".into());
            }
            (Host::Name(name), port)
        }
    };
    let port = port
        .map(|port| {
            port.parse::<u16>()
                .ok()
                .filter(|port| *port != 0)
                .ok_or_else(|| format!("port {port:?} is not a port number"))
        })
        .transpose()?;
    Ok(Parsed { scheme, host, port })
}

/// An address range (`10.0.0.0/8`, `fd00::/8`).
#[derive(Debug)]
pub(super) struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl std::str::FromStr for Cidr {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (address, prefix) = text.split_once('/').unwrap_or((text, ""));
        let network: IpAddr = address
            .trim()
            .parse()
            .map_err(|_| format!("{address:?} is not an address"))?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = if prefix.is_empty() {
            bits
        } else {
            prefix
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|prefix| *prefix <= bits)
                .ok_or_else(|| format!("{prefix:?} is not a prefix length"))?
        };
        Ok(Cidr { network, prefix })
    }
}

impl Cidr {
    /// Whether `ip` is in the range, IPv4 compared as IPv4-mapped IPv6 (so `::ffff:10.0.0.0/104`
    /// holds `10.1.2.3`).
    fn contains(&self, ip: IpAddr) -> bool {
        let prefix = match self.network {
            IpAddr::V4(_) => u32::from(self.prefix) + 96,
            IpAddr::V6(_) => u32::from(self.prefix),
        };
        let mask = if prefix == 0 {
            0
        } else {
            u128::MAX << (128 - prefix)
        };
        as_v6_bits(self.network) & mask == as_v6_bits(ip) & mask
    }
}

fn as_v6_bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(text: &str) -> AllowedOrigin {
        allowed_origin(text).unwrap()
    }

    #[test]
    fn allowed_hosts_become_https_origins() {
        assert_eq!(
            origin("API.Example.com.").as_grant(),
            "https://api.example.com"
        );
        assert_eq!(origin("https://x.com:443/feed").as_grant(), "https://x.com");
        assert_eq!(origin("x.com:8443").as_grant(), "https://x.com:8443");
        assert_eq!(origin("[::1]:8443").as_grant(), "https://[::1]:8443");
        for refused in [
            "http://x.com",
            "ftp://x",
            "user@host",
            "*.x.com",
            "x.com:99999",
            "::1",
        ] {
            assert!(allowed_origin(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn denies_compare_as_origins() {
        let api = origin("api.example.com");
        for deny in [
            "api.example.com",
            "API.EXAMPLE.COM.",
            "api.example.com:443",
            "https://api.example.com",
            "https://api.example.com/v1",
            "*.example.com",
            "*",
            "api.*",
            "wss://api.example.com",
            "10.0.0.0/8",
            "api[1].example.com",
        ] {
            assert!(host_deny_covers(deny, &api).is_some(), "{deny}");
        }
        for deny in [
            "other.example.com",
            "api.example.com:8443",
            "http://api.example.com",
            "*.other.com",
        ] {
            assert!(host_deny_covers(deny, &api).is_none(), "{deny}");
        }
        assert!(host_deny_covers("*.example.com", &origin("example.com")).is_some());
        let address = origin("10.1.2.3");
        assert!(cidr_text_deny_covers("10.0.0.0/8", &address).is_some());
        assert!(cidr_text_deny_covers("::ffff:10.0.0.0/104", &address).is_some());
        assert!(cidr_text_deny_covers("11.0.0.0/8", &address).is_none());
        assert!(cidr_text_deny_covers("not a range", &address).is_some());
        assert!(cidr_text_deny_covers("10.0.0.0/8", &api).is_some());
    }
}
