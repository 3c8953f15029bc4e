//! When the process started, in seconds since the Unix epoch (`process_start_time_seconds`, the
//! name every Prometheus client library uses): on Linux from `/proc/self/stat` and the boot time in
//! `/proc/stat`, as those libraries read it; elsewhere, when the metrics were first set up.

use std::time::{SystemTime, UNIX_EPOCH};

/// The kernel reports process times in USER_HZ, 100 on every Linux architecture Rust targets.
const USER_HZ: f64 = 100.0;

/// The process's start time, falling back to now.
pub fn start_time_seconds() -> f64 {
    from_proc().unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|since| since.as_secs_f64())
            .unwrap_or_default()
    })
}

fn from_proc() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    Some(boot_time(&boot)? + started_ticks(&stat)? / USER_HZ)
}

/// Field 22 of `/proc/self/stat` (`starttime`, in ticks since boot). The command name (field 2)
/// is in parentheses and may hold spaces, so fields are counted after its closing one.
fn started_ticks(stat: &str) -> Option<f64> {
    let (_, after_name) = stat.rsplit_once(')')?;
    // After the name come field 3 (state) onwards; starttime is field 22, the 20th of them.
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// `btime` of `/proc/stat`: when the machine booted, in seconds since the epoch.
fn boot_time(stat: &str) -> Option<f64> {
    stat.lines()
        .find_map(|line| line.strip_prefix("btime "))
        .and_then(|value| value.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_start_from_proc_fields() {
        let stat =
            "4242 (a (weird) name) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 12345 999 0";
        assert_eq!(started_ticks(stat), Some(12345.0));
        assert_eq!(
            boot_time("cpu 1 2\nbtime 1700000000\nprocesses 9\n"),
            Some(1.7e9)
        );
    }

    #[test]
    fn the_start_is_in_the_past_and_recent() {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let start = start_time_seconds();
        assert!(
            start <= now + 1.0 && start > now - 86_400.0 * 365.0,
            "{start} vs {now}"
        );
    }
}
