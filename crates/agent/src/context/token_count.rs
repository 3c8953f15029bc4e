//! Counting the tokens of a request before it is sent. Text is encoded with OpenAI's BPE
//! (`o200k_base` for the GPT-4o/4.1/5 and o-series families, `cl100k_base` for every other
//! model, where it is a close stand-in), plus a few tokens per message for the chat template.
//! Each reply's `usage` then calibrates the count: the factor between what the server said the
//! request took and what was counted scales every later count, so a model with another tokenizer
//! (Qwen, Llama, Claude) is counted in its own tokens after the first reply.

use crate::conversation::message::{Message, ToolCall};
use crate::model::provider::ToolSpec;
use std::collections::HashMap;
use std::hash::{BuildHasher as _, BuildHasherDefault, DefaultHasher};
use std::sync::Mutex;
use tiktoken_rs::CoreBPE;

/// Tokens a chat template adds around each message (role markers, separators).
const PER_MESSAGE: u64 = 4;
/// Tokens a template adds around each tool call.
const PER_CALL: u64 = 8;

/// Text up to this size is encoded whole.
const WHOLE_TEXT_BYTES: usize = 64 << 10;
/// Longer text is encoded in pieces of about this size.
const PIECE_BYTES: usize = 1 << 10;

/// Where the first piece of `text` ends: before the last whitespace in its last quarter when it
/// has one (the encoder starts a word with the space before it, so the count comes out as for
/// the whole text), else at the last character boundary within [`PIECE_BYTES`].
fn piece_end(text: &str) -> usize {
    if text.len() <= PIECE_BYTES {
        return text.len();
    }
    let boundary_at_or_before = |mut at: usize| {
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let end = boundary_at_or_before(PIECE_BYTES);
    let start = boundary_at_or_before(end - PIECE_BYTES / 4);
    match text[start..end].rfind(char::is_whitespace) {
        Some(at) if start + at > 0 => start + at,
        _ => end,
    }
}

pub struct TokenCounter {
    bpe: &'static CoreBPE,
    encoding: &'static str,
    /// Server tokens per counted token, learned from `usage`.
    factor: f64,
    /// Text already encoded, by hash: a long session counts each message once.
    cache: Mutex<HashMap<u64, u64, BuildHasherDefault<DefaultHasher>>>,
}

impl TokenCounter {
    /// The counter for `model` (its name picks the encoding).
    pub fn for_model(model: &str) -> Self {
        let name = model.to_lowercase();
        let newer = ["gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "chatgpt"]
            .iter()
            .any(|family| name.starts_with(family) || name.contains(&format!("/{family}")));
        let (bpe, encoding) = if newer {
            (tiktoken_rs::o200k_base_singleton(), "o200k_base")
        } else {
            (tiktoken_rs::cl100k_base_singleton(), "cl100k_base")
        };
        Self {
            bpe,
            encoding,
            factor: 1.0,
            cache: Mutex::new(HashMap::default()),
        }
    }

    pub fn encoding(&self) -> &'static str {
        self.encoding
    }

    pub fn factor(&self) -> f64 {
        self.factor
    }

    /// Tokens of `text` as the encoding counts them (before calibration).
    pub fn raw_text(&self, text: &str) -> u64 {
        if text.is_empty() {
            return 0;
        }
        let key = BuildHasherDefault::<DefaultHasher>::default().hash_one(text);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = cache.get(&key) {
            return *count;
        }
        let count = self.encode_count(text);
        if cache.len() > 100_000 {
            cache.clear();
        }
        cache.insert(key, count);
        count
    }

    /// Tokens of `text`, encoded whole when it is short and a piece at a time otherwise: the
    /// encoder's time and memory grow with the square of a long run of letters, so a 20 MiB
    /// message (a resumed transcript can hold one) took gigabytes. A piece ends after
    /// whitespace where it can; a cut inside a word counts at most one token too many, which
    /// errs the safe way (the request is held smaller).
    fn encode_count(&self, text: &str) -> u64 {
        if text.len() <= WHOLE_TEXT_BYTES {
            return self.bpe.encode_ordinary(text).len() as u64;
        }
        let mut count = 0;
        let mut rest = text;
        while !rest.is_empty() {
            let piece = &rest[..piece_end(rest)];
            count += self.bpe.encode_ordinary(piece).len() as u64;
            rest = &rest[piece.len()..];
        }
        count
    }

    /// Tokens of one message (before calibration); session records count nothing.
    pub fn raw_message(&self, message: &Message) -> u64 {
        match message {
            Message::System { content } => PER_MESSAGE + self.raw_text(content),
            Message::User { content } => PER_MESSAGE + self.raw_text(content.as_str()),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                PER_MESSAGE
                    + self.raw_text(content)
                    + tool_calls.iter().map(|c| self.raw_call(c)).sum::<u64>()
            }
            Message::Tool(outcome) => {
                PER_MESSAGE + self.raw_text(&outcome.tool_call_id) + self.raw_text(&outcome.content)
            }
            Message::Compaction { .. }
            | Message::TurnStart { .. }
            | Message::TurnEnd { .. }
            | Message::ToolsLoaded { .. }
            | Message::ToolsChanged { .. } => 0,
        }
    }

    fn raw_call(&self, call: &ToolCall) -> u64 {
        PER_CALL
            + self.raw_text(&call.id)
            + self.raw_text(&call.name)
            + self.raw_text(&call.arguments)
    }

    /// Tokens of the tool definitions a request offers (before calibration).
    pub fn raw_tools(&self, tools: &[ToolSpec]) -> u64 {
        tools
            .iter()
            .map(|tool| {
                PER_CALL
                    + self.raw_text(&tool.name)
                    + self.raw_text(&tool.description)
                    + self.raw_text(&tool.parameters.to_string())
            })
            .sum()
    }

    /// A raw count in the server's tokens.
    pub fn calibrated(&self, raw: u64) -> u64 {
        (raw as f64 * self.factor).ceil() as u64
    }

    /// The most raw tokens that stay within `tokens` of the server's.
    pub fn raw_budget(&self, tokens: u64) -> u64 {
        (tokens as f64 / self.factor).floor() as u64
    }

    /// Learns from a reply: the server counted `reported` prompt tokens for a request counted
    /// as `raw`. Raising the factor takes effect at once; lowering it goes half way, so one
    /// unusual request does not make the next ones too long.
    pub fn calibrate(&mut self, raw: u64, reported: u64) {
        if raw < 32 || reported == 0 {
            return;
        }
        let observed = (reported as f64 / raw as f64).clamp(0.5, 4.0);
        self.factor = if observed >= self.factor {
            observed
        } else {
            (self.factor + observed) / 2.0
        };
    }

    /// The server refused a request counted as `raw` for taking `reported` tokens (or, when it
    /// did not say, for being too long): count more from now on.
    pub fn learn_from_refusal(&mut self, raw: u64, reported: Option<u64>) {
        let observed = match reported {
            Some(reported) if raw > 0 => reported as f64 / raw as f64 * 1.05,
            _ => self.factor * 1.3,
        };
        self.factor = observed.clamp(self.factor, 4.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_counted_in_pieces_close_to_the_whole_count() {
        let counter = TokenCounter::for_model("qwen2.5-coder");
        let prose = "The quick brown fox jumps over the lazy dog, then naps. ".repeat(2_000);
        let whole = counter.bpe.encode_ordinary(&prose).len() as u64;
        let pieces = counter.raw_text(&prose);
        assert!(
            pieces >= whole && pieces <= whole + whole / 100,
            "{pieces} vs {whole}"
        );
        // Multi-byte characters are never cut, and one long word is counted without hanging.
        let wide = "é𝄞あ".repeat(40_000);
        assert!(counter.raw_text(&wide) > 40_000);
        let word = "a".repeat(8 << 20);
        let count = counter.raw_text(&word);
        assert!(count > (8 << 20) / 16 && count < 8 << 20, "{count}");
    }

    #[test]
    fn the_encoding_follows_the_model_family_and_counts_real_tokens() {
        assert_eq!(
            TokenCounter::for_model("gpt-4o-mini").encoding(),
            "o200k_base"
        );
        assert_eq!(
            TokenCounter::for_model("openai/gpt-5").encoding(),
            "o200k_base"
        );
        assert_eq!(
            TokenCounter::for_model("qwen2.5-coder").encoding(),
            "cl100k_base"
        );
        let counter = TokenCounter::for_model("gpt-4");
        assert_eq!(counter.raw_text("hello world"), 2);
        assert_eq!(counter.raw_text(""), 0);
    }

    #[test]
    fn usage_calibrates_up_at_once_and_down_half_way() {
        let mut counter = TokenCounter::for_model("qwen");
        counter.calibrate(1000, 1500);
        assert_eq!(counter.calibrated(100), 150);
        counter.calibrate(1000, 1000);
        assert!((counter.factor() - 1.25).abs() < 1e-9);
        counter.learn_from_refusal(1000, Some(2000));
        assert!((counter.factor() - 2.1).abs() < 1e-9);
        assert_eq!(counter.raw_budget(210), 100);
    }
}
