//! What a plugin says, in the host's terms, whichever contract version it spoke: the tools and
//! hook it declares, a tool's output, and a hook's decisions. Each version's module converts its
//! generated types into these, so nothing outside this folder sees a generated type.

use crate::report::Content;

/// Whether a tool may share its batch with other running calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    /// The call may run alongside others of its batch.
    Parallel,
    /// The call runs alone in its batch.
    Sequential,
}

/// Hints about what a tool does (MCP tool annotations); `None` leaves a hint unsaid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool changes nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The tool reaches beyond the host (the network, other systems).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// Whether any hint is given.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// One tool as `describe` declared it (or cordon derived it), not yet checked.
#[derive(Clone)]
pub struct DeclaredTool {
    pub name: String,
    pub title: String,
    pub description: String,
    /// The parameters schema's JSON text.
    pub parameters: String,
    /// The output schema's JSON text, if any.
    pub output_schema: Option<String>,
    pub execution_mode: ExecutionMode,
    pub annotations: ToolAnnotations,
    pub prompt_guidelines: Vec<String>,
    pub locks: Vec<String>,
}

/// The calls a plugin's hook watches.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HookInfo {
    /// Tool-name globs; empty means every tool.
    pub tools: Vec<String>,
    /// Whether the hook sees calls before they run.
    pub before: bool,
    /// Whether the hook sees results after the tool ran.
    pub after: bool,
    /// The session stages the hook watches (contract 0.3); empty for none.
    pub stages: Vec<SessionStage>,
}

impl HookInfo {
    /// Where the hook runs, for lists and reports: `before`, `after`, and `STAGES_LABEL a, b` for
    /// its session stages, each when it has them.
    pub fn points(&self, stages_label: &str) -> Vec<String> {
        let mut points: Vec<String> = [(self.before, "before"), (self.after, "after")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, name)| name.to_string())
            .collect();
        if !self.stages.is_empty() {
            let stages: Vec<&str> = self.stages.iter().map(|stage| stage.as_str()).collect();
            points.push(format!("{stages_label} {}", stages.join(", ")));
        }
        points
    }
}

/// A point of an agent session a hook can watch (contract 0.3, `session-stage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionStage {
    /// A session begins or resumes.
    SessionStart,
    /// The user's prompt, before anything else.
    Prompt,
    /// A request about to go to the model.
    ModelRequest,
    /// The model's reply.
    ModelResponse,
    /// Older turns about to be folded into a summary.
    Compaction,
    /// The final answer of a turn.
    Stop,
    /// A session ends.
    SessionEnd,
}

impl SessionStage {
    /// Every stage, in the order a session reaches them.
    pub const ALL: [Self; 7] = [
        Self::SessionStart,
        Self::Prompt,
        Self::ModelRequest,
        Self::ModelResponse,
        Self::Compaction,
        Self::Stop,
        Self::SessionEnd,
    ];

    /// The stage's name as the contract spells it (`model-request`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SessionStart => "session-start",
            Self::Prompt => "prompt",
            Self::ModelRequest => "model-request",
            Self::ModelResponse => "model-response",
            Self::Compaction => "compaction",
            Self::Stop => "stop",
            Self::SessionEnd => "session-end",
        }
    }
}

impl std::fmt::Display for SessionStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one session hook decided (contract 0.3, `session-decision`), not yet checked against
/// what its stage allows.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SessionDecision {
    /// Stop here, with a reason the user sees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// Replacement text (the prompt, the reply's text, the summary, the message to continue with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace: Option<String>,
    /// Text added to the next model request as context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_context: Option<String>,
    /// Offer only these tools or groups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub only_tools: Option<Vec<String>>,
    /// Ids of the reply's tool calls to drop.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drop_calls: Vec<String>,
}

/// What `describe` returned, not yet checked.
pub struct Declared {
    pub tools: Vec<DeclaredTool>,
    pub hook: Option<HookInfo>,
    /// Resources, templates and prompts (contract 0.4); empty before it.
    pub offered: super::offer_terms::Offered,
}

/// One call as a guest receives it.
#[derive(Clone)]
pub struct GuestCall {
    pub id: String,
    pub name: String,
    /// The arguments object's JSON text.
    pub arguments: String,
}

/// A tool's output (or an after-hook's replacement) as the guest gave it, not yet checked.
pub struct GuestOutput {
    pub content: Vec<Content>,
    /// The structured output's JSON text, if any.
    pub structured: Option<String>,
    /// The details' JSON text; "" for none.
    pub details: String,
    /// Only an after-hook's replacement can be an error.
    pub is_error: bool,
}

impl GuestOutput {
    /// Bytes this output occupies, as counted against the plugin's output limit.
    pub fn size(&self) -> u64 {
        (self.content.iter().map(Content::size).sum::<usize>()
            + self.structured.as_ref().map_or(0, String::len)
            + self.details.len()) as u64
    }
}

/// A before-hook's verdict, in the host's terms.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeDecision {
    /// Run the call as it is.
    Allow,
    /// Do not run the call, for this reason.
    Block(String),
    /// Run the call with these arguments instead (JSON text, as the hook gave it).
    Rewrite(String),
    /// Run the call only if a person approves it; the reason is shown to them.
    Ask(String),
}
