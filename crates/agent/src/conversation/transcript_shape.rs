//! What a transcript cordon wrote looks like, checked before a session resumes from one: at most
//! one system prompt, and only as the first line (cordon writes it before anything else); each
//! tool result answers a call of the assistant message before it, by id and name, and each call
//! is answered at most once (calls are told apart by position: a model may give two calls one
//! id, and each has its own result); a compaction summarises only lines before it; tools are recorded as
//! loaded only after the assistant message that called `search_tools`, or a name answered
//! `not_found` (a guessed name, answered by a search). Anything else was not
//! written by cordon (a plugin or a person edited the file), and resuming from it would send the
//! model a conversation that never happened, so it is refused, not repaired.

use crate::conversation::message::{Message, ToolCall};
use cordon_runtime::report::ErrorKind;

/// The first line (counting from 1) that breaks the shape, and how.
pub fn first_problem(messages: &[(usize, Message)]) -> Option<(usize, String)> {
    // The calls of the latest assistant message, in call order, with whether each is answered.
    let mut open: Vec<OpenCall> = Vec::new();
    let mut seen_conversation = false;
    let mut searched = false;
    for (position, (line, message)) in messages.iter().enumerate() {
        let line = *line;
        match message {
            Message::System { .. } => {
                if seen_conversation {
                    return Some((
                        line,
                        "a system prompt after the conversation started; cordon writes the system prompt only as the first line".into(),
                    ));
                }
            }
            Message::User { .. } => {}
            Message::Assistant { tool_calls, .. } => {
                open = tool_calls.iter().map(OpenCall::new).collect();
                searched = tool_calls
                    .iter()
                    .any(|call| call.name == cordon_runtime::tool_search::SEARCH_TOOL);
            }
            Message::Tool(outcome) => {
                let id = outcome.tool_call_id.as_str();
                // The first unanswered call with this id and tool takes the result.
                if let Some(call) = open
                    .iter_mut()
                    .find(|call| !call.answered && call.id == id && call.name == outcome.tool_name)
                {
                    call.answered = true;
                    // A call to a name no tool has, while searching, is answered by a search.
                    searched |= matches!(
                        outcome.error_kind,
                        Some(ErrorKind::NotFound | ErrorKind::NotActive)
                    );
                } else if let Some(call) = open.iter().find(|call| call.id == id && !call.answered)
                {
                    return Some((
                        line,
                        format!(
                            "a result of tool {:?} for call {id:?}, which called {:?}",
                            outcome.tool_name, call.name
                        ),
                    ));
                } else {
                    return Some((
                        line,
                        format!(
                            "a tool result for call {id:?}, which the assistant message before it did not make (or which was answered already)"
                        ),
                    ));
                }
            }
            Message::Compaction { through, .. } => {
                if *through > position {
                    return Some((
                        line,
                        format!("a compaction of lines up to {through}, which come after it"),
                    ));
                }
            }
            Message::TurnStart { .. } | Message::TurnEnd { .. } | Message::ToolsChanged { .. } => {}
            Message::ToolsLoaded { .. } => {
                if !searched {
                    return Some((
                        line,
                        "tools recorded as loaded without a search_tools call before them".into(),
                    ));
                }
            }
        }
        if message.is_conversation() {
            seen_conversation = true;
        }
    }
    None
}

/// One call of the latest assistant message.
struct OpenCall<'a> {
    id: &'a str,
    name: &'a str,
    answered: bool,
}

impl<'a> OpenCall<'a> {
    fn new(call: &'a ToolCall) -> Self {
        Self {
            id: &call.id,
            name: &call.name,
            answered: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::message::{StopReason, ToolOutcome};

    fn numbered(messages: Vec<Message>) -> Vec<(usize, Message)> {
        messages
            .into_iter()
            .enumerate()
            .map(|(i, m)| (i + 1, m))
            .collect()
    }

    fn assistant(calls: &[(&str, &str)]) -> Message {
        Message::Assistant {
            content: String::new(),
            tool_calls: calls
                .iter()
                .map(|(id, name)| ToolCall {
                    id: id.to_string(),
                    name: name.to_string(),
                    arguments: "{}".into(),
                })
                .collect(),
            stop: StopReason::ToolCalls,
            usage: None,
        }
    }

    fn result(id: &str, name: &str) -> Message {
        Message::Tool(ToolOutcome {
            tool_call_id: id.into(),
            tool_name: name.into(),
            is_error: false,
            error_kind: None,
            content: "ok".into(),
        })
    }

    fn system() -> Message {
        Message::System {
            content: "prompt".into(),
        }
    }

    fn user() -> Message {
        Message::User {
            content: crate::conversation::user_text::UserText::typed("hi"),
        }
    }

    #[test]
    fn what_cordon_writes_is_well_formed() {
        let written = numbered(vec![
            system(),
            user(),
            assistant(&[("a", "read_file"), ("b", "grep")]),
            result("a", "read_file"),
            result("b", "grep"),
            assistant(&[("c", "read_file")]),
        ]);
        assert_eq!(first_problem(&written), None);
    }

    #[test]
    fn tools_are_loaded_after_a_search_or_a_guessed_name_only() {
        let loaded = || Message::ToolsLoaded {
            tools: vec!["invoices_create_invoice".into()],
        };
        let searched = numbered(vec![
            user(),
            assistant(&[("s", "search_tools")]),
            result("s", "search_tools"),
            loaded(),
        ]);
        assert_eq!(first_problem(&searched), None);
        let guessed = numbered(vec![
            user(),
            assistant(&[("g", "create_invoice")]),
            Message::Tool(ToolOutcome {
                tool_call_id: "g".into(),
                tool_name: "create_invoice".into(),
                is_error: true,
                error_kind: Some(ErrorKind::NotFound),
                content: "Unknown tool".into(),
            }),
            loaded(),
        ]);
        assert_eq!(first_problem(&guessed), None);
        let neither = numbered(vec![
            user(),
            assistant(&[("a", "read_file")]),
            result("a", "read_file"),
            loaded(),
        ]);
        assert_eq!(first_problem(&neither).map(|p| p.0), Some(4));
    }

    #[test]
    fn calls_sharing_an_id_are_answered_one_result_each() {
        let written = numbered(vec![
            user(),
            assistant(&[("a", "read_file"), ("a", "hash")]),
            result("a", "read_file"),
            result("a", "hash"),
        ]);
        assert_eq!(first_problem(&written), None);
        let third = numbered(vec![
            user(),
            assistant(&[("a", "read_file"), ("a", "hash")]),
            result("a", "hash"),
            result("a", "read_file"),
            result("a", "hash"),
        ]);
        assert_eq!(first_problem(&third).map(|p| p.0), Some(5));
    }

    #[test]
    fn forged_lines_are_named() {
        let late_system = numbered(vec![system(), user(), system()]);
        assert_eq!(first_problem(&late_system).map(|p| p.0), Some(3));
        let orphan = numbered(vec![system(), user(), result("x", "read_file")]);
        assert!(first_problem(&orphan).unwrap().1.contains("did not make"));
        let twice = numbered(vec![
            user(),
            assistant(&[("a", "read_file")]),
            result("a", "read_file"),
            result("a", "read_file"),
        ]);
        assert_eq!(first_problem(&twice).map(|p| p.0), Some(4));
        let renamed = numbered(vec![
            user(),
            assistant(&[("a", "read_file")]),
            result("a", "write_file"),
        ]);
        assert!(
            first_problem(&renamed)
                .unwrap()
                .1
                .contains("which called \"read_file\"")
        );
    }
}
