//! `cordon build --watch`: builds the project, then again each time one of its files changes,
//! until interrupted. Changes are seen by polling (sizes and modification times of the project's
//! files, what builds write there left out) and a build starts once the files have settled, so an
//! editor's save in several steps is one rebuild. A failed build is reported and the watch goes on.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

/// How often the project is looked at.
const POLL: Duration = Duration::from_millis(250);
/// How long the files must stay unchanged before a build starts.
const SETTLE: Duration = Duration::from_millis(300);
/// The most files watched; a larger tree is refused (it is not a plugin project).
const MAX_FILES: usize = 50_000;

/// Runs `build` now and after every change under `project`; returns only on an error watching.
pub fn run(
    project: &Path,
    build: impl Fn() -> anyhow::Result<ExitCode>,
) -> anyhow::Result<ExitCode> {
    let project = project
        .canonicalize()
        .map_err(|err| anyhow::anyhow!("cannot watch {}: {err}", project.display()))?;
    let mut seen = snapshot(&project)?;
    build_and_report(&build);
    crate::cli::render::stdout_line(&format!(
        "watching {} for changes (Ctrl-C to stop)",
        project.display()
    ))?;
    loop {
        std::thread::sleep(POLL);
        let now = snapshot(&project)?;
        if now == seen {
            continue;
        }
        // Settled: unchanged for SETTLE.
        let mut settled = now;
        loop {
            std::thread::sleep(SETTLE);
            let again = snapshot(&project)?;
            if again == settled {
                break;
            }
            settled = again;
        }
        seen = settled;
        build_and_report(&build);
    }
}

fn build_and_report(build: &impl Fn() -> anyhow::Result<ExitCode>) {
    if let Err(err) = build() {
        crate::cli::stdio_output::stderr_line(&format!(
            "error: {err:#}\n(still watching; the next change builds again)"
        ));
    }
}

/// Every file and directory under `dir` with its size and modification time, sorted.
fn snapshot(dir: &Path) -> anyhow::Result<Vec<(PathBuf, u64, Option<SystemTime>)>> {
    let mut entries = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(listing) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in listing.filter_map(Result::ok) {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            // What builds and tools write inside a project.
            if matches!(
                name.as_ref(),
                "target" | ".git" | "__pycache__" | "node_modules"
            ) || name.ends_with(".wasm")
            {
                continue;
            }
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            if metadata.is_dir() && !entry.file_type().is_ok_and(|kind| kind.is_symlink()) {
                pending.push(entry.path());
            }
            entries.push((entry.path(), metadata.len(), metadata.modified().ok()));
            anyhow::ensure!(
                entries.len() <= MAX_FILES,
                "{} holds over {MAX_FILES} files; watch a plugin project's directory",
                dir.display()
            );
        }
    }
    entries.sort();
    Ok(entries)
}
