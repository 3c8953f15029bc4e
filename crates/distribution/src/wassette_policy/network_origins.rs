//! A Wassette network allow's host (`api.example.com`, `https://api.example.com:8443/v1`) as the
//! HTTPS origin cordon grants: the host name in lower case without a trailing dot, the port when
//! it is not 443. Plain http, other schemes, wildcards, credentials and addresses written other
//! than as four decimal numbers (or an IPv6 address in brackets) are refused.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The origin cordon grants for the allowed `host`, or why it grants none.
pub(super) fn https_origin(host: &str) -> Result<String, String> {
    let text = host.trim();
    let (scheme, rest) = match text.split_once("://") {
        Some((scheme, rest)) => (Some(scheme.to_ascii_lowercase()), rest),
        None => (None, text),
    };
    match scheme.as_deref() {
        None | Some("https") => {}
        Some("http") => return Err("plain http is not proposed (cordon proposes HTTPS only); grant the http:// origin by hand in [plugins.NAME] http if you mean it".into()),
        Some(other) => return Err(format!("scheme {other} is not HTTPS")),
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('*') {
        return Err("a wildcard host; cordon grants exact origins, so list each host".into());
    }
    if authority.contains('@') {
        return Err("credentials in a host".into());
    }
    let (name, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let (inside, after) = bracketed
            .split_once(']')
            .ok_or("an IPv6 address without its closing ]")?;
        let address: Ipv6Addr = inside
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
        (format!("[{}]", IpAddr::V6(address)), port)
    } else {
        let (name, port) = match authority.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (authority, None),
        };
        let name = name.to_ascii_lowercase();
        let name = name.strip_suffix('.').unwrap_or(&name);
        let labelled = !name.is_empty() && !name.split('.').any(str::is_empty);
        if !labelled
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        {
            return Err("not a host name (ASCII letters, digits, - and _ in dot-separated labels); an IPv6 address goes in brackets".into());
        }
        // A name ending in a number is an IPv4 address to URL parsers, in many spellings
        // (`127.1`, `0x7f.0.0.1`); only the four decimal numbers are read.
        if name
            .rsplit('.')
            .next()
            .is_some_and(|last| last.starts_with(|c: char| c.is_ascii_digit()))
        {
            let address: Ipv4Addr = name.parse().map_err(|_| {
                format!("{name:?} ends in a number, so it is an IPv4 address, but not one written as four decimal numbers")
            })?;
            (address.to_string(), port)
        } else {
            (name.to_string(), port)
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
    Ok(match port {
        None | Some(443) => format!("https://{name}"),
        Some(port) => format!("https://{name}:{port}"),
    })
}
