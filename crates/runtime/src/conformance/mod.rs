//! `cordon test`: a conformance run of one plugin, for its author and their CI. The plugin is loaded
//! as the host loads it (a pipeline over a directory holding only it, with the operator's grants
//! for it, if any); then its tools are checked (`tool_checks.rs`: description, the strict-mode form
//! of every parameters schema, each `examples` entry called through the whole pipeline) and its
//! hook run over a sample call (`hook_checks.rs`) and each session stage it declares over a sample
//! event (`session_checks.rs`), and the author's own cases run (`author_cases.rs`). Each check is
//! a [`Finding`]; a plugin passes when
//! none failed. A failure is something that breaks the contract or a limit: refused at load, an
//! example its own schema refuses, a trap, a timeout, memory or fuel used up, output over its
//! limit or breaking its output schema, a hook that crashes or answers garbage. A warning is
//! something a client or a model will trip on without breaking the contract: no description, a
//! schema strict clients cannot use, no examples to call, an example answered with an error.

mod author_cases;
mod case_expectations;
mod hook_checks;
mod session_checks;
mod tool_checks;

pub use author_cases::{AuthorCases, CasesError};

use crate::pipeline::Pipeline;
use std::path::PathBuf;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The check passed.
    Pass,
    /// Nothing is broken, but a client or a model will trip on it.
    Warn,
    /// The plugin breaks the contract or a limit.
    Fail,
}

/// One check of one part of the plugin.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    /// What was checked: `plugin`, a tool's name, or `hook`.
    pub subject: String,
    /// Which check: `load`, `description`, `strict mode`, `example 1`, `before-tool-call`, …
    pub check: String,
    /// How the check came out.
    pub outcome: Outcome,
    /// What happened, in a sentence a plugin author can act on.
    pub detail: String,
}

/// Everything `cordon test` found about one plugin file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConformanceReport {
    /// The plugin's id (the file's stem).
    pub plugin: String,
    /// The plugin file checked.
    pub file: PathBuf,
    /// The contract version it targets, when it loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract: Option<String>,
    /// The file's sha256 in hex, when it loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Every check made, in the order made.
    pub findings: Vec<Finding>,
}

impl ConformanceReport {
    /// How many findings came out as `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.findings
            .iter()
            .filter(|finding| finding.outcome == outcome)
            .count()
    }

    /// No check failed (and, with `deny_warnings`, none warned).
    pub fn passed(&self, deny_warnings: bool) -> bool {
        self.count(Outcome::Fail) == 0 && (!deny_warnings || self.count(Outcome::Warn) == 0)
    }
}

/// Accumulates the findings about one subject.
pub(crate) struct Findings<'a> {
    subject: String,
    list: &'a mut Vec<Finding>,
}

impl<'a> Findings<'a> {
    pub(crate) fn about(subject: &str, list: &'a mut Vec<Finding>) -> Self {
        Self {
            subject: subject.to_string(),
            list,
        }
    }

    pub(crate) fn add(&mut self, check: &str, outcome: Outcome, detail: impl Into<String>) {
        self.list.push(Finding {
            subject: self.subject.clone(),
            check: check.to_string(),
            outcome,
            detail: detail.into(),
        });
    }
}

/// Checks the plugin `file`, loaded into `pipeline` as the only plugin of its directory (a file
/// the pipeline refused is reported as a failed load, with the reason).
/// Examples are called only within `time_budget` (a plugin whose examples all sleep to their
/// timeout cannot hold a CI job for hours); the rest fail as not called.
pub async fn check_plugin(
    pipeline: &Pipeline,
    file: PathBuf,
    time_budget: std::time::Duration,
) -> ConformanceReport {
    let deadline = std::time::Instant::now() + time_budget;
    let id = crate::registry::plugin_id(&file);
    let mut report = ConformanceReport {
        plugin: id.clone(),
        file,
        contract: None,
        sha256: None,
        findings: Vec::new(),
    };
    let registry = pipeline.registry();
    let Some(plugin) = registry.plugins().first().cloned() else {
        let reason = registry.rejected().first().map_or_else(
            || "it did not load".to_string(),
            |rejected| rejected.reason.clone(),
        );
        Findings::about("plugin", &mut report.findings).add(
            "load",
            Outcome::Fail,
            format!("refused: {reason}"),
        );
        return report;
    };
    report.contract = Some(plugin.contract.to_string());
    report.sha256 = Some(hex::encode(plugin.sha256));
    let hook = match &plugin.hook {
        None => "no hook".to_string(),
        Some(hook) => format!("a hook ({})", hook.points("session stages").join(" and ")),
    };
    let mut findings = Findings::about("plugin", &mut report.findings);
    findings.add(
        "load",
        Outcome::Pass,
        format!(
            "loaded as the host loads it: contract {}, {} tool(s), {hook}",
            plugin.contract,
            plugin.tools.len()
        ),
    );
    if plugin.tools.is_empty() && plugin.hook.is_none() {
        findings.add(
            "exports",
            Outcome::Fail,
            "it declares no tools and no hook, so it can do nothing",
        );
    }
    let mut timed_out = false;
    for tool in &plugin.tools {
        tool_checks::check_tool(
            pipeline,
            &plugin,
            tool,
            deadline,
            &mut timed_out,
            &mut report.findings,
        )
        .await;
    }
    if let Some(hook) = &plugin.hook {
        if hook.before || hook.after {
            hook_checks::check_hook(&plugin, hook, &mut report.findings).await;
        }
        session_checks::check_stages(&plugin, hook, &mut report.findings).await;
    }
    report
}
