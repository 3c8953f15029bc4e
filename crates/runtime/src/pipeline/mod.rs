//! The pipeline: what happens between "the model asked for these tool calls" and "these results go
//! back to it". One code path for `cordon call`, `cordon batch`, the agent loop and the MCP server.
//!
//! 1. Prepare each call in call order (`prepare.rs`): lookup, active set, schema, before-hooks.
//! 2. Execute the prepared calls concurrently (bounded), or one at a time in call order when the
//!    batch is sequential (`[agent] execution`, or any tool in it declares `sequential`).
//! 3. After-hooks and 4. the size budget, per call (`execute.rs`).
//! 5. Results in the original call order; events as things happen (`events.rs`).
//! 6. Cancellation through a token: running sandboxes are interrupted, pending calls end as
//!    `cancelled`.

pub mod approval;
mod approval_text;
pub mod audit;
mod batch;
mod before;
pub mod events;
mod execute;
pub mod hook_questions;
mod hooks;
pub mod input;
pub mod lock_keys;
mod offers;
mod prepare;
mod replacement_output;
mod reports;
mod result_budget;
pub mod session_stages;
pub mod stage_payload;
mod tool_changes;

use crate::config::BatchSettings;
use crate::registry::Registry;
use crate::sandbox::plugin::{Plugin, ToolInfo};
use audit::AuditLog;
use events::EventSink;
use hooks::HookChain;
use std::collections::BTreeSet;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub use approval::{Approval, ApprovalRequest, Approver, AskedBy};
pub use events::{Event, HookStage};
pub use hook_questions::{HookAnswer, HookQuestion, HookQuestionError};
pub use input::{BatchInputError, CallRequest, parse_batch};
pub use offers::{OfferError, ResourceRead};
pub use session_stages::{StageOptions, StageOutcome};
pub use tool_changes::ToolChanges;

/// Why the tools and groups cannot be assembled into a pipeline.
#[derive(Debug, thiserror::Error)]
pub enum ToolSetError {
    /// The active set names a tool that no plugin provides and no group.
    #[error(transparent)]
    UnknownActiveTool(#[from] UnknownActiveTool),
    /// A group has a loaded tool's name: a name means one thing (in the active set, a
    /// narrowing, a route), so the two cannot share one.
    #[error(
        "[agent.groups] has a group named {name:?}, and plugin `{plugin}` declares a tool of that name; a name must mean one thing (in `[agent] tools`, a hook's only-tools, a route), so rename the group"
    )]
    GroupNamedLikeTool {
        /// The name both have.
        name: String,
        /// The plugin whose tool has it.
        plugin: String,
    },
}

/// The active set names a tool that no plugin provides and no group.
#[derive(Debug, thiserror::Error)]
#[error(
    "the active tool set names {name:?}, which is neither a loaded tool nor a group in [agent.groups]; loaded tools: {available}{}",
    if groups.is_empty() { String::new() } else { format!("; groups: {groups}") }
)]
pub struct UnknownActiveTool {
    /// The name in the active set that matches no tool and no group.
    pub name: String,
    /// The loaded tools' names, comma-separated.
    pub available: String,
    /// The names of `[agent.groups]`, comma-separated (empty when there are none).
    pub groups: String,
}

/// What a caller gives a batch besides its calls.
#[derive(Clone, Default)]
pub struct BatchOptions {
    /// Cancelling ends running calls within an epoch tick and pending ones at once, as `cancelled`.
    pub cancel: CancellationToken,
    /// Receives events as they happen.
    pub events: Option<EventSink>,
    /// Asks a person to approve the calls that need it; `None`: `[approval] unattended` decides.
    pub approver: Option<Arc<dyn Approver>>,
}

/// Runs batches of tool calls against a registry. Cheap to clone.
#[derive(Clone)]
pub struct Pipeline {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Arc<Registry>,
    audit: Option<Arc<AuditLog>>,
    hooks: HookChain,
    settings: BatchSettings,
    active: Option<BTreeSet<String>>,
    /// The resources, templates and prompts the plugins serve.
    offers: crate::registry::offer_catalog::Catalog,
}

impl Pipeline {
    /// A pipeline over `registry`, with no audit log; `settings.tools` (if any) must name loaded
    /// tools. [`crate::RuntimeBuilder`] assembles one from a config, audit log included.
    pub fn new(
        registry: Arc<Registry>,
        settings: BatchSettings,
        hook_order: &[String],
    ) -> Result<Self, ToolSetError> {
        Self::assemble(registry, settings, hook_order, None)
    }

