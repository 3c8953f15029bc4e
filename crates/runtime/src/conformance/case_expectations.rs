//! What an author's case (author_cases.rs) expects, and how what came of it compares: the
//! `expect` keys a case may give, and what a call, a hook or a session stage came to in the same
//! terms (its decisions, error kind, text, structured content, rewritten arguments, tools offered).

use super::tool_checks::quote;
use crate::report::{ErrorKind, ToolResult};
use crate::sandbox::plugin::{BeforeDecision, SessionDecision};
use serde::Deserialize;
use serde_json::{Value, json};

/// What must come of a case; every key given must hold.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Expect {
    /// allow | block | ask | rewrite (before); keep | replace (after); proceed | block | replace |
    /// add_context | only_tools | drop_calls (a session stage).
    pub(super) decision: Option<String>,
    /// The result's error kind (`tool_error`, `capability_denied`, ...), or `none`.
    error: Option<String>,
    /// The whole text: the result's, a before-hook's reason, a session decision's texts.
    text: Option<String>,
    /// Text that must be in it (one or several).
    contains: Option<OneOrMany>,
    /// Text that must not be in it (one or several).
    not_contains: Option<OneOrMany>,
    /// The most characters the text may have.
    max_chars: Option<usize>,
    /// The result's structured content.
    structured: Option<toml::Table>,
    /// A before-hook's rewritten arguments.
    arguments: Option<toml::Table>,
    /// The tools a session decision offers.
    only_tools: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn items(&self) -> Vec<&str> {
        match self {
            Self::One(one) => vec![one.as_str()],
            Self::Many(many) => many.iter().map(String::as_str).collect(),
        }
    }
}

/// What a case's run came to, in the terms its expectations are written in.
pub(super) struct Observed {
    /// The decision's name(s); empty for a tool call.
    decisions: Vec<&'static str>,
    error: Option<ErrorKind>,
    text: String,
    structured: Option<Value>,
    arguments: Option<Value>,
    only_tools: Option<Vec<String>>,
}

impl Expect {
    /// Fails naming a key this kind of case cannot check.
    pub(super) fn only(&self, allowed: &[&str]) -> Result<(), String> {
        let given = [
            ("decision", self.decision.is_some()),
            ("error", self.error.is_some()),
            ("text", self.text.is_some()),
            ("contains", self.contains.is_some()),
            ("not_contains", self.not_contains.is_some()),
            ("max_chars", self.max_chars.is_some()),
            ("structured", self.structured.is_some()),
            ("arguments", self.arguments.is_some()),
            ("only_tools", self.only_tools.is_some()),
        ];
        if let Some((key, _)) = given
            .iter()
            .find(|(key, given)| *given && !allowed.contains(key))
        {
            return Err(format!(
                "`expect.{key}` cannot be checked in this kind of case; it checks {}",
                allowed.join(", ")
            ));
        }
        if given.iter().all(|(_, given)| !given) {
            return Err("`expect` checks nothing; say what must come of the case".into());
        }
        if let Some(kind) = &self.error
            && kind != "none"
            && serde_json::from_value::<ErrorKind>(json!(kind)).is_err()
        {
            return Err(format!(
                "`expect.error = {kind:?}` is not an error kind (tool_error, capability_denied, invalid_arguments, timeout, ...) or \"none\""
            ));
        }
        Ok(())
    }

