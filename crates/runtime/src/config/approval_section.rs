//! `[approval]`: which calls need a person's approval before they run, besides those a before-hook
//! asks about, and what happens when nobody can be asked.

use super::*;
use crate::capabilities::tool_glob;

/// What a call that needs approval gets when no person can be asked (no terminal, an MCP client
/// without elicitation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unattended {
    /// The call is not run; the model reads why (the default).
    #[default]
    Deny,
    /// The call runs (`--yes` sets this).
    Allow,
}

/// How long a question put to an MCP client between rounds (2026-07-28) can be answered, unless
/// `answer_within` says otherwise.
pub const DEFAULT_ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(300);

/// The operator's approval policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalPolicy {
    /// Ask before every call of a tool annotated destructive (and not read-only). Tools without
    /// annotations (every 0.1 plugin's) are not covered: name them in `tools`.
    pub destructive: bool,
    /// Ask before every call of the tools these globs match (`*`, `?`).
    pub tools: Vec<String>,
    /// What a call that needs approval gets when nobody can be asked (`[approval] unattended`;
    /// default `deny`).
    pub unattended: Unattended,
    /// How long an MCP client's user has to answer a question sent back between rounds; a later
    /// answer approves nothing and the question is asked again.
    pub answer_within: std::time::Duration,
}

impl Default for ApprovalPolicy {
    fn default() -> Self {
        Self {
            destructive: false,
            tools: Vec::new(),
            unattended: Unattended::default(),
            answer_within: DEFAULT_ANSWER_WITHIN,
        }
    }
}

impl ApprovalPolicy {
    /// The policy as cordon.lock pins it; `None` for the default (ask nobody, deny unattended), so
    /// locks written before `[approval]` existed stay valid.
    pub fn lock_line(&self) -> Option<String> {
        // The answer window only shortens or lengthens a question's life; what is asked is the same.
        let asked = Self {
            answer_within: DEFAULT_ANSWER_WITHIN,
            ..self.clone()
        };
        (asked != Self::default()).then(|| {
            format!(
                "approval destructive={} tools={} unattended={}",
                self.destructive,
                serde_json::to_string(&self.tools).unwrap_or_default(),
                match self.unattended {
                    Unattended::Deny => "deny",
                    Unattended::Allow => "allow",
                }
            )
        })
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawApproval {
    destructive: Option<bool>,
    tools: Option<Vec<String>>,
    unattended: Option<Unattended>,
    answer_within: Option<String>,
}

impl RawApproval {
    pub(super) fn validate(self) -> Result<ApprovalPolicy, KeyError> {
        let tools = self.tools.unwrap_or_default();
        if let Some(bad) = tools.iter().find(|glob| !tool_glob::is_valid(glob)) {
            return Err((
                "tools".into(),
                format!("{bad:?} is not a tool-name glob (letters, digits, `_`, `-`, `*`, `?`)"),
            ));
        }
        let answer_within = match self.answer_within {
            None => DEFAULT_ANSWER_WITHIN,
            Some(text) => super::units::parse_duration(&text)
                .ok()
                .filter(|within| !within.is_zero())
                .ok_or_else(|| {
                    (
                        "answer_within".to_string(),
                        format!("{text:?} is not a duration above zero (e.g. \"5m\", \"90s\")"),
                    )
                })?,
        };
        Ok(ApprovalPolicy {
            destructive: self.destructive.unwrap_or(false),
            tools,
            unattended: self.unattended.unwrap_or_default(),
            answer_within,
        })
    }
}
