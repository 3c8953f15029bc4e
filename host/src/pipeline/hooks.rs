//! The hook chain: which loaded plugins have hooks, in what order they run (`[hooks] order`, then
//! plugin file-name order), and which calls each one watches (tool-name globs).

use crate::plugin::Plugin;
use std::sync::Arc;

/// The hooks of a registry, in the order they run.
pub struct HookChain {
    hooks: Vec<Arc<Plugin>>,
}

impl HookChain {
    /// Orders `plugins` (given in file-name order) by `order`; unlisted hooks follow, so a hook is
    /// never switched off by leaving it out of the list.
    pub fn new(plugins: &[Arc<Plugin>], order: &[String]) -> Self {
        let mut hooks: Vec<Arc<Plugin>> = plugins
            .iter()
            .filter(|p| p.hook.is_some())
            .cloned()
            .collect();
        for id in order {
            if !hooks.iter().any(|hook| &*hook.id == id) {
                tracing::warn!(
                    "[hooks] order names `{id}`, which is not a loaded plugin with a hook"
                );
            }
        }
        let rank = |plugin: &Arc<Plugin>| {
            order
                .iter()
                .position(|id| **id == *plugin.id)
                .unwrap_or(order.len())
        };
        hooks.sort_by_key(rank);
        Self { hooks }
    }

    /// Every hook, in order.
    pub fn all(&self) -> &[Arc<Plugin>] {
        &self.hooks
    }

    /// The before-hooks watching `tool`, in order.
    pub fn before(&self, tool: &str) -> impl Iterator<Item = &Arc<Plugin>> {
        self.hooks.iter().filter(move |p| {
            p.hook
                .as_ref()
                .is_some_and(|h| h.before && watches(&h.tools, tool))
        })
    }

    /// The after-hooks watching `tool`, in order.
    pub fn after(&self, tool: &str) -> impl Iterator<Item = &Arc<Plugin>> {
        self.hooks.iter().filter(move |p| {
            p.hook
                .as_ref()
                .is_some_and(|h| h.after && watches(&h.tools, tool))
        })
    }
}

/// Whether a hook with these tool globs watches `tool`; no globs means every tool.
fn watches(globs: &[String], tool: &str) -> bool {
    globs.is_empty()
        || globs
            .iter()
            .any(|glob| glob_matches(glob.as_bytes(), tool.as_bytes()))
}

/// `*` matches any run of characters, `?` any one character; everything else matches itself.
fn glob_matches(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            glob_matches(&pattern[1..], name)
                || (!name.is_empty() && glob_matches(pattern, &name[1..]))
        }
        (Some(b'?'), Some(_)) => glob_matches(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => glob_matches(&pattern[1..], &name[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_globs() {
        let cases = [
            ("read_*", "read_file", true),
            ("read_*", "write_file", false),
            ("*_file", "edit_file", true),
            ("grep", "grep", true),
            ("grep", "grepx", false),
            ("?rep", "grep", true),
            ("*", "anything", true),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
        ];
        for (glob, tool, expected) in cases {
            assert_eq!(
                glob_matches(glob.as_bytes(), tool.as_bytes()),
                expected,
                "{glob} vs {tool}"
            );
        }
        assert!(watches(&[], "x"));
        assert!(watches(&["a".into(), "x*".into()], "xy"));
    }
}
