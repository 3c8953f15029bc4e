//! Where the tests find the guest components (bundled plugins and test fixtures, every language):
//! `CORDON_GUEST_DIR` when the run sets it (`make test` builds them there first), else the
//! directory this crate's build script built them into, so a plain `cargo test` works on a fresh
//! clone (see build.rs).

use std::path::PathBuf;

/// The directory holding `NAME.wasm` for each bundled plugin and `fixture_NAME.wasm` /
/// `plain_NAME.wasm` for each test fixture.
pub fn dir() -> PathBuf {
    std::env::var_os("CORDON_GUEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CORDON_TEST_GUESTS")))
}
