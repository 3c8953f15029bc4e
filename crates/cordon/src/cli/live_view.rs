//! What `cordon run` and `cordon chat` show while they work. Text: streamed to stdout as it
//! arrives when stdout is a terminal, otherwise only the final answer is printed (so pipes get a
//! clean answer). Activity on stderr: on a terminal a spinner line over the running tools and one
//! line per finished call (name, arguments, duration, error kind); off a terminal the finished
//! lines only; with `--events`, JSON lines instead. Every activity line, the spinner's included,
//! is one line by construction: what a model or a plugin put in it (a tool name, arguments, a
//! reason) goes through `terminal_text::one_line`; streamed text keeps its own line breaks
//! (`terminal_text::lines`); JSON lines have those characters as JSON escapes.

use crate::cli::stdio_output::{stderr_line, stderr_write, stdout_write};
use cordon_agent::{AgentObserver, CompactionReport, Reply, StopReason, Usage};
use cordon_runtime::pipeline::Event;
use cordon_runtime::report::terminal_text::{json_text, lines, one_line};
use serde_json::json;
use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How activity is shown on stderr.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// A spinner and finished-call lines (stderr is a terminal).
    Live,
    /// Finished-call lines only.
    Lines,
    /// JSON lines (`--events`).
    Events,
}

/// Where the model's text goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TextOut {
    /// Streamed to stdout as it arrives.
    StreamStdout,
    /// Streamed to stderr (the answer on stdout is JSON, under an output contract).
    StreamStderr,
    /// Kept for the caller to print once the turn ends.
    Hold,
}

pub struct LiveView {
    activity: Activity,
    text: TextOut,
    state: Mutex<State>,
}

struct State {
    /// What the spinner says is going on, and since when; `None`: no spinner.
    waiting: Option<(String, Instant)>,
    running: Vec<Running>,
    /// The spinner line is drawn and must be cleared before other output.
    drawn: bool,
    /// Streamed text has not ended with a newline yet.
    open_text_line: bool,
    frame: usize,
    /// The reply's streamed text, held back where it could be the start of a secret.
    scrubber: cordon_runtime::report::secrets::StreamScrubber,
}

impl Default for State {
    fn default() -> Self {
        Self {
            waiting: None,
            running: Vec::new(),
            drawn: false,
            open_text_line: false,
            frame: 0,
            scrubber: crate::cli::host_secrets::host_secrets().stream(),
        }
    }
}

struct Running {
    id: String,
    label: String,
    started: Instant,
}

const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Whether the spinner is paused (a question is on the terminal), behind the lock every spinner
/// draw holds, so no draw lands after the pause began.
static PAUSED: Mutex<bool> = Mutex::new(false);

/// Stops the spinner from drawing until the guard is dropped.
pub fn pause_activity() -> PauseGuard {
    *PAUSED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = true;
    PauseGuard
}

pub struct PauseGuard;

impl Drop for PauseGuard {
    fn drop(&mut self) {
        *PAUSED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = false;
    }
}

