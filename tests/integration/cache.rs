//! The on-disk compile cache: used on the second start, damage detected and rebuilt, bypassable.

use crate::support::{Workspace, probe};

fn compiled_from(ws: &Workspace, extra: &[&str]) -> (String, String) {
    let mut args = vec!["list", "--json"];
    args.extend_from_slice(extra);
    let run = ws.cordon(&args);
    (
        run.json()["plugins"][0]["compiled"]
            .as_str()
            .unwrap()
            .to_string(),
        run.stderr,
    )
}

fn cache_entries(ws: &Workspace) -> Vec<std::path::PathBuf> {
    let dir = ws.cache_home().join("cordon").join("compiled");
    std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[test]
fn the_second_start_loads_from_the_cache() {
    let ws = probe().own_cache();
    assert_eq!(compiled_from(&ws, &[]).0, "fresh");
    assert_eq!(cache_entries(&ws).len(), 1);
    assert_eq!(compiled_from(&ws, &[]).0, "cache");
}

#[test]
fn a_damaged_cache_entry_is_detected_and_rebuilt() {
    let ws = probe().own_cache();
    compiled_from(&ws, &[]);
    let entry = cache_entries(&ws).pop().expect("a cache entry");
    let mut bytes = std::fs::read(&entry).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&entry, &bytes).unwrap();

    let (source, stderr) = compiled_from(&ws, &[]);
    assert_eq!(source, "fresh", "a damaged entry must not be loaded");
    assert!(stderr.contains("damaged"), "{stderr}");
    assert_eq!(
        compiled_from(&ws, &[]).0,
        "cache",
        "the rebuilt entry is used next time"
    );

    std::fs::write(&entry, b"short").unwrap();
    assert_eq!(compiled_from(&ws, &[]).0, "fresh");
}

#[test]
fn no_cache_compiles_every_time_and_writes_nothing() {
    let ws = probe().own_cache();
    assert_eq!(compiled_from(&ws, &["--no-cache"]).0, "fresh");
    assert_eq!(compiled_from(&ws, &["--no-cache"]).0, "fresh");
    assert!(cache_entries(&ws).is_empty());
}
