//! How many tokens a request may take: the model's context window (set by the user, reported by
//! the server, or the provider's documented default), less what is kept back for the reply and a
//! margin for counting error.

use crate::settings::{ModelSettings, Provider};

/// Where the window size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// `[model] context_window` or `--context-window`.
    Configured,
    /// The server said (llama.cpp's `/props`, or a refusal that named its size).
    Server,
    /// The provider's default (see [`default_window`]).
    Default,
}

impl WindowSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Configured => "configured",
            Self::Server => "reported by the server",
            Self::Default => "the provider's default",
        }
    }
}

/// The window a session works in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub tokens: u32,
    pub source: WindowSource,
}

/// Output tokens asked for when the user set no `max_tokens`: enough for a long answer, and at
/// most a quarter of the window.
pub const DEFAULT_REPLY_TOKENS: u32 = 4096;

/// The window cordon assumes when neither the user nor the server says: OpenAI's own API
/// 128,000 tokens (its current models have at least that), Anthropic 200,000, and any other
/// OpenAI-compatible server (a local llama.cpp, Ollama, vLLM, LM Studio) 8,192.
pub fn default_window(settings: &ModelSettings) -> u32 {
    match settings.provider {
        Provider::Anthropic => 200_000,
        Provider::OpenAi
            if settings
                .base_url
                .as_deref()
                .is_none_or(|url| url.contains("api.openai.com")) =>
        {
            128_000
        }
        Provider::OpenAi => 8_192,
    }
}

impl Window {
    /// The reply's token limit: `max_tokens` when set (at most half the window), else
    /// [`DEFAULT_REPLY_TOKENS`] or a quarter of the window, whichever is less.
    pub fn reply_tokens(&self, max_tokens: Option<u32>) -> u32 {
        match max_tokens {
            Some(limit) => limit.min(self.tokens / 2),
            None => DEFAULT_REPLY_TOKENS.min(self.tokens / 4),
        }
    }

    /// Tokens the request itself may take (in the server's tokens).
    pub fn request_budget(&self, reply_tokens: u32) -> u64 {
        let margin = (self.tokens / 32).max(32);
        u64::from(
            self.tokens
                .saturating_sub(reply_tokens)
                .saturating_sub(margin),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_per_provider_and_the_reply_reserve() {
        let mut settings = ModelSettings::default();
        assert_eq!(default_window(&settings), 128_000);
        settings.base_url = Some("http://127.0.0.1:8080/v1".into());
        assert_eq!(default_window(&settings), 8_192);
        settings.provider = Provider::Anthropic;
        assert_eq!(default_window(&settings), 200_000);
        let window = Window {
            tokens: 8000,
            source: WindowSource::Configured,
        };
        assert_eq!(window.reply_tokens(None), 2000);
        assert_eq!(window.reply_tokens(Some(500)), 500);
        assert_eq!(window.reply_tokens(Some(7000)), 4000);
        assert_eq!(window.request_budget(2000), 5750);
    }
}
