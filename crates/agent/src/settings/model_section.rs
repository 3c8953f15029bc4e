//! `[model]` in cordon.toml, read by the agent crate that talks to the model: which model API the
//! agent loop talks to and how. The API key itself never appears here, only the name of the
//! environment variable that holds it.

use cordon_runtime::config::parse_duration;
use serde::Deserialize;
use std::time::Duration;

/// The wire protocol of the model API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI Chat Completions, spoken by OpenAI, vLLM, llama.cpp server, Ollama, LM Studio,
    /// OpenRouter and others.
    #[default]
    #[serde(rename = "openai")]
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
}

impl Provider {
    /// Every provider, in the order help texts list them.
    pub const ALL: [Provider; 2] = [Self::OpenAi, Self::Anthropic];

    /// The provider named `name` as cordon.toml and `--provider` spell it.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|provider| provider.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    /// Where the API lives unless `base_url` says otherwise.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com/v1",
        }
    }

    /// The environment variable read for the key unless `api_key_env` names another.
    pub fn default_api_key_env(self) -> &'static str {
        match self {
            Self::OpenAi => "OPENAI_API_KEY",
            Self::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

/// The smallest context window cordon works in (a system prompt, the tools and one reply).
pub const MIN_CONTEXT_WINDOW: u32 = 1024;

/// How a stream may pause between bytes when `[model] timeout` is not set.
pub const STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// How older turns are compacted into a summary when the history outgrows the context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compaction {
    /// Ask the model for a summary (a separate request offering no tools); fall back to the
    /// digest when that request fails or its answer is empty.
    #[default]
    Model,
    /// A deterministic digest of the calls made and the answers given, without asking the model.
    Digest,
}

impl Compaction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Digest => "digest",
        }
    }
}

/// Validated `[model]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    pub provider: Provider,
    /// The API's base URL, e.g. `http://127.0.0.1:11434/v1`; `None` means the provider's own.
    pub base_url: Option<String>,
    /// The model name sent with every request.
    pub model: Option<String>,
    /// The environment variable holding the API key; `None` means the provider's usual one
    /// (optional for `openai`, which local servers speak without a key).
    pub api_key_env: Option<String>,
    /// `None` (the default): a streamed reply may pause up to [`STREAM_IDLE_TIMEOUT`] between
    /// bytes, and a whole (non-streamed) reply may take as long as the model needs. Set: the
    /// longest pause of a stream, or the longest wait for a whole reply.
    pub timeout: Option<Duration>,
    /// The model's context window in tokens; `None`: learned from the server where it says
    /// (llama.cpp), else the provider's default (see `context_window_default`).
    pub context_window: Option<u32>,
    /// How older turns are compacted when the history outgrows the window.
    pub compaction: Compaction,
    pub temperature: Option<f64>,
    /// The reply's token limit (Anthropic requires one: 4096 unless set).
    pub max_tokens: Option<u32>,
    /// Stream replies (SSE), printing text as it arrives; `false` waits for whole replies.
    pub stream: bool,
    /// Retries of a request answered 429 or 5xx (or not answered at all).
    pub retries: u32,
    /// The first retry's delay; each later one doubles it (with jitter) unless `Retry-After` says.
    pub retry_delay: Duration,
    /// Recover tool calls that a model wrote as text (`<tool_call>{...}</tool_call>` or a bare
    /// `{"name": ..., "arguments": ...}`); OpenAI provider only.
    pub parse_text_tool_calls: bool,
}

impl Default for ModelSettings {
    fn default() -> Self {
        Self {
            provider: Provider::OpenAi,
            base_url: None,
            model: None,
            api_key_env: None,
            timeout: None,
            context_window: None,
            compaction: Compaction::Model,
            temperature: None,
            max_tokens: None,
            stream: true,
            retries: 4,
            retry_delay: Duration::from_millis(500),
            parse_text_tool_calls: false,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawModel {
    provider: Option<Provider>,
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    timeout: Option<String>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    stream: Option<bool>,
    retries: Option<u32>,
    retry_delay: Option<String>,
    parse_text_tool_calls: Option<bool>,
    context_window: Option<u32>,
    compaction: Option<Compaction>,
}

impl RawModel {
    pub(super) fn validate(self) -> Result<ModelSettings, super::KeyError> {
        let defaults = ModelSettings::default();
        if let Some(url) = &self.base_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err((
                "base_url".into(),
                format!("{url:?} must start with http:// or https://"),
            ));
        }
        if let Some(url) = &self.base_url
            && let Some(reason) = base_url_credentials(url)
        {
            return Err(("base_url".into(), reason));
        }
        if let Some(name) = &self.api_key_env
            && (name.is_empty() || name.contains('='))
        {
            return Err((
                "api_key_env".into(),
                format!(
                    "{name:?} must be the NAME of an environment variable (the key itself never goes in cordon.toml)"
                ),
            ));
        }
        if let Some(temperature) = self.temperature
            && !(0.0..=2.0).contains(&temperature)
        {
            return Err((
                "temperature".into(),
                format!("{temperature} is out of range; use 0.0 to 2.0"),
            ));
        }
        if self.max_tokens == Some(0) {
            return Err(("max_tokens".into(), "must be at least 1".into()));
        }
        if self
            .context_window
            .is_some_and(|window| window < MIN_CONTEXT_WINDOW)
        {
            return Err((
                "context_window".into(),
                format!("must be at least {MIN_CONTEXT_WINDOW} tokens"),
            ));
        }
        if self.retries.is_some_and(|retries| retries > 20) {
            return Err(("retries".into(), "use at most 20".into()));
        }
        let duration = |key: &str, text: &Option<String>, default: Duration| match text {
            Some(text) => parse_duration(text).map_err(|m| (key.to_string(), m)),
            None => Ok(default),
        };
        Ok(ModelSettings {
            provider: self.provider.unwrap_or_default(),
            base_url: self
                .base_url
                .map(|url| url.trim_end_matches('/').to_string()),
            model: self.model,
            api_key_env: self.api_key_env,
            timeout: match &self.timeout {
                Some(text) => Some(parse_duration(text).map_err(|m| ("timeout".to_string(), m))?),
                None => None,
            },
            context_window: self.context_window,
            compaction: self.compaction.unwrap_or_default(),
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            stream: self.stream.unwrap_or(defaults.stream),
            retries: self.retries.unwrap_or(defaults.retries),
            retry_delay: duration("retry_delay", &self.retry_delay, defaults.retry_delay)?,
            parse_text_tool_calls: self.parse_text_tool_calls.unwrap_or(false),
        })
    }
}

/// Why `url` may not be a model API's base URL: it carries a user name or password, which would
/// be printed with every error about the API and sent in place of the key. `None` when it does not.
pub fn base_url_credentials(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority.contains('@').then(|| {
        "the base URL carries a user name or password before `@`: take it out, and give the key with api_key_env (it is sent in the request's auth header and never printed)".to_string()
    })
}
