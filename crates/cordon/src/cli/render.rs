//! How the CLI prints registries, tool specs and call results: a readable form for people and a
//! stable JSON form (`--json`) for scripts. Every name, description, path and reason a plugin, a
//! file or a config supplied goes through the terminal sanitiser (`terminal_text`) field by field,
//! so it cannot forge a line of the table or drive the terminal; the JSON forms have those
//! characters as JSON escapes.

use cordon_runtime::CompileSource;
use cordon_runtime::pipeline::{Event, Pipeline};
use cordon_runtime::report::terminal_text::{json_text, lines, one_line};
use cordon_runtime::report::{Content, ToolResult};
use cordon_runtime::{Plugin, ToolInfo};
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn tool_json(plugin: &Plugin, tool: &ToolInfo, active: bool) -> Value {
    let mut value = json!({
        "name": tool.name,
        "active": active,
        "title": tool.title,
        // The title under its 0.1 name, for scripts written against it.
        "label": tool.title,
        "description": tool.description,
        "plugin": &*plugin.id,
        "contract": plugin.contract,
        "executionMode": tool.execution_mode,
        "annotations": tool.annotations,
        "parameters": tool.schema.as_json(),
    });
    if let Some(output) = &tool.output_schema {
        value["outputSchema"] = output.as_json().clone();
    }
    if !tool.prompt_guidelines.is_empty() {
        value["promptGuidelines"] = json!(tool.prompt_guidelines);
    }
    if !tool.locks.is_empty() {
        value["locks"] = json!(tool.locks);
    }
    value
}

