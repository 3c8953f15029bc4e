//! The HTTP side of talking to a model: one request per step, posted with reqwest, retried on
//! 429/5xx/no connection (see `retry.rs`; a generation that timed out is not retried: it would
//! only time out again), read whole or as a stream of server-sent events, and cancellable at any
//! point. A request refused for not fitting the context window is its own error, so the loop can
//! compact the history and try once more. One reply has a total deadline (`[agent]
//! max_reply_time`, retries included: `--timeout` bounds each pause, which a stream of empty
//! deltas never makes), and a reply too large to use (over [`MAX_REPLY_BYTES`] whole,
//! [`MAX_STREAM_BYTES`] streamed, or with one call's arguments past
//! [`provider::MAX_CALL_ARGUMENT_BYTES`]) is refused with an error naming the reply. The API key is read from the environment once and sent only in
//! request headers; it never reaches logs, errors or transcripts.

use crate::conversation::message::{Message, Reply};
use crate::conversation::observer::AgentObserver;
use crate::model::provider::{self, Request, StreamAssembler, StreamState, ToolSpec};
use crate::model::retry::{self, RetryPolicy};
use crate::model::sse::SseDecoder;
use crate::settings::{ModelSettings, Provider, STREAM_IDLE_TIMEOUT};
use cordon_runtime::report::secrets::Secrets;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

pub use super::model_error::ModelError;

/// A configured connection to one model API.
pub struct ModelClient {
    http: reqwest::Client,
    provider: Provider,
    url: String,
    model: String,
    key: Option<String>,
    settings: ModelSettings,
    /// The longest one reply may take, all of it.
    reply_deadline: Duration,
    /// The host's scrubber: the key is registered with it, and errors quoting a reply mask it.
    secrets: Secrets,
}

/// One failed attempt: worth retrying (and after how long the server wants), or final.
enum Failure {
    Transient {
        reason: String,
        retry_after: Option<Duration>,
    },
    Final(ModelError),
}

impl ModelClient {
    /// Checks the settings and reads the API key from the environment, registering it with
    /// `secrets` (the host's scrubber) so no output of the host shows it.
    pub fn new(settings: &ModelSettings, secrets: &Secrets) -> Result<Self, ModelError> {
        let model = settings.model.clone().ok_or(ModelError::NoModel)?;
        let provider = settings.provider;
        let base = settings
            .base_url
            .clone()
            .unwrap_or_else(|| provider.default_base_url().to_string());
        let key = match &settings.api_key_env {
            Some(var) => Some(read_key(var, secrets)?),
            // The provider's own variable (OPENAI_API_KEY, ANTHROPIC_API_KEY) is a key for the
            // provider's own API: it is not sent to another base URL (a local server, a proxy,
            // a URL a config set) unless `api_key_env` names it.
            None if !same_origin(&base, provider.default_base_url()) => None,
            None => {
                let var = provider.default_api_key_env();
                match (provider, read_key(var, secrets)) {
                    (_, Ok(key)) => Some(key),
                    (Provider::OpenAi, Err(_)) => None,
                    (Provider::Anthropic, Err(err)) => return Err(err),
                }
            }
        };
        let mut http = reqwest::Client::builder()
            .connect_timeout(
                settings
                    .timeout
                    .unwrap_or(STREAM_IDLE_TIMEOUT)
                    .min(Duration::from_secs(30)),
            )
            .user_agent(concat!("cordon/", env!("CARGO_PKG_VERSION")))
            // The key travels in a header (Anthropic's `x-api-key` survives reqwest's cross-host
            // redirects): no redirect is followed, so it goes only to the configured address.
            .redirect(reqwest::redirect::Policy::none());
        if settings.stream {
            // A stream's limit is on pauses between bytes; a whole reply's is on all of it (set
            // per request, and only when the user set one: a slow local model may take minutes).
            http = http.read_timeout(settings.timeout.unwrap_or(STREAM_IDLE_TIMEOUT));
        }
        let http = http.build().map_err(ModelError::Client)?;
        Ok(Self {
            http,
            provider,
            url: provider::endpoint(provider, &base),
            model,
            key,
            settings: settings.clone(),
            reply_deadline: crate::settings::AgentSettings::default().max_reply_time,
            secrets: secrets.clone(),
        })
    }

