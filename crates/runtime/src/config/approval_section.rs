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

/// The operator's approval policy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApprovalPolicy {
    /// Ask before every call of a tool annotated destructive (and not read-only). Tools without
    /// annotations (every 0.1 plugin's) are not covered: name them in `tools`.
    pub destructive: bool,
    /// Ask before every call of the tools these globs match (`*`, `?`).
    pub tools: Vec<String>,
    pub unattended: Unattended,
}

impl ApprovalPolicy {
    /// The policy as cordon.lock pins it; `None` for the default (ask nobody, deny unattended), so
    /// locks written before `[approval]` existed stay valid.
    pub fn lock_line(&self) -> Option<String> {
        (*self != Self::default()).then(|| {
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
        Ok(ApprovalPolicy {
            destructive: self.destructive.unwrap_or(false),
            tools,
            unattended: self.unattended.unwrap_or_default(),
        })
    }
}
