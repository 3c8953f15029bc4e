//! What a plugin declares from `describe` (each tool's name, title, description, parameters
//! schema and execution mode, and in contract 0.2 its output schema, annotations, prompt
//! guidelines and locks; its hook's tool patterns and stages) as comparable lines, which
//! cordon.lock pins beside the file's sha256: an approved plugin that later declares other tools,
//! takes another plugin's tool name, or tells the model something else about a tool, is refused
//! under `--locked` like a changed file.

use crate::capabilities::lock::digest;
use crate::sandbox::plugin::{ExecutionMode, Plugin};

/// One line per tool and one for the hook, sorted.
pub fn lines(plugin: &Plugin) -> Vec<String> {
    let mut lines: Vec<String> = plugin
        .tools
        .iter()
        .map(|tool| {
            let mode = match tool.execution_mode {
                ExecutionMode::Parallel => "parallel",
                ExecutionMode::Sequential => "sequential",
            };
            let mut line = format!(
                "tool {} {mode} title={} description={} schema={}",
                tool.name,
                digest(tool.title.as_bytes()),
                digest(tool.description.as_bytes()),
                digest(tool.schema.as_json().to_string().as_bytes()),
            );
            // What contract 0.2 adds is pinned only when declared, so a 0.1 plugin's lines (and
            // the locks that approved them) stay as they were.
            if let Some(output) = &tool.output_schema {
                line.push_str(&format!(
                    " output={}",
                    digest(output.as_json().to_string().as_bytes())
                ));
            }
            if !tool.annotations.is_empty() {
                let hints = serde_json::to_string(&tool.annotations).unwrap_or_default();
                line.push_str(&format!(" annotations={hints}"));
            }
            if !tool.prompt_guidelines.is_empty() {
                let guidelines = serde_json::to_string(&tool.prompt_guidelines).unwrap_or_default();
                line.push_str(&format!(" guidelines={}", digest(guidelines.as_bytes())));
            }
            if !tool.locks.is_empty() {
                line.push_str(&format!(
                    " locks={}",
                    digest(
                        serde_json::to_string(&tool.locks)
                            .unwrap_or_default()
                            .as_bytes()
                    )
                ));
            }
            line
        })
        .collect();
    if let Some(hook) = &plugin.hook {
        let tools = if hook.tools.is_empty() {
            "*".to_string()
        } else {
            hook.tools.join(",")
        };
        let mut line = format!(
            "hook tools={tools} before={} after={}",
            hook.before, hook.after
        );
        // Session stages (contract 0.3) are pinned only when declared, as 0.2's additions are.
        if !hook.stages.is_empty() {
            let stages: Vec<&str> = hook.stages.iter().map(|stage| stage.as_str()).collect();
            line.push_str(&format!(" stages={}", stages.join(",")));
        }
        lines.push(line);
    }
    lines.sort();
    lines
}
