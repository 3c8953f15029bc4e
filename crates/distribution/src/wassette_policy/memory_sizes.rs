//! A Wassette policy's `resources` as cordon.toml's `limits.memory`: a memory limit (megabytes,
//! or a size with a binary or decimal unit) taken down to whole KiB, never up, a number with no
//! unit read the smaller way it could be meant, the smaller of both fields when both are written.
//! CPU and I/O limits are listed as left out.

use super::ProposedGrants;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Resources {
    /// Megabytes (the older policy form).
    memory: Option<serde_json::Value>,
    cpu: Option<serde_json::Value>,
    io: Option<serde_json::Value>,
    /// `limits: { memory: "512Mi", cpu: "500m" }` (the newer form).
    limits: Option<ResourceLimits>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceLimits {
    memory: Option<serde_json::Value>,
    cpu: Option<serde_json::Value>,
}

/// The memory limit of `resources`, and what of them is left out. A memory limit cordon cannot
/// read, or one no component runs in, refuses the policy: leaving it out would give the plugin
/// cordon's default, which may be more than the policy allows.
pub(super) fn resource_limits(
    resources: Resources,
    out: &mut ProposedGrants,
) -> Result<(), String> {
    let limits_memory = resources
        .limits
        .as_ref()
        .and_then(|limits| limits.memory.clone());
    // Wassette's own field is megabytes: read as decimal ones, the smaller reading.
    let written = [(limits_memory, 1), (resources.memory.clone(), 1_000_000)];
    let mut smallest: Option<(u64, serde_json::Value)> = None;
    for (memory, unitless_scale) in written {
        let Some(memory) = memory else { continue };
        let bytes = memory_bytes(&memory, unitless_scale).map_err(|reason| {
            format!("resources memory: {reason}; write it with a unit (512Mi, 512MB, 1Gi)")
        })?;
        if bytes < MIN_MEMORY_BYTES {
            return Err(format!(
                "resources memory: {memory} is read as {bytes} bytes (a number without a unit is bytes in limits.memory), less than one WebAssembly page (64KiB): no component runs in it, and leaving it out would give cordon's larger default; write it with a unit (512Mi)"
            ));
        }
        if smallest.as_ref().is_none_or(|(least, _)| bytes < *least) {
            smallest = Some((bytes, memory));
        }
    }
    // Taken down to whole KiB, never up; over 4 GiB, which cordon.toml would refuse, it is left
    // out (cordon's default is less).
    match smallest {
        Some((bytes, memory)) if bytes > MAX_MEMORY_BYTES => out.left_out.push(format!(
            "resources memory: {memory} is more than 32-bit WebAssembly can address (cordon's limit is at most 4GiB)"
        )),
        Some((bytes, _)) if bytes.is_multiple_of(1 << 30) => out.memory = Some(format!("{}GiB", bytes >> 30)),
        Some((bytes, _)) if bytes.is_multiple_of(1 << 20) => out.memory = Some(format!("{}MiB", bytes >> 20)),
        Some((bytes, _)) => out.memory = Some(format!("{}KiB", bytes >> 10)),
        None => {}
    }
    if resources.cpu.is_some() || resources.limits.is_some_and(|limits| limits.cpu.is_some()) {
        out.left_out.push(
            "resources cpu: cordon bounds CPU with limits.timeout and limits.fuel; set them by hand".into(),
        );
    }
    if resources.io.is_some() {
        out.left_out
            .push("resources io: cordon has no I/O rate limit".into());
    }
    Ok(())
}

/// The largest memory limit cordon.toml accepts: what 32-bit WebAssembly can address.
const MAX_MEMORY_BYTES: u64 = 4 << 30;

/// The smallest memory limit a component can run in: one WebAssembly page.
const MIN_MEMORY_BYTES: u64 = 64 << 10;

/// The bytes a memory value names, rounded down to whole KiB; `Err` when it is not a size
/// cordon reads. `512Mi`, `512MiB`, `1Gi` are binary sizes, `512M`, `512MB`, `1G` decimal
/// ones. A number with no unit is read the smaller way it could be meant: megabytes in
/// Wassette's own `resources.memory` (`unitless_scale` 10^6: decimal megabytes), bytes in the Kubernetes-style
/// `resources.limits.memory` (1).
fn memory_bytes(value: &serde_json::Value, unitless_scale: u64) -> Result<u64, String> {
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
