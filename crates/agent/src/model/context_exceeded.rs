//! Recognising a refusal that says the request does not fit the model's context window, in the
//! words each server uses, and reading the sizes it names: llama.cpp's `exceed_context_size_error`
//! (with `n_prompt_tokens` and `n_ctx`), OpenAI's `context_length_exceeded` ("maximum context
//! length is N tokens … resulted in M tokens"), Anthropic's "prompt is too long: M tokens > N
//! maximum", and the phrasings of vLLM, Ollama and others.

use serde_json::Value;

/// What a context-exceeded refusal said about sizes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Exceeded {
    pub prompt_tokens: Option<u64>,
    pub window: Option<u64>,
}

/// `Some` when the error body or message says the context was exceeded.
pub fn recognise(body: &[u8], message: &str) -> Option<Exceeded> {
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let error = json.as_ref().and_then(|value| value.get("error"));
    let field = |key: &str| {
        error
            .and_then(|error| error.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let lower = message.to_lowercase();
    let said = field("type") == "exceed_context_size_error"
        || field("code") == "context_length_exceeded"
        || [
            "context size",
            "context length",
            "context window",
            "maximum context",
            "prompt is too long",
            "too many tokens",
            "exceeds the context",
            "input is too long",
        ]
        .iter()
        .any(|phrase| lower.contains(phrase));
    if !said {
        return None;
    }
    let number = |key: &str| {
        error
            .and_then(|error| error.get(key))
            .and_then(Value::as_u64)
    };
    if let (Some(prompt), Some(window)) = (number("n_prompt_tokens"), number("n_ctx")) {
        return Some(Exceeded {
            prompt_tokens: Some(prompt),
            window: Some(window),
        });
    }
    let numbers = numbers_in(&lower);
    let found = if lower.contains("maximum context length") {
        // OpenAI and vLLM: the window first, then what the request took.
        Exceeded {
            window: numbers.first().copied(),
            prompt_tokens: numbers.get(1).copied(),
        }
    } else if lower.contains("prompt is too long") && numbers.len() >= 2 {
        // Anthropic: what the request took, then the window.
        Exceeded {
            prompt_tokens: Some(numbers[0]),
            window: Some(numbers[1]),
        }
    } else {
        Exceeded::default()
    };
    Some(found)
}

/// The whole numbers in `text`, in order (thousands separators allowed).
fn numbers_in(text: &str) -> Vec<u64> {
    let mut numbers = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            current.push(c);
        } else if c == ',' && !current.is_empty() && chars.peek().is_some_and(char::is_ascii_digit)
        {
            continue;
        } else if !current.is_empty() {
            numbers.extend(current.parse::<u64>().ok());
            current.clear();
        }
    }
    numbers.extend(current.parse::<u64>().ok());
    numbers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_servers_words_are_recognised_with_their_sizes() {
        let llama = br#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":15456,"n_ctx":8192}}"#;
        assert_eq!(
            recognise(
                llama,
                "the request exceeds the available context size, try increasing it"
            ),
            Some(Exceeded {
                prompt_tokens: Some(15456),
                window: Some(8192)
            })
        );
        let openai = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130,512 tokens. Please reduce the length of the messages.";
        assert_eq!(
            recognise(b"{}", openai),
            Some(Exceeded {
                prompt_tokens: Some(130512),
                window: Some(128000)
            })
        );
        let anthropic = "prompt is too long: 210000 tokens > 200000 maximum";
        assert_eq!(
            recognise(b"{}", anthropic),
            Some(Exceeded {
                prompt_tokens: Some(210000),
                window: Some(200000)
            })
        );
        assert_eq!(
            recognise(b"{}", "input is too long for requested model"),
            Some(Exceeded::default())
        );
        assert_eq!(recognise(b"{}", "invalid value for temperature"), None);
    }
}
