//! The house's size rules, checked on the tree: no Rust source file over 600 lines (a file that
//! grows past it holds more than one job; split it by job), and a README of at most 250 lines
//! (the front page says what cordon is and links to the rest).

use std::path::{Path, PathBuf};

const MAX_SOURCE_LINES: usize = 600;
const MAX_README_LINES: usize = 250;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Rust files the repository tracks (generated and vendored files are not tracked).
fn tracked_rust_files() -> Vec<PathBuf> {
    let output = std::process::Command::new("git")
        .args(["ls-files", "*.rs"])
        .current_dir(repository())
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git ls-files failed");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(PathBuf::from)
        .collect()
}

#[test]
fn no_source_file_is_over_600_lines() {
    let files = tracked_rust_files();
    assert!(files.len() > 100, "only {} Rust files found", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(repository().join(file))
                .map(|text| text.lines().count())
                .unwrap_or(0);
            (lines > MAX_SOURCE_LINES).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_SOURCE_LINES} lines; split these by job: {long:?}"
    );
}

#[test]
fn the_readme_is_at_most_250_lines() {
    let readme = std::fs::read_to_string(repository().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= MAX_README_LINES,
        "README.md has {lines} lines; move detail into docs/ and link it"
    );
}