    /// Bounds all of one reply (retries included) by `deadline` (`[agent] max_reply_time`).
    pub fn set_reply_deadline(&mut self, deadline: Duration) {
        self.reply_deadline = deadline;
    }

    pub fn provider(&self) -> Provider {
        self.provider
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// Whether the API caps a reply by itself when no limit is sent (OpenAI's own API does, per
    /// model; local OpenAI-compatible servers may generate until their context is full).
    pub fn has_own_output_limit(&self) -> bool {
        self.provider == Provider::OpenAi && self.url.starts_with("https://api.openai.com/")
    }

    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// Sends the conversation and the offered tools, with `max_tokens` for the reply (`None`:
    /// the provider's default); returns the model's reply. Streamed text goes to `observer` as
    /// it arrives; once `text_enough` says the first `n` bytes of the text are all that is
    /// needed, a streamed reply is read no further and comes back as those bytes of text (no
    /// usage: the server never finished).
    pub async fn complete(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
        max_tokens: Option<u32>,
        observer: &dyn AgentObserver,
        text_enough: &TextEnough<'_>,
        cancel: &CancellationToken,
    ) -> Result<Reply, ModelError> {
        let body = provider::request_body(
            self.provider,
            &Request {
                model: &self.model,
                messages,
                tools,
                settings: &self.settings,
                stream: self.settings.stream,
                max_tokens,
            },
        );
        // Serialised once; every attempt sends the same shared bytes.
        let body = bytes::Bytes::from(serde_json::to_vec(&body).expect("a JSON value serialises"));
        let span = self.chat_span();
        let reply = tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(ModelError::Cancelled),
            reply = tokio::time::timeout(
                self.reply_deadline,
                self.with_retries(&body, observer, text_enough).instrument(span.clone()),
            ) => reply.unwrap_or_else(|_| Err(ModelError::ReplyDeadline {
                url: self.url.clone(),
                after: self.reply_deadline,
            })),
        };
        match &reply {
            Ok(reply) => {
                if let Some(usage) = reply.usage {
                    span.record("gen_ai.usage.input_tokens", usage.prompt_tokens as i64);
                    span.record("gen_ai.usage.output_tokens", usage.completion_tokens as i64);
                }
                span.record(
                    "gen_ai.response.finish_reasons",
                    reply.stop.convention_name(),
                );
            }
            Err(err) => {
                span.record("error.type", err.kind());
                span.record("otel.status_code", "ERROR");
            }
        }
        reply
    }

    /// The span of one model request (`chat {model}`, a client span), for export.
    fn chat_span(&self) -> tracing::Span {
        let address = reqwest::Url::parse(&self.url).ok();
        let host = address
            .as_ref()
            .and_then(|url| url.host_str().map(str::to_string))
            .unwrap_or_default();
        let port = address
            .as_ref()
            .and_then(reqwest::Url::port_or_known_default)
            .unwrap_or_default();
        tracing::info_span!(
            target: "cordon_otel",
            "chat",
            otel.name = %format_args!("chat {}", self.model),
            otel.kind = "client",
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = self.provider.as_str(),
            gen_ai.request.model = %self.model,
            server.address = %host,
            server.port = i64::from(port),
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            gen_ai.response.finish_reasons = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        )
    }

