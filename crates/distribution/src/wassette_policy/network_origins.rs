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
//! denied by a deny of that IPv4 address, and the other way round.

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
        (Host::Ip(denied), Host::Ip(granted)) => same_destination(*denied, *granted),
        (Host::Name(pattern), Host::Name(name)) if name_pattern::is_pattern(pattern) => {
            name_pattern::matches(pattern, name)
                || pattern
                    .strip_prefix("*.")
                    .is_some_and(|apex| name_pattern::matches(apex, name))
        }
        (Host::Name(denied), Host::Name(name)) => denied == name,
        (Host::Name(pattern), Host::Ip(ip)) => {
            pattern_may_name_an_address(pattern) || name_pattern::matches(pattern, &ip.to_string())
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
        Host::Ip(ip) => std::iter::once(*ip)
            .chain(embedded_v4(*ip).map(IpAddr::V4))
            .any(|ip| range.contains(ip))
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

/// Whether `denied` and `granted` reach the same host: equal, or one an IPv6 address carrying
/// the other.
fn same_destination(denied: IpAddr, granted: IpAddr) -> bool {
    let as_v4 = |ip: IpAddr| match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(_) => embedded_v4(ip),
    };
    denied == granted || (as_v4(denied).is_some() && as_v4(denied) == as_v4(granted))
}

/// The IPv4 address an IPv6 one carries to the IPv4 network: IPv4-mapped, IPv4-compatible,
/// NAT64 (`64:ff9b::/96`) or 6to4 (`2002:AABB:CCDD::/48`).
fn embedded_v4(ip: IpAddr) -> Option<std::net::Ipv4Addr> {
    let IpAddr::V6(v6) = ip else { return None };
    let bits = u128::from(v6);
    let segments = v6.segments();
    if let Some(carried) = v6.to_ipv4() {
        // `to_ipv4` reads both ::ffff:a.b.c.d and the deprecated ::a.b.c.d (but :: and ::1 are
        // IPv6's own).
        return (bits > 1).then_some(carried);
    }
    if bits >> 32 == 0x0064_ff9b_0000_0000_0000_0000 {
        return Some(std::net::Ipv4Addr::from(bits as u32));
    }
    if segments[0] == 0x2002 {
        return Some(std::net::Ipv4Addr::from(
            (u32::from(segments[1]) << 16) | u32::from(segments[2]),
        ));
    }
    None
}

/// Whether the host name's last label is a number (decimal, or `0x` hex), which a URL parser
/// reads as an IPv4 address, whatever the labels before it.
fn last_label_is_numeric(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    let hex = last
        .strip_prefix("0x")
        .is_some_and(|digits| digits.chars().all(|c| c.is_ascii_hexdigit()));
    hex || (!last.is_empty() && last.chars().all(|c| c.is_ascii_digit()))
}

/// The IPv4 address `name` spells in one of the forms `inet_aton` and URL parsers accept: one to
/// four parts, each decimal, octal (a leading `0`) or hex (`0x`), the last filling the bytes left.
fn ipv4_in_any_form(name: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let numbers: Vec<u64> = parts
        .iter()
        .map(|part| {
            if let Some(hex) = part.strip_prefix("0x") {
                if hex.is_empty() {
                    Some(0)
                } else {
                    u64::from_str_radix(hex, 16).ok()
                }
            } else if part.len() > 1 && part.starts_with('0') {
                u64::from_str_radix(&part[1..], 8).ok()
            } else {
                part.parse::<u64>().ok()
            }
        })
        .collect::<Option<_>>()?;
    let (last, leading) = numbers.split_last()?;
    if leading.iter().any(|byte| *byte > 255) {
        return None;
    }
    let last_bits = 8 * (5 - numbers.len() as u32);
    if *last >= 1u64 << last_bits {
        return None;
    }
    let mut address = *last;
    for (index, byte) in leading.iter().enumerate() {
        address |= byte << (24 - 8 * index as u32);
    }
    Some(std::net::Ipv4Addr::from(address as u32))
}

/// Whether a name pattern could match a name that is an address: its last label is not a plain
/// word (it has a glob character, or is itself a number).
fn pattern_may_name_an_address(pattern: &str) -> bool {
    let last = pattern.rsplit('.').next().unwrap_or(pattern);
    name_pattern::is_pattern(last) || last_label_is_numeric(last)
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
        for deny in [
            "127.0.0.2",
            "[::1]",
            "[::ffff:127.0.0.2]",
            "*.example.com",
            "localhost.localdomain",
        ] {
            assert!(host_deny_covers(deny, &loopback).is_none(), "{deny}");
        }
        assert!(allowed_origin("1.2.3.4.5").is_err());
    }
}
