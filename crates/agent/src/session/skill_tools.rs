//! Skills in the agent loop: the system prompt names each skill with a line of what it is for
//! (`system_prompt.rs`), and the model loads one when a task fits it by calling `load_skill`
//! (its `SKILL.md`, front matter and instructions), then any file the instructions mention by
//! calling `read_skill_file`. A skill's text enters the context only when it is needed. Both are
//! read through the pipeline (`Pipeline::read_resource`), so the audit log records each read and
//! configured secrets are masked. They are offered whenever the pipeline serves a skill, and in
//! their place no plugin tool of the same name is.

use crate::conversation::message::{ToolCall, ToolOutcome};
use crate::model::provider::ToolSpec;
use cordon_runtime::Pipeline;
use cordon_runtime::offer_terms::ResourceBody;
use cordon_runtime::report::ErrorKind;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The tool that loads a skill's instructions.
pub const LOAD_SKILL: &str = "load_skill";
/// The tool that reads one of a skill's other files.
pub const READ_SKILL_FILE: &str = "read_skill_file";

/// Whether `name` is one of the skill tools.
pub fn is_skill_tool(name: &str) -> bool {
    name == LOAD_SKILL || name == READ_SKILL_FILE
}

/// The skill tools' specs, when `pipeline` serves skills.
pub fn specs(pipeline: &Pipeline) -> Vec<ToolSpec> {
    if pipeline.offers().skills().is_empty() {
        return Vec::new();
    }
    vec![
        ToolSpec {
            name: LOAD_SKILL.into(),
            description: "Load a skill's instructions (the skills are named in the system prompt). Call it before a task the skill fits, then follow what it says.".into(),
            parameters: json!({
                "type": "object",
                "properties": { "name": { "type": "string", "description": "The skill's name." } },
                "required": ["name"],
                "additionalProperties": false,
            }),
        },
        ToolSpec {
            name: READ_SKILL_FILE.into(),
            description: "Read a file a loaded skill's instructions refer to, by its path inside the skill.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "skill": { "type": "string", "description": "The skill's name." },
                    "path": { "type": "string", "description": "The file's path inside the skill, as its instructions write it (templates/report.md)." },
                },
                "required": ["skill", "path"],
                "additionalProperties": false,
            }),
        },
    ]
}

/// The answer to a call of a skill tool.
pub async fn answer(
    pipeline: &Pipeline,
    call: &ToolCall,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let text = |key: &str| arguments.get(key).and_then(Value::as_str).map(str::trim);
    let Some(name) = text(if call.name == LOAD_SKILL {
        "name"
    } else {
        "skill"
    }) else {
        return ToolOutcome::error(
            call,
            ErrorKind::InvalidArguments,
            format!(
                "{} needs {}; the skills are: {}",
                call.name,
                if call.name == LOAD_SKILL {
                    "`name`, a skill's name"
                } else {
                    "`skill` (a skill's name) and `path` (a file in it)"
                },
                skill_names(pipeline)
            ),
        );
    };
    let Some(skill) = pipeline.offers().skill_named(name) else {
        return ToolOutcome::error(
            call,
            ErrorKind::NotFound,
            format!(
                "there is no skill named {:?}; the skills are: {}",
                pipeline.secrets().scrub(name),
                skill_names(pipeline)
            ),
        );
    };
    let (uri, heading) = if call.name == LOAD_SKILL {
        let others: Vec<&str> = skill.files[1..].iter().map(|f| f.path.as_str()).collect();
        let heading = if others.is_empty() {
            format!("Skill {} loaded.\n\n", skill.qualified_name())
        } else {
            format!(
                "Skill {} loaded. Its other files (read them with read_skill_file when its instructions say to): {}\n\n",
                skill.qualified_name(),
                others.join(", ")
            )
        };
        (skill.uri(), heading)
    } else {
        let Some(path) = text("path") else {
            return ToolOutcome::error(
                call,
                ErrorKind::InvalidArguments,
                "read_skill_file needs `path`, a file's path inside the skill",
            );
        };
        let path = path.trim_start_matches("./");
        if skill.files.iter().all(|file| file.path != path) {
            let paths: Vec<&str> = skill.files.iter().map(|f| f.path.as_str()).collect();
            return ToolOutcome::error(
                call,
                ErrorKind::NotFound,
                format!(
                    "skill {} has no file {:?}; its files are: {}",
                    skill.qualified_name(),
                    pipeline.secrets().scrub(path),
                    paths.join(", ")
                ),
            );
        }
        (skill.file_uri(path), String::new())
    };
    match pipeline.read_resource(&uri, cancel.clone()).await {
        Ok(read) => {
            let mut content = heading;
            for part in read.contents {
                match part.body {
                    ResourceBody::Text(text) => content.push_str(&text),
                    ResourceBody::Blob(bytes) => content.push_str(&format!(
                        "[{} is {} bytes of {}, not text; it is not shown]",
                        part.uri,
                        bytes.len(),
                        part.mime_type
                    )),
                }
            }
            ToolOutcome {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                is_error: false,
                error_kind: None,
                content,
            }
        }
        Err(err) => ToolOutcome::error(call, ErrorKind::ToolError, err.to_string()),
    }
}

fn skill_names(pipeline: &Pipeline) -> String {
    let names: Vec<String> = pipeline
        .offers()
        .skills()
        .iter()
        .map(|skill| skill.qualified_name())
        .collect();
    names.join(", ")
}