    async fn with_retries(
        &self,
        body: &bytes::Bytes,
        observer: &dyn AgentObserver,
        text_enough: &TextEnough<'_>,
    ) -> Result<Reply, ModelError> {
        let policy = RetryPolicy {
            retries: self.settings.retries,
            first_delay: self.settings.retry_delay,
        };
        let mut retry = 0;
        loop {
            match self.attempt(body, observer, text_enough).await {
                Ok(reply) => return Ok(reply),
                Err(Failure::Final(err)) => return Err(err),
                Err(Failure::Transient {
                    reason,
                    retry_after,
                }) => {
                    if retry >= policy.retries {
                        return Err(ModelError::GaveUp {
                            url: self.url.clone(),
                            attempts: retry + 1,
                            last: reason,
                        });
                    }
                    retry += 1;
                    let delay = policy.delay(retry, retry_after);
                    tracing::info!(retry, ?delay, %reason, "retrying the model request");
                    observer.retry(retry, delay, &reason);
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    async fn attempt(
        &self,
        body: &bytes::Bytes,
        observer: &dyn AgentObserver,
        text_enough: &TextEnough<'_>,
    ) -> Result<Reply, Failure> {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .body(body.clone());
        if self.settings.stream {
            request = request.header("accept", "text/event-stream");
        } else if let Some(limit) = self.settings.timeout {
            request = request.timeout(limit);
        }
        for (name, value) in provider::auth_headers(self.provider, self.key.as_deref()) {
            request = request.header(name, value);
        }
        let response = request
            .send()
            .await
            .map_err(|err| self.transport_failure(&err))?;
        let status = response.status().as_u16();
        if !response.status().is_success() {
            let retry_after = retry::requested_wait(response.headers());
            let redirected_to = response
                .status()
                .is_redirection()
                .then(|| {
                    response
                        .headers()
                        .get("location")?
                        .to_str()
                        .ok()
                        .map(str::to_owned)
                })
                .flatten();
            let body = read_bounded(response, MAX_ERROR_BYTES)
                .await
                .unwrap_or_default();
            let message = provider::error_message(&body, &self.secrets);
            if let Some(exceeded) = context_exceeded(status, &body, &message) {
                return Err(Failure::Final(exceeded));
            }
            if retry::is_retryable(status) {
                return Err(Failure::Transient {
                    reason: format!("HTTP {status}: {message}"),
                    retry_after,
                });
            }
            return Err(Failure::Final(ModelError::Refused {
                url: self.url.clone(),
                status,
                message,
                hint: match (status, redirected_to) {
                    (401 | 403, _) => " (check the API key and --api-key-env)".into(),
                    (404, _) => " (check --base-url and --model)".into(),
                    (300..=399, Some(location)) => format!(
                        " (a redirect to {}: cordon follows no redirect of a model request, so the key only ever goes to the configured address; if the API moved there, set --base-url to it)",
                        provider::preview(&location, &self.secrets)
                    ),
                    (300..=399, None) => " (a redirect: cordon follows no redirect of a model request; check --base-url)".into(),
                    _ => String::new(),
                },
            }));
        }
        let streamed = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        if streamed {
            let reply = self.read_stream(response, observer, text_enough).await?;
            return match provider::oversized(&reply.tool_calls, &self.secrets) {
                Some(what) => Err(Failure::Final(ModelError::ReplyTooLarge { what })),
                None => Ok(reply),
            };
        }
        let body =
            read_bounded(response, MAX_REPLY_BYTES)
                .await
                .map_err(|failure| match failure {
                    BodyFailure::Transport(err) => self.transport_failure(&err),
                    BodyFailure::TooLarge => Failure::Final(ModelError::ReplyTooLarge {
                        what: format!(
                            "is over {} MiB, the most cordon reads of one whole reply",
                            MAX_REPLY_BYTES >> 20
                        ),
                    }),
                })?;
        let reply =
            provider::parse_reply(self.provider, &body, &self.secrets).map_err(|reason| {
                Failure::Final(ModelError::Malformed {
                    url: self.url.clone(),
                    reason,
                })
            })?;
        if let Some(what) = provider::oversized(&reply.tool_calls, &self.secrets) {
            return Err(Failure::Final(ModelError::ReplyTooLarge { what }));
        }
        if !reply.text.is_empty() {
            observer.text_delta(&reply.text);
        }
        Ok(reply)
    }

    /// A request that failed in transport: no connection is worth retrying; a generation that
    /// timed out is not (the same request would take as long again).
    fn transport_failure(&self, err: &reqwest::Error) -> Failure {
        if err.is_timeout() && !err.is_connect() {
            return Failure::Final(ModelError::TimedOut {
                url: self.url.clone(),
                after: self.settings.timeout.unwrap_or(STREAM_IDLE_TIMEOUT),
                streaming: self.settings.stream,
            });
        }
        Failure::Transient {
            reason: describe_transport_error(err),
            retry_after: None,
        }
    }

    /// The context window the server says it has (llama.cpp's `/props`), if it says.
    pub async fn server_context_window(&self) -> Option<u32> {
        if self.provider != Provider::OpenAi {
            return None;
        }
        let base = self.settings.base_url.as_deref()?;
        crate::model::server_window::ask(&self.http, base).await
    }

    /// Reads server-sent events until the provider says the reply is complete, or until
    /// `text_enough` says the text so far is enough (the connection is then dropped, which stops
    /// the server generating). Once text has been shown, a broken stream is not retried (it
    /// would be shown twice): it is an error.
    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        observer: &dyn AgentObserver,
        text_enough: &TextEnough<'_>,
    ) -> Result<Reply, Failure> {
        let malformed = |reason: String| {
            Failure::Final(ModelError::Malformed {
                url: self.url.clone(),
                reason,
            })
        };
        let mut decoder = SseDecoder::default();
        let mut assembler = StreamAssembler::new(self.provider);
        let mut complete = false;
        let mut on_text = |text: &str| observer.text_delta(text);
        let mut received = 0usize;
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(err) => {
                    return Err(malformed(format!(
                        "the stream broke off: {}",
                        describe_transport_error(&err)
                    )));
                }
            };
            received += chunk.len();
            if received > MAX_STREAM_BYTES {
                return Err(Failure::Final(ModelError::ReplyTooLarge {
                    what: format!(
                        "is over {} MiB streamed, the most cordon reads of one streamed reply",
                        MAX_STREAM_BYTES >> 20
                    ),
                }));
            }
            for event in decoder.feed(&chunk).map_err(&malformed)? {
                if assembler
                    .event(&event, &mut on_text, &self.secrets)
                    .map_err(malformed)?
                    == StreamState::Done
                {
                    complete = true;
                }
            }
            if complete {
                break;
            }
            if let Some(text_bytes) = text_enough()
                && let Some(reply) = assembler.cut_short(text_bytes)
            {
                tracing::info!(text_bytes, "stopped reading a reply that repeats itself");
                return Ok(reply);
            }
        }
        if !complete && let Some(event) = decoder.finish() {
            complete = assembler
                .event(&event, &mut on_text, &self.secrets)
                .map_err(malformed)?
                == StreamState::Done;
        }
        assembler.finish(complete).map_err(malformed)
    }
}

/// Asked after each streamed chunk: `Some(n)` when the reply's first `n` bytes of text are all
/// that is needed.
pub type TextEnough<'a> = dyn Fn() -> Option<usize> + Sync + 'a;

/// For requests whose every byte is wanted.
pub fn read_whole() -> Option<usize> {
    None
}

/// The most bytes of one whole (not streamed) reply read; a reply past it is refused.
pub const MAX_REPLY_BYTES: usize = 16 << 20;
/// The most bytes of one streamed reply read (events carry a few characters each, so a stream
/// takes many more bytes than its content); a stream past it is refused.
pub const MAX_STREAM_BYTES: usize = 64 << 20;
/// The most bytes of an error response read for its message.
const MAX_ERROR_BYTES: usize = 64 << 10;

/// Why a body was not read whole.
enum BodyFailure {
    Transport(reqwest::Error),
    TooLarge,
}

/// Reads a response body of at most `limit` bytes.
async fn read_bounded(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<bytes::Bytes, BodyFailure> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyFailure::Transport)? {
        if body.len() + chunk.len() > limit {
            return Err(BodyFailure::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.into())
}

/// A refusal that says the request does not fit the context window.
fn context_exceeded(status: u16, body: &[u8], message: &str) -> Option<ModelError> {
    if !matches!(status, 400 | 413 | 422) {
        return None;
    }
    let found = crate::model::context_exceeded::recognise(body, message)?;
    Some(ModelError::ContextExceeded {
        message: message.to_string(),
        prompt_tokens: found.prompt_tokens,
        window: found.window,
    })
}

fn read_key(var: &str, secrets: &Secrets) -> Result<String, ModelError> {
    match std::env::var(var) {
        Ok(key) if !key.trim().is_empty() => {
            secrets.register(key.trim());
            Ok(key.trim().to_string())
        }
        _ => Err(ModelError::MissingKey {
            var: var.to_string(),
        }),
    }
}

/// A transport error in words, without the URL's query (which never carries the key anyway).
fn describe_transport_error(err: &reqwest::Error) -> String {
    let what = if err.is_timeout() {
        "timed out"
    } else if err.is_connect() {
        "could not connect"
    } else if err.is_body() || err.is_decode() {
        "the response body failed"
    } else {
        "the request failed"
    };
    let mut detail = String::new();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        detail = cause.to_string();
        source = cause.source();
    }
    if detail.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {detail}")
    }
}

/// Whether two URLs have the same scheme, host and port.
fn same_origin(a: &str, b: &str) -> bool {
    match (reqwest::Url::parse(a), reqwest::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}
