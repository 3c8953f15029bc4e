//! The Anthropic Messages API: the request body (system prompt apart, `tool_use` and
//! `tool_result` blocks with `is_error`, roles merged so they alternate), a whole response, and a
//! streamed one (`content_block_*` and `message_delta` events).

use super::{Request, StreamState, arguments_object};
use crate::conversation::message::{Message, Reply, StopReason, ToolCall};
use crate::model::sse::SseEvent;
use cordon_runtime::report::secrets::Secrets;
use serde_json::{Value, json};

/// Anthropic requires a token limit; this one applies unless `max_tokens` says otherwise.
const DEFAULT_MAX_TOKENS: u32 = 4096;

pub fn request_body(request: &Request<'_>) -> Value {
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in request.messages {
        let (role, blocks) = match message {
            Message::System { .. }
            | Message::Compaction { .. }
            | Message::TurnStart { .. }
            | Message::TurnEnd { .. }
            | Message::ToolsLoaded { .. }
            | Message::ToolsChanged { .. } => {
                continue;
            }
            Message::User { content } => (
                "user",
                vec![json!({"type": "text", "text": content.as_str()})],
            ),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let mut blocks = Vec::new();
                if !content.trim().is_empty() || tool_calls.is_empty() {
                    let text = if content.trim().is_empty() {
                        "(no reply)"
                    } else {
                        content
                    };
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": arguments_object(&call.arguments),
                    }));
                }
                ("assistant", blocks)
            }
            Message::Tool(outcome) => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": outcome.tool_call_id,
                    "content": outcome.content,
                    "is_error": outcome.is_error,
                })],
            ),
        };
        match messages.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
        "stream": request.stream,
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
    }
    if let Some(temperature) = request.settings.temperature {
        body["temperature"] = json!(temperature);
    }
    body
}

pub fn parse_reply(body: &Value) -> Result<Reply, String> {
    let blocks = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or("the response has no \"content\" array")?;
    let mut reply = Reply::default();
    for (index, block) in blocks.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                reply
                    .text
                    .push_str(block.get("text").and_then(Value::as_str).unwrap_or(""));
            }
            Some("tool_use") => {
                let field = |name: &str| {
                    block
                        .get(name)
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| format!("content block #{} has no {name:?}", index + 1))
                };
                reply.tool_calls.push(ToolCall {
                    id: field("id")?,
                    name: field("name")?,
                    arguments: block
                        .get("input")
                        .map(Value::to_string)
                        .unwrap_or_else(|| "{}".into()),
                });
            }
            // Thinking and other blocks carry nothing the loop acts on.
            _ => {}
        }
    }
    reply.stop = stop_reason(
        body.get("stop_reason").and_then(Value::as_str),
        !reply.tool_calls.is_empty(),
    );
    reply.usage = body.get("usage").and_then(super::usage_in);
    Ok(reply)
}

fn stop_reason(reason: Option<&str>, has_calls: bool) -> StopReason {
    match reason {
        Some("max_tokens") => StopReason::Length,
        _ if has_calls => StopReason::ToolCalls,
        Some("end_turn" | "stop_sequence") | None => StopReason::End,
        Some("tool_use") => StopReason::ToolCalls,
        Some(_) => StopReason::Other,
    }
}

/// A streamed reply being assembled.
#[derive(Default)]
pub struct Stream {
    text: String,
    /// Blocks by their stream index: text, or a tool call with its JSON arriving in pieces.
    blocks: Vec<Option<ToolCall>>,
    stop: Option<String>,
    usage: Option<crate::conversation::message::Usage>,
}

