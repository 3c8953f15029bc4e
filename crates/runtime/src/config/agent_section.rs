//! `[agent]`: how batches of tool calls run (execution mode, the active tools, tool groups,
//! concurrency, result budgets), and the agent loop's steps, system prompt and tool search.

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
    /// The active tool set (tool names and group names); `None` means every loaded tool.
    pub tools: Option<Vec<String>>,
    /// Named sets of tools (`[agent.groups]`: tool-name globs), for `--tools` and tool search.
    pub groups: BTreeMap<String, Vec<String>>,
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
            groups: BTreeMap::new(),
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
    /// Whether the model gets every tool's spec or a `search_tools` tool (`[agent] tool_search`).
    pub tool_search: ToolSearch,
    /// Under `auto`, more active tools than this turn tool search on (`tool_search_threshold`).
    pub tool_search_threshold: usize,
    /// Send the `examples` of tools' schemas to the model (`send_tool_examples`; off: they are
    /// for `cordon test` and the docs, and small models copy their values).
    pub send_tool_examples: bool,
}

/// Active tools above which `auto` turns tool search on, unless `tool_search_threshold` says.
pub const DEFAULT_TOOL_SEARCH_THRESHOLD: usize = 30;

/// When the model finds its tools through `search_tools` instead of getting every spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolSearch {
    /// When the active tools are many (over the threshold, or their specs would take more than
    /// half the context window).
    #[default]
    Auto,
    Always,
    Never,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            max_steps: 20,
            system_prompt: None,
            max_repeated_calls: 3,
            tool_search: ToolSearch::Auto,
            tool_search_threshold: DEFAULT_TOOL_SEARCH_THRESHOLD,
            send_tool_examples: false,
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
    tool_search: Option<ToolSearch>,
    tool_search_threshold: Option<usize>,
    send_tool_examples: Option<bool>,
    #[serde(default)]
    groups: BTreeMap<String, Vec<String>>,
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
        for (name, globs) in &self.groups {
            if !crate::capabilities::tool_glob::is_valid_tool_name(name) {
                return Err((
                    format!("groups.{name}"),
                    "a group name is written like a tool name: letters, digits, _ and -".into(),
                ));
            }
            if globs.is_empty() {
                return Err((format!("groups.{name}"), "lists no tools".into()));
            }
            if let Some(bad) = globs
                .iter()
                .find(|glob| !crate::capabilities::tool_glob::is_valid(glob))
            {
                return Err((
                    format!("groups.{name}"),
                    format!("{bad:?} is not a tool name or glob (letters, digits, _, -, * and ?)"),
                ));
            }
        }
        let tool_search_threshold = self
            .tool_search_threshold
            .unwrap_or(DEFAULT_TOOL_SEARCH_THRESHOLD);
        if tool_search_threshold == 0 {
            return Err((
                "tool_search_threshold".into(),
                "must be at least 1; use tool_search = \"always\" to search whatever the count"
                    .into(),
            ));
        }
        let batches = BatchSettings {
            execution: self.execution.unwrap_or_default(),
            tools: self.tools,
            groups: self.groups,
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
            tool_search: self.tool_search.unwrap_or_default(),
            tool_search_threshold,
            send_tool_examples: self.send_tool_examples.unwrap_or(false),
        };
        Ok((batches, agent))
    }
}
