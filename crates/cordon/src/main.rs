//! The `cordon` binary: parse arguments, set up logging on stderr, run, and map the outcome to an
//! exit code: 0 success, 1 the tool result is an error, 2 usage or configuration error.

mod cli;
mod log_fields;

use cli::stdio_output;

use clap::Parser;
use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::time::Duration;
use tracing_subscriber::EnvFilter;

/// How long the process waits at exit for queued stderr output to be written.
const STDERR_DRAIN: Duration = Duration::from_secs(2);

/// How long the process waits at exit for the last spans and metrics to reach the collector.
const TELEMETRY_FLUSH: Duration = Duration::from_secs(2);

fn main() -> ExitCode {
    stdio_output::ensure_standard_fds();
    scrub_panic_messages();
    raise_open_file_limit();
    let code = run();
    stdio_output::finish_stderr(STDERR_DRAIN);
    code
}

fn run() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let (telemetry, telemetry_warning) = cli::telemetry_setup::start(&cli);
    init_logging(
        cli.verbose,
        telemetry.as_ref().map(|started| &started.telemetry),
    );
    if let Some(warning) = telemetry_warning {
        tracing::warn!("{warning}");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            stdio_output::stderr_line(&format!("error: cannot start the async runtime: {err}"));
            return ExitCode::from(2);
        }
    };
    let outcome = runtime.block_on(cli.run());
    // Blocking work still running (a validation past its bound, a stuck file read) does not hold
    // the exit.
    runtime.shutdown_background();
    // What is queued goes to the collector, within a bound: a dead one does not hold the exit.
    if let Some(started) = telemetry {
        started.telemetry.shutdown(TELEMETRY_FLUSH);
    }
    match outcome {
        Ok(code) => code,
        Err(err) => {
            // Errors quote what servers, files and plugins said: no control characters reach the
            // terminal (escape sequences could rewrite the screen or the clipboard).
            let message = format!("{err:#}");
            stdio_output::stderr_line(&format!(
                "error: {}",
                cordon_runtime::report::terminal_text::lines(&message)
            ));
            ExitCode::from(2)
        }
    }
}

/// A panic's message goes out like every other output: through the scrubber, without control
/// characters (a host bug met by one call fails that call; what it says must not leak a secret).
fn scrub_panic_messages() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|text| (*text).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        let at = info
            .location()
            .map(|location| format!(" at {}:{}", location.file(), location.line()))
            .unwrap_or_default();
        let text = format!("panicked{at}: {message}");
        let scrubbed = cli::host_secrets::host_secrets().scrub(&text);
        stdio_output::stderr_line(&cordon_runtime::report::terminal_text::lines(&scrubbed));
    }));
}

/// Raises the soft limit on open files to the hard limit (at most 65,536), as servers do: the
/// per-call and per-process bounds on guests' files and connections then sit well below it.
fn raise_open_file_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let wanted = limit.maximum.map_or(65_536, |hard| hard.min(65_536));
    if limit.current.is_some_and(|soft| soft < wanted) {
        let _ = setrlimit(
            Resource::Nofile,
            rustix::process::Rlimit {
                current: Some(wanted),
                maximum: limit.maximum,
            },
        );
    }
}

/// Logs go to stderr only (through the queue that never blocks), in colour only on a terminal:
/// stdout carries results (and, for `serve`, the protocol). The spans meant for OpenTelemetry
/// (target `cordon_otel`) never reach the log output; they go to the telemetry layer when there
/// is one, and are disabled at their call sites when there is not. Every field value and message
/// goes through the terminal sanitiser as it is written (see log_fields.rs).
fn init_logging(verbose: u8, telemetry: Option<&cordon_telemetry::Telemetry>) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("{default},wasmtime=warn,cranelift=warn")))
        .add_directive(
            format!("{}=off", cordon_runtime::trace_spans::TARGET)
                .parse()
                .expect("a valid directive"),
        );
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(stdio_output::QueuedStderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .fmt_fields(log_fields::TerminalSafeFields)
        .with_filter(filter);
    tracing_subscriber::registry()
        .with(telemetry.map(|telemetry| telemetry.layer()))
        .with(logs)
        .init();
}
