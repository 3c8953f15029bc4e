//! The two wire protocols the agent loop speaks: OpenAI Chat Completions (`openai.rs`) and the
//! Anthropic Messages API (`anthropic.rs`). Each turns cordon's messages and tool specs into a
//! request body, and a response (whole, or streamed as server-sent events) back into a [`Reply`].

mod anthropic;
mod openai;

use crate::conversation::message::{Message, Reply, ToolCall, Usage};
use crate::model::sse::SseEvent;
use crate::settings::{ModelSettings, Provider};
use cordon_runtime::report::secrets::Secrets;
use cordon_runtime::report::text_cut::{self, CutMark};
use serde_json::Value;

/// The most bytes of arguments one tool call may carry; a reply with a call past it is refused.
pub const MAX_CALL_ARGUMENT_BYTES: usize = 1 << 20;
/// The highest index a streamed tool call (or Anthropic content block) may have.
pub const MAX_STREAMED_INDEX: u64 = 4096;

/// What makes a reply too large to use, if anything: a call whose arguments are past
/// [`MAX_CALL_ARGUMENT_BYTES`].
pub fn oversized(calls: &[ToolCall], secrets: &Secrets) -> Option<String> {
    let (position, call) = calls
        .iter()
        .enumerate()
        .find(|(_, call)| call.arguments.len() > MAX_CALL_ARGUMENT_BYTES)?;
    Some(format!(
        "has a tool call (#{}, {}) with over {} MiB of arguments, the most one call may carry",
        position + 1,
        preview(&call.name, secrets),
        MAX_CALL_ARGUMENT_BYTES >> 20
    ))
}

/// Appends a streamed piece of a call's arguments, unless they are past the bound already (the
/// reply is refused then; what is kept stays bounded).
fn push_arguments(arguments: &mut String, piece: &str) {
    if arguments.len() <= MAX_CALL_ARGUMENT_BYTES {
        arguments.push_str(piece);
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments (always an object schema).
    pub parameters: Value,
}

/// Everything one request carries.
pub struct Request<'a> {
    pub model: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    pub settings: &'a ModelSettings,
    pub stream: bool,
    /// The reply's token limit sent with this request (`None`: the provider's own default).
    pub max_tokens: Option<u32>,
}

/// The URL requests are posted to.
pub fn endpoint(provider: Provider, base_url: &str) -> String {
    match provider {
        Provider::OpenAi => format!("{base_url}/chat/completions"),
        Provider::Anthropic => format!("{base_url}/messages"),
    }
}

/// The headers that carry the API key (none without a key) and the protocol version.
pub fn auth_headers(provider: Provider, key: Option<&str>) -> Vec<(&'static str, String)> {
    match provider {
        Provider::OpenAi => key
            .map(|key| vec![("authorization", format!("Bearer {key}"))])
            .unwrap_or_default(),
        Provider::Anthropic => {
            let mut headers = vec![("anthropic-version", "2023-06-01".to_string())];
            if let Some(key) = key {
                headers.push(("x-api-key", key.to_string()));
            }
            headers
        }
    }
}

/// The JSON body of a request.
pub fn request_body(provider: Provider, request: &Request<'_>) -> Value {
    match provider {
        Provider::OpenAi => openai::request_body(request),
        Provider::Anthropic => anthropic::request_body(request),
    }
}

/// A whole (non-streamed) response body as a reply; `Err` says what is wrong with it.
pub fn parse_reply(provider: Provider, body: &[u8], secrets: &Secrets) -> Result<Reply, String> {
    let body: Value = serde_json::from_slice(body).map_err(|err| {
        format!(
            "the response is not JSON ({err}): {}",
            preview(&String::from_utf8_lossy(body), secrets)
        )
    })?;
    if let Some(message) = error_in(&body) {
        return Err(format!("the provider reported an error: {message}"));
    }
    match provider {
        Provider::OpenAi => openai::parse_reply(&body),
        Provider::Anthropic => anthropic::parse_reply(&body),
    }
}

/// Assembles a streamed reply from its events.
pub enum StreamAssembler {
    OpenAi(openai::Stream),
    Anthropic(anthropic::Stream),
}

/// Whether the stream said it is complete.
#[derive(Debug, PartialEq, Eq)]
pub enum StreamState {
    Open,
    Done,
}

impl StreamAssembler {
    pub fn new(provider: Provider) -> Self {
        match provider {
            Provider::OpenAi => Self::OpenAi(openai::Stream::default()),
            Provider::Anthropic => Self::Anthropic(anthropic::Stream::default()),
        }
    }

    /// Takes one event; text deltas go to `on_text` as they arrive. `secrets` masks what an
    /// error quotes of a malformed event.
    pub fn event(
        &mut self,
        event: &SseEvent,
        on_text: &mut dyn FnMut(&str),
        secrets: &Secrets,
    ) -> Result<StreamState, String> {
        match self {
            Self::OpenAi(stream) => stream.event(event, on_text, secrets),
            Self::Anthropic(stream) => stream.event(event, on_text, secrets),
        }
    }

