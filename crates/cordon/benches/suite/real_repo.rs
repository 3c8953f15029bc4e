//! Section 10: real work on a real-sized repository (repo_tree.rs), granted read-only to the bundled
//! `fs` plugin: grep (a literal and a regex), find_files, list_dir of a 1,000-entry directory and
//! read_file of a 1 MiB file, each beside the native command doing the same work in the same run
//! (`grep -rn`, `find`, `ls -l`, `cat`) and ripgrep (`rg`, when `CORDON_BENCH_RG` names it or it is
//! on PATH). cordon's figures are whole pipeline calls in this process (the plugin already
//! loaded); the native ones are whole processes. The host's CPU time per guest filesystem
//! operation is this process's CPU time over a grep divided by the operations the guest asked of
//! the host (file and directory opens, stats, reads of up to 64 KiB, directory listings).

use crate::repo_tree::{self, RepoTree};
use crate::report::{Report, Section};
use crate::setup::Setup;
use crate::stats::Sample;
use cordon_runtime::pipeline::{BatchOptions, CallRequest, Pipeline};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const ROUNDS: usize = 5;
const QUICK_ROUNDS: usize = 200;

/// Figures the targets need.
pub struct RealRepo {
    pub grep_ratio: f64,
    pub find_ratio: f64,
    pub read_file: Duration,
}

