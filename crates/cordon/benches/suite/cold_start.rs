//! Section 5: cold start. The time until `cordon list` (a new process) has answered, with ten
//! plugins (two of them Python, plus the JavaScript echo when built), with an empty compile cache
//! (every component compiled, in parallel) and with a warm one (compiled code loaded from disk).

use crate::report::{Report, Section};
use crate::setup::{OPTIONAL_ECHOES, Setup};
use crate::stats::{Sample, millis};
use std::path::Path;
use std::time::Duration;

const EMPTY_RUNS: usize = 2;
const WARM_RUNS: usize = 15;

/// The ten plugins: (plugin id, component file in CORDON_GUEST_DIR).
pub const PLUGINS: [(&str, &str); 10] = [
    ("fs", "fs.wasm"),
    ("guard", "guard.wasm"),
    ("redact", "redact.wasm"),
    ("http_fetch", "http_fetch.wasm"),
    ("csv_query", "csv_query.wasm"),
    ("py_echo", "fixture_py_echo.wasm"),
    ("probe", "fixture_probe.wasm"),
    ("conformance", "fixture_conformance.wasm"),
    ("hostile", "fixture_hostile.wasm"),
    ("scripted_hook", "fixture_scripted_hook.wasm"),
];

pub struct ColdStart {
    pub warm: Duration,
}

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<ColdStart> {
    let mut files: Vec<(String, std::path::PathBuf)> = PLUGINS
        .iter()
        .map(|(id, file)| (id.to_string(), setup.guest(file)))
        .collect();
    let javascript = setup.optional_echo(OPTIONAL_ECHOES[1].1, OPTIONAL_ECHOES[1].2);
    if let Some(path) = &javascript {
        files.push(("js_echo".into(), path.clone()));
    }
    let listed: Vec<(&str, &Path)> = files
        .iter()
        .map(|(id, path)| (id.as_str(), path.as_path()))
        .collect();
    let plugins = setup.plugins_dir("cold-start", &listed)?;

    let mut empty = Vec::new();
    let warm_cache = setup.scratch.path().join("cold-start-cache");
    for run in 0..EMPTY_RUNS {
        let cache = setup.scratch.path().join(format!("cold-start-empty-{run}"));
        empty.push(list(setup, &plugins, &cache, files.len())?);
        if run == 0 {
            std::fs::rename(&cache, &warm_cache)?;
        } else {
            std::fs::remove_dir_all(&cache)?;
        }
    }
    let warm = Sample::new(
        (0..WARM_RUNS)
            .map(|_| list(setup, &plugins, &warm_cache, files.len()))
            .collect::<anyhow::Result<_>>()?,
    );
    let empty = Sample::new(empty);
    let mut section = Section::new(
        "5. Cold start",
        &format!(
            "Time from starting `cordon list` until it exited, with {} plugins (fs, guard, redact, \
             http_fetch, csv_query and py_echo in Python, probe, conformance, hostile, \
             scripted_hook{}).",
            files.len(),
            if javascript.is_some() {
                ", and the JavaScript echo"
            } else {
                "; the JavaScript echo is not built"
            }
        ),
        &["compile cache", "runs", "median", "min", "max"],
    );
    for (name, sample) in [
        ("empty (every component compiled)", &empty),
        ("warm (compiled code loaded from the cache)", &warm),
    ] {
        section.row(vec![
            name.into(),
            sample.runs().to_string(),
            millis(sample.median()),
            millis(sample.min()),
            millis(sample.max()),
        ]);
    }
    report.add(section);
    Ok(ColdStart {
        warm: warm.median(),
    })
}

/// One `cordon list` with its compile cache under `cache`; checks every plugin loaded.
fn list(setup: &Setup, plugins: &Path, cache: &Path, expected: usize) -> anyhow::Result<Duration> {
    list_with(&setup.cordon_bin, setup, plugins, cache, expected)
}

/// [`list`] with the `cordon` binary at `bin`.
pub fn list_with(
    bin: &Path,
    setup: &Setup,
    plugins: &Path,
    cache: &Path,
    expected: usize,
) -> anyhow::Result<Duration> {
    let (elapsed, output) =
        setup.timed_cordon(bin, plugins, cache, &["list", "--json", "--allow-refused"])?;
    anyhow::ensure!(output.status.success(), "cordon list failed");
    let listing: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    // The JavaScript echo and the probe both declare `echo`; with neither configured, both are
    // refused after loading (the collision rule), which is the only refusal allowed here.
    let rejected = listing["rejected"].as_array().cloned().unwrap_or_default();
    let only_the_echo_collision = expected > PLUGINS.len()
        && rejected.iter().all(|refused| {
            refused["reason"]
                .as_str()
                .is_some_and(|reason| reason.contains("tool \"echo\""))
        });
    anyhow::ensure!(
        rejected.is_empty() || only_the_echo_collision,
        "plugins were refused: {}",
        listing["rejected"]
    );
    Ok(elapsed)
}
