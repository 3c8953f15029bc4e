//! Addresses compared as the network reaches them, for the network rules of a Wassette policy:
//! an IPv4 address in every form a URL parser or `inet_aton` reads, the IPv4 address an IPv6 one
//! carries (IPv4-mapped, IPv4-compatible, NAT64, 6to4), address ranges, and every address of
//! this machine taken as one destination.

use std::net::IpAddr;

/// Whether the deny `range` reaches `granted` in any form either can take: the range as
/// written or, for IPv4, carried in IPv6 (compatible, NAT64, 6to4); the address as written, the
/// IPv4 address it carries, and that one in every IPv6 form; and, when either is this machine,
/// every address of this machine.
pub(super) fn ranges_overlap(range: &Cidr, granted: IpAddr) -> bool {
    let denied = range_forms(range);
    // Which addresses are this machine's (each interface's, and those it gains later) cannot
    // be read from the policy: a deny of this machine covers every address, and any address
    // deny covers this machine.
    let holds_this_machine = |ranges: &[V6Range]| {
        ranges
            .iter()
            .any(|range| this_machine().iter().any(|local| range.overlaps(local)))
    };
    if holds_this_machine(&denied) || address_is_this_machine(granted) {
        return true;
    }
    // Local-use NAT64 may carry an IPv4 address in any of RFC 6052's layouts: an address in
    // it is covered by every deny, and a deny reaching into it covers every address.
    let local_nat64 = V6Range {
        bits: 0x0064_ff9b_0001 << 80,
        prefix: 48,
    };
    let written = V6Range {
        bits: as_v6_bits(granted),
        prefix: 128,
    };
    let denied_as_written = match range.network {
        IpAddr::V6(v6) => Some(V6Range {
            bits: u128::from(v6),
            prefix: u32::from(range.prefix),
        }),
        IpAddr::V4(_) => None,
    };
    if written.overlaps(&local_nat64)
        || denied_as_written.is_some_and(|deny| deny.overlaps(&local_nat64))
    {
        return true;
    }
    let granted_forms = address_forms(granted);
    denied
        .iter()
        .any(|deny| granted_forms.iter().any(|allow| deny.overlaps(allow)))
}

/// A range of the IPv6 space (IPv4 as IPv4-mapped): the first `prefix` bits of `bits`.
#[derive(Debug, Clone, Copy)]
struct V6Range {
    bits: u128,
    prefix: u32,
}

impl V6Range {
    fn overlaps(&self, other: &V6Range) -> bool {
        let prefix = self.prefix.min(other.prefix);
        let mask = if prefix == 0 {
            0
        } else {
            u128::MAX << (128 - prefix)
        };
        self.bits & mask == other.bits & mask
    }
}

/// The IPv6 forms of the IPv4 range `v4/prefix`: mapped, compatible, translated (SIIT,
/// `::ffff:0:a.b.c.d`), NAT64 (well-known `64:ff9b::/96` and local-use `64:ff9b:1::/96`) and 6to4.
fn v4_range_forms(v4: std::net::Ipv4Addr, prefix: u32) -> [V6Range; 6] {
    let v4 = u128::from(u32::from(v4));
    [
        V6Range {
            bits: 0xffff_0000 << 32 | v4,
            prefix: 96 + prefix,
        },
        V6Range {
            bits: 0x0064_ff9b_0001 << 80 | v4,
            prefix: 96 + prefix,
        },
        V6Range {
            bits: 0xffff << 32 | v4,
            prefix: 96 + prefix,
        },
        V6Range {
            bits: v4,
            prefix: 96 + prefix,
        },
        V6Range {
            bits: 0x0064_ff9b << 96 | v4,
            prefix: 96 + prefix,
        },
        V6Range {
            bits: 0x2002 << 112 | v4 << 80,
            prefix: 16 + prefix,
        },
    ]
}

/// Every address of this machine, in every form: `127.0.0.0/8` and `0.0.0.0/8` (which a
/// connection reaches the machine through) in each IPv6 form, `::1` and `::`.
fn this_machine() -> Vec<V6Range> {
    let mut ranges = vec![
        V6Range {
            bits: 1,
            prefix: 128,
        },
        V6Range {
            bits: 0,
            prefix: 128,
        },
    ];
    for first in [127u8, 0] {
        ranges.extend(v4_range_forms(std::net::Ipv4Addr::new(first, 0, 0, 0), 8));
    }
    ranges
}

/// Whether the IPv4 address is this machine's.
fn is_this_machine(v4: std::net::Ipv4Addr) -> bool {
    matches!(v4.octets()[0], 127 | 0)
}

/// The forms of a deny's range (see [`ranges_overlap`]).
fn range_forms(range: &Cidr) -> Vec<V6Range> {
    let mut forms = match range.network {
        IpAddr::V4(v4) => v4_range_forms(v4, u32::from(range.prefix)).to_vec(),
        IpAddr::V6(v6) => vec![V6Range {
            bits: u128::from(v6),
            prefix: u32::from(range.prefix),
        }],
    };
    let single = range.prefix == if range.network.is_ipv4() { 32 } else { 128 };
    if single && let Some(carried) = embedded_v4(range.network) {
        // A single IPv6 address carrying an IPv4 one (Teredo, ISATAP, …) denies that too.
        forms.extend(v4_range_forms(carried, 32));
    }
    if single && address_is_this_machine(range.network) {
        forms.extend(this_machine());
    }
    forms
}

