//! The hook chain: which loaded plugins' hooks may run (the operator granted them with `hook` in
//! cordon.toml), in what order (`[hooks] order`, then plugin file-name order), and which calls each
//! one watches: the tools its hook declares, narrowed to the tools its grant names. A hook that
//! was not granted never runs; it is kept aside so `cordon list` can say why. A hook that fails
//! fails closed, with the result `hook_failed` builds.

use super::events::HookStage;
use crate::capabilities::tool_glob;
use crate::report::{ErrorKind, ToolResult};
use crate::sandbox::plugin::Plugin;
use serde_json::json;
use std::sync::Arc;

/// The hooks of a registry, in the order they run.
pub struct HookChain {
    hooks: Vec<Arc<Plugin>>,
    ungranted: Vec<Arc<Plugin>>,
}

impl HookChain {
    /// Orders the granted hooks of `plugins` (given in file-name order) by `order`; unlisted hooks
    /// follow, so a granted hook is never switched off by leaving it out of the list.
    pub fn new(plugins: &[Arc<Plugin>], order: &[String]) -> Self {
        let (mut hooks, ungranted): (Vec<Arc<Plugin>>, Vec<Arc<Plugin>>) = plugins
            .iter()
            .filter(|p| p.hook.is_some())
            .cloned()
            .partition(|p| p.grant.hook.is_some());
        for plugin in &ungranted {
            tracing::info!(
                plugin = %plugin.id,
                "its hook is not granted and will not run; add `hook = true` to [plugins.{}] in cordon.toml to let it see and change other tools' calls",
                plugin.id
            );
        }
        for id in order {
            if !hooks.iter().any(|hook| &*hook.id == id) {
                tracing::warn!(
                    "[hooks] order names `{id}`, which is not a loaded plugin with a granted hook"
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
        Self { hooks, ungranted }
    }

    /// Every granted hook, in order.
    pub fn all(&self) -> &[Arc<Plugin>] {
        &self.hooks
    }

    /// Plugins that declare a hook the operator did not grant.
    pub fn ungranted(&self) -> &[Arc<Plugin>] {
        &self.ungranted
    }

    /// The before-hooks watching `tool`, in order.
    pub fn before<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a Arc<Plugin>> {
        self.hooks
            .iter()
            .filter(move |p| p.hook.as_ref().is_some_and(|h| h.before) && watches(p, tool))
    }

    /// The after-hooks watching `tool`, in order.
    pub fn after<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a Arc<Plugin>> {
        self.hooks
            .iter()
            .filter(move |p| p.hook.as_ref().is_some_and(|h| h.after) && watches(p, tool))
    }
}

/// Whether `plugin`'s hook watches `tool`: it declares it, and its grant covers it.
pub(crate) fn watches(plugin: &Plugin, tool: &str) -> bool {
    plugin
        .hook
        .as_ref()
        .is_some_and(|hook| tool_glob::any_matches(&hook.tools, tool))
        && plugin
            .grant
            .hook
            .as_ref()
            .is_some_and(|grant| grant.covers(tool))
}

/// A hook that failed: the call is not run, or its result is withheld (hooks fail closed).
pub(crate) fn hook_failed(
    id: &str,
    name: &str,
    hook: &str,
    stage: HookStage,
    reason: &str,
    kind: Option<ErrorKind>,
) -> ToolResult {
    let (what, consequence) = match stage {
        HookStage::Before => ("before-hook", "The call was not run"),
        HookStage::After => ("after-hook", "The call's result is withheld"),
        HookStage::Session(_) => ("session hook", "The session stage stops"),
    };
    ToolResult::error(
        id,
        name,
        ErrorKind::HookFailed,
        format!(
            "{consequence}: the {what} `{hook}` failed ({reason}). Hooks fail closed; the operator needs to fix or remove the hook."
        ),
        json!({ "hook": hook, "stage": stage, "hookError": reason, "hookErrorKind": kind }),
    )
}
