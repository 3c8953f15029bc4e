//! The context budget: what each request may carry so that it fits the model's context window.
//! `window.rs` says how big the window is and what is kept back for the reply; `token_count.rs`
//! counts (and calibrates from each reply's usage); `fit.rs` plans a request: oversized tool
//! results cut (`cut.rs`), older turns folded into a summary written by the model
//! (`summary.rs`) or by cordon (`digest.rs`).

mod cut;
pub mod digest;
pub mod fit;
pub mod summary;
pub mod token_count;
pub mod window;

use crate::conversation::message::Message;
use crate::model::client::ModelClient;
use crate::model::provider::ToolSpec;
use crate::settings::{Compaction, ModelSettings};
use fit::{Plan, TooSmall};
use token_count::TokenCounter;
use window::{Window, WindowSource};

/// The budget of one session: its window, its counter and what it learned so far.
pub struct ContextBudget {
    counter: TokenCounter,
    window: Option<Window>,
    max_tokens: Option<u32>,
    compaction: Compaction,
}

impl ContextBudget {
    pub fn new(settings: &ModelSettings, model: &str) -> Self {
        Self {
            counter: TokenCounter::for_model(model),
            window: settings.context_window.map(|tokens| Window {
                tokens,
                source: WindowSource::Configured,
            }),
            max_tokens: settings.max_tokens,
            compaction: settings.compaction,
        }
    }

    /// The window: configured, else asked of the server once, else the provider's default.
    pub async fn window(&mut self, client: &ModelClient) -> Window {
        if let Some(window) = self.window {
            return window;
        }
        let window = match client.server_context_window().await {
            Some(tokens) => Window {
                tokens: tokens.max(crate::settings::MIN_CONTEXT_WINDOW),
                source: WindowSource::Server,
            },
            None => Window {
                tokens: window::default_window(client.settings()),
                source: WindowSource::Default,
            },
        };
        tracing::info!(
            tokens = window.tokens,
            source = window.source.as_str(),
            encoding = self.counter.encoding(),
            "context window"
        );
        self.window = Some(window);
        window
    }

    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    pub fn compaction(&self) -> Compaction {
        self.compaction
    }

    /// The token limit sent for a reply.
    pub fn reply_tokens(&self, window: Window) -> u32 {
        window.reply_tokens(self.max_tokens)
    }

    /// Whether the user set the reply limit (`max_tokens`).
    pub fn max_tokens_set(&self) -> Option<u32> {
        self.max_tokens
    }

    /// Plans the next request (see `fit.rs`).
    pub fn plan(
        &self,
        window: Window,
        messages: &[Message],
        tools: &[ToolSpec],
        force: bool,
    ) -> Result<Plan, TooSmall> {
        let budget = window.request_budget(self.reply_tokens(window));
        fit::plan(
            messages,
            &self.counter,
            self.counter.raw_tools(tools),
            budget,
            force,
        )
    }

    /// The raw token budget of a whole request (for the summary request).
    pub fn raw_request_budget(&self, window: Window, reply_tokens: u32) -> u64 {
        self.counter.raw_budget(window.request_budget(reply_tokens))
    }

    /// A reply's usage calibrates the count of the request it answered.
    pub fn calibrate(&mut self, raw_sent: u64, prompt_tokens: u64) {
        self.counter.calibrate(raw_sent, prompt_tokens);
        tracing::debug!(
            raw_sent,
            prompt_tokens,
            factor = self.counter.factor(),
            "calibrated the token count"
        );
    }

    /// The server refused a request counted as `raw_sent`: learn its real window and count.
    pub fn learn_from_refusal(
        &mut self,
        raw_sent: u64,
        prompt_tokens: Option<u64>,
        window: Option<u64>,
    ) {
        self.counter.learn_from_refusal(raw_sent, prompt_tokens);
        if let (Some(reported), Some(current)) = (window, self.window.as_mut())
            && let Ok(reported) = u32::try_from(reported)
            && reported < current.tokens
            && reported >= crate::settings::MIN_CONTEXT_WINDOW
        {
            tracing::warn!(
                configured = current.tokens,
                reported,
                "the server's context window is smaller than cordon assumed"
            );
            *current = Window {
                tokens: reported,
                source: WindowSource::Server,
            };
        }
    }
}
