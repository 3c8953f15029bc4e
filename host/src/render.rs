//! How the CLI prints registries, tool specs and call results: a readable form for people and a
//! stable JSON form (`--json`) for scripts.

use cordon::Registry;
use cordon::cache::CompileSource;
use cordon::plugin::{Plugin, ToolInfo};
use cordon::result::{Content, ToolResult};
use serde_json::{Value, json};
use std::io::Write as _;

fn tool_json(plugin: &Plugin, tool: &ToolInfo) -> Value {
    json!({
        "name": tool.name,
        "label": tool.label,
        "description": tool.description,
        "plugin": &*plugin.id,
        "executionMode": tool.execution_mode,
        "parameters": tool.schema.as_json(),
    })
}

pub fn list(registry: &Registry, as_json: bool) -> anyhow::Result<()> {
    let hooks: Vec<(&Plugin, _)> = registry
        .plugins()
        .iter()
        .filter_map(|p| p.hook.as_ref().map(|hook| (&**p, hook)))
        .collect();
    if as_json {
        let value = json!({
            "tools": registry.tools().map(|(plugin, tool)| tool_json(plugin, tool)).collect::<Vec<_>>(),
            "hooks": hooks.iter().map(|(plugin, hook)| json!({
                "plugin": &*plugin.id, "tools": hook.tools, "before": hook.before, "after": hook.after,
            })).collect::<Vec<_>>(),
            "plugins": registry.plugins().iter().map(|plugin| json!({
                "id": &*plugin.id,
                "file": plugin.path,
                "sha256": hex::encode(plugin.sha256),
                "compiled": match plugin.compiled { CompileSource::Cached => "cache", CompileSource::Compiled => "fresh" },
                "tools": plugin.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "rejected": registry.rejected(),
        });
        return print_json(&value);
    }
    let mut out = String::new();
    let tools: Vec<_> = registry.tools().collect();
    out.push_str(&format!("Tools ({}):\n", tools.len()));
    let width = tools.iter().map(|(_, t)| t.name.len()).max().unwrap_or(0);
    for (plugin, tool) in &tools {
        out.push_str(&format!(
            "  {:width$}  [{}] {}: {}\n",
            tool.name,
            plugin.id,
            tool.label,
            first_sentence(&tool.description)
        ));
    }
    if !hooks.is_empty() {
        out.push_str(&format!("Hooks ({}):\n", hooks.len()));
        for (plugin, hook) in &hooks {
            let watches = if hook.tools.is_empty() {
                "all tools".to_string()
            } else {
                hook.tools.join(", ")
            };
            let points: Vec<&str> = [(hook.before, "before"), (hook.after, "after")]
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, n)| *n)
                .collect();
            out.push_str(&format!(
                "  {} ({}) watches {watches}\n",
                plugin.id,
                points.join(" + ")
            ));
        }
    }
    if !registry.rejected().is_empty() {
        out.push_str(&format!(
            "Rejected plugins ({}):\n",
            registry.rejected().len()
        ));
        for rejected in registry.rejected() {
            out.push_str(&format!(
                "  {}: {}\n",
                rejected.file.display(),
                rejected.reason
            ));
        }
    }
    write_stdout(&out)
}

pub fn describe(plugin: &Plugin, tool: &ToolInfo, as_json: bool) -> anyhow::Result<()> {
    if as_json {
        return print_json(&tool_json(plugin, tool));
    }
    let mode = match tool.execution_mode {
        cordon::plugin::ExecutionMode::Parallel => "parallel",
        cordon::plugin::ExecutionMode::Sequential => "sequential",
    };
    let out = format!(
        "{} ({})\nplugin: {} ({})\nexecution: {mode}\n\n{}\n\nparameters:\n{}\n",
        tool.name,
        tool.label,
        plugin.id,
        plugin.path.display(),
        tool.description,
        serde_json::to_string_pretty(tool.schema.as_json())?
    );
    write_stdout(&out)
}

pub fn call_result(result: &ToolResult, as_json: bool) -> anyhow::Result<()> {
    if as_json {
        return print_json(&serde_json::to_value(result)?);
    }
    let mut out = String::new();
    if let Some(kind) = result.error_kind {
        out.push_str(&format!("[{kind}] "));
    }
    for block in &result.content {
        match block {
            Content::Text { text } => out.push_str(text),
            Content::Image { mime_type, data } => {
                out.push_str(&format!("[image {mime_type}, {} bytes]", data.len()))
            }
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    write_stdout(&out)
}

fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(end) => &text[..=end],
        None => text,
    }
}

fn print_json(value: &Value) -> anyhow::Result<()> {
    write_stdout(&format!("{}\n", serde_json::to_string_pretty(value)?))
}

/// Writes to stdout; a closed pipe (e.g. `| head`) is not an error worth a message.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
