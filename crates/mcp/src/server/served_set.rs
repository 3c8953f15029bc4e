//! The tools a server serves, swapped whole when plugins or the config are reloaded: each request
//! takes the set current when it starts and keeps it to its end, so a call runs entirely on the
//! old set or entirely on the new one, and calls in flight finish on what they started with.

use super::{hook_tools, results, tool_search};
use crate::metrics::UNKNOWN_TOOL;
use cordon_runtime::pipeline::{Pipeline, ToolChanges};
use rmcp::model::Tool;
use std::sync::{Arc, RwLock};

/// One generation of what is served.
pub struct ServedSet {
    pub pipeline: Pipeline,
    /// Every active tool, sorted by name.
    pub tools: Vec<Tool>,
    /// The granted hooks as tools (`--hooks-as-tools`); empty without it.
    pub hook_tools: Vec<hook_tools::HookTool>,
    /// What `tools/list` offers: the tools, or only `search_tools` (`--tool-search`), and the
    /// hook tools.
    pub listed: Vec<Tool>,
}

impl ServedSet {
    pub fn new(pipeline: Pipeline, tool_search: bool, hooks_as_tools: bool) -> Self {
        let hook_tools = if hooks_as_tools {
            hook_tools::tools(&pipeline)
        } else {
            Vec::new()
        };
        // A hook tool's name is the hook's: a loaded tool of that name is not served, so no tool
        // plugin can answer a client that asks the hook.
        let tools: Vec<Tool> = pipeline
            .active_tools()
            .filter(|(_, tool)| {
                let taken = hook_tools.iter().any(|hook| hook.tool.name == tool.name);
                if taken {
                    tracing::warn!(
                        tool = %tool.name,
                        "the tool is not served: `{}` is a hook tool's name (--hooks-as-tools); rename the tool",
                        tool.name
                    );
                }
                !taken
            })
            .map(|(_, tool)| results::tool(tool))
            .collect();
        let mut listed = if tool_search {
            vec![tool_search::tool(&pipeline)]
        } else {
            tools.clone()
        };
        listed.extend(hook_tools.iter().map(|hook| hook.tool.clone()));
        Self {
            pipeline,
            tools,
            hook_tools,
            listed,
        }
    }

    /// Whether `tools/list` offers only `search_tools`.
    pub fn searching(&self) -> bool {
        self.listed.len() == 1 + self.hook_tools.len()
            && self.listed[0].name == tool_search::SEARCH_TOOL
    }

    /// Where a `tools/call` of `tool` goes: every name the server answers is in this one table.
    pub fn route(&self, tool: &str) -> Route {
        if self.searching() && tool == tool_search::SEARCH_TOOL {
            return Route::Search;
        }
        if let Some(hook) = self.hook_tools.iter().find(|hook| hook.tool.name == tool) {
            return Route::Hook(hook.hook.clone());
        }
        Route::Plugin
    }

    /// The name a call of `tool` is counted under: the name itself when the server offers it,
    /// else one label for every unknown name (a client cannot add series).
    pub fn metric_label<'a>(&self, tool: &'a str) -> &'a str {
        let offered = self
            .tools
            .iter()
            .chain(self.listed.iter())
            .any(|offered| offered.name == tool);
        if offered { tool } else { UNKNOWN_TOOL }
    }
}

/// Who answers a `tools/call`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `search_tools` (`--tool-search`): the tool index answers.
    Search,
    /// A hook tool (`--hooks-as-tools`): the named hook alone answers.
    Hook(String),
    /// Anything else goes through the pipeline, which answers `not_found` for an unknown name.
    Plugin,
}

/// The current set, shared by every clone of a server.
#[derive(Clone)]
pub struct LiveSet(Arc<RwLock<Arc<ServedSet>>>);

impl LiveSet {
    pub fn new(set: ServedSet) -> Self {
        Self(Arc::new(RwLock::new(Arc::new(set))))
    }

    /// The set a request works with from start to end.
    pub fn current(&self) -> Arc<ServedSet> {
        self.0
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Puts `set` in place of the current one; what changed for clients.
    pub fn replace(&self, set: ServedSet) -> ToolChanges {
        let mut current = self
            .0
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut changes = ToolChanges::between(&current.pipeline, &set.pipeline);
        hook_tool_changes(&current.hook_tools, &set.hook_tools, &mut changes);
        *current = Arc::new(set);
        changes
    }
}

/// Adds to `changes` the hook tools added, removed, or now listed differently or asking another
/// plugin or file: a client that listed `hook_x` must hear that it now asks something else.
fn hook_tool_changes(
    before: &[hook_tools::HookTool],
    after: &[hook_tools::HookTool],
    changes: &mut ToolChanges,
) {
    let find = |set: &[hook_tools::HookTool], name: &str| {
        set.iter().find(|hook| hook.tool.name == name).cloned()
    };
    for hook in after {
        match find(before, &hook.tool.name) {
            None => changes.added.push(hook.tool.name.to_string()),
            Some(previous) if previous != *hook => changes.changed.push(hook.tool.name.to_string()),
            Some(_) => {}
        }
    }
    for hook in before {
        if find(after, &hook.tool.name).is_none() {
            changes.removed.push(hook.tool.name.to_string());
        }
    }
}
