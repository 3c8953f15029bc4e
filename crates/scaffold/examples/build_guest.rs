//! Builds one plugin project into a directory with this library alone, no `cordon` binary:
//! `build_guest OUT_DIR PROJECT_DIR` writes `OUT_DIR/NAME.wasm`, replacing what is there. The
//! test guests' build script (tests/guests/build.rs) builds the JavaScript and C fixtures with it,
//! so that a plain `cargo test` does not build a second host first.

use anyhow::{Context, bail};
use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let (Some(out), Some(project), None) = (args.next(), args.next(), args.next()) else {
        bail!("usage: build_guest OUT_DIR PROJECT_DIR");
    };
    std::fs::create_dir_all(&out).with_context(|| format!("create {}", out.display()))?;
    let built = cordon_scaffold::build(
        &project,
        &cordon_scaffold::BuildOptions {
            plugins: &out,
            name: None,
            force: true,
            records: cordon_scaffold::BuildRecords::in_cache(None),
            cache: None,
            finish: None,
        },
    )?;
    println!("built {}", built.path.display());
    Ok(())
}
