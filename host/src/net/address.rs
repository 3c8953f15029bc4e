//! Which resolved addresses count as non-public: loopback, private, link-local (cloud metadata at
//! 169.254.169.254 included), unspecified, and their IPv6 counterparts. A host name may reach them
//! only when its grant says `private = true`; an IP grant names its address explicitly.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub fn is_non_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => non_public_v4(v4),
            None => non_public_v6(v6),
        },
    }
}

fn non_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
}

fn non_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_classes() {
        let non_public = [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ];
        for ip in non_public {
            assert!(is_non_public(ip.parse().unwrap()), "{ip} is not public");
        }
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_non_public(ip.parse().unwrap()), "{ip} is public");
        }
    }
}
