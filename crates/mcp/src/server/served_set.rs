//! The tools a server serves, swapped whole when plugins or the config are reloaded: each request
//! takes the set current when it starts and keeps it to its end, so a call runs entirely on the
//! old set or entirely on the new one, and calls in flight finish on what they started with.

use super::{results, tool_search};
use cordon_runtime::pipeline::Pipeline;
use rmcp::model::Tool;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// One generation of what is served.
pub struct ServedSet {
    pub pipeline: Pipeline,
    /// Every active tool, sorted by name.
    pub tools: Vec<Tool>,
    /// What `tools/list` offers: the tools, or only `search_tools` (`--tool-search`).
    pub listed: Vec<Tool>,
}

impl ServedSet {
    pub fn new(pipeline: Pipeline, tool_search: bool) -> Self {
        let tools: Vec<Tool> = pipeline
            .active_tools()
            .map(|(_, tool)| results::tool(tool))
            .collect();
        let listed = if tool_search {
            vec![tool_search::tool(&pipeline)]
        } else {
            tools.clone()
        };
        Self {
            pipeline,
            tools,
            listed,
        }
    }

    /// Whether `tools/list` offers only `search_tools`.
    pub fn searching(&self) -> bool {
        self.listed.len() == 1 && self.listed[0].name == tool_search::SEARCH_TOOL
    }
}

/// What changed between two sets: tools added, removed, and kept under the same name but
/// described differently or served by another file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolChanges {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

impl ToolChanges {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
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
        let changes = changes(&current, &set);
        *current = Arc::new(set);
        changes
    }
}

/// Each tool's identity for a client: its listing, and the plugin file's digest behind it.
fn identities(set: &ServedSet) -> BTreeMap<String, (String, [u8; 32])> {
    set.tools
        .iter()
        .map(|tool| {
            let digest = set
                .pipeline
                .registry()
                .tool(&tool.name)
                .map(|(plugin, _)| plugin.sha256)
                .unwrap_or_default();
            let listing = serde_json::to_string(tool).unwrap_or_default();
            (tool.name.to_string(), (listing, digest))
        })
        .collect()
}

fn changes(old: &ServedSet, new: &ServedSet) -> ToolChanges {
    let (before, after) = (identities(old), identities(new));
    let mut changes = ToolChanges::default();
    for (name, identity) in &after {
        match before.get(name) {
            None => changes.added.push(name.clone()),
            Some(previous) if previous != identity => changes.changed.push(name.clone()),
            Some(_) => {}
        }
    }
    changes.removed = before
        .keys()
        .filter(|name| !after.contains_key(*name))
        .cloned()
        .collect();
    changes
}