impl Stream {
    pub fn event(
        &mut self,
        event: &SseEvent,
        on_text: &mut dyn FnMut(&str),
        secrets: &Secrets,
    ) -> Result<StreamState, String> {
        let data: Value = serde_json::from_str(&event.data).map_err(|err| {
            format!(
                "a streamed event is not JSON ({err}): {}",
                super::preview(&event.data, secrets)
            )
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&event.name);
        match kind {
            "error" => {
                let message = super::error_in(&data).unwrap_or_else(|| data.to_string());
                return Err(format!(
                    "the provider reported an error mid-stream: {message}"
                ));
            }
            "content_block_start" => {
                let index = block_index(&data, secrets)?;
                if self.blocks.len() <= index {
                    self.blocks.resize_with(index + 1, || None);
                }
                let block = data.get("content_block").unwrap_or(&Value::Null);
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    self.blocks[index] = Some(ToolCall {
                        id: block
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        name: block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        arguments: String::new(),
                    });
                } else if let Some(text) = block.get("text").and_then(Value::as_str)
                    && !text.is_empty()
                {
                    self.text.push_str(text);
                    on_text(text);
                }
            }
            "content_block_delta" => {
                let index = block_index(&data, secrets)?;
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let text = delta.get("text").and_then(Value::as_str).unwrap_or("");
                        self.text.push_str(text);
                        on_text(text);
                    }
                    Some("input_json_delta") => {
                        let piece = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        match self.blocks.get_mut(index) {
                            Some(Some(call)) => super::push_arguments(&mut call.arguments, piece),
                            _ => {
                                return Err(format!(
                                    "tool input arrived for block {index}, which is not a tool_use block"
                                ));
                            }
                        }
                    }
                    _ => {}
                }
            }
            "message_start" => {
                if let Some(usage) = data
                    .get("message")
                    .and_then(|message| message.get("usage"))
                    .and_then(super::usage_in)
                {
                    self.usage = Some(usage);
                }
            }
            "message_delta" => {
                if let Some(output) = data
                    .get("usage")
                    .and_then(|usage| usage.get("output_tokens"))
                    .and_then(Value::as_u64)
                {
                    let usage = self.usage.get_or_insert_with(Default::default);
                    usage.completion_tokens = output;
                }
                if let Some(reason) = data
                    .get("delta")
                    .and_then(|delta| delta.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop = Some(reason.to_string());
                }
            }
            "message_stop" => return Ok(StreamState::Done),
            _ => {}
        }
        Ok(StreamState::Open)
    }

    pub fn finish(self, complete: bool) -> Result<Reply, String> {
        if !complete {
            return Err("the stream ended before the reply was complete (no message_stop)".into());
        }
        let tool_calls: Vec<ToolCall> = self
            .blocks
            .into_iter()
            .flatten()
            .map(|mut call| {
                // A tool that takes no arguments streams no input at all.
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".into();
                }
                call
            })
            .collect();
        let stop = stop_reason(self.stop.as_deref(), !tool_calls.is_empty());
        Ok(Reply {
            text: self.text,
            tool_calls,
            stop,
            usage: self.usage,
            cut_short: false,
        })
    }
}

fn block_index(data: &Value, secrets: &Secrets) -> Result<usize, String> {
    match data.get("index").and_then(Value::as_u64) {
        Some(index) if index <= super::MAX_STREAMED_INDEX => Ok(index as usize),
        _ => Err(format!(
            "a streamed content block event has no usable index: {}",
            super::preview(&data.to_string(), secrets)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::message::ToolOutcome;
    use crate::conversation::user_text::UserText;
    use crate::settings::ModelSettings;

    #[test]
    fn roles_alternate_and_results_carry_the_error_flag() {
        let messages = [
            Message::System {
                content: "sys".into(),
            },
            Message::User {
                content: UserText::typed("hi"),
            },
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "t1".into(),
                        name: "a".into(),
                        arguments: "{\"x\":1}".into(),
                    },
                    ToolCall {
                        id: "t2".into(),
                        name: "b".into(),
                        arguments: "{not json".into(),
                    },
                ],
                stop: StopReason::ToolCalls,
                usage: None,
            },
            Message::Tool(ToolOutcome {
                tool_call_id: "t1".into(),
                tool_name: "a".into(),
                is_error: false,
                error_kind: None,
                content: "ok".into(),
            }),
            Message::Tool(ToolOutcome {
                tool_call_id: "t2".into(),
                tool_name: "b".into(),
                is_error: true,
                error_kind: Some(cordon_runtime::report::ErrorKind::InvalidArguments),
                content: "bad".into(),
            }),
        ];
        let settings = ModelSettings::default();
        let body = request_body(&Request {
            model: "m",
            messages: &messages,
            tools: &[],
            settings: &settings,
            stream: false,
            max_tokens: None,
        });
        assert_eq!(body["system"], "sys");
        assert_eq!(body["max_tokens"], 4096);
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(body["messages"][1]["content"][1]["input"], json!({}));
        let results = &body["messages"][2]["content"];
        assert_eq!(results[0]["is_error"], false);
        assert_eq!(results[1]["is_error"], true);
        assert_eq!(results[1]["tool_use_id"], "t2");
    }
}