pub async fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<RealRepo> {
    let cache = std::env::var_os("CORDON_BENCH_TREE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(default_cache);
    let tree = repo_tree::ensure(&cache)?;
    let fs = setup.guest("fs.wasm");
    let config = format!(
        "[plugins.fs]\ndirs = [{{ host = \"{}\", guest = \"/tree\" }}]\nlimits = {{ timeout = \"600s\" }}\n",
        tree.root.display()
    );
    let pipeline = setup.pipeline("real-repo", &[("fs", &fs)], &config).await?;
    let rg = ripgrep();

    let mut section = Section::new(
        "10. Real repository",
        &format!(
            "A generated tree of {} files and {} MB (crates/cordon/benches/suite/repo_tree.rs: the same bytes \
             every run, made once under `~/.cache/cordon-bench/`), granted read-only to the `fs` \
             plugin. cordon: a whole pipeline call in this process (median of {ROUNDS}, or {QUICK_ROUNDS} \
             for the quick rows); native: the command as a process, same run (median of the same \
             count). `÷ native` divides cordon's median by the native command's.",
            tree.files,
            tree.bytes / 1_000_000
        ),
        &[
            "work",
            "cordon",
            "native",
            "÷ native",
            "ripgrep",
            "cordon files/s",
        ],
    );

    let literal = "unsafe impl Send";
    let regex = r"fn [a-z]+_[a-z]+_test\(";
    let grep_literal = row(
        &pipeline,
        "grep",
        serde_json::json!({ "pattern": literal, "path": "/tree", "limit": 1_000_000 }),
        ROUNDS,
        native(&tree, &["grep", "-rn", literal, "."]),
        rg.as_ref()
            .map(|rg| native(&tree, &[rg, "-n", "-j1", literal, "."])),
    )
    .await?;
    let grep_regex = row(
        &pipeline,
        "grep",
        serde_json::json!({ "pattern": regex, "path": "/tree", "limit": 1_000_000 }),
        ROUNDS,
        native(&tree, &["grep", "-rnE", r"fn [a-z]+_[a-z]+_test\(", "."]),
        rg.as_ref()
            .map(|rg| native(&tree, &[rg, "-n", "-j1", regex, "."])),
    )
    .await?;
    let find = row(
        &pipeline,
        "find_files",
        serde_json::json!({ "pattern": "**/*.rs", "path": "/tree", "limit": 1_000_000 }),
        ROUNDS,
        native(&tree, &["find", ".", "-name", "*.rs"]),
        rg.as_ref()
            .map(|rg| native(&tree, &[rg, "--files", "-j1", "-g", "*.rs", "."])),
    )
    .await?;
    let list = row(
        &pipeline,
        "list_dir",
        serde_json::json!({ "path": format!("/tree/{}", tree.wide_dir) }),
        QUICK_ROUNDS,
        native(&tree, &["ls", "-l", tree.wide_dir]),
        None,
    )
    .await?;
    let read = row(
        &pipeline,
        "read_file",
        serde_json::json!({ "path": format!("/tree/{}", tree.big_file) }),
        QUICK_ROUNDS,
        native(&tree, &["cat", tree.big_file]),
        None,
    )
    .await?;
    let rows = [
        (format!("grep, literal `{literal}`"), &grep_literal, true),
        (format!("grep, regex `{regex}`"), &grep_regex, true),
        (
            "find_files `**/*.rs` (`find -name`)".to_string(),
            &find,
            true,
        ),
        (
            format!(
                "list_dir of {} entries (`ls -l`)",
                repo_tree::WIDE_DIR_ENTRIES
            ),
            &list,
            false,
        ),
        ("read_file of 1 MiB (`cat`)".to_string(), &read, false),
    ];
    for (what, measured, walks) in rows {
        section.row(vec![
            what,
            ms(measured.cordon.median()),
            ms(measured.native),
            format!("{:.2}", ratio(measured.cordon.median(), measured.native)),
            measured.ripgrep.map_or_else(|| "-".to_string(), ms),
            if walks {
                format!(
                    "{:.0}",
                    tree.files as f64 / measured.cordon.median().as_secs_f64()
                )
            } else {
                "-".into()
            },
        ]);
    }
    report.add(section);
    report.add(host_cpu(&pipeline, &tree, literal).await?);

    Ok(RealRepo {
        grep_ratio: ratio(grep_literal.cordon.median(), grep_literal.native)
            .max(ratio(grep_regex.cordon.median(), grep_regex.native)),
        find_ratio: ratio(find.cordon.median(), find.native),
        read_file: read.cordon.median(),
    })
}

struct Measured {
    cordon: Sample,
    native: Duration,
    ripgrep: Option<Duration>,
}

/// `rounds` pipeline calls and the same number of runs of each command, interleaved.
async fn row(
    pipeline: &Pipeline,
    tool: &str,
    arguments: serde_json::Value,
    rounds: usize,
    mut native: Command,
    mut ripgrep: Option<Command>,
) -> anyhow::Result<Measured> {
    let arguments = arguments.to_string();
    let options = BatchOptions::default();
    let (mut cordon, mut natives, mut rgs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds.min(3) {
        // Warm the page cache and the plugin for every contender alike.
        let _ = pipeline
            .call(CallRequest::new("warm", tool, arguments.clone()), &options)
            .await;
        let _ = native.output();
    }
    for _ in 0..rounds {
        let started = Instant::now();
        let result = pipeline
            .call(CallRequest::new("bench", tool, arguments.clone()), &options)
            .await;
        cordon.push(started.elapsed());
        anyhow::ensure!(!result.is_error, "{tool}: {result:?}");
        natives.push(time_process(&mut native)?);
        if let Some(rg) = ripgrep.as_mut() {
            rgs.push(time_process(rg)?);
        }
    }
    Ok(Measured {
        cordon: Sample::new(cordon),
        native: Sample::new(natives).median(),
        ripgrep: (!rgs.is_empty()).then(|| Sample::new(rgs).median()),
    })
}

/// Host CPU time per guest filesystem operation, from one grep over the tree.
async fn host_cpu(pipeline: &Pipeline, tree: &RepoTree, literal: &str) -> anyhow::Result<Section> {
    let arguments =
        serde_json::json!({ "pattern": literal, "path": "/tree", "limit": 10 }).to_string();
    let before = cpu_time();
    let started = Instant::now();
    let result = pipeline
        .call(
            CallRequest::new("cpu", "grep", arguments),
            &BatchOptions::default(),
        )
        .await;
    let wall = started.elapsed();
    let cpu = cpu_time().saturating_sub(before);
    anyhow::ensure!(!result.is_error, "{result:?}");
    let (files, dirs, reads) = operations(tree);
    // Per file: open, stat, reads, close; per directory: open, listing, and the ignore files the
    // walk looks for (.gitignore, .ignore, .git/info/exclude: three failed opens).
    let operations = files * 3 + reads + dirs * 5;
    let mut section = Section::new(
        "10a. Host CPU per guest filesystem operation",
        "One grep over the tree: this process's CPU time (user and system) during the call, divided \
         by the filesystem operations the guest asked of the host (counted from the tree: per file \
         an open, a stat, its reads of up to 64 KiB and a close; per directory an open, a listing and \
         three lookups of ignore files).",
        &["wall", "host CPU", "operations", "CPU per operation"],
    );
    section.row(vec![
        ms(wall),
        ms(cpu),
        operations.to_string(),
        format!("{:.2} µs", cpu.as_secs_f64() * 1e6 / operations as f64),
    ]);
    Ok(section)
}

/// Files, directories and 64 KiB reads (plus the read that sees the end) of the tree.
fn operations(tree: &RepoTree) -> (u64, u64, u64) {
    let (mut files, mut dirs, mut reads) = (0, 0, 0);
    let mut stack = vec![tree.root.clone()];
    while let Some(dir) = stack.pop() {
        dirs += 1;
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if entry.file_name() != "GENERATED" {
                files += 1;
                reads += meta.len().div_ceil(64 << 10) + 1;
            }
        }
    }
    (files, dirs, reads)
}

/// This process's CPU time so far (user and system), from /proc.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second here).
    let ticks: u64 = fields
        .get(11..13)
        .map(|f| f.iter().filter_map(|t| t.parse::<u64>().ok()).sum())
        .unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

fn native(tree: &RepoTree, argv: &[&str]) -> Command {
    let mut command = Command::new(argv[0]);
    command.args(&argv[1..]).current_dir(&tree.root);
    command
}

fn time_process(command: &mut Command) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let output = command.output()?;
    let elapsed = started.elapsed();
    // grep answers 1 when nothing matched; anything above is a failure.
    anyhow::ensure!(
        output.status.code().is_some_and(|code| code <= 1),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(elapsed)
}

/// ripgrep: `CORDON_BENCH_RG`, or `rg` on PATH (`make bench` installs it into a cache directory).
fn ripgrep() -> Option<String> {
    let candidate = std::env::var("CORDON_BENCH_RG").unwrap_or_else(|_| "rg".into());
    Command::new(&candidate)
        .arg("--version")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|_| candidate)
}

fn default_cache() -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new("/tmp").into());
    home.join(".cache/cordon-bench")
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

fn ms(d: Duration) -> String {
    if d < Duration::from_millis(10) {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.0} ms", d.as_secs_f64() * 1e3)
    }
}
