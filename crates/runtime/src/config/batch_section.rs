//! The batch keys of `[agent]`: how batches of tool calls run through the pipeline (execution
//! mode, the active tools, tool groups, concurrency, result budgets), in every front end. The
//! loop's own keys of the same table are read by `cordon-agent`.

use super::*;

/// The keys of `[agent]` the runtime reads.
pub(super) const BATCH_KEYS: &[&str] = &[
    "execution",
    "tools",
    "groups",
    "max_concurrency",
    "max_result_bytes",
    "max_image_bytes",
];

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
    /// Whether a batch's calls may run at the same time (`[agent] execution`; default `parallel`).
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

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBatches {
    execution: Option<Execution>,
    tools: Option<Vec<String>>,
    max_concurrency: Option<usize>,
    max_result_bytes: Option<String>,
    max_image_bytes: Option<String>,
    #[serde(default)]
    groups: BTreeMap<String, Vec<String>>,
}

impl RawBatches {
    pub(super) fn validate(self) -> Result<BatchSettings, KeyError> {
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
            // A route word and a hook's only-tools read `none` and `all` as routes: a group may
            // not take their names.
            if ["none", "all"].contains(&name.to_ascii_lowercase().as_str()) {
                return Err((
                    format!("groups.{name}"),
                    format!(
                        "{name:?} is a route of its own (intent routing's `none` and `all`); give the group another name"
                    ),
                ));
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
        Ok(BatchSettings {
            execution: self.execution.unwrap_or_default(),
            tools: self.tools,
            groups: self.groups,
            max_concurrency,
            max_result_bytes,
            max_image_bytes,
            approval: super::ApprovalPolicy::default(),
        })
    }
}
