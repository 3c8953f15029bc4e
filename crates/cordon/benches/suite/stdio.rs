//! Section 2: MCP over stdio. A raw JSON-RPC client (this process) drives, over pipes, `cordon
//! serve` with the echo plugin, a minimal native rmcp server with the same echo tool
//! (`bench/mcp_echo_server`), and `cat` (the pipe's own floor: the same line echoed back).

use crate::per_call::ARGUMENTS;
use crate::report::{Report, Section};
use crate::setup::Setup;
use crate::stats::{Sample, micros, time_n};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const ROUNDS: usize = 3000;
const WARM_UP: usize = 200;

pub struct StdioFigures {
    pub cordon_serve: Duration,
}

pub fn run(
    setup: &Setup,
    report: &mut Report,
    pipeline: Option<Duration>,
) -> anyhow::Result<StdioFigures> {
    let echo = setup.guest("fixture_echo.wasm");
    let plugins = setup.plugins_dir("serve", &[("echo", &echo)])?;
    let mut serve = Command::new(&setup.cordon_bin);
    serve
        .arg("--plugins")
        .arg(&plugins)
        .arg("serve")
        .current_dir(setup.scratch.path());
    let cordon = mcp_round_trips(serve, ROUNDS)?;
    let native = mcp_round_trips(Command::new(&setup.mcp_echo_bin), ROUNDS)?;
    let pipe = cat_round_trips()?;
    let cordon_median = cordon.median();

    let mut section = Section::new(
        "2. MCP round trip over stdio",
        "`tools/call` of the trivial echo, written as one JSON-RPC line to the server's stdin and \
         timed until its response line is read back, one request at a time. `− pipe` subtracts the \
         pipe floor's median; `÷ pipeline` divides by the in-process Rust pipeline call. The native \
         server uses rmcp's own stdio transport (tokio's stdin and stdout, which hand each read and \
         write to a blocking thread), as MCP servers built on rmcp do; `cordon serve` reads and \
         writes its pipes without blocking threads.",
        &["server", "runs", "median", "p99", "− pipe", "÷ pipeline"],
    );
    for (name, sample) in [
        ("`cordon serve` (Rust echo in a fresh sandbox)", &cordon),
        ("native rmcp stdio server, same echo (no sandbox)", &native),
        ("pipe floor: the same client talking to `cat`", &pipe),
    ] {
        section.row(vec![
            name.into(),
            sample.runs().to_string(),
            micros(sample.median()),
            micros(sample.p99()),
            micros(sample.median().saturating_sub(pipe.median())),
            pipeline.map_or_else(
                || "-".into(),
                |p| format!("{:.2}", sample.median().as_secs_f64() / p.as_secs_f64()),
            ),
        ]);
    }
    report.add(section);
    Ok(StdioFigures {
        cordon_serve: cordon_median,
    })
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Server {
    fn start(mut command: Command) -> anyhow::Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Ok(Self {
            child,
            stdin,
            stdout,
            line: String::new(),
        })
    }

    /// Writes one request and reads lines until the response with `id` arrives.
    fn request(&mut self, id: u64, method: &str, params: &str) -> anyhow::Result<&str> {
        writeln!(
            self.stdin,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        )?;
        let id_field = format!("\"id\":{id},");
        loop {
            self.line.clear();
            anyhow::ensure!(
                self.stdout.read_line(&mut self.line)? > 0,
                "the server closed its stdout"
            );
            if self.line.contains(&id_field) {
                return Ok(&self.line);
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `rounds` round trips of `tools/call` of the echo against an MCP stdio server, after the
/// handshake and a warm-up.
pub fn mcp_round_trips(command: Command, rounds: usize) -> anyhow::Result<Sample> {
    let mut server = Server::start(command)?;
    server.request(
        0,
        "initialize",
        r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}"#,
    )?;
    writeln!(
        server.stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )?;
    let params = format!(r#"{{"name":"echo","arguments":{ARGUMENTS}}}"#);
    let mut times = Vec::with_capacity(rounds);
    for id in 1..=(WARM_UP + rounds) as u64 {
        let started = Instant::now();
        let response = server.request(id, "tools/call", &params)?;
        let elapsed = started.elapsed();
        anyhow::ensure!(
            response.contains("\"isError\":false") && response.contains("one hundred bytes"),
            "unexpected response: {response}"
        );
        if id > WARM_UP as u64 {
            times.push(elapsed);
        }
    }
    Ok(Sample::new(times))
}

/// Round trips of one request-sized line through `cat`.
fn cat_round_trips() -> anyhow::Result<Sample> {
    let mut cat = Server::start(Command::new("cat"))?;
    let message = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{ARGUMENTS}}}}}"#
    );
    let mut failed = None;
    let sample = time_n(WARM_UP + ROUNDS, || {
        let sent = writeln!(cat.stdin, "{message}");
        cat.line.clear();
        let read = cat.stdout.read_line(&mut cat.line);
        if sent.is_err() || read.is_err() {
            failed = Some("cat stopped answering");
        }
    });
    if let Some(failure) = failed {
        anyhow::bail!(failure);
    }
    Ok(sample)
}