    /// A pipeline over `registry` that appends one line per call to `audit` (see audit.rs).
    pub(crate) fn assemble(
        registry: Arc<Registry>,
        settings: BatchSettings,
        hook_order: &[String],
        audit: Option<AuditLog>,
    ) -> Result<Self, ToolSetError> {
        if let Some((name, (plugin, _))) = settings
            .groups
            .keys()
            .find_map(|name| Some((name, registry.tool(name)?)))
        {
            return Err(ToolSetError::GroupNamedLikeTool {
                name: name.clone(),
                plugin: plugin.id.to_string(),
            });
        }
        let active = match &settings.tools {
            Some(names) => {
                let mut active = BTreeSet::new();
                for name in names {
                    if let Some(globs) = settings.groups.get(name) {
                        active.extend(group_members(&registry, globs));
                    } else if registry.tool(name).is_some() {
                        active.insert(name.clone());
                    } else {
                        return Err(ToolSetError::UnknownActiveTool(UnknownActiveTool {
                            name: name.clone(),
                            available: registry.tool_names().join(", "),
                            groups: settings
                                .groups
                                .keys()
                                .cloned()
                                .collect::<Vec<_>>()
                                .join(", "),
                        }));
                    }
                }
                Some(active)
            }
            None => None,
        };
        let hooks = HookChain::new(registry.plugins(), hook_order);
        for plugin in hooks.all() {
            if plugin.watches_session()
                && plugin
                    .hook
                    .as_ref()
                    .is_some_and(|hook| !hook.stages.is_empty())
                && plugin.grant.holds_secrets()
            {
                tracing::warn!(
                    hook = %plugin.id,
                    "hook `{}` sees the conversation at its session stages and is granted secrets (env vars or HTTP headers): the mask catches a secret written as it is, not one it encodes; keep secrets away from session hooks (docs/session-hooks.md, \"Secrets\")",
                    plugin.id
                );
            }
        }
        Ok(Self {
            inner: Arc::new(Inner {
                offers: crate::registry::offer_catalog::Catalog::new(&registry),
                registry,
                audit: audit.map(Arc::new),
                hooks,
                settings,
                active,
            }),
        })
    }

    /// The resources, resource templates and prompts the plugins serve.
    pub fn offers(&self) -> &crate::registry::offer_catalog::Catalog {
        &self.inner.offers
    }

    /// The host's scrubber: every output of this pipeline, and of what is built on it (the
    /// agent, the MCP server, a front end's printing), masks its secrets through it.
    pub fn secrets(&self) -> &crate::report::secrets::Secrets {
        self.inner.registry.secrets()
    }

    /// Appends `record` (a JSON object; its `time` is added) to the audit log, if the config
    /// names one: what a front end did that is not a call (a reload of the plugins).
    pub fn record_in_audit_log(&self, mut record: serde_json::Value) {
        if let Some(audit) = &self.inner.audit {
            record["time"] =
                serde_json::Value::String(crate::report::utc_time::UtcTime::now().rfc3339());
            audit.append_record(&record);
        }
    }

    /// The operator's `[approval]` policy.
    pub fn approval_policy(&self) -> &crate::config::ApprovalPolicy {
        &self.inner.settings.approval
    }

    /// The plugins the pipeline runs calls against.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The plugins with granted hooks, in the order their hooks run.
    pub fn hooks(&self) -> &[Arc<Plugin>] {
        self.inner.hooks.all()
    }

    /// Whether an after-hook reviews `tool`'s results (and so whatever else of its text should wait
    /// for that review: its progress messages and log lines are not forwarded to MCP clients),
    /// unless the operator let progress pass every such hook (`unreviewed_progress`).
    pub fn results_reviewed(&self, tool: &str) -> bool {
        self.inner.hooks.after(tool).any(|hook| {
            !hook
                .grant
                .hook
                .as_ref()
                .is_some_and(|grant| grant.unreviewed_progress)
        })
    }

    /// The plugins whose hooks were not granted (and never run).
    pub fn ungranted_hooks(&self) -> &[Arc<Plugin>] {
        self.inner.hooks.ungranted()
    }

    /// Whether `tool` is in the active set; with no active set (`[agent] tools` unset), every name
    /// is.
    pub fn is_active(&self, tool: &str) -> bool {
        self.inner
            .active
            .as_ref()
            .is_none_or(|active| active.contains(tool))
    }

    /// The active tools, sorted by name.
    pub fn active_tools(&self) -> impl Iterator<Item = (&Arc<Plugin>, &ToolInfo)> {
        self.inner
            .registry
            .tools()
            .filter(|(_, tool)| self.is_active(&tool.name))
    }

    /// The tool groups of `[agent.groups]`, by name, with their globs.
    pub fn groups(&self) -> &std::collections::BTreeMap<String, Vec<String>> {
        &self.inner.settings.groups
    }

    /// The active tools of group `name`, sorted; `None` when there is no such group.
    pub fn group_tools(&self, name: &str) -> Option<Vec<String>> {
        let globs = self.inner.settings.groups.get(name)?;
        Some(
            group_members(&self.inner.registry, globs)
                .into_iter()
                .filter(|tool| self.is_active(tool))
                .collect(),
        )
    }

    fn active_tool_names(&self) -> Vec<String> {
        self.active_tools()
            .map(|(_, tool)| tool.name.clone())
            .collect()
    }
}

/// The loaded tools any of `globs` matches, sorted.
fn group_members(registry: &Registry, globs: &[String]) -> Vec<String> {
    registry
        .tool_names()
        .into_iter()
        .filter(|tool| crate::capabilities::tool_glob::any_matches(globs, tool))
        .map(str::to_string)
        .collect()
}
