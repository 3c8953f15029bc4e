//! What changed for a tool's users between two pipelines (a live reload): tools added, removed,
//! and kept under the same name but listed differently (title, description, schemas, annotations,
//! execution mode) or served by another plugin file.

use super::Pipeline;
use crate::sandbox::plugin::ToolInfo;
use std::collections::BTreeMap;

/// Tools added, removed and changed, each list sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolChanges {
    /// Tools the new pipeline offers that the old one did not.
    pub added: Vec<String>,
    /// Tools the old pipeline offered that the new one does not.
    pub removed: Vec<String>,
    /// Tools both offer that are listed differently, or served by another plugin file.
    pub changed: Vec<String>,
}

impl ToolChanges {
    /// What a user of `old`'s active tools sees change when `new` replaces it.
    pub fn between(old: &Pipeline, new: &Pipeline) -> Self {
        let (before, after) = (identities(old), identities(new));
        let mut changes = Self::default();
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

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// `+a +b -c ~d`, or `none`.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self
            .added
            .iter()
            .map(|name| format!("+{name}"))
            .chain(self.removed.iter().map(|name| format!("-{name}")))
            .chain(self.changed.iter().map(|name| format!("~{name}")))
            .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(" ")
        }
    }
}

/// Each active tool's identity: how it is listed, and the digest of the file serving it.
fn identities(pipeline: &Pipeline) -> BTreeMap<String, (String, [u8; 32])> {
    pipeline
        .active_tools()
        .map(|(plugin, tool)| (tool.name.clone(), (listing(tool), plugin.sha256)))
        .collect()
}

fn listing(tool: &ToolInfo) -> String {
    serde_json::json!({
        "title": tool.title,
        "description": tool.description,
        "parameters": tool.schema.as_json(),
        "output": tool.output_schema.as_ref().map(|schema| schema.as_json()),
        "annotations": tool.annotations,
        "mode": tool.execution_mode,
        "guidelines": tool.prompt_guidelines,
    })
    .to_string()
}
