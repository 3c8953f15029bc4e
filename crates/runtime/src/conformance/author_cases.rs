//! The author's own cases for `cordon test`: a TOML file (`cases.toml` in the plugin's project) of
//! inputs and what must come of them, for its tools (called through the whole pipeline, as a
//! client's call), its before-hook and after-hook, and its session stages. Each case is a finding:
//! it passes when every expectation it states held, and fails naming what was expected and what
//! came instead. docs/testing-plugins.md describes the file.

use super::case_expectations::{Expect, Observed};
use super::tool_checks::{call_id, quote};
use super::{ConformanceReport, Findings, Outcome};
use crate::pipeline::session_stages::checked;
use crate::pipeline::{BatchOptions, CallRequest, Pipeline};
use crate::report::{Content, ErrorKind, ToolResult};
use crate::sandbox::plugin::{AfterDecision, CallOptions, Plugin, SessionStage};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The most cases one file may hold.
const MAX_CASES: usize = 1000;
/// The largest cases file read.
const MAX_FILE_BYTES: u64 = 4 << 20;
/// The longest text a case's sample result may be made into (`repeat`), in bytes.
const MAX_RESULT_BYTES: usize = 16 << 20;

/// Why a cases file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CasesError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The cases file.
        path: PathBuf,
        /// What reading it failed with.
        source: std::io::Error,
    },
    /// The file is not a list of cases cordon understands.
    #[error("{path}: {message}")]
    Invalid {
        /// The cases file.
        path: PathBuf,
        /// What is wrong, naming the case and the key.
        message: String,
    },
}

/// The cases of one file, checked and ready to run.
#[derive(Debug, Clone)]
pub struct AuthorCases {
    path: PathBuf,
    cases: Vec<Case>,
}

#[derive(Debug, Clone)]
struct Case {
    name: String,
    input: Input,
    expect: Expect,
}

