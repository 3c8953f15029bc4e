//! Who provides a tool name that several plugins declare. A name is never taken silently, and
//! never by file order:
//! - `[tool_providers] NAME = "ID"` in cordon.toml names the provider;
//! - else the one claimant the operator configured (it has a `[plugins.ID]` table) wins over
//!   claimants with none;
//! - else (none configured, or several) nobody does, and every claimant is refused.
//!
//! A plugin that loses a name is refused whole (it shows under "Rejected plugins", its reason
//! naming the tool, the provider and how to choose another), the load logs an error for each
//! collision, and `cordon list` shows them.

use crate::config::Config;
use crate::sandbox::plugin::Plugin;
use std::collections::{BTreeMap, BTreeSet};

/// A tool name declared by more than one plugin, and how it was settled.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Collision {
    /// The tool name.
    pub tool: String,
    /// Every plugin that declares it, in file order.
    pub declared_by: Vec<String>,
    /// The plugin that provides it, if any.
    pub provider: Option<String>,
    /// Why that one (or why none).
    pub decided_by: String,
}

/// How many claimants a message names before it counts the rest.
const NAMED_CLAIMANTS: usize = 5;

/// `ids` for a message: the first few named, the rest counted, so a message stays short however
/// many copies of a plugin there are.
fn summarised(ids: &[&str]) -> String {
    let mut text = ids
        .iter()
        .take(NAMED_CLAIMANTS)
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > NAMED_CLAIMANTS {
        text.push_str(&format!(" and {} more", ids.len() - NAMED_CLAIMANTS));
    }
    text
}

/// The collisions among `plugins` (in file order) and the plugins refused for them, each with
/// its reason.
pub fn settle(plugins: &[&Plugin], config: &Config) -> (Vec<Collision>, BTreeMap<String, String>) {
    let mut claims: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for plugin in plugins {
        for tool in &plugin.tools {
            claims.entry(&tool.name).or_default().push(&plugin.id);
        }
    }
    let mut collisions = Vec::new();
    let mut refused: BTreeMap<String, String> = BTreeMap::new();
    for (tool, claimants) in claims.into_iter().filter(|(_, c)| c.len() > 1) {
        let configured: BTreeSet<&str> = claimants
            .iter()
            .copied()
            .filter(|id| config.plugins.contains_key(*id))
            .collect();
        let (provider, decided_by) = match config.tool_providers.get(tool) {
            Some(named) if claimants.contains(&named.as_str()) => (
                Some(named.clone()),
                format!("[tool_providers] {tool} = {named:?} in cordon.toml"),
            ),
            Some(named) => (
                None,
                format!(
                    "[tool_providers] in cordon.toml names `{named}`, which does not declare it"
                ),
            ),
            None if configured.len() == 1 => {
                let only = configured.first().expect("one").to_string();
                (
                    Some(only.clone()),
                    format!(
                        "`{only}` is the only one configured in cordon.toml ([plugins.{only}])"
                    ),
                )
            }
            None => (
                None,
                if configured.is_empty() {
                    "none of them is configured in cordon.toml".to_string()
                } else {
                    "several of them are configured in cordon.toml".to_string()
                },
            ),
        };
        let everyone = summarised(&claimants);
        tracing::error!(
            "tool name collision: `{tool}` is declared by {everyone}; {} ({decided_by})",
            match &provider {
                Some(provider) => format!("`{provider}` provides it and the others are refused"),
                None => "every one of them is refused".to_string(),
            }
        );
        for id in &claimants {
            if provider.as_deref() == Some(*id) {
                continue;
            }
            let reason = match &provider {
                Some(provider) => format!(
                    "its tool {tool:?} is also declared by {everyone}, and `{provider}` provides it: {decided_by}; to take it from `{provider}`, set [tool_providers] {tool} = \"{id}\" in cordon.toml, or remove one file"
                ),
                None => format!(
                    "its tool {tool:?} is also declared by {everyone}, and {decided_by}, so none of them is loaded; choose with [tool_providers] {tool} = \"{id}\" in cordon.toml, or remove the file that should not provide it"
                ),
            };
            refused.entry(id.to_string()).or_insert(reason);
        }
        collisions.push(Collision {
            tool: tool.to_string(),
            declared_by: claimants.iter().map(|id| id.to_string()).collect(),
            provider,
            decided_by,
        });
    }
    (collisions, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_claimants_are_counted_not_listed() {
        assert_eq!(summarised(&["a", "b"]), "`a`, `b`");
        let many: Vec<String> = (0..2_000).map(|n| format!("copy{n}")).collect();
        let ids: Vec<&str> = many.iter().map(String::as_str).collect();
        let text = summarised(&ids);
        assert!(text.ends_with("and 1995 more"), "{text}");
        assert!(text.len() < 100, "{text}");
    }
}