/// The forms of an allowed address (see [`ranges_overlap`]).
fn address_forms(ip: IpAddr) -> Vec<V6Range> {
    let mut forms = vec![V6Range {
        bits: as_v6_bits(ip),
        prefix: 128,
    }];
    let carried = match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(_) => embedded_v4(ip),
    };
    if let Some(v4) = carried {
        forms.extend(v4_range_forms(v4, 32));
    }
    if address_is_this_machine(ip) {
        forms.extend(this_machine());
    }
    forms
}

/// Whether `ip`, or the IPv4 address it carries, is this machine's.
fn address_is_this_machine(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_this_machine(v4),
        IpAddr::V6(v6) if v6.is_loopback() || v6.is_unspecified() => true,
        IpAddr::V6(_) => embedded_v4(ip).is_some_and(is_this_machine),
    }
}

/// The IPv4 address an IPv6 one carries to the IPv4 network: IPv4-mapped, IPv4-compatible,
/// translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::/96`, `64:ff9b:1::/96`), 6to4
/// (`2002:AABB:CCDD::/48`), Teredo (`2001:0::/32`, the client inverted) or ISATAP (`::5efe:a.b.c.d`).
fn embedded_v4(ip: IpAddr) -> Option<std::net::Ipv4Addr> {
    let IpAddr::V6(v6) = ip else { return None };
    let bits = u128::from(v6);
    let segments = v6.segments();
    if let Some(carried) = v6.to_ipv4() {
        // `to_ipv4` reads both ::ffff:a.b.c.d and the deprecated ::a.b.c.d (but :: and ::1 are
        // IPv6's own).
        return (bits > 1).then_some(carried);
    }
    let nat64 = [
        0x0064_ff9b_0000_0000_0000_0000,
        0x0064_ff9b_0001_0000_0000_0000,
    ];
    if nat64.contains(&(bits >> 32)) || bits >> 32 == 0xffff_0000 {
        return Some(std::net::Ipv4Addr::from(bits as u32));
    }
    if segments[0] == 0x2002 {
        return Some(std::net::Ipv4Addr::from(
            (u32::from(segments[1]) << 16) | u32::from(segments[2]),
        ));
    }
    if segments[0] == 0x2001 && segments[1] == 0 {
        // Teredo: the client's address, inverted, in the last 32 bits.
        return Some(std::net::Ipv4Addr::from(!(bits as u32)));
    }
    if matches!((segments[4] & 0xfdff, segments[5]), (0, 0x5efe)) {
        // ISATAP: an interface id of `0:5efe` (or `200:5efe`) and the address.
        return Some(std::net::Ipv4Addr::from(bits as u32));
    }
    None
}

/// Whether `host` (a URL's host or a file URI's authority) may be a name or an address of this
/// machine: `localhost` and any name under it (`foo.localhost`, RFC 6761) or beginning with it
/// (`localhost.localdomain`), an IPv4 address in any spelling (`0x7f000001`), this machine's host
/// name (with any domain after it), or a name `/etc/hosts` lists.
pub(super) fn name_is_this_machine(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return false;
    }
    if host.starts_with("localhost")
        || host.ends_with(".localhost")
        || (host.chars().any(|c| c.is_ascii_digit())
            && host.chars().all(|c| c.is_ascii_digit() || c == '.'))
        || (last_label_is_numeric(&host) && ipv4_in_any_form(&host).is_some())
    {
        return true;
    }
    let (this_host, listed) = this_machines_names();
    (!this_host.is_empty() && (host == *this_host || host.starts_with(&format!("{this_host}."))))
        || listed.contains(&host)
}

/// This machine's host name and the names `/etc/hosts` lists (lower case, without trailing
/// dots), read once per process: a policy compares every rule with them.
fn this_machines_names() -> &'static (String, Vec<String>) {
    static NAMES: std::sync::OnceLock<(String, Vec<String>)> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let this_host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let hosts = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
        let listed = hosts
            .lines()
            .map(|line| line.split('#').next().unwrap_or(""))
            .flat_map(|line| line.split_whitespace().skip(1))
            .map(|name| name.trim_end_matches('.').to_ascii_lowercase())
            .collect();
        (this_host, listed)
    })
}

/// Whether the host name's last label is a number (decimal, or `0x` hex), which a URL parser
/// reads as an IPv4 address, whatever the labels before it.
pub(super) fn last_label_is_numeric(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    let hex = last
        .strip_prefix("0x")
        .is_some_and(|digits| digits.chars().all(|c| c.is_ascii_hexdigit()));
    hex || (!last.is_empty() && last.chars().all(|c| c.is_ascii_digit()))
}

/// The IPv4 address `name` spells in one of the forms `inet_aton` and URL parsers accept: one to
/// four parts, each decimal, octal (a leading `0`) or hex (`0x`), the last filling the bytes left.
pub(super) fn ipv4_in_any_form(name: &str) -> Option<std::net::Ipv4Addr> {
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

/// An address range (`10.0.0.0/8`, `fd00::/8`).
#[derive(Debug)]
pub(super) struct Cidr {
    pub(super) network: IpAddr,
    pub(super) prefix: u8,
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

fn as_v6_bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
        IpAddr::V6(v6) => u128::from(v6),
    }
}
