//! Which resolved addresses count as non-public: loopback, private, link-local (cloud metadata at
//! 169.254.169.254 included), unspecified, and their IPv6 counterparts. A host name may reach them
//! only when its grant says `private = true`; an IP grant names its address explicitly. Addresses
//! that embed or translate to IPv4 (NAT64, 6to4, Teredo, IPv4-compatible) count as non-public: a
//! gateway for them may reach a private IPv4 network.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub fn is_non_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || a >= 240 // reserved (240.0.0.0/4)
        || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments (192.0.0.0/24)
        || (a == 192 && b == 0 && c == 2) // documentation (TEST-NET-1)
        || (a == 198 && b == 51 && c == 100) // documentation (TEST-NET-2)
        || (a == 203 && b == 0 && c == 113) // documentation (TEST-NET-3)
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
}

fn non_public_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    let first = segments[0];
    // Forms that carry an IPv4 address: judged by that address, and the translation and tunnel
    // prefixes themselves are never treated as public (a NAT64 or 6to4 gateway may reach anything).
    if let Some(v4) = ip.to_ipv4_mapped() {
        return non_public_v4(v4);
    }
    if segments[..6] == [0; 6] {
        // ::a.b.c.d (IPv4-compatible, deprecated), :: and ::1 included.
        return true;
    }
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated, still routed inside some sites)
        || (first == 0x0064 && segments[1] == 0xff9b) // NAT64 (64:ff9b::/96 and 64:ff9b:1::/48)
        || first == 0x2002 // 6to4
        || (first == 0x2001 && segments[1] == 0) // Teredo
        || (first == 0x2001 && segments[1] == 0x0db8) // documentation
        || (first == 0x0100 && segments[1..4] == [0; 3]) // discard-only (100::/64)
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
            "240.0.0.1",
            "255.255.255.254",
            "192.0.0.170",
            "64:ff9b::8.8.8.8",
            "64:ff9b::7f00:1",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "2002:808:808::1",
            "::127.0.0.1",
            "::8.8.8.8",
            "fec0::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
            "100::1",
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
