//! Human-friendly quantities in cordon.toml: durations (`"200ms"`, `"30s"`, `"2m"`) and byte sizes
//! (`"64KiB"`, `"256MiB"`, `"1GiB"`, or a plain number of bytes).

use std::time::Duration;

/// Parses `"250ms"`, `"30s"`, `"2m"`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = number_and_unit(text).ok_or_else(|| {
        format!("{text:?} is not a duration; write e.g. \"500ms\", \"30s\" or \"2m\"")
    })?;
    let duration = match unit {
        "ms" => Duration::from_millis(number),
        "s" => Duration::from_secs(number),
        "m" => Duration::from_secs(number.saturating_mul(60)),
        other => {
            return Err(format!(
                "{text:?} has unknown unit {other:?}; use \"ms\", \"s\" or \"m\" (e.g. \"30s\")"
            ));
        }
    };
    if duration.is_zero() {
        return Err(format!("{text:?} is zero; a limit must be positive"));
    }
    Ok(duration)
}

/// Parses `"64KiB"`, `"256MiB"`, `"1GiB"`, `"512B"` or `"4096"`.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (number, unit) = number_and_unit(text).ok_or_else(|| {
        format!("{text:?} is not a size; write e.g. \"64KiB\", \"256MiB\" or \"1GiB\"")
    })?;
    let scale: u64 = match unit {
        "" | "B" => 1,
        "KiB" | "KB" | "K" => 1 << 10,
        "MiB" | "MB" | "M" => 1 << 20,
        "GiB" | "GB" | "G" => 1 << 30,
        other => {
            return Err(format!(
                "{text:?} has unknown unit {other:?}; use B, KiB, MiB or GiB"
            ));
        }
    };
    let bytes = number
        .checked_mul(scale)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes == 0 {
        return Err(format!("{text:?} is zero; a limit must be positive"));
    }
    Ok(bytes)
}

/// Splits `"30s"` into `(30, "s")`; `None` without leading digits or when they overflow.
fn number_and_unit(text: &str) -> Option<(u64, &str)> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    Some((number.parse().ok()?, unit.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let cases = [
            ("200ms", 200),
            ("30s", 30_000),
            ("2m", 120_000),
            (" 5s ", 5_000),
        ];
        for (text, millis) in cases {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_millis(millis)),
                "{text}"
            );
        }
        for bad in ["", "s", "10", "10h", "0s", "-1s", "1.5s"] {
            assert!(parse_duration(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn byte_sizes() {
        let cases = [
            ("4096", 4096),
            ("512B", 512),
            ("64KiB", 65_536),
            ("256MiB", 256 << 20),
            ("1GiB", 1 << 30),
        ];
        for (text, bytes) in cases {
            assert_eq!(parse_bytes(text), Ok(bytes), "{text}");
        }
        for bad in ["", "MiB", "0", "12TiB", "1.5MiB", "99999999999999999999GiB"] {
            assert!(parse_bytes(bad).is_err(), "{bad} should be refused");
        }
    }
}
