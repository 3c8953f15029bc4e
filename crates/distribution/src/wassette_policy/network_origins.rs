//! A Wassette policy's network hosts as origins, and whether a deny covers an allowed one. Hosts
//! are compared as origins, not as text: the scheme (a deny without one covers every scheme), the
//! host name in lower case without a trailing dot, the port (443 for HTTPS when none is written; a
//! deny without a port covers every port). A wildcard deny (`*.example.com`) covers the names it
//! matches and the apex too; a CIDR deny covers the addresses in it and every host name (what a
//! name resolves to is not known here); a deny that cannot be read covers everything.
//!
//! Addresses are compared as the network reaches them, not as written: a name whose last label
//! is a number is an IPv4 address in any form a URL parser or `inet_aton` reads (`127.1`,
//! `0x7f.0.0.1`, `2130706433`, `0177.0.0.1`), and an IPv6 address that carries an IPv4 one
//! (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is
//! denied by a deny of that IPv4 address, and the other way round. Every address that reaches
//! this machine (`127.0.0.0/8`, `0.0.0.0/8`, `::1`, `::`, in any of those forms) is one
//! destination: a deny of any of them covers them all. A deny of a name covers every address
//! (what the name resolves to is not known here), as a deny of an address covers every name.

use super::addresses::{Cidr, ipv4_in_any_form, last_label_is_numeric, ranges_overlap};
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
    // `?` may be a glob (`ap?.example.com`) or start a URL's query (`api.example.com?x=1`):
    // the deny covers what either reading covers.
    if let Some((before_query, _)) = text.split_once('?')
        && let Some(reason) = one_host_deny_covers(before_query, allowed)
    {
        return Some(reason);
    }
    one_host_deny_covers(text, allowed)
}

