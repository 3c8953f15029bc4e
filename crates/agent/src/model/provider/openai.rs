//! OpenAI Chat Completions: the request body, a whole response, and a streamed one (`delta`
//! chunks, tool-call fragments keyed by index, `data: [DONE]`). Tool results have no error flag in
//! this protocol, so an error result's content starts with `Error (<kind>):`.

use super::{Request, StreamState};
use crate::conversation::message::{Message, Reply, StopReason, ToolCall};
use crate::model::sse::SseEvent;
use cordon_runtime::report::secrets::Secrets;
use serde_json::{Value, json};

pub fn request_body(request: &Request<'_>) -> Value {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .filter(|m| m.is_conversation())
        .map(message)
        .collect();
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": request.stream,
    });
    if request.stream {
        // Without this, a streamed reply carries no token usage.
        body["stream_options"] = json!({ "include_usage": true });
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    }
                })
            })
            .collect();
    }
    if let Some(temperature) = request.settings.temperature {
        body["temperature"] = json!(temperature);
    }
    if let Some(max_tokens) = request.max_tokens {
        // OpenAI itself has replaced `max_tokens` (which its reasoning models refuse); the other
        // Chat Completions servers know only `max_tokens`.
        let is_openai = request
            .settings
            .base_url
            .as_deref()
            .is_none_or(|url| url.contains("api.openai.com"));
        let key = if is_openai {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[key] = json!(max_tokens);
    }
    body
}

fn message(message: &Message) -> Value {
    match message {
        Message::System { content } => json!({ "role": "system", "content": content }),
        Message::User { content } => json!({ "role": "user", "content": content.as_str() }),
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let mut value = json!({ "role": "assistant", "content": content });
            if !tool_calls.is_empty() {
                if content.is_empty() {
                    value["content"] = Value::Null;
                }
                value["tool_calls"] = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": { "name": call.name, "arguments": call.arguments },
                        })
                    })
                    .collect();
            }
            value
        }
        Message::Tool(outcome) => json!({
            "role": "tool",
            "tool_call_id": outcome.tool_call_id,
            "content": outcome.content_with_error_prefix(),
        }),
        Message::Compaction { .. }
        | Message::TurnStart { .. }
        | Message::TurnEnd { .. }
        | Message::ToolsLoaded { .. }
        | Message::ToolsChanged { .. } => {
            unreachable!("session records are filtered out")
        }
    }
}

pub fn parse_reply(body: &Value) -> Result<Reply, String> {
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or("the response has no \"choices\"")?;
    let message = choice
        .get("message")
        .ok_or("the response's first choice has no \"message\"")?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (index, call) in calls.iter().enumerate() {
            let function = call
                .get("function")
                .ok_or_else(|| format!("tool call #{} has no \"function\"", index + 1))?;
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("tool call #{} has no function name", index + 1))?;
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => text.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(),
            };
            tool_calls.push(ToolCall {
                id: call_id(call.get("id").and_then(Value::as_str), index),
                name: name.to_string(),
                arguments,
            });
        }
    }
    let finish = choice.get("finish_reason").and_then(Value::as_str);
    let stop = stop_reason(finish, !tool_calls.is_empty());
    Ok(Reply {
        text,
        tool_calls,
        stop,
        usage: body.get("usage").and_then(super::usage_in),
        cut_short: false,
    })
}

/// Some local servers leave tool-call ids out; every call still needs one to match its result.
fn call_id(id: Option<&str>, index: usize) -> String {
    match id {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => format!("call_{}", index + 1),
    }
}

fn stop_reason(finish: Option<&str>, has_calls: bool) -> StopReason {
    match finish {
        Some("length") => StopReason::Length,
        _ if has_calls => StopReason::ToolCalls,
        Some("stop") | None => StopReason::End,
        Some("tool_calls" | "function_call") => StopReason::ToolCalls,
        Some(_) => StopReason::Other,
    }
}

