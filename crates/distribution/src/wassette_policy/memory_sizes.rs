//! A Wassette policy's memory limit (megabytes, or a size with a binary or decimal unit) as
//! cordon.toml's `limits.memory`, taken down to whole KiB, never up, a number with no unit
//! read the smaller way it could be meant.

/// The largest memory limit cordon.toml accepts: what 32-bit WebAssembly can address.
const MAX_MEMORY_BYTES: u64 = 4 << 30;

/// The smallest memory limit a component can run in: one WebAssembly page.
pub(super) const MIN_MEMORY_BYTES: u64 = 64 << 10;

/// A memory limit in cordon's form, taken down to whole KiB, never up. One over 4 GiB, which
/// cordon.toml would refuse, is not proposed (cordon's default is less). A limit under
/// [`MIN_MEMORY_BYTES`] is checked by the caller: it refuses the policy.
pub(super) fn memory_limit(bytes: u64, value: &serde_json::Value) -> Result<String, String> {
    if bytes > MAX_MEMORY_BYTES {
        return Err(format!(
            "{value} is more than 32-bit WebAssembly can address (cordon's limit is at most 4GiB)"
        ));
    }
    Ok(if bytes.is_multiple_of(1 << 30) {
        format!("{}GiB", bytes >> 30)
    } else if bytes.is_multiple_of(1 << 20) {
        format!("{}MiB", bytes >> 20)
    } else {
        format!("{}KiB", bytes >> 10)
    })
}

/// The bytes a memory value names, rounded down to whole KiB; `Err` when it is not a size
/// cordon reads. `512Mi`, `512MiB`, `1Gi` are binary sizes, `512M`, `512MB`, `1G` decimal
/// ones. A number with no unit is read the smaller way it could be meant: megabytes in
/// Wassette's own `resources.memory` (`unitless_scale` 10^6: decimal megabytes), bytes in the Kubernetes-style
/// `resources.limits.memory` (1).
pub(super) fn memory_bytes(value: &serde_json::Value, unitless_scale: u64) -> Result<u64, String> {
    let (number, scale) = if let Some(number) = value.as_u64() {
        (number, unitless_scale)
    } else {
        let text = value.as_str().ok_or("not a size")?.trim();
        let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
        let number: u64 = digits
            .parse()
            .map_err(|_| format!("{text:?} is not a size"))?;
        let scale: u64 = match text[digits.len()..].trim() {
            "Ki" | "KiB" => 1 << 10,
            "" => unitless_scale,
            "Mi" | "MiB" => 1 << 20,
            "Gi" | "GiB" => 1 << 30,
            "k" | "K" | "kB" | "KB" => 1_000,
            "M" | "MB" => 1_000_000,
            "G" | "GB" => 1_000_000_000,
            other => return Err(format!("unit {other:?} is not one cordon reads")),
        };
        (number, scale)
    };
    // Past u64 is past any limit: it is left out like any limit over 4 GiB.
    Ok(number.saturating_mul(scale) & !1023)
}
