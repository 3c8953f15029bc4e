//! A Wassette policy's memory limit (megabytes, or a size with a binary or decimal unit) as
//! cordon.toml's `limits.memory`, taken down to whole KiB, never up.

/// The largest memory limit cordon.toml accepts: what 32-bit WebAssembly can address.
const MAX_MEMORY_BYTES: u64 = 4 << 30;

/// A memory limit in cordon's form: a number is megabytes (MiB); `512Mi`, `512MiB`, `1Gi` are
/// binary sizes, `512M`, `512MB`, `1G` decimal ones (taken down to whole KiB, never up). One
/// cordon.toml would refuse (zero, or over 4 GiB) is not proposed.
pub(super) fn memory_limit(bytes: u64, value: &serde_json::Value) -> Result<String, String> {
    if bytes == 0 {
        return Err("zero; a limit must be positive".into());
    }
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
/// cordon reads.
pub(super) fn memory_bytes(value: &serde_json::Value) -> Result<u64, String> {
    let (number, scale) = if let Some(megabytes) = value.as_u64() {
        (megabytes, 1 << 20)
    } else {
        let text = value.as_str().ok_or("not a size")?.trim();
        let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
        let number: u64 = digits
            .parse()
            .map_err(|_| format!("{text:?} is not a size"))?;
        let scale: u64 = match text[digits.len()..].trim() {
            "Ki" | "KiB" => 1 << 10,
            "Mi" | "MiB" | "" => 1 << 20,
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