#[derive(Debug, Clone)]
enum Input {
    Tool {
        tool: String,
        arguments: Value,
    },
    Before {
        tool: String,
        arguments: Value,
    },
    After {
        tool: String,
        arguments: Value,
        result: Box<ToolResult>,
    },
    Stage {
        stage: SessionStage,
        payload: Value,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    case: Vec<RawCase>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: Option<String>,
    tool: Option<String>,
    before: Option<String>,
    after: Option<String>,
    stage: Option<String>,
    arguments: Option<toml::Table>,
    result: Option<RawResult>,
    payload: Option<toml::Table>,
    expect: Expect,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResult {
    text: String,
    /// The text repeated this many times (a long result without a long file).
    repeat: Option<usize>,
    #[serde(default)]
    is_error: bool,
    structured: Option<toml::Table>,
}

impl AuthorCases {
    /// Reads and checks the cases file at `path`.
    pub fn load(path: &Path) -> Result<Self, CasesError> {
        let invalid = |message: String| CasesError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let read = |source| CasesError::Read {
            path: path.to_path_buf(),
            source,
        };
        let size = std::fs::metadata(path).map_err(read)?.len();
        if size > MAX_FILE_BYTES {
            return Err(invalid(format!(
                "it is {size} bytes, over the {MAX_FILE_BYTES} a cases file may be"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        let raw: RawFile = toml::from_str(&text).map_err(|err| invalid(err.to_string()))?;
        if raw.case.is_empty() {
            return Err(invalid(
                "it holds no [[case]]; write at least one (docs/testing-plugins.md)".into(),
            ));
        }
        if raw.case.len() > MAX_CASES {
            return Err(invalid(format!(
                "it holds {} cases, over the {MAX_CASES} one file may",
                raw.case.len()
            )));
        }
        let cases = raw
            .case
            .into_iter()
            .enumerate()
            .map(|(index, raw)| {
                let label = format!("case {}", index + 1);
                Case::from_raw(raw, &label)
                    .map_err(|message| invalid(format!("{label}: {message}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            path: path.to_path_buf(),
            cases,
        })
    }

    /// The file the cases came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many cases there are.
    pub fn len(&self) -> usize {
        self.cases.len()
    }

    /// Whether there are none (a loaded file always has some).
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    /// Runs every case against the plugin of `pipeline` (the only one it loaded), adding a
    /// finding per case to `report`. A plugin that did not load runs none.
    pub async fn check(&self, pipeline: &Pipeline, report: &mut ConformanceReport) {
        let Some(plugin) = pipeline.registry().plugins().first().cloned() else {
            return;
        };
        Findings::about("plugin", &mut report.findings).add(
            "cases",
            Outcome::Pass,
            format!(
                "{} case(s) of the author's from {}",
                self.cases.len(),
                self.path.display()
            ),
        );
        for case in &self.cases {
            let (outcome, detail) = match case.run(pipeline, &plugin).await {
                Err(problem) => (Outcome::Fail, problem),
                Ok(observed) => match case.expect.compare(&observed) {
                    Ok(summary) => (Outcome::Pass, summary),
                    Err(mismatch) => (Outcome::Fail, mismatch),
                },
            };
            Findings::about("case", &mut report.findings).add(&case.name, outcome, detail);
        }
    }
}

impl Case {
    fn from_raw(raw: RawCase, label: &str) -> Result<Self, String> {
        let json = |table: Option<toml::Table>| -> Result<Value, String> {
            serde_json::to_value(table.unwrap_or_default()).map_err(|err| err.to_string())
        };
        let kinds = [&raw.tool, &raw.before, &raw.after]
            .iter()
            .filter(|kind| kind.is_some())
            .count()
            + usize::from(raw.stage.is_some());
        if kinds != 1 {
            return Err(
                "give exactly one of `tool` (a call), `before` or `after` (a hook, with the tool the call is for) and `stage` (a session stage)".into(),
            );
        }
        let name = raw.name.clone().unwrap_or_else(|| label.to_string());
        let (input, allowed): (Input, &[&str]) = if let Some(tool) = raw.tool {
            no_keys(&[
                ("result", raw.result.is_some()),
                ("payload", raw.payload.is_some()),
            ])?;
            let arguments = json(raw.arguments)?;
            (
                Input::Tool { tool, arguments },
                &[
                    "error",
                    "text",
                    "contains",
                    "not_contains",
                    "max_chars",
                    "structured",
                ],
            )
        } else if let Some(tool) = raw.before {
            no_keys(&[
                ("result", raw.result.is_some()),
                ("payload", raw.payload.is_some()),
            ])?;
            let arguments = json(raw.arguments)?;
            (
                Input::Before { tool, arguments },
                &["decision", "text", "contains", "not_contains", "arguments"],
            )
        } else if let Some(tool) = raw.after {
            no_keys(&[("payload", raw.payload.is_some())])?;
            let Some(result) = raw.result else {
                return Err("an `after` case needs the `result` the hook is shown: `result = { text = \"...\" }`".into());
            };
            let arguments = json(raw.arguments)?;
            let result = sample_result(&tool, result)?;
            (
                Input::After {
                    tool,
                    arguments,
                    result: Box::new(result),
                },
                &[
                    "decision",
                    "error",
                    "text",
                    "contains",
                    "not_contains",
                    "max_chars",
                    "structured",
                ],
            )
        } else {
            no_keys(&[
                ("result", raw.result.is_some()),
                ("arguments", raw.arguments.is_some()),
            ])?;
            let stage_name = raw.stage.unwrap_or_default();
            let stage = SessionStage::ALL
                .into_iter()
                .find(|stage| stage.as_str() == stage_name)
                .ok_or_else(|| {
                    let names: Vec<&str> = SessionStage::ALL.iter().map(|s| s.as_str()).collect();
                    format!(
                        "`stage = {stage_name:?}` is not a session stage; it is one of {}",
                        names.join(", ")
                    )
                })?;
            let payload = json(raw.payload)?;
            (
                Input::Stage { stage, payload },
                &["decision", "text", "contains", "not_contains", "only_tools"],
            )
        };
        raw.expect.only(allowed)?;
        decision_known(&raw.expect, &input)?;
        Ok(Self {
            name,
            input,
            expect: raw.expect,
        })
    }

    /// Runs the case; `Err` says why it could not be run at all.
    async fn run(&self, pipeline: &Pipeline, plugin: &Plugin) -> Result<Observed, String> {
        let options = CallOptions::default();
        let hook = plugin.hook.as_ref();
        match &self.input {
            Input::Tool { tool, arguments } => {
                if plugin.tool(tool).is_none() {
                    return Err(format!("the plugin has no tool {tool:?}"));
                }
                let request = CallRequest::new(call_id(), tool.clone(), arguments.to_string());
                let result = pipeline.call(request, &BatchOptions::default()).await;
                Ok(Observed::of_result(Vec::new(), &result))
            }
            Input::Before { tool, arguments } => {
                if !hook.is_some_and(|hook| hook.before) {
                    return Err("the plugin declares no before-hook".into());
                }
                let decision = plugin
                    .before_tool_call(&call_id(), tool, arguments, &options)
                    .await
                    .map_err(hook_failed)?;
                Ok(Observed::of_before(decision))
            }
            Input::After {
                tool,
                arguments,
                result,
            } => {
                if !hook.is_some_and(|hook| hook.after) {
                    return Err("the plugin declares no after-hook".into());
                }
                let id = call_id();
                let mut shown = (**result).clone();
                shown.tool_call_id.clone_from(&id);
                let decision = plugin
                    .after_tool_call(&id, tool, arguments, &shown, None, &options)
                    .await
                    .map_err(hook_failed)?;
                Ok(match decision {
                    AfterDecision::Keep => Observed::of_result(vec!["keep"], &shown),
                    AfterDecision::Replace(replaced) => {
                        Observed::of_result(vec!["replace"], &replaced)
                    }
                })
            }
            Input::Stage { stage, payload } => {
                if !hook.is_some_and(|hook| hook.stages.contains(stage)) {
                    return Err(format!(
                        "the plugin's hook does not declare the {stage} stage"
                    ));
                }
                let decision = plugin
                    .session_hook(&call_id(), *stage, payload, &options)
                    .await
                    .map_err(hook_failed)?;
                checked(*stage, payload, decision.clone())?;
                Ok(Observed::of_session(decision))
            }
        }
    }
}

/// Fails when any of `keys` that does not belong to the case's kind was given.
fn no_keys(keys: &[(&str, bool)]) -> Result<(), String> {
    match keys.iter().find(|(_, given)| *given) {
        Some((key, _)) => Err(format!("`{key}` does not belong in this kind of case")),
        None => Ok(()),
    }
}

/// The result an `after` case shows the hook.
fn sample_result(tool: &str, raw: RawResult) -> Result<ToolResult, String> {
    let repeat = raw.repeat.unwrap_or(1);
    if raw.text.len().saturating_mul(repeat) > MAX_RESULT_BYTES {
        return Err(format!(
            "`result` would be over {MAX_RESULT_BYTES} bytes; repeat less"
        ));
    }
    let text = raw.text.repeat(repeat);
    let mut result = if raw.is_error {
        ToolResult::error("", tool, ErrorKind::ToolError, text, json!({}))
    } else {
        ToolResult::success("", tool, vec![Content::text(text)], json!({}))
    };
    if let Some(structured) = raw.structured {
        result.structured = Some(serde_json::to_value(structured).map_err(|err| err.to_string())?);
    }
    Ok(result)
}

/// Fails when `expect.decision` names no decision this kind of case can take.
fn decision_known(expect: &Expect, input: &Input) -> Result<(), String> {
    let Some(decision) = &expect.decision else {
        return Ok(());
    };
    let known: &[&str] = match input {
        Input::Tool { .. } => &[],
        Input::Before { .. } => &["allow", "block", "ask", "rewrite"],
        Input::After { .. } => &["keep", "replace"],
        Input::Stage { .. } => &[
            "proceed",
            "block",
            "replace",
            "add_context",
            "only_tools",
            "drop_calls",
        ],
    };
    if known.contains(&decision.as_str()) {
        Ok(())
    } else {
        Err(format!(
            "`expect.decision = {decision:?}` is not a decision here; it is one of {}",
            known.join(", ")
        ))
    }
}

/// Why a case could not be decided: its hook failed (trapped, timed out, answered garbage).
fn hook_failed(failure: crate::sandbox::failure::Failure) -> String {
    format!(
        "the hook failed: {}: {}",
        failure.kind,
        quote(&failure.message)
    )
}