/// `signers`: what is known of who signed each plugin, by id (signatures.rs).
pub fn list(
    pipeline: &Pipeline,
    signers: &BTreeMap<String, String>,
    as_json: bool,
) -> anyhow::Result<()> {
    let registry = pipeline.registry();
    let hooks: Vec<(&Plugin, _)> = pipeline
        .hooks()
        .iter()
        .filter_map(|p| p.hook.as_ref().map(|hook| (&**p, hook)))
        .collect();
    let ungranted: Vec<(&Plugin, _)> = pipeline
        .ungranted_hooks()
        .iter()
        .filter_map(|p| p.hook.as_ref().map(|hook| (&**p, hook)))
        .collect();
    if as_json {
        let value = json!({
            "tools": registry.tools().map(|(plugin, tool)| tool_json(plugin, tool, pipeline.is_active(&tool.name))).collect::<Vec<_>>(),
            "hooks": hooks.iter().map(|(plugin, hook)| json!({
                "plugin": &*plugin.id, "tools": hook.tools, "before": hook.before, "after": hook.after,
                "stages": hook.stages,
                "granted": true,
                "grantedTools": plugin.grant.hook.as_ref().map(|grant| &grant.tools),
            })).chain(ungranted.iter().map(|(plugin, hook)| json!({
                "plugin": &*plugin.id, "tools": hook.tools, "before": hook.before, "after": hook.after,
                "stages": hook.stages,
                "granted": false,
                "reason": ungranted_reason(plugin),
            }))).collect::<Vec<_>>(),
            "plugins": registry.plugins().iter().map(|plugin| json!({
                "id": &*plugin.id,
                "file": plugin.path,
                "sha256": hex::encode(plugin.sha256),
                "contract": plugin.contract,
                "compiled": match plugin.compiled { CompileSource::Cached => "cache", CompileSource::Compiled => "fresh" },
                "tools": plugin.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
                "signature": signers.get(&*plugin.id),
            })).collect::<Vec<_>>(),
            "rejected": registry.rejected(),
            "collisions": registry.collisions(),
        });
        let mut value = value;
        for (key, offered) in super::render_offers::offers_json(pipeline) {
            value[key] = offered;
        }
        return print_json(&value);
    }
    let mut out = String::new();
    let tools: Vec<_> = registry.tools().collect();
    let active = pipeline.active_tools().count();
    if active == tools.len() {
        out.push_str(&format!("Tools ({}):\n", tools.len()));
    } else {
        out.push_str(&format!("Tools ({}, {active} active):\n", tools.len()));
    }
    let width = tools
        .iter()
        .map(|(_, t)| one_line(&t.name).chars().count())
        .max()
        .unwrap_or(0);
    for (plugin, tool) in &tools {
        let inactive = if pipeline.is_active(&tool.name) {
            ""
        } else {
            " (inactive)"
        };
        out.push_str(&format!(
            "  {:width$}  [{}] {}: {}{inactive}\n",
            one_line(&tool.name),
            one_line(&plugin.id),
            one_line(&tool.title),
            one_line(first_sentence(&tool.description))
        ));
    }
    let plugins = registry.plugins();
    if !plugins.is_empty() {
        out.push_str(&format!("Plugins ({}):\n", plugins.len()));
        let width = plugins
            .iter()
            .map(|p| one_line(&p.id).chars().count())
            .max()
            .unwrap_or(0);
        for plugin in plugins {
            let signed = signers
                .get(&*plugin.id)
                .map_or(String::new(), |signer| format!("  ({})", one_line(signer)));
            out.push_str(&format!(
                "  {:width$}  contract {}  {}{signed}\n",
                one_line(&plugin.id),
                plugin.contract,
                one_line(&plugin.path.display().to_string())
            ));
        }
    }
    out.push_str(&super::render_offers::offers_text(pipeline));
    if !hooks.is_empty() {
        out.push_str(&format!("Hooks ({}):\n", hooks.len()));
        for (plugin, hook) in &hooks {
            let granted = plugin.grant.hook.as_ref().map_or(&[][..], |g| &g.tools[..]);
            let narrowed = if granted.is_empty() {
                String::new()
            } else if hook.stages.is_empty() {
                format!(", as granted: {}", one_line(&granted.join(", ")))
            } else {
                format!(
                    ", as granted: {}; not at its session stages (a grant for some tools is not one for the session: hook = true grants them)",
                    one_line(&granted.join(", "))
                )
            };
            out.push_str(&format!(
                "  {} ({}) watches {}{narrowed}\n",
                one_line(&plugin.id),
                hook_points(hook),
                watched_by(hook)
            ));
        }
    }
    if !ungranted.is_empty() {
        out.push_str(&format!(
            "Hooks not granted, not run ({}):\n",
            ungranted.len()
        ));
        for (plugin, hook) in &ungranted {
            out.push_str(&format!(
                "  {} ({}) would watch {}: {}\n",
                one_line(&plugin.id),
                hook_points(hook),
                watched_by(hook),
                ungranted_reason(plugin)
            ));
        }
    }
    if !registry.collisions().is_empty() {
        out.push_str(&format!(
            "Tool name collisions ({}):\n",
            registry.collisions().len()
        ));
        for collision in registry.collisions() {
            out.push_str(&format!(
                "  {} is declared by {}: {} ({})\n",
                one_line(&collision.tool),
                one_line(&collision.declared_by.join(", ")),
                match &collision.provider {
                    Some(provider) =>
                        format!("{} provides it, the others are refused", one_line(provider)),
                    None => "none of them is loaded".to_string(),
                },
                one_line(&collision.decided_by)
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
                one_line(&rejected.file.display().to_string()),
                one_line(&rejected.reason)
            ));
        }
    }
    write_stdout(&out)
}

/// Why a declared hook does not run, and how to grant it.
fn ungranted_reason(plugin: &Plugin) -> String {
    format!(
        "not granted; add `hook = true` (or `hook = [\"tool globs\"]`) to [plugins.{}] in cordon.toml to let it see and change other tools' calls",
        one_line(&plugin.id)
    )
}

fn watched(tools: &[String]) -> String {
    if tools.is_empty() {
        "all tools".to_string()
    } else {
        one_line(&tools.join(", ")).into_owned()
    }
}

/// What a hook watches: the tools of its tool points, else the session alone.
fn watched_by(hook: &cordon_runtime::HookInfo) -> String {
    if hook.before || hook.after {
        watched(&hook.tools)
    } else {
        "the session".to_string()
    }
}

/// `before + after`, `before + stages prompt, stop`, `stages model-request`: where a hook runs.
fn hook_points(hook: &cordon_runtime::HookInfo) -> String {
    hook.points("stages").join(" + ")
}