/// A streamed reply being assembled.
#[derive(Default)]
pub struct Stream {
    text: String,
    /// Tool calls by their `index` in the deltas.
    calls: Vec<PartialCall>,
    finish: Option<String>,
    usage: Option<crate::conversation::message::Usage>,
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl Stream {
    pub fn event(
        &mut self,
        event: &SseEvent,
        on_text: &mut dyn FnMut(&str),
        secrets: &Secrets,
    ) -> Result<StreamState, String> {
        if event.data.trim() == "[DONE]" {
            return Ok(StreamState::Done);
        }
        let chunk: Value = serde_json::from_str(&event.data).map_err(|err| {
            format!(
                "a streamed chunk is not JSON ({err}): {}",
                super::preview(&event.data, secrets)
            )
        })?;
        if let Some(message) = super::error_in(&chunk) {
            return Err(format!(
                "the provider reported an error mid-stream: {message}"
            ));
        }
        if let Some(usage) = chunk.get("usage").and_then(super::usage_in) {
            self.usage = Some(usage);
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| choices.first())
        else {
            return Ok(StreamState::Open);
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                self.text.push_str(text);
                on_text(text);
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for fragment in calls {
                    self.tool_call_fragment(fragment)?;
                }
            }
        }
        if let Some(finish) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(finish.to_string());
        }
        Ok(StreamState::Open)
    }

    fn tool_call_fragment(&mut self, fragment: &Value) -> Result<(), String> {
        let index = match fragment.get("index").and_then(Value::as_u64) {
            Some(index) => index as usize,
            None => self.calls.len().saturating_sub(1),
        };
        if index as u64 > super::MAX_STREAMED_INDEX {
            return Err(format!("a streamed tool call has an absurd index {index}"));
        }
        if self.calls.len() <= index {
            self.calls.resize_with(index + 1, PartialCall::default);
        }
        let call = &mut self.calls[index];
        if let Some(id) = fragment.get("id").and_then(Value::as_str) {
            call.id.push_str(id);
        }
        if let Some(function) = fragment.get("function") {
            if let Some(name) = function.get("name").and_then(Value::as_str) {
                call.name.push_str(name);
            }
            if let Some(arguments) = function.get("arguments").and_then(Value::as_str) {
                super::push_arguments(&mut call.arguments, arguments);
            }
        }
        Ok(())
    }

    /// The text so far, cut at `text_bytes`; `None` once a native tool call has begun.
    pub fn cut_short(&mut self, text_bytes: usize) -> Option<Reply> {
        if !self.calls.is_empty() || !self.text.is_char_boundary(text_bytes.min(self.text.len())) {
            return None;
        }
        let mut text = std::mem::take(&mut self.text);
        text.truncate(text_bytes);
        Some(Reply {
            text,
            tool_calls: Vec::new(),
            stop: StopReason::Length,
            usage: None,
            cut_short: true,
        })
    }

    pub fn finish(self, complete: bool) -> Result<Reply, String> {
        if !complete && self.finish.is_none() {
            return Err("the stream ended before the reply was complete".into());
        }
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .enumerate()
            .filter(|(_, call)| !call.name.is_empty())
            .map(|(index, call)| ToolCall {
                id: call_id(Some(&call.id), index),
                name: call.name,
                arguments: call.arguments,
            })
            .collect();
        let stop = stop_reason(self.finish.as_deref(), !tool_calls.is_empty());
        Ok(Reply {
            text: self.text,
            tool_calls,
            stop,
            usage: self.usage,
            cut_short: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::message::ToolOutcome;
    use cordon_runtime::report::ErrorKind;

    #[test]
    fn tool_results_carry_their_ids_and_errors_are_prefixed() {
        let error = Message::Tool(ToolOutcome {
            tool_call_id: "c2".into(),
            tool_name: "read".into(),
            is_error: true,
            error_kind: Some(ErrorKind::Timeout),
            content: "ran past 1s".into(),
        });
        assert_eq!(
            message(&error),
            json!({"role": "tool", "tool_call_id": "c2", "content": "Error (timeout): ran past 1s"})
        );
    }

    #[test]
    fn the_token_limit_uses_the_name_the_server_knows() {
        let mut settings = crate::settings::ModelSettings {
            max_tokens: Some(100),
            ..Default::default()
        };
        let body = |settings: &crate::settings::ModelSettings| {
            request_body(&Request {
                model: "m",
                messages: &[],
                tools: &[],
                settings,
                stream: true,
                max_tokens: settings.max_tokens,
            })
        };
        assert_eq!(body(&settings)["max_completion_tokens"], 100);
        settings.base_url = Some("http://127.0.0.1:8080/v1".into());
        assert_eq!(body(&settings)["max_tokens"], 100);
        assert!(body(&settings).get("tools").is_none(), "no tools, no key");
        assert_eq!(body(&settings)["stream_options"]["include_usage"], true);
    }

    #[test]
    fn fragments_assemble_into_calls_in_index_order() {
        let mut stream = Stream::default();
        let mut printed = String::new();
        for data in [
            r#"{"choices":[{"delta":{"content":"Let me "}}]}"#,
            r#"{"choices":[{"delta":{"content":"look."}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"two","arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"one","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ] {
            let event = SseEvent {
                name: String::new(),
                data: data.into(),
            };
            stream
                .event(
                    &event,
                    &mut |text| printed.push_str(text),
                    &Secrets::default(),
                )
                .unwrap();
        }
        let reply = stream.finish(true).unwrap();
        assert_eq!(printed, "Let me look.");
        assert_eq!(reply.stop, StopReason::ToolCalls);
        assert_eq!(
            reply.tool_calls,
            [
                ToolCall {
                    id: "a".into(),
                    name: "one".into(),
                    arguments: String::new()
                },
                ToolCall {
                    id: "b".into(),
                    name: "two".into(),
                    arguments: "{\"x\":1}".into()
                },
            ]
        );
    }

    #[test]
    fn a_stream_cut_before_its_end_is_an_error() {
        let mut stream = Stream::default();
        let event = SseEvent {
            name: String::new(),
            data: r#"{"choices":[{"delta":{"content":"hal"}}]}"#.into(),
        };
        stream
            .event(&event, &mut |_| {}, &Secrets::default())
            .unwrap();
        assert!(stream.finish(false).is_err());
    }
}
