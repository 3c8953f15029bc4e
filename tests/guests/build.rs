//! Builds every guest component the tests load, the way `make guests` does, unless the build
//! was given `CORDON_GUEST_DIR` (as `make test` gives it, having built them already). It runs the
//! Makefile's `guests` target with a target directory of its own beside cargo's (cargo holds the
//! lock on the one building this crate), and with the scaffold's `build_guest` example in place of
//! `cordon build` for the JavaScript and C guests, so no second host is built. The first run takes
//! several minutes (the Python and JavaScript toolchains are installed as `make` installs them);
//! later runs only rebuild what changed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The sources the guests are built from: a change under any of them reruns this script.
const SOURCES: &[&str] = &[
    "Makefile",
    "wit",
    "sdk/rust/src",
    "sdk/rust/Cargo.toml",
    "sdk/python/cordon_sdk",
    "sdk/python/requirements-build.txt",
    "sdk/js/cordon.js",
    "sdk/js/session.js",
    "sdk/js/build.mjs",
    "sdk/js/package-lock.json",
    "sdk/c",
    "tests/fixtures",
    "tests/fixtures_python",
    "tests/fixtures_js",
    "tests/fixtures_c",
    "tests/fixtures_plain",
    "crates/scaffold/src",
];

fn main() {
    println!("cargo:rerun-if-env-changed=CORDON_GUEST_DIR");
    if let Some(dir) = std::env::var_os("CORDON_GUEST_DIR") {
        println!(
            "cargo:rustc-env=CORDON_TEST_GUESTS={}",
            Path::new(&dir).display()
        );
        return;
    }
    let root =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("../..");
    let root = root.canonicalize().expect("the repository root");
    for source in SOURCES {
        println!("cargo:rerun-if-changed={}", root.join(source).display());
    }
    for plugin in std::fs::read_dir(root.join("plugins")).expect("plugins/") {
        let plugin = plugin.expect("a plugins/ entry").path();
        if plugin.is_dir() {
            for part in ["src", "Cargo.toml", "app.py", "app.js", "hash.c"] {
                if plugin.join(part).exists() {
                    println!("cargo:rerun-if-changed={}", plugin.join(part).display());
                }
            }
        }
    }

    let target = guest_target_dir();
    let guests = target.join("wasm32-wasip2/guest");
    let builder = "cargo run --quiet -p cordon-scaffold --example build_guest -- $(1) $(2)";
    let mut make = Command::new("make");
    make.current_dir(&root)
        .arg("--no-print-directory")
        .arg("guests")
        .arg(format!("GUEST_BUILD={builder}"))
        .arg("GUEST_BUILD_NEEDS=")
        .env("CORDON_SOURCE_ROOT", &root);
    // What cargo set for this script is not meant for the builds inside it.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if (name.starts_with("CARGO_") && name != "CARGO_HOME")
            || [
                "MAKEFLAGS",
                "MFLAGS",
                "RUSTFLAGS",
                "RUSTC_WRAPPER",
                "RUSTC_WORKSPACE_WRAPPER",
            ]
            .contains(&name.as_ref())
        {
            make.env_remove(name.as_ref());
        }
    }
    make.env("CARGO_TARGET_DIR", &target);
    let output = make.output().unwrap_or_else(|err| {
        panic!(
            "cannot run `make` to build the test guests ({err}); install make, or run `make test`"
        )
    });
    if !output.status.success() {
        panic!(
            "building the test guests failed (`make guests` with CARGO_TARGET_DIR={}):\n{}\n{}\n\
             Each toolchain's error above says what to install; `make test` builds the same guests.",
            target.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
    }
    println!("cargo:rustc-env=CORDON_TEST_GUESTS={}", guests.display());
}

/// `test-guests/` beside cargo's own profile directories: found from OUT_DIR
/// (`TARGET/PROFILE/build/PACKAGE-HASH/out`), so it lasts across rebuilds of this script.
fn guest_target_dir() -> PathBuf {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let build = out
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|name| name == "build"))
        .expect("OUT_DIR lies under a build/ directory");
    let target = build
        .parent()
        .and_then(Path::parent)
        .expect("TARGET/PROFILE/build");
    target.join("test-guests")
}
