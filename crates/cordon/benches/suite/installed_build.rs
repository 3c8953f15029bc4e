//! Section 11: the installed build beside the development build. `make install` and `cargo
//! install` build the release profile (opt-level 3, unwinding panics, no debug info, no LTO);
//! every other section measures the development profile at opt-level 2. The two `cordon`
//! binaries run in alternation, on the same plugins and the same warm compile cache: `cordon
//! list` start-up with the ten plugins of section 5, one `cordon call` as a whole process, and
//! the `cordon serve` stdio round trip of section 2.

use crate::cold_start;
use crate::per_call::ARGUMENTS;
use crate::report::{Report, Section};
use crate::setup::Setup;
use crate::stats::{Sample, micros, millis};
use crate::stdio;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Whole-process runs of each binary, in alternation.
const PROCESS_RUNS: usize = 15;
/// Alternating blocks of stdio round trips, and round trips per block.
const ROUND_TRIP_BLOCKS: usize = 4;
const ROUND_TRIPS_PER_BLOCK: usize = 750;

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let mut section = Section::new(
        "11. Installed (release) build",
        "`make install` builds the release profile (opt-level 3, unwinding panics, no debug \
         info); every other section measures the development build (opt-level 2). Both `cordon` \
         binaries run in alternation on the same plugins and the same warm compile cache. \
         `release ÷ dev` divides the release median by the development one.",
        &[
            "what",
            "runs each",
            "dev median",
            "release median",
            "release ÷ dev",
        ],
    );
    let Some(release) = &setup.release_bin else {
        section.row(vec![
            "not measured: CORDON_RELEASE_BIN is not set (`make bench` sets it)".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
        ]);
        report.add(section);
        return Ok(());
    };
    let binaries = [setup.cordon_bin.as_path(), release.as_path()];

    let listed: Vec<(&str, std::path::PathBuf)> = cold_start::PLUGINS
        .iter()
        .map(|(id, file)| (*id, setup.guest(file)))
        .collect();
    let listed: Vec<(&str, &Path)> = listed.iter().map(|(id, p)| (*id, p.as_path())).collect();
    let plugins = setup.plugins_dir("installed-list", &listed)?;
    let cache = setup.scratch.path().join("installed-cache");
    let list = alternate(&binaries, |bin| {
        cold_start::list_with(bin, setup, &plugins, &cache, listed.len())
    })?;

    let echo = setup.guest("fixture_echo.wasm");
    let echo_plugins = setup.plugins_dir("installed-call", &[("echo", &echo)])?;
    let call = alternate(&binaries, |bin| one_call(bin, setup, &echo_plugins, &cache))?;

    let mut round_trips: [Vec<Sample>; 2] = Default::default();
    for _ in 0..ROUND_TRIP_BLOCKS {
        for (bin, samples) in binaries.iter().zip(round_trips.iter_mut()) {
            let mut serve = Command::new(bin);
            serve
                .arg("--plugins")
                .arg(&echo_plugins)
                .arg("serve")
                .env("XDG_CACHE_HOME", &cache)
                .current_dir(setup.scratch.path());
            samples.push(stdio::mcp_round_trips(serve, ROUND_TRIPS_PER_BLOCK)?);
        }
    }
    let [dev_trips, release_trips] = round_trips.map(Sample::combined);

    let rows: [Row; 3] = [
        (
            "`cordon list`, ten plugins, warm cache",
            &list[0],
            &list[1],
            millis,
        ),
        (
            "`cordon call echo` (start, one call, exit)",
            &call[0],
            &call[1],
            millis,
        ),
        (
            "`cordon serve` stdio round trip",
            &dev_trips,
            &release_trips,
            micros,
        ),
    ];
    for (what, dev, release, show) in rows {
        section.row(vec![
            what.into(),
            dev.runs().to_string(),
            show(dev.median()),
            show(release.median()),
            format!(
                "{:.2}",
                release.median().as_secs_f64() / dev.median().as_secs_f64()
            ),
        ]);
    }
    report.add(section);
    Ok(())
}

/// A row: what was measured, the development and release samples, and how to show a time.
type Row<'a> = (&'a str, &'a Sample, &'a Sample, fn(Duration) -> String);

/// One warm-up run of each binary, then [`PROCESS_RUNS`] of each in alternation.
fn alternate(
    binaries: &[&Path; 2],
    mut once: impl FnMut(&Path) -> anyhow::Result<Duration>,
) -> anyhow::Result<[Sample; 2]> {
    for bin in binaries {
        once(bin)?;
    }
    let mut times: [Vec<Duration>; 2] = Default::default();
    for _ in 0..PROCESS_RUNS {
        for (bin, times) in binaries.iter().zip(times.iter_mut()) {
            times.push(once(bin)?);
        }
    }
    Ok(times.map(Sample::new))
}

/// `cordon call echo ARGUMENTS` as a whole process; checks the echo came back.
fn one_call(bin: &Path, setup: &Setup, plugins: &Path, cache: &Path) -> anyhow::Result<Duration> {
    let (elapsed, output) =
        setup.timed_cordon(bin, plugins, cache, &["call", "echo", ARGUMENTS])?;
    anyhow::ensure!(
        output.status.success()
            && String::from_utf8_lossy(&output.stdout).contains("one hundred bytes"),
        "cordon call echo failed"
    );
    Ok(elapsed)
}
