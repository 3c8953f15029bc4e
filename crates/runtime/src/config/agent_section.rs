//! `[agent]`: how batches of tool calls run (execution mode, the active tools, concurrency, result
//! budgets, the agent loop's steps and system prompt).

use super::*;

/// Whether a batch's calls may run at the same time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Execution {
    /// Concurrently, unless a tool in the batch is sequential (the default).
    #[default]
    Parallel,
    /// Always one call at a time, in call order.
    Sequential,
}

/// How batches of tool calls run through the pipeline (the batch keys of `[agent]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchSettings {
    pub execution: Execution,
    /// The active tool set; `None` means every loaded tool.
    pub tools: Option<Vec<String>>,
    /// Calls of one batch running at once.
    pub max_concurrency: usize,
    /// Text bytes of one result kept before it is cut with a marker (and the most bytes of details
    /// kept).
    pub max_result_bytes: u64,
    /// Image bytes of one result kept; further images are dropped with a marker.
    pub max_image_bytes: u64,
    /// Which calls need a person's approval (`[approval]`).
    pub approval: super::ApprovalPolicy,
}

impl Default for BatchSettings {
    fn default() -> Self {
        Self {
            execution: Execution::Parallel,
            tools: None,
            max_concurrency: 16,
            max_result_bytes: 64 << 10,
            max_image_bytes: 4 << 20,
            approval: super::ApprovalPolicy::default(),
        }
    }
}

/// The agent loop's own settings (`cordon run`, `cordon chat`; the loop keys of `[agent]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSettings {
    /// Model replies the agent loop asks for before it gives up (`cordon run`).
    pub max_steps: u32,
    /// The agent loop's system prompt; `None` means cordon's default, which lists the tools.
    pub system_prompt: Option<String>,
    /// The same call (tool and arguments) made this many times in a row gets a note, and once
    /// more stops the turn; 0 turns the check off.
    pub max_repeated_calls: u32,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            max_steps: 20,
            system_prompt: None,
            max_repeated_calls: 3,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAgent {
    execution: Option<Execution>,
    tools: Option<Vec<String>>,
    max_concurrency: Option<usize>,
    max_result_bytes: Option<String>,
    max_image_bytes: Option<String>,
    max_steps: Option<u32>,
    system_prompt: Option<String>,
    max_repeated_calls: Option<u32>,
}

impl RawAgent {
    pub(super) fn validate(self) -> Result<(BatchSettings, AgentSettings), KeyError> {
        let defaults = BatchSettings::default();
        let max_concurrency = self.max_concurrency.unwrap_or(defaults.max_concurrency);
        if max_concurrency == 0 {
            return Err(("max_concurrency".into(), "must be at least 1".into()));
        }
        let max_result_bytes = match &self.max_result_bytes {
            Some(text) => parse_bytes(text).map_err(|m| ("max_result_bytes".to_string(), m))?,
            None => defaults.max_result_bytes,
        };
        let max_image_bytes = match &self.max_image_bytes {
            Some(text) => parse_bytes(text).map_err(|m| ("max_image_bytes".to_string(), m))?,
            None => defaults.max_image_bytes,
        };
        let max_steps = self.max_steps.unwrap_or(AgentSettings::default().max_steps);
        if max_steps == 0 {
            return Err(("max_steps".into(), "must be at least 1".into()));
        }
        let batches = BatchSettings {
            execution: self.execution.unwrap_or_default(),
            tools: self.tools,
            max_concurrency,
            max_result_bytes,
            max_image_bytes,
            approval: super::ApprovalPolicy::default(),
        };
        let agent = AgentSettings {
            max_steps,
            system_prompt: self.system_prompt,
            max_repeated_calls: self
                .max_repeated_calls
                .unwrap_or(AgentSettings::default().max_repeated_calls),
        };
        Ok((batches, agent))
    }
}