/// [`host_deny_covers`] for one reading of the deny.
fn one_host_deny_covers(text: &str, allowed: &AllowedOrigin) -> Option<String> {
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
    // An address followed by a path (`https://10.0.0.0/8`, `[fd00::]/8`, `10.0.0.0/8:443`) may
    // be a range written in a form cordon does not read as one: it covers every address.
    let after_scheme = text
        .trim()
        .split_once("://")
        .map_or(text.trim(), |(_, rest)| rest);
    if matches!(deny.host, Host::Ip(_)) && after_scheme.contains(['/', '?', '#']) {
        return Some(format!(
            "the policy denies {text:?}, an address with more after it (it may be a range), so no address or name is proposed"
        ));
    }
    // A deny names a host whatever scheme or port it is written with: Wassette's own check
    // compares hosts without them, so `http://api.example.com` or `api.example.com:80` denies the
    // HTTPS origin too.
    let same_host = match (&deny.host, &allowed.host) {
        (Host::Ip(denied), Host::Ip(granted)) => {
            let denied = Cidr {
                network: *denied,
                prefix: if denied.is_ipv4() { 32 } else { 128 },
            };
            ranges_overlap(&denied, *granted)
        }
        (Host::Name(pattern), Host::Name(name)) if name_pattern::is_pattern(pattern) => {
            name_pattern::matches(pattern, name)
                || pattern
                    .strip_prefix("*.")
                    .is_some_and(|apex| name_pattern::matches(apex, name))
        }
        // Two names of this machine (`localhost`, its host name, `/etc/hosts`) are one host.
        (Host::Name(denied), Host::Name(name)) => {
            denied == name
                // A leading dot is every name under it (curl's and cookies' reading).
                || denied
                    .strip_prefix('.')
                    .is_some_and(|apex| name == apex || name.ends_with(denied.as_str()))
                || (super::addresses::name_is_this_machine(denied)
                    && super::addresses::name_is_this_machine(name))
        }
        (Host::Name(_), Host::Ip(_)) => {
            return Some(format!(
                "the policy denies the name {text:?}, and it may resolve to this address (it cannot be proven disjoint)"
            ));
        }
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
        Host::Ip(ip) => ranges_overlap(range, *ip)
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
    // In a deny, `?` is a glob character, not the start of a query.
    let ends_authority: &[char] = if pattern {
        &['/', '#']
    } else {
        &['/', '?', '#']
    };
    let authority = rest.split(ends_authority).next().unwrap_or_default();
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
        (Host::Ip(IpAddr::V6(address).to_canonical()), port)
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
        // A deny's one leading dot is every name under it (`.example.com`); any other empty
        // label makes it no host name.
        let labelled = if pattern {
            name.strip_prefix('.').unwrap_or(&name)
        } else {
            &name
        };
        if labelled.split('.').any(str::is_empty) {
            return Err(format!(
                "{name:?} has an empty label, so it is no host name"
            ));
        }
        if last_label_is_numeric(&name) {
            let address = ipv4_in_any_form(&name).ok_or_else(|| {
                format!("{name:?} ends in a number, so it is an IPv4 address, but not one that can be read")
            })?;
            (Host::Ip(IpAddr::V4(address)), port)
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
            // Red team, round 9: a deny names the host whatever port or scheme it has.
            "api.example.com:8443",
            "api.example.com:80",
            "http://api.example.com",
        ] {
            assert!(host_deny_covers(deny, &api).is_some(), "{deny}");
        }
        for deny in ["other.example.com", "*.other.com"] {
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

    #[test]
    fn an_address_is_denied_in_every_form_the_network_reads_it() {
        let loopback = origin("127.0.0.1");
        for deny in [
            "0x7f.0.0.1",
            "2130706433",
            "127.1",
            "0177.0.0.1",
            "0x7f000001",
            "127.0.1",
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "[64:ff9b::7f00:1]",
            "[2002:7f00:1::]",
            "[::127.0.0.1]",
            "127.*",
            "*",
            "1.2.3.4.5",
            "999.0.0.1",
        ] {
            assert!(host_deny_covers(deny, &loopback).is_some(), "{deny}");
        }
        assert!(cidr_text_deny_covers("127.0.0.0/8", &origin("[64:ff9b::7f00:1]")).is_some());
        // An IPv6 form of an IPv4 address is granted as the IPv4 address, and denied by it.
        let mapped = origin("[::ffff:127.0.0.1]:8443");
        assert_eq!(mapped.as_grant(), "https://127.0.0.1:8443");
        assert!(host_deny_covers("127.0.0.1", &mapped).is_some());
        assert!(host_deny_covers("127.0.0.1", &origin("[64:ff9b::7f00:1]")).is_some());
        assert!(host_deny_covers("[::ffff:127.0.0.1]", &loopback).is_some());
        assert_eq!(origin("0x7f.1").as_grant(), "https://127.0.0.1");
        // Any address may be this machine's (red team, round 9: a deny of this box's own
        // 192.0.2.2 granted 127.0.0.1): every address deny covers a loopback allow.
        for deny in [
            "10.0.0.1",
            "[::ffff:10.0.0.1]",
            "[2001:db8::1]",
            "192.0.2.2",
            "127.0.0.1:8443",
            "http://127.0.0.1",
        ] {
            assert!(host_deny_covers(deny, &loopback).is_some(), "{deny}");
        }
        assert!(host_deny_covers("10.0.0.1", &origin("10.0.0.2")).is_none());
        // Local-use NAT64 carries IPv4 in any layout: covered by every address deny.
        for allowed in ["[64:ff9b:1:a01:203::]", "[64:ff9b:1:0:a:102:300::]"] {
            assert!(
                host_deny_covers("10.1.2.3", &origin(allowed)).is_some(),
                "{allowed}"
            );
        }
        assert!(allowed_origin("1.2.3.4.5").is_err());
    }

    #[test]
    fn every_address_of_this_machine_is_one_destination() {
        for allowed in [
            "127.0.0.1",
            "127.9.9.9",
            "0.0.0.0",
            "[::]",
            "[::1]",
            "[::ffff:0.0.0.0]",
        ] {
            let allowed = origin(allowed);
            for deny in [
                "127.0.0.1",
                "127.0.0.2",
                "[::1]",
                "0.0.0.0",
                "[::]",
                "[64:ff9b::7f00:2]",
                "localhost",
            ] {
                assert!(
                    host_deny_covers(deny, &allowed).is_some(),
                    "{deny} vs {allowed:?}"
                );
            }
            for range in ["127.0.0.0/8", "0.0.0.0/8", "::1/128", "64:ff9b::7f00:0/120"] {
                assert!(
                    cidr_text_deny_covers(range, &allowed).is_some(),
                    "{range} vs {allowed:?}"
                );
            }
        }
        // Which addresses are this machine's (its interfaces') cannot be read from a policy: a
        // deny of this machine covers every address; other ranges do not.
        for allowed in ["10.0.0.1", "192.0.2.2", "[fd00::2]", "[2001:db8::1]"] {
            assert!(host_deny_covers("127.0.0.1", &origin(allowed)).is_some());
            assert!(cidr_text_deny_covers("127.0.0.0/8", &origin(allowed)).is_some());
            assert!(cidr_text_deny_covers("::1/128", &origin(allowed)).is_some());
        }
        assert!(cidr_text_deny_covers("10.0.0.0/8", &origin("192.0.2.2")).is_none());
        // The local-use NAT64 prefix and the translated form carry IPv4 addresses too.
        for allowed in ["[64:ff9b:1::a01:203]", "[::ffff:0:a01:203]"] {
            assert!(
                cidr_text_deny_covers("10.0.0.0/8", &origin(allowed)).is_some(),
                "{allowed}"
            );
        }
    }

    #[test]
    fn a_name_deny_covers_every_address_and_an_address_deny_every_name() {
        for allowed in ["169.254.169.254", "[fd00:ec2::254]", "10.1.2.3"] {
            let allowed = origin(allowed);
            for deny in ["metadata.google.internal", "*.internal", "example.com"] {
                assert!(host_deny_covers(deny, &allowed).is_some(), "{deny}");
            }
        }
        assert!(host_deny_covers("169.254.169.254", &origin("metadata.google.internal")).is_some());
    }

    #[test]
    fn ranges_written_in_ipv6_cover_the_ipv4_addresses_they_carry() {
        let address = origin("10.1.2.3");
        for range in [
            "2002:0a00::/24",
            "64:ff9b::a00:0/104",
            "::ffff:10.0.0.0/104",
            "::a00:0/104",
            "2002:a01:203::/48",
        ] {
            assert!(cidr_text_deny_covers(range, &address).is_some(), "{range}");
        }
        for range in ["2002:0b00::/24", "64:ff9b::b00:0/104", "2001:db8::/32"] {
            assert!(cidr_text_deny_covers(range, &address).is_none(), "{range}");
        }
        // And an allowed IPv6 form of an IPv4 address is covered by the IPv4 range.
        assert!(cidr_text_deny_covers("10.0.0.0/8", &origin("[2002:a01:203::1]")).is_some());
    }
}