    /// The reply's first `text_bytes` bytes of text, when the rest of it is not wanted; `None`
    /// (read on) when a native tool call has begun streaming, since only text can be cut.
    pub fn cut_short(&mut self, text_bytes: usize) -> Option<Reply> {
        match self {
            Self::OpenAi(stream) => stream.cut_short(text_bytes),
            Self::Anthropic(_) => None,
        }
    }

    /// The reply assembled so far; `Err` when the stream ended before it said it was complete.
    pub fn finish(self, complete: bool) -> Result<Reply, String> {
        match self {
            Self::OpenAi(stream) => stream.finish(complete),
            Self::Anthropic(stream) => stream.finish(complete),
        }
    }
}

/// The provider's own explanation in an error body (`{"error": {"message": ...}}` for both), or
/// the start of the body.
pub fn error_message(body: &[u8], secrets: &Secrets) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| error_in(&value))
        .unwrap_or_else(|| preview(&String::from_utf8_lossy(body), secrets))
}

fn error_in(body: &Value) -> Option<String> {
    let error = body.get("error")?;
    if let Some(text) = error.as_str() {
        return Some(text.to_string());
    }
    let message = error.get("message").and_then(Value::as_str)?;
    Some(match error.get("type").and_then(Value::as_str) {
        Some(kind) => format!("{message} ({kind})"),
        None => message.to_string(),
    })
}

/// Reads a `usage` object: OpenAI's `prompt_tokens`/`completion_tokens` or Anthropic's
/// `input_tokens` (plus cached input)/`output_tokens`.
fn usage_in(usage: &Value) -> Option<Usage> {
    let number = |key: &str| usage.get(key).and_then(Value::as_u64);
    if let Some(prompt) = number("prompt_tokens") {
        return Some(Usage {
            prompt_tokens: prompt,
            completion_tokens: number("completion_tokens").unwrap_or(0),
        });
    }
    // A server may send any number: the sum saturates.
    let input = number("input_tokens")?
        .saturating_add(number("cache_creation_input_tokens").unwrap_or(0))
        .saturating_add(number("cache_read_input_tokens").unwrap_or(0));
    Some(Usage {
        prompt_tokens: input,
        completion_tokens: number("output_tokens").unwrap_or(0),
    })
}

/// At most 300 characters of `text`, for error messages.
pub fn preview(text: &str, secrets: &Secrets) -> String {
    // Masked before it is cut, so no cut leaves a secret's head unmasked.
    let text = secrets.scrub(text);
    let text = text.trim();
    if text.is_empty() {
        return "(empty body)".into();
    }
    text_cut::cut_chars(text, 300, CutMark::Ellipsis).into_owned()
}

/// A tool call's arguments as a JSON object, for protocols that carry objects (Anthropic): text
/// that is not a JSON object becomes `{}` (the pipeline reported it as `invalid_arguments`).
fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(Default::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sse::SseDecoder;
    use proptest::prelude::*;

    /// Fragments that real streams are made of, so random mixes get past the JSON parser.
    fn fragment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n".to_string()),
            Just("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"{\"}}]}}]}\n\n".to_string()),
            Just("data: {\"choices\":[{\"finish_reason\":\"length\"}]}\n\n".to_string()),
            Just("data: [DONE]\n\n".to_string()),
            Just("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"x\"}}\n\n".to_string()),
            Just("data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\"}}\n\n".to_string()),
            Just("data: {\"type\":\"content_block_delta\",\"index\":99999999999,\"delta\":{}}\n\n".to_string()),
            Just("data: {\"type\":\"message_stop\"}\n\n".to_string()),
            Just("data: {\"error\":{\"message\":\"boom\"}}\n\n".to_string()),
            "[ -~]{0,40}",
            proptest::collection::vec(any::<u8>(), 0..40)
                .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        ]
    }

    proptest! {
        /// Whatever a server streams, assembling it ends in a reply or an error, never a panic.
        #[test]
        fn any_stream_ends_in_a_reply_or_an_error(
            parts in proptest::collection::vec(fragment(), 0..12),
            split in 1usize..64,
            anthropic in any::<bool>(),
        ) {
            let provider = if anthropic { Provider::Anthropic } else { Provider::OpenAi };
            let bytes = parts.concat().into_bytes();
            let mut decoder = SseDecoder::default();
            let mut assembler = StreamAssembler::new(provider);
            let mut done = false;
            let mut failed = false;
            for chunk in bytes.chunks(split) {
                for event in decoder.feed(chunk).unwrap_or_default() {
                    match assembler.event(&event, &mut |_| {}, &Secrets::default()) {
                        Ok(StreamState::Done) => done = true,
                        Ok(StreamState::Open) => {}
                        Err(_) => failed = true,
                    }
                }
            }
            if !failed {
                let _ = assembler.finish(done);
            }
            let _ = parse_reply(provider, &bytes, &Secrets::default());
        }
    }
}