pub fn describe(
    plugin: &Plugin,
    tool: &ToolInfo,
    active: bool,
    as_json: bool,
) -> anyhow::Result<()> {
    if as_json {
        return print_json(&tool_json(plugin, tool, active));
    }
    let mode = match tool.execution_mode {
        cordon_runtime::ExecutionMode::Parallel => "parallel",
        cordon_runtime::ExecutionMode::Sequential => "sequential",
    };
    let mut out = format!(
        "{} ({})\nplugin: {} ({}, contract {})\nexecution: {mode}\n",
        one_line(&tool.name),
        one_line(&tool.title),
        one_line(&plugin.id),
        one_line(&plugin.path.display().to_string()),
        plugin.contract,
    );
    if !tool.annotations.is_empty() {
        out.push_str(&format!("annotations: {}\n", annotation_words(tool)));
    }
    if !tool.locks.is_empty() {
        out.push_str(&format!("locks: {}\n", one_line(&tool.locks.join(", "))));
    }
    out.push_str(&format!(
        "\n{}\n\nparameters:\n{}\n",
        indented(&tool.description),
        json_text(&serde_json::to_string_pretty(tool.schema.as_json())?)
    ));
    if let Some(output) = &tool.output_schema {
        out.push_str(&format!(
            "\noutput:\n{}\n",
            json_text(&serde_json::to_string_pretty(output.as_json())?)
        ));
    }
    if !tool.prompt_guidelines.is_empty() {
        out.push_str("\nprompt guidelines:\n");
        for line in &tool.prompt_guidelines {
            out.push_str(&format!("  - {}\n", one_line(line)));
        }
    }
    write_stdout(&out)
}

/// A description's own lines, each indented by two spaces and sanitised: it keeps its paragraphs,
/// and no line of it can pass for one of `describe`'s headings (`plugin: …`, `parameters:`).
fn indented(description: &str) -> String {
    description
        .lines()
        .map(|line| {
            if line.is_empty() {
                String::new()
            } else {
                format!("  {}", one_line(line))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The hints a tool gave, as words: `read-only, idempotent, closed-world`.
fn annotation_words(tool: &ToolInfo) -> String {
    let hints = tool.annotations;
    let word = |hint: Option<bool>, yes: &'static str, no: &'static str| {
        hint.map(|on| if on { yes } else { no })
    };
    [
        word(hints.read_only, "read-only", "writes"),
        word(hints.destructive, "destructive", "non-destructive"),
        word(hints.idempotent, "idempotent", "not idempotent"),
        word(hints.open_world, "open-world", "closed-world"),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ")
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

/// A batch's results: a JSON array, or each result as `call` prints it, headed by its id.
pub fn batch_results(results: &[ToolResult], as_json: bool) -> anyhow::Result<()> {
    if as_json {
        return print_json(&serde_json::to_value(results)?);
    }
    for result in results {
        write_stdout(&format!(
            "── {} {} ──\n",
            one_line(&result.tool_call_id),
            one_line(&result.tool_name)
        ))?;
        call_result(result, false)?;
    }
    Ok(())
}

/// One event as a JSON line on stderr.
pub fn event_line(event: &Event) {
    // Scrubbed as a value before it is serialised, so a mask never breaks the JSON.
    if let Ok(mut value) = serde_json::to_value(event) {
        crate::cli::host_secrets::host_secrets().scrub_json(&mut value);
        crate::cli::stdio_output::stderr_line(&json_text(&value.to_string()));
    }
}

fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(end) => &text[..=end],
        None => text,
    }
}

/// JSON for scripts: what a plugin wrote is in it as it was, its unsafe characters as JSON escapes.
fn print_json(value: &Value) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    crate::cli::stdio_output::stdout_write(&format!("{}\n", json_text(&text)))?;
    Ok(())
}

/// Writes to stdout; a closed pipe (e.g. `| head`) is not an error worth a message. On a terminal,
/// what in the text could drive it (the text may come from a plugin or a model) is shown escaped,
/// its line breaks kept.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::IsTerminal as _;
    if std::io::stdout().is_terminal() {
        return Ok(crate::cli::stdio_output::stdout_write(&lines(text))?);
    }
    Ok(crate::cli::stdio_output::stdout_write(text)?)
}

/// Writes one line to stdout (see [`write_stdout`]).
pub fn stdout_line(text: &str) -> anyhow::Result<()> {
    write_stdout(&format!("{text}\n"))
}
