//! Section 15: what OpenTelemetry export costs a call, and that a dead collector costs it
//! nothing more. The MCP stdio round trip of section 2 against `cordon serve` three ways,
//! interleaved in blocks so the machine's drift falls on all of them alike: telemetry off; traces
//! and metrics exported to a collector on loopback that answers every export at once; and to one
//! that accepts the connection and never answers.

use crate::report::{Report, Section};
use crate::setup::Setup;
use crate::stats::{Sample, micros};
use crate::stdio::mcp_round_trips;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;

const BLOCKS: usize = 3;
const ROUNDS_PER_BLOCK: usize = 1000;

pub struct TelemetryFigures {
    /// p50 with a collector that never answers over p50 with one that answers at once.
    pub dead_over_answering: f64,
}

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<TelemetryFigures> {
    let echo = setup.guest("fixture_echo.wasm");
    let plugins = setup.plugins_dir("telemetry", &[("echo", &echo)])?;
    let answering = collector(true)?;
    let dead = collector(false)?;
    let serve = |endpoint: Option<&str>| {
        let mut command = Command::new(&setup.cordon_bin);
        command
            .arg("--plugins")
            .arg(&plugins)
            .arg("serve")
            .current_dir(setup.scratch.path());
        if let Some(endpoint) = endpoint {
            command.env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint);
            // Metrics every second instead of every ten, so the run sees many exports.
            command.env("OTEL_METRIC_EXPORT_INTERVAL", "1000");
        }
        command
    };
    let (mut off, mut live, mut stuck) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..BLOCKS {
        off.push(mcp_round_trips(serve(None), ROUNDS_PER_BLOCK)?);
        live.push(mcp_round_trips(serve(Some(&answering)), ROUNDS_PER_BLOCK)?);
        stuck.push(mcp_round_trips(serve(Some(&dead)), ROUNDS_PER_BLOCK)?);
    }
    let (off, live, stuck) = (
        Sample::combined(off),
        Sample::combined(live),
        Sample::combined(stuck),
    );
    let mut section = Section::new(
        "15. OpenTelemetry export",
        "The MCP round trip of section 2 (`tools/call` of the echo over stdio), with telemetry \
         off, exporting traces and metrics (OTLP/HTTP) to a collector on loopback that answers at \
         once, and to one that accepts connections and never answers; three interleaved blocks of \
         1,000 calls each. Off against on is what tracing costs a call (the spans made and \
         queued, the export thread's work on two cores); the two `on` rows differ only in the \
         collector: spans go into a bounded queue and leave on a thread of their own, so a call \
         never waits for the collector.",
        &[
            "telemetry",
            "runs",
            "median",
            "p99",
            "÷ off (median)",
            "÷ off (p99)",
        ],
    );
    for (name, sample) in [
        ("off", &off),
        ("on, collector answering", &live),
        ("on, collector never answering", &stuck),
    ] {
        section.row(vec![
            name.into(),
            sample.runs().to_string(),
            micros(sample.median()),
            micros(sample.p99()),
            format!(
                "{:.2}",
                sample.median().as_secs_f64() / off.median().as_secs_f64()
            ),
            format!(
                "{:.2}",
                sample.p99().as_secs_f64() / off.p99().as_secs_f64()
            ),
        ]);
    }
    report.add(section);
    Ok(TelemetryFigures {
        dead_over_answering: stuck.median().as_secs_f64() / live.median().as_secs_f64(),
    })
}

/// An OTLP/HTTP collector on loopback: one that answers every request with an empty success
/// (`answer`), or one that accepts connections and never reads or answers.
fn collector(answer: bool) -> anyhow::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let endpoint = format!("http://{}", listener.local_addr()?);
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            if answer {
                std::thread::spawn(move || answer_each(stream));
            } else {
                held.push(stream);
            }
        }
    });
    Ok(endpoint)
}

/// Reads requests off one connection and answers each `200` with an empty body (an empty
/// protobuf message is a whole export response).
fn answer_each(stream: TcpStream) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            if let Some(value) = line
                .to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().to_string())
            {
                length = value.parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let answered = writer.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n",
        );
        if answered.is_err() {
            return;
        }
    }
}