impl LiveView {
    /// Picks the modes from `--events`, the output contract and what the streams are.
    pub fn new(events: bool, structured_answer: bool) -> Arc<Self> {
        let activity = if events {
            Activity::Events
        } else if std::io::stderr().is_terminal() {
            Activity::Live
        } else {
            Activity::Lines
        };
        let text = if structured_answer {
            if activity == Activity::Events {
                TextOut::Hold
            } else {
                TextOut::StreamStderr
            }
        } else if std::io::stdout().is_terminal() {
            TextOut::StreamStdout
        } else {
            TextOut::Hold
        };
        let view = Arc::new(Self {
            activity,
            text,
            state: Mutex::new(State::default()),
        });
        if activity == Activity::Live {
            let ticking = Arc::downgrade(&view);
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_millis(100));
                while let Some(view) = ticking.upgrade() {
                    view.redraw();
                    drop(view);
                    tick.tick().await;
                }
            });
        }
        view
    }

    /// Whether the caller must print the answer itself (it was not streamed to stdout).
    /// Shows streamed text that passed the scrubber (nothing when it is all held back).
    fn show_text(&self, state: &mut std::sync::MutexGuard<'_, State>, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.text {
            TextOut::StreamStdout => {
                let _ = stdout_write(&lines(text));
            }
            TextOut::StreamStderr => stderr_write(lines(text).as_bytes()),
            TextOut::Hold => {}
        }
        state.open_text_line = !text.ends_with('\n');
        if self.activity == Activity::Events {
            self.json_line(json!({"type": "text_delta", "text": text}));
        }
    }

    pub fn answer_was_streamed(&self) -> bool {
        self.text == TextOut::StreamStdout
    }

    /// Ends the turn's output: a newline after streamed text, the spinner cleared.
    pub fn finish_turn(&self) {
        let mut state = self.lock();
        state.waiting = None;
        self.clear(&mut state);
        if state.open_text_line {
            state.open_text_line = false;
            match self.text {
                TextOut::StreamStdout => {
                    let _ = stdout_write("\n");
                }
                TextOut::StreamStderr => stderr_write(b"\n"),
                TextOut::Hold => {}
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn redraw(&self) {
        let paused = PAUSED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if *paused {
            return;
        }
        let mut state = self.lock();
        let Some((what, since)) = &state.waiting else {
            return;
        };
        let what = if state.running.is_empty() {
            what.clone()
        } else {
            state
                .running
                .iter()
                .map(|r| r.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let elapsed = since.elapsed().as_secs_f64();
        state.frame = (state.frame + 1) % FRAMES.len();
        let line = format!(
            "{} {} ({elapsed:.1}s)",
            FRAMES[state.frame],
            one_line(&what)
        );
        let width = terminal_width();
        let line: String = line.chars().take(width.saturating_sub(1)).collect();
        stderr_write(format!("\r\x1b[2K{line}").as_bytes());
        state.drawn = true;
    }

    fn clear(&self, state: &mut State) {
        if state.drawn {
            stderr_write(b"\r\x1b[2K");
            state.drawn = false;
        }
    }

    /// Prints one line on stderr above the spinner: whatever `text` holds, it stays one line.
    fn line(&self, text: &str) {
        let mut state = self.lock();
        self.clear(&mut state);
        if state.open_text_line && self.text == TextOut::StreamStdout {
            let _ = stdout_write("\n");
            state.open_text_line = false;
        }
        stderr_line(&one_line(text));
    }

    fn json_line(&self, mut value: serde_json::Value) {
        // Its strings are scrubbed before it is serialised: a mask across JSON's own quotes or
        // escapes would break the line.
        crate::cli::host_secrets::host_secrets().scrub_json(&mut value);
        stderr_line(&json_text(&value.to_string()));
    }
}

impl AgentObserver for LiveView {
    fn model_request(&self, step: u32) {
        match self.activity {
            Activity::Events => self.json_line(json!({"type": "model_request", "step": step})),
            Activity::Live => {
                self.lock().waiting = Some((
                    format!("waiting for the model (step {step})"),
                    Instant::now(),
                ));
            }
            Activity::Lines => {}
        }
    }

    fn text_delta(&self, text: &str) {
        let mut state = self.lock();
        state.waiting = None;
        self.clear(&mut state);
        let text = &state.scrubber.push(text);
        self.show_text(&mut state, text);
    }

    fn retry(&self, retry: u32, delay: Duration, reason: &str) {
        match self.activity {
            Activity::Events => self.json_line(json!({
                "type": "model_retry", "retry": retry, "delayMs": delay.as_millis() as u64, "reason": reason,
            })),
            _ => self.line(&format!(
                "  ↻ model request failed ({reason}); retry {retry} in {:.1}s",
                delay.as_secs_f64()
            )),
        }
    }

    fn model_reply(&self, reply: &Reply) {
        {
            let mut state = self.lock();
            state.waiting = None;
            self.clear(&mut state);
            let rest = state.scrubber.finish();
            self.show_text(&mut state, &rest);
        }
        if self.activity == Activity::Events {
            let mut event = json!({
                "type": "model_reply",
                "stop": reply.stop,
                "text": reply.text,
                "toolCalls": reply.tool_calls,
            });
            if let Some(usage) = reply.usage {
                event["usage"] = usage_json(usage);
            }
            self.json_line(event);
        } else if reply.stop == StopReason::Length && !reply.tool_calls.is_empty() {
            self.line("  ⚠ the reply was cut off before its tool calls were complete");
        }
        if !reply.tool_calls.is_empty() {
            let mut state = self.lock();
            state.waiting = Some(("running tools".into(), Instant::now()));
        }
    }

    fn routed(&self, route: &cordon_agent::Route) {
        if self.activity == Activity::Events {
            self.json_line(json!({
                "type": "routing",
                "route": route.route,
                "usage": route.usage.map(usage_json),
                "fallback": route.fallback,
            }));
            return;
        }
        let tools = match route.route.as_str() {
            "none" => "no tools".to_string(),
            "all" => "every tool".to_string(),
            group => format!("the `{group}` tools"),
        };
        let why = route
            .fallback
            .as_deref()
            .map(|why| format!(" ({why})"))
            .unwrap_or_default();
        self.line(&format!("  ↳ routed to {tools}{why}"));
    }

    fn compaction(&self, report: &CompactionReport) {
        if self.activity == Activity::Events {
            self.json_line(json!({
                "type": "compaction",
                "method": report.method,
                "foldedMessages": report.folded_messages,
                "tokensBefore": report.tokens_before,
                "tokensAfter": report.tokens_after,
                "contextWindow": report.window,
            }));
        } else {
            self.line(&format!(
                "  ⇣ compacted {} older messages into a summary ({}): about {} → {} tokens of a {}-token window",
                report.folded_messages,
                report.method,
                thousands(report.tokens_before),
                thousands(report.tokens_after),
                thousands(u64::from(report.window)),
            ));
        }
    }

    fn tools_loaded(&self, tools: &[String]) {
        if self.activity == Activity::Events {
            self.json_line(json!({"type": "tools_loaded", "tools": tools}));
        } else {
            self.line(&format!("  + loaded {}", tools.join(", ")));
        }
    }

    fn tools_changed(&self, changes: &cordon_runtime::pipeline::ToolChanges) {
        if self.activity == Activity::Events {
            self.json_line(json!({
                "type": "tools_changed",
                "added": changes.added,
                "removed": changes.removed,
                "changed": changes.changed,
            }));
        } else {
            self.line(&format!("  ↻ tools reloaded: {}", changes.summary()));
        }
    }

    fn warning(&self, text: &str) {
        if self.activity == Activity::Events {
            self.json_line(json!({"type": "warning", "message": text}));
        } else {
            self.line(&format!("  ⚠ {text}"));
        }
    }

    fn turn_end(&self, model_requests: u32, usage: Option<Usage>) {
        match self.activity {
            Activity::Events => {
                let mut event = json!({"type": "turn_end", "modelRequests": model_requests});
                if let Some(usage) = usage {
                    event["usage"] = usage_json(usage);
                }
                self.json_line(event);
            }
            Activity::Live => {
                let Some(usage) = usage else { return };
                self.line(&format!(
                    "  Σ {} prompt + {} completion tokens in {model_requests} model request{}",
                    thousands(usage.prompt_tokens),
                    thousands(usage.completion_tokens),
                    if model_requests == 1 { "" } else { "s" },
                ));
            }
            Activity::Lines => {}
        }
    }

    fn tool_event(&self, event: &Event) {
        if self.activity == Activity::Events {
            if let Ok(value) = serde_json::to_value(event) {
                self.json_line(value);
            }
            return;
        }
        match event {
            Event::ToolExecutionStart {
                tool_call_id,
                tool_name,
                arguments,
            } => {
                let mut state = self.lock();
                state.running.push(Running {
                    id: tool_call_id.clone(),
                    label: format!("{tool_name}({})", summarize(arguments)),
                    started: Instant::now(),
                });
            }
            Event::ToolExecutionEnd {
                tool_call_id,
                is_error,
                error_kind,
                ..
            } => {
                let finished = {
                    let mut state = self.lock();
                    let position = state.running.iter().position(|r| &r.id == tool_call_id);
                    position.map(|p| state.running.remove(p))
                };
                let Some(call) = finished else { return };
                let took = format_duration(call.started.elapsed());
                let line = match (is_error, error_kind) {
                    (false, _) => format!("  ✓ {} {took}", call.label),
                    (true, Some(kind)) => format!("  ✗ {} {took}: {kind}", call.label),
                    (true, None) => format!("  ✗ {} {took}", call.label),
                };
                self.line(&line);
            }
            Event::HookDecision {
                tool_name,
                hook,
                decision: "block",
                reason,
                ..
            } => self.line(&format!(
                "  ⛔ {hook} blocked {tool_name}: {}",
                reason.as_deref().unwrap_or("no reason given")
            )),
            Event::SessionHook {
                stage,
                hook,
                decision,
                reason,
                effects,
                ..
            } if *decision != "proceed" => {
                let mut line = format!("  ◆ {stage} hook {hook}: {decision}");
                if let Some(reason) = reason {
                    line.push_str(&format!(": {reason}"));
                }
                for (what, value) in effects {
                    let value = match value {
                        serde_json::Value::Array(names) => names
                            .iter()
                            .filter_map(serde_json::Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", "),
                        other => other.to_string(),
                    };
                    line.push_str(&format!("; {what}: {value}"));
                }
                self.line(&line)
            }
            _ => {}
        }
    }
}

fn usage_json(usage: Usage) -> serde_json::Value {
    json!({
        "promptTokens": usage.prompt_tokens,
        "completionTokens": usage.completion_tokens,
    })
}

/// `12345` as `12,345`.
fn thousands(number: u64) -> String {
    let digits = number.to_string();
    let mut out = String::new();
    for (position, digit) in digits.chars().enumerate() {
        if position > 0 && (digits.len() - position).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Arguments in one short line: `path="README.md", limit=3`.
fn summarize(arguments: &serde_json::Value) -> String {
    let text = match arguments.as_object() {
        Some(object) => object
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join(", "),
        None => arguments.to_string(),
    };
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(59).collect::<String>())
    } else {
        text
    }
}

fn format_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|columns| columns.parse().ok())
        .unwrap_or(100)
}
