//! What a plugin declares from `describe` (each tool's name, title, description, parameters
//! schema and execution mode; its hook's tool patterns and stages) as comparable lines, which
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
            format!(
                "tool {} {mode} title={} description={} schema={}",
                tool.name,
                digest(tool.label.as_bytes()),
                digest(tool.description.as_bytes()),
                digest(tool.schema.as_json().to_string().as_bytes()),
            )
        })
        .collect();
    if let Some(hook) = &plugin.hook {
        let tools = if hook.tools.is_empty() {
            "*".to_string()
        } else {
            hook.tools.join(",")
        };
        lines.push(format!(
            "hook tools={tools} before={} after={}",
            hook.before, hook.after
        ));
    }
    lines.sort();
    lines
}
