//! The agent loop's keys of `[agent]`: steps, system prompt, repeated calls, tool search and the
//! bounds on one model reply. The batch keys of the same table are the runtime's
//! ([`cordon_runtime::config::BatchSettings`]).

use cordon_runtime::config::parse_duration;
use serde::Deserialize;
use std::time::Duration;

/// The keys of `[agent]` the agent loop reads.
pub(super) const LOOP_KEYS: &[&str] = &[
    "max_steps",
    "system_prompt",
    "max_repeated_calls",
    "tool_search",
    "tool_search_threshold",
    "send_tool_examples",
    "max_calls_per_reply",
    "max_reply_time",
    "max_continuations",
    "routing",
];

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
    /// Tool calls of one model reply that run (`max_calls_per_reply`); the rest of the reply's
    /// calls are answered with an error naming this setting, not run.
    pub max_calls_per_reply: u32,
    /// The longest one model reply may take, all of it (`max_reply_time`): a stream that keeps
    /// sending without finishing, or a whole reply that never comes, ends the turn after it.
    pub max_reply_time: Duration,
    /// Times a `stop` hook may continue one turn with a message (`max_continuations`); past
    /// them the answer stands.
    pub max_continuations: u32,
    /// Intent routing before the tool loop (`[agent.routing]`).
    pub routing: super::RoutingSettings,
}

/// Calls of one reply that run unless `max_calls_per_reply` says otherwise.
const DEFAULT_MAX_CALLS_PER_REPLY: u32 = 64;
/// The highest `max_calls_per_reply` accepted (cordon reads no more calls of one reply).
const MAX_CALLS_PER_REPLY_LIMIT: u32 = 1024;
/// How long one reply may take unless `max_reply_time` says otherwise.
const DEFAULT_MAX_REPLY_TIME: Duration = Duration::from_secs(30 * 60);

/// Times a stop hook may continue a turn unless `max_continuations` says otherwise.
const DEFAULT_MAX_CONTINUATIONS: u32 = 3;
/// The most continuations of one turn `max_continuations` may allow.
const MAX_CONTINUATIONS_LIMIT: u32 = 100;

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
            max_calls_per_reply: DEFAULT_MAX_CALLS_PER_REPLY,
            max_reply_time: DEFAULT_MAX_REPLY_TIME,
            max_continuations: DEFAULT_MAX_CONTINUATIONS,
            routing: super::RoutingSettings::default(),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLoop {
    max_steps: Option<u32>,
    system_prompt: Option<String>,
    max_repeated_calls: Option<u32>,
    tool_search: Option<ToolSearch>,
    tool_search_threshold: Option<usize>,
    send_tool_examples: Option<bool>,
    max_calls_per_reply: Option<u32>,
    max_reply_time: Option<String>,
    max_continuations: Option<u32>,
    routing: Option<super::routing_section::RawRouting>,
}

impl RawLoop {
    pub(super) fn validate(self) -> Result<AgentSettings, super::KeyError> {
        let max_steps = self.max_steps.unwrap_or(AgentSettings::default().max_steps);
        if max_steps == 0 {
            return Err(("max_steps".into(), "must be at least 1".into()));
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
        let max_calls_per_reply = self
            .max_calls_per_reply
            .unwrap_or(DEFAULT_MAX_CALLS_PER_REPLY);
        if !(1..=MAX_CALLS_PER_REPLY_LIMIT).contains(&max_calls_per_reply) {
            return Err((
                "max_calls_per_reply".into(),
                format!("must be between 1 and {MAX_CALLS_PER_REPLY_LIMIT}"),
            ));
        }
        let max_reply_time = match &self.max_reply_time {
            Some(text) => {
                let time = parse_duration(text).map_err(|m| ("max_reply_time".to_string(), m))?;
                if time.is_zero() {
                    return Err(("max_reply_time".into(), "must be longer than 0s".into()));
                }
                time
            }
            None => DEFAULT_MAX_REPLY_TIME,
        };
        let max_continuations = self.max_continuations.unwrap_or(DEFAULT_MAX_CONTINUATIONS);
        if max_continuations > MAX_CONTINUATIONS_LIMIT {
            return Err((
                "max_continuations".into(),
                format!("use at most {MAX_CONTINUATIONS_LIMIT}"),
            ));
        }
        let routing = match self.routing {
            Some(raw) => raw.validate()?,
            None => super::RoutingSettings::default(),
        };
        Ok(AgentSettings {
            routing,
            max_continuations,
            max_steps,
            system_prompt: self.system_prompt,
            max_repeated_calls: self
                .max_repeated_calls
                .unwrap_or(AgentSettings::default().max_repeated_calls),
            tool_search: self.tool_search.unwrap_or_default(),
            tool_search_threshold,
            send_tool_examples: self.send_tool_examples.unwrap_or(false),
            max_calls_per_reply,
            max_reply_time,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(toml_text: &str) -> Result<AgentSettings, super::super::KeyError> {
        let raw: RawLoop = toml::from_str(toml_text).unwrap();
        raw.validate()
    }

    #[test]
    fn reply_bounds_have_defaults_and_are_checked() {
        let defaults = agent("").unwrap();
        assert_eq!(defaults.max_calls_per_reply, 64);
        assert_eq!(defaults.max_reply_time, Duration::from_secs(1800));
        let set = agent("max_calls_per_reply = 8\nmax_reply_time = \"90s\"").unwrap();
        assert_eq!(set.max_calls_per_reply, 8);
        assert_eq!(set.max_reply_time, Duration::from_secs(90));
        for (bad, key) in [
            ("max_calls_per_reply = 0", "max_calls_per_reply"),
            ("max_calls_per_reply = 5000", "max_calls_per_reply"),
            ("max_reply_time = \"0s\"", "max_reply_time"),
            ("max_reply_time = \"soon\"", "max_reply_time"),
        ] {
            assert_eq!(agent(bad).unwrap_err().0, key, "{bad}");
        }
    }
}
