//! The tools a server serves, swapped whole when plugins or the config are reloaded: each request
//! takes the set current when it starts and keeps it to its end, so a call runs entirely on the
//! old set or entirely on the new one, and calls in flight finish on what they started with.

use super::{hook_tools, results, tool_search};
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

    /// The hook a hook tool of this name asks.
    pub fn hook_for(&self, tool: &str) -> Option<&str> {
        self.hook_tools
            .iter()
            .find(|hook| hook.tool.name == tool)
            .map(|hook| hook.hook.as_str())
    }
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
