//! Who approves the calls that need a person (a hook's `ask`, `[approval]` in cordon.toml) when
//! the CLI runs them: with `--yes` every such call is approved; on a terminal the person at it is
//! asked (yes / no / always for this tool this session), the live view paused meanwhile; otherwise
//! nobody, and `[approval] unattended` decides.

use crate::cli::stdio_output::stderr_write;
use cordon_runtime::pipeline::{Approval, ApprovalRequest, Approver};
use cordon_runtime::report::budget::one_line;
use std::collections::HashSet;
use std::future::Future;
use std::io::{BufRead as _, IsTerminal as _};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// Unreadable answers before the call counts as refused.
const ATTEMPTS: usize = 3;

/// The approver for this run of the CLI, if any.
pub fn approver(yes: bool) -> Option<Arc<dyn Approver>> {
    if yes {
        return Some(Arc::new(Everything));
    }
    let on_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    (on_terminal && open_terminal().is_ok()).then(|| Arc::new(Terminal::default()) as _)
}

/// `--yes`: approves every call.
struct Everything;

impl Approver for Everything {
    fn decide<'a>(
        &'a self,
        _request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Option<Approval>> + Send + 'a>> {
        Box::pin(async { Some(approval(true, "--yes", None)) })
    }
}

/// Asks the person at the terminal.
#[derive(Default)]
struct Terminal {
    /// What the person approved for the rest of the session: a tool, asked about for these
    /// reasons (a hook asking for another reason is asked about again).
    always: Mutex<HashSet<String>>,
}

enum Answer {
    Yes,
    No,
    Always,
}

impl Approver for Terminal {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Option<Approval>> + Send + 'a>> {
        Box::pin(self.ask_person(request))
    }
}

impl Terminal {
    /// The person's answer; `None` when the terminal could not be read after all.
    async fn ask_person(&self, request: &ApprovalRequest) -> Option<Approval> {
        let asked_for = always_key(request);
        let always = self
            .always
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(&asked_for);
        if always {
            return Some(approval(true, "user (always for this tool)", None));
        }
        let question = question(request);
        let answer = tokio::task::spawn_blocking(move || ask(&question)).await;
        Some(match answer.ok()?.ok()? {
            Answer::Yes => approval(true, "user", None),
            Answer::Always => {
                self.always
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .insert(asked_for);
                approval(true, "user", None)
            }
            Answer::No => approval(false, "user", None),
        })
    }
}

/// The tool and the reasons it was asked about, as one key.
fn always_key(request: &ApprovalRequest) -> String {
    let mut reasons: Vec<String> = request
        .asked_by
        .iter()
        .map(|ask| format!("{}\u{0}{}", ask.who, ask.reason))
        .collect();
    reasons.sort();
    format!("{}\u{0}{}", request.tool_name, reasons.join("\u{0}"))
}

fn approval(approved: bool, by: &str, reason: Option<String>) -> Approval {
    Approval {
        approved,
        decided_by: by.into(),
        reason,
    }
}

/// The call, what it touches, its arguments, who asked and why, and the choices.
fn question(request: &ApprovalRequest) -> String {
    let mut text = format!(
        "\r\x1b[2K? approve {} (plugin {})\n",
        request.tool_name,
        one_line(&request.plugin)
    );
    for line in request.lines(crate::cli::host_secrets::host_secrets()) {
        text.push_str(&format!("  {line}\n"));
    }
    text.push_str(&format!(
        "  [y]es / [n]o / [a]lways for {} this session: ",
        request.tool_name
    ));
    text
}

/// Asks the person at the terminal a yes-or-no `question`; no when there is no terminal, at end of
/// input, or for anything but yes.
pub fn confirm(question: &str) -> bool {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return false;
    }
    let Ok(terminal) = open_terminal() else {
        return false;
    };
    stderr_write(one_line(question).as_bytes());
    let mut line = String::new();
    match std::io::BufReader::new(terminal).read_line(&mut line) {
        Ok(0) | Err(_) => {
            stderr_write(b"\n");
            false
        }
        Ok(_) => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
    }
}

fn open_terminal() -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().read(true).open("/dev/tty")
}

/// Shows the question (through the stderr queue, so it comes after what is already shown) and
/// reads the answer from the terminal. End of input or unreadable answers mean no.
fn ask(question: &str) -> std::io::Result<Answer> {
    let _paused = crate::cli::live_view::pause_activity();
    let mut terminal = std::io::BufReader::new(open_terminal()?);
    stderr_write(question.as_bytes());
    for _ in 0..ATTEMPTS {
        let mut line = String::new();
        if terminal.read_line(&mut line)? == 0 {
            stderr_write(b"\n");
            return Ok(Answer::No);
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Ok(Answer::Yes),
            "n" | "no" | "" => return Ok(Answer::No),
            "a" | "always" => return Ok(Answer::Always),
            _ => stderr_write(b"  answer y, n or a: "),
        }
    }
    Ok(Answer::No)
}