    /// `Ok` with what came, or `Err` naming the first expectation that did not hold.
    pub(super) fn compare(&self, observed: &Observed) -> Result<String, String> {
        let came = observed.summary();
        let fail = |what: String| Err(format!("{what}; {came}"));
        if let Some(decision) = &self.decision
            && !observed.decisions.contains(&decision.as_str())
        {
            return fail(format!("expected the decision {decision}"));
        }
        if let Some(kind) = &self.error {
            let got = observed.error.map_or("none", ErrorKind::as_str);
            if got != kind {
                return fail(format!("expected error {kind}"));
            }
        }
        if let Some(text) = &self.text
            && observed.text != *text
        {
            return fail(format!("expected the text {}", quote(text)));
        }
        for needle in self.contains.iter().flat_map(OneOrMany::items) {
            if !observed.text.contains(needle) {
                return fail(format!("expected the text to contain {}", quote(needle)));
            }
        }
        for needle in self.not_contains.iter().flat_map(OneOrMany::items) {
            if observed.text.contains(needle) {
                return fail(format!(
                    "expected the text not to contain {}",
                    quote(needle)
                ));
            }
        }
        if let Some(most) = self.max_chars {
            let chars = observed.text.chars().count();
            if chars > most {
                return fail(format!("expected at most {most} characters, got {chars}"));
            }
        }
        if let Some(structured) = &self.structured {
            let expected = serde_json::to_value(structured).unwrap_or_default();
            if observed.structured.as_ref() != Some(&expected) {
                return fail(format!(
                    "expected the structured content {}, got {}",
                    quote(&expected.to_string()),
                    observed
                        .structured
                        .as_ref()
                        .map_or("none".to_string(), |got| quote(&got.to_string()))
                ));
            }
        }
        if let Some(arguments) = &self.arguments {
            let expected = serde_json::to_value(arguments).unwrap_or_default();
            if observed.arguments.as_ref() != Some(&expected) {
                return fail(format!(
                    "expected the arguments rewritten to {}",
                    quote(&expected.to_string())
                ));
            }
        }
        if let Some(tools) = &self.only_tools
            && observed.only_tools.as_ref() != Some(tools)
        {
            return fail(format!(
                "expected only the tools [{}] offered",
                tools.join(", ")
            ));
        }
        Ok(came)
    }
}

impl Observed {
    pub(super) fn of_result(decisions: Vec<&'static str>, result: &ToolResult) -> Self {
        Self {
            decisions,
            error: result.error_kind.filter(|_| result.is_error),
            text: result.text(),
            structured: result.structured.clone(),
            arguments: None,
            only_tools: None,
        }
    }

    pub(super) fn of_before(decision: BeforeDecision) -> Self {
        let (name, text, arguments) = match decision {
            BeforeDecision::Allow => ("allow", String::new(), None),
            BeforeDecision::Block(reason) => ("block", reason, None),
            BeforeDecision::Ask(reason) => ("ask", reason, None),
            BeforeDecision::Rewrite(text) => {
                let arguments = serde_json::from_str(&text).unwrap_or(Value::String(text));
                ("rewrite", String::new(), Some(arguments))
            }
        };
        Self {
            decisions: vec![name],
            error: None,
            text,
            structured: None,
            arguments,
            only_tools: None,
        }
    }

    pub(super) fn of_session(decision: SessionDecision) -> Self {
        let mut decisions = Vec::new();
        let mut texts = Vec::new();
        for (name, text) in [
            ("block", &decision.block),
            ("replace", &decision.replace),
            ("add_context", &decision.add_context),
        ] {
            if let Some(text) = text {
                decisions.push(name);
                texts.push(text.clone());
            }
        }
        if decision.only_tools.is_some() {
            decisions.push("only_tools");
        }
        if !decision.drop_calls.is_empty() {
            decisions.push("drop_calls");
        }
        if decisions.is_empty() {
            decisions.push("proceed");
        }
        Self {
            decisions,
            error: None,
            text: texts.join("\n"),
            structured: None,
            arguments: None,
            only_tools: decision.only_tools,
        }
    }

    /// What came, for the report.
    fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.decisions.is_empty() {
            parts.push(format!("decision {}", self.decisions.join(" and ")));
        }
        if let Some(kind) = self.error {
            parts.push(format!("error {kind}"));
        }
        if let Some(arguments) = &self.arguments {
            parts.push(format!("arguments {}", quote(&arguments.to_string())));
        }
        if let Some(tools) = &self.only_tools {
            parts.push(format!("only [{}]", tools.join(", ")));
        }
        if !self.text.is_empty() {
            let chars = self.text.chars().count();
            let plural = if chars == 1 { "" } else { "s" };
            parts.push(format!(
                "text of {chars} character{plural}: {}",
                quote(&self.text)
            ));
        }
        if parts.is_empty() {
            "got no decision and no text".into()
        } else {
            format!("got {}", parts.join("; "))
        }
    }
}
