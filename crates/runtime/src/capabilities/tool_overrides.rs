//! What the operator says in cordon.toml about the tools of a component that cannot say it itself
//! (`[plugins.ID.tools.NAME]`, for plain WIT components and `wasi:cli` commands): another name, a
//! title, a description, hints, examples, the execution mode, or that a function is left out.

use serde_json::Value;

/// The operator's word on one tool, keyed in [`crate::capabilities::grant::PluginGrant::tools`] by
/// the name cordon derives for it (what `cordon list` shows before any rename).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOverride {
    /// The name the tool is offered under instead.
    pub name: Option<String>,
    /// The title shown instead of the derived one (`title`).
    pub title: Option<String>,
    /// The description the model reads instead of the derived one (`description`).
    pub description: Option<String>,
    /// `annotations.read_only`: the tool changes nothing (`None`: unsaid).
    pub read_only: Option<bool>,
    /// `annotations.destructive`: the tool may destroy or overwrite data (`None`: unsaid).
    pub destructive: Option<bool>,
    /// `annotations.idempotent`: calling it again with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// `annotations.open_world`: the tool reaches beyond the host (the network, other systems).
    pub open_world: Option<bool>,
    /// Example arguments objects, added to the parameters schema (`cordon test` calls them).
    pub examples: Vec<Value>,
    /// Run alone in its batch (`execution_mode = "sequential"`).
    pub sequential: Option<bool>,
    /// Leave the function out (one whose types JSON cannot carry, or that should not be offered).
    pub skip: bool,
    /// A command's exit statuses that mean success (`ok_exit_codes`; `None`: only 0).
    pub ok_exit_codes: Option<Vec<i32>>,
}
