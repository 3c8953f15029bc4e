//! The benchmark report: sections of Markdown tables and the targets checked, printed to stdout and
//! written to BENCHMARKS.md with the machine and the date of the run.

use std::fmt::Write as _;
use std::path::Path;

/// One table of the report.
pub struct Section {
    pub title: String,
    pub intro: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Section {
    pub fn new(title: &str, intro: &str, header: &[&str]) -> Self {
        Self {
            title: title.into(),
            intro: intro.into(),
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn markdown(&self) -> String {
        let mut out = format!("## {}\n\n{}\n\n", self.title, self.intro);
        let _ = writeln!(out, "| {} |", self.header.join(" | "));
        let _ = writeln!(
            out,
            "|{}",
            self.header
                .iter()
                .enumerate()
                .map(|(i, _)| if i == 0 { "---|" } else { "---:|" })
                .collect::<String>()
        );
        for row in &self.rows {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        out
    }
}

/// A target from the issue and what this run measured against it.
pub struct Target {
    pub what: String,
    pub target: String,
    pub measured: String,
    /// `None` when it could not be measured in this run.
    pub met: Option<bool>,
}

pub struct Report {
    sections: Vec<Section>,
    targets: Vec<Target>,
    /// The 1-minute load average when the run started (the machine is shared).
    load_average: String,
}

impl Report {
    pub fn new() -> Self {
        let load_average = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|text| text.split_whitespace().next().map(str::to_string))
            .unwrap_or_else(|| "unknown".into());
        Self {
            sections: Vec::new(),
            targets: Vec::new(),
            load_average,
        }
    }

    pub fn add(&mut self, section: Section) {
        println!("{}", section.markdown());
        self.sections.push(section);
    }

    pub fn target(&mut self, what: &str, target: &str, measured: String, met: Option<bool>) {
        println!(
            "target: {what}: {target}, measured {measured}: {}",
            verdict(met)
        );
        self.targets.push(Target {
            what: what.into(),
            target: target.into(),
            measured,
            met,
        });
    }

    /// The whole report as Markdown.
    pub fn markdown(&self, total_seconds: f64) -> String {
        let mut out = String::from("# Benchmarks\n\n");
        let _ = writeln!(
            out,
            "Produced by `make bench` (crates/cordon/benches/suite/) on {} ({} cores visible, load average {} \
             at the start), {} UTC, in {:.0} s. \
             Every figure below comes from this one run; the machine is shared and noisy, so compare \
             rows of the same run (the ratios) rather than absolute times across runs. Latency rows \
             give the median and the 99th percentile of many calls in a row.\n",
            cpu_model(),
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            self.load_average,
            utc_now(),
            total_seconds
        );
        out.push_str("## Targets\n\n| what | target | measured | met |\n|---|---|---|---|\n");
        for t in &self.targets {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                t.what,
                t.target,
                t.measured,
                verdict(t.met)
            );
        }
        out.push('\n');
        for section in &self.sections {
            out.push_str(&section.markdown());
            out.push('\n');
        }
        out
    }

    pub fn write(&self, path: &Path, total_seconds: f64) -> std::io::Result<()> {
        std::fs::write(path, self.markdown(total_seconds))
    }
}

fn verdict(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "yes",
        Some(false) => "**no**",
        None => "not measured",
    }
}

/// The CPU model from /proc/cpuinfo.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split(':').nth(1))
                .map(|model| model.trim().to_string())
        })
        .unwrap_or_else(|| "an unknown CPU".into())
}

/// The current UTC time as `YYYY-MM-DD HH:MM`.
fn utc_now() -> String {
    let now = cordon_runtime::report::utc_time::UtcTime::now();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        now.year, now.month, now.day, now.hour, now.minute
    )
}
