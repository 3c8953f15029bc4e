//! The embedding example (`crates/runtime/examples/embed.rs`) built and run as a user would run it:
//! in a directory with `plugins/` (the bundled fs tools and the guard hook, which the example
//! loads as bytes) and no `cordon.toml` (its grants are made in code).

use crate::support::Workspace;
use std::path::PathBuf;
use std::process::Command;

/// Builds the example with the cargo running these tests and returns its executable.
fn build_example() -> PathBuf {
    let output = Command::new(env!("CARGO"))
        .args(["build", "-q", "-p", "cordon-runtime", "--example", "embed"])
        .arg("--message-format=json")
        .output()
        .expect("run cargo");
    assert!(
        output.status.success(),
        "building the example failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["target"]["name"] == "embed")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .expect("cargo names the example's executable")
}

#[test]
fn the_embedding_example_runs_a_batch_through_a_hook() {
    let ws = Workspace::new()
        .plugin("fs", "fs")
        .plugin("guard", "guard")
        .file("data/README.md", "# hello from the embedder\nsecond line\n")
        .file("scratch/keep", "");
    assert!(!ws.path().join("cordon.toml").exists());
    let output = Command::new(build_example())
        .current_dir(ws.path())
        .env("XDG_CACHE_HOME", ws.cache_home())
        .output()
        .expect("run the example");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("read_file ok: # hello from the embedder"),
        "{stdout}"
    );
    let blocked = lines
        .iter()
        .find(|line| line.starts_with("write_file "))
        .expect("the second call's result");
    assert!(
        blocked.starts_with("write_file blocked: The call was blocked by hook `guard`"),
        "{stdout}"
    );
    assert!(
        !ws.path().join("scratch/.env").exists(),
        "the blocked write never ran"
    );
}
