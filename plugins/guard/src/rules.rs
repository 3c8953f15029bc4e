//! The guard's rules: protected path globs for the tools that write, and deny patterns on any
//! call's arguments.

use cordon_sdk::ToolCall;
use globset::{Glob, GlobMatcher};
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

const DEFAULT_PROTECTED: [&str; 4] = [".env", "*.pem", "*.key", ".git/**"];
const DEFAULT_WRITE_TOOLS: [&str; 2] = ["write_file", "edit_file"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Globs of files the write tools may not touch. Without `/` a glob matches the file name;
    /// with `/` it matches the end of the path (`.git/**` matches `/repo/.git/config`).
    protected: Option<Vec<String>>,
    /// Tools whose `path` argument is checked against `protected`.
    write_tools: Option<Vec<String>>,
    /// Regexes checked against every call's arguments (as JSON text).
    #[serde(default)]
    deny: Vec<DenySetting>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DenySetting {
    pattern: String,
    /// What the model is told; a generic reason naming the pattern when absent.
    reason: Option<String>,
}

struct Protected {
    text: String,
    matcher: GlobMatcher,
    matches_suffix: bool,
}

struct Deny {
    regex: Regex,
    reason: String,
}

pub struct Rules {
    protected: Vec<Protected>,
    write_tools: Vec<String>,
    deny: Vec<Deny>,
}

impl Rules {
    pub fn from_settings(settings: &Value) -> Result<Self, String> {
        let settings: Settings = if settings.is_null() {
            serde_json::from_value(serde_json::json!({})).map_err(|e| e.to_string())?
        } else {
            serde_json::from_value(settings.clone()).map_err(|e| e.to_string())?
        };
        let protected_globs = settings
            .protected
            .unwrap_or_else(|| DEFAULT_PROTECTED.map(String::from).to_vec());
        let mut protected = Vec::new();
        for text in protected_globs {
            let glob = Glob::new(&text).map_err(|e| format!("protected glob {text:?}: {e}"))?;
            protected.push(Protected {
                matches_suffix: text.contains('/'),
                matcher: glob.compile_matcher(),
                text,
            });
        }
        let mut deny = Vec::new();
        for rule in settings.deny {
            let regex = Regex::new(&rule.pattern)
                .map_err(|e| format!("deny pattern {:?}: {e}", rule.pattern))?;
            let reason = rule.reason.unwrap_or_else(|| {
                format!("its arguments match the deny pattern `{}`", rule.pattern)
            });
            deny.push(Deny { regex, reason });
        }
        Ok(Self {
            protected,
            write_tools: settings
                .write_tools
                .unwrap_or_else(|| DEFAULT_WRITE_TOOLS.map(String::from).to_vec()),
            deny,
        })
    }

    /// Why the call must not run, or `None`.
    pub fn check(&self, call: &ToolCall) -> Option<String> {
        let arguments = call.arguments.to_string();
        if let Some(rule) = self
            .deny
            .iter()
            .find(|rule| rule.regex.is_match(&arguments))
        {
            return Some(format!(
                "`{}` is not allowed here: {}.",
                call.name, rule.reason
            ));
        }
        if !self.write_tools.iter().any(|tool| tool == &call.name) {
            return None;
        }
        let path = call.arguments["path"].as_str()?;
        let rule = self
            .protected
            .iter()
            .find(|rule| self.matches(rule, path))?;
        let all: Vec<&str> = self.protected.iter().map(|p| p.text.as_str()).collect();
        Some(format!(
            "`{}` may not change {path}: it matches the protected pattern `{}`. Protected files ({}) cannot be written or edited; choose another path, or ask the user to make this change themselves.",
            call.name,
            rule.text,
            all.join(", ")
        ))
    }

    /// Whether `path`, resolved the way the file tools resolve it (`.` dropped, `..` taking back
    /// the part before it), matches `rule`: `/scratch/.env/x/..` is `/scratch/.env`.
    fn matches(&self, rule: &Protected, path: &str) -> bool {
        let mut parts: Vec<&str> = Vec::new();
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                part => parts.push(part),
            }
        }
        if !rule.matches_suffix {
            return parts.last().is_some_and(|name| rule.matcher.is_match(name));
        }
        (0..parts.len()).any(|start| rule.matcher.is_match(parts[start..].join("/")))
    }
}
