//! `cordon test [PLUGIN.wasm…]`: the conformance run for plugin authors (the checks are the
//! runtime's `conformance` module). Each file is loaded alone from a scratch directory, with the
//! grants the config gives its id, its author's cases run (`--cases`, or `NAME/cases.toml`
//! beside `NAME.wasm`), and its report printed; the exit status is 0 when every plugin
//! passed, 1 when one failed (or warned, with `--deny-warnings`), 2 when there was nothing to test.

use anyhow::{Context as _, bail};
use cordon_runtime::config::Config;
use cordon_runtime::conformance::{AuthorCases, ConformanceReport, Outcome, check_plugin};
use cordon_runtime::{CompileCache, RuntimeBuilder};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The author's cases of a plugin project, in its directory.
pub const CASES_FILE: &str = "cases.toml";

/// What `cordon test` was asked to do.
pub struct PluginTest {
    /// The plugin files; empty means every `*.wasm` in `plugins_dir`.
    pub files: Vec<PathBuf>,
    /// `--cases FILE`: the cases to run (with one plugin file); else each plugin's own
    /// `NAME/cases.toml` beside its `NAME.wasm`, when there is one.
    pub cases: Option<PathBuf>,
    pub plugins_dir: PathBuf,
    pub config: Config,
    /// `[trust]`'s load-time check, when the config requires signatures (signatures.rs).
    pub admission: Option<cordon_runtime::Admission>,
    /// The lockfile, which no grant of the config may reach (it is what admission reads).
    pub lock_path: PathBuf,
    pub cache: CompileCache,
    pub json: bool,
    pub deny_warnings: bool,
    /// How long one plugin's examples may take in all.
    pub time_budget: std::time::Duration,
}

pub async fn run(test: PluginTest) -> anyhow::Result<ExitCode> {
    let files = if test.files.is_empty() {
        plugins_in(&test.plugins_dir)?
    } else {
        test.files.clone()
    };
    if test.cases.is_some() && files.len() != 1 {
        bail!(
            "--cases runs one plugin's cases: give exactly one plugin file ({} given)",
            files.len()
        );
    }
    let mut reports = Vec::new();
    for file in &files {
        if !file.is_file() {
            bail!(
                "{} is not a file; give the plugin's .wasm (built with `cordon build`)",
                file.display()
            );
        }
        // Read (and checked) before the plugin runs: a broken cases file is the author's to fix.
        let cases = match test.cases.clone().or_else(|| cases_beside(file)) {
            Some(path) => Some(AuthorCases::load(&path)?),
            None => None,
        };
        reports.push(test_one(&test, file, cases.as_ref()).await?);
    }
    let passed = reports
        .iter()
        .all(|report| report.passed(test.deny_warnings));
    if test.json {
        crate::cli::render::stdout_line(&serde_json::to_string_pretty(&reports)?)?;
    } else {
        for report in &reports {
            print_report(report)?;
        }
        if reports.len() > 1 {
            let failed = reports
                .iter()
                .filter(|report| !report.passed(test.deny_warnings))
                .count();
            crate::cli::render::stdout_line(&format!(
                "{} plugin(s) tested: {} passed, {failed} failed",
                reports.len(),
                reports.len() - failed
            ))?;
        }
    }
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `DIR/NAME/cases.toml` for the plugin file `DIR/NAME.wasm` (its project's cases), if it exists.
fn cases_beside(file: &Path) -> Option<PathBuf> {
    let stem = file.file_stem()?;
    let path = file.with_file_name(stem).join(CASES_FILE);
    path.is_file().then_some(path)
}

/// Loads `file` as the only plugin of a scratch directory, checks it and runs `cases`.
async fn test_one(
    test: &PluginTest,
    file: &Path,
    cases: Option<&AuthorCases>,
) -> anyhow::Result<ConformanceReport> {
    let id = cordon_runtime::registry::plugin_id(file);
    let scratch = tempfile::Builder::new()
        .prefix("cordon-test-")
        .tempdir()
        .context("creating a scratch directory for the plugin under test")?;
    let copy = scratch.path().join(format!("{id}.wasm"));
    std::fs::copy(file, &copy)
        .with_context(|| format!("copying {} to {}", file.display(), copy.display()))?;
    // Only what concerns this plugin: its grants and limits, no audit log, every tool active.
    let mut config = test.config.clone();
    config.audit_path = None;
    config.batches.tools = None;
    // The other plugins are not here on purpose: their grants (hooks included) do not apply.
    config.plugins.retain(|granted, _| *granted == id);
    config.allow_missing_hooks = true;
    let mut builder = RuntimeBuilder::new(scratch.path())
        .config(config)
        .cache(test.cache.clone())
        .lock_path(test.lock_path.clone());
    if let Some(admit) = test.admission.clone() {
        builder = builder.admission(move |id, sha256| admit(id, sha256));
    }
    let pipeline = builder
        .build()
        .await
        .with_context(|| format!("loading {}", file.display()))?;
    let mut report = check_plugin(&pipeline, copy, test.time_budget).await;
    if let Some(cases) = cases {
        cases.check(&pipeline, &mut report).await;
    }
    report.file = file.to_path_buf();
    Ok(report)
}

/// Every `*.wasm` directly in `dir` (as the registry lists them), at least one.
fn plugins_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let files = cordon_runtime::registry::plugin_files(dir)?;
    if files.is_empty() {
        bail!(
            "there is no plugin to test in {} (give PLUGIN.wasm files, or --plugins DIR)",
            dir.display()
        );
    }
    Ok(files)
}

fn print_report(report: &ConformanceReport) -> anyhow::Result<()> {
    let out = crate::cli::render::stdout_line;
    let about = match (&report.contract, &report.sha256) {
        (Some(contract), Some(sha256)) => {
            format!(" (contract {contract}, sha256 {})", &sha256[..12])
        }
        _ => String::new(),
    };
    out(&format!(
        "{}: {}{about}",
        report.plugin,
        report.file.display()
    ))?;
    for finding in &report.findings {
        let mark = match finding.outcome {
            Outcome::Pass => "ok  ",
            Outcome::Warn => "warn",
            Outcome::Fail => "FAIL",
        };
        // Names and text come from the plugin: one line each, nothing that drives a terminal.
        let line = cordon_runtime::report::budget::one_line;
        out(&format!(
            "  {mark}  {} · {}: {}",
            line(&finding.subject),
            line(&finding.check),
            line(&finding.detail)
        ))?;
    }
    let (failed, warned) = (report.count(Outcome::Fail), report.count(Outcome::Warn));
    let verdict = if failed > 0 { "FAILED" } else { "passed" };
    out(&format!(
        "  {verdict}: {failed} failed, {warned} warning(s), {} passed",
        report.count(Outcome::Pass)
    ))
}
