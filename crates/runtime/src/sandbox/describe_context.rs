//! The WASI context `describe` runs in: nothing granted (no directories, network, env vars), and
//! the same clocks and random numbers every time, so what a plugin declares cannot depend on when
//! or how often it is asked. cordon.lock pins what a plugin declares; a plugin that reads the
//! clock to declare other tools later would otherwise get past that pin between two loads.

use crate::capabilities::grant::MAX_RANDOM_BYTES;
use crate::sandbox::capture::OutputCapture;
use std::time::Duration;
use wasmtime_wasi::{Deterministic, HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder};

/// The bytes random numbers cycle through during `describe`.
const FIXED_RANDOM_BYTES: [u8; 8] = [0x9e, 0x37, 0x79, 0xb9, 0x7f, 0x4a, 0x7c, 0x15];

/// What the wall clock says during `describe`: 2000-01-01T00:00:00Z.
const DESCRIBE_WALL_CLOCK: Duration = Duration::from_secs(946_684_800);

/// A wall clock stopped at [`DESCRIBE_WALL_CLOCK`].
struct StoppedWallClock;

impl HostWallClock for StoppedWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        DESCRIBE_WALL_CLOCK
    }
}

/// A monotonic clock stopped at zero.
struct StoppedMonotonicClock;

impl HostMonotonicClock for StoppedMonotonicClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// A context with nothing granted and fixed clocks and random numbers.
pub fn describe_wasi_context(stdout: OutputCapture, stderr: OutputCapture) -> WasiCtx {
    WasiCtxBuilder::new()
        .stdout(stdout)
        .stderr(stderr)
        .max_random_size(MAX_RANDOM_BYTES)
        .secure_random(Deterministic::new(FIXED_RANDOM_BYTES.to_vec()))
        .insecure_random(Deterministic::new(FIXED_RANDOM_BYTES.to_vec()))
        .insecure_random_seed(0)
        .wall_clock(StoppedWallClock)
        .monotonic_clock(StoppedMonotonicClock)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .build()
}
