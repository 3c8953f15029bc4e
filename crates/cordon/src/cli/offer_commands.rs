//! `cordon read URI` and `cordon prompt NAME key=value...`: a plugin's resource read, or its prompt
//! filled in, from the command line, through the same pipeline `cordon serve` uses (grants,
//! limits, masked secrets, the audit log). Text goes to stdout as it is; bytes as base64, or raw
//! with `--raw`; `--json` prints the MCP-shaped result.

use base64::Engine as _;
use cordon_runtime::Content;
use cordon_runtime::offer_terms::{PromptRole, ResourceBody};
use cordon_runtime::pipeline::Pipeline;
use cordon_runtime::report::terminal_text::lines;
use serde_json::{Map, Value, json};
use std::io::Write as _;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

/// Reads resource `uri` and prints it.
pub async fn read(
    pipeline: &Pipeline,
    uri: &str,
    json: bool,
    raw: bool,
) -> anyhow::Result<ExitCode> {
    let read = pipeline
        .read_resource(uri, CancellationToken::new())
        .await
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    if json {
        let contents: Vec<Value> = read
            .contents
            .iter()
            .map(|part| {
                let mut value = json!({ "uri": part.uri });
                if !part.mime_type.is_empty() {
                    value["mimeType"] = part.mime_type.clone().into();
                }
                match &part.body {
                    ResourceBody::Text(text) => value["text"] = text.clone().into(),
                    ResourceBody::Blob(bytes) => {
                        value["blob"] = base64::engine::general_purpose::STANDARD
                            .encode(bytes)
                            .into()
                    }
                }
                value
            })
            .collect();
        super::render::stdout_line(&serde_json::to_string_pretty(
            &json!({ "plugin": read.plugin, "contents": contents }),
        )?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut stdout = std::io::stdout().lock();
    for part in &read.contents {
        match &part.body {
            ResourceBody::Text(text) if raw => stdout.write_all(text.as_bytes())?,
            ResourceBody::Text(text) => stdout.write_all(lines(text).as_bytes())?,
            ResourceBody::Blob(bytes) if raw => stdout.write_all(bytes)?,
            ResourceBody::Blob(bytes) => writeln!(
                stdout,
                "{}",
                base64::engine::general_purpose::STANDARD.encode(bytes)
            )?,
        }
    }
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Fills in prompt `name` with `key=value` arguments and prints its messages.
pub async fn prompt(
    pipeline: &Pipeline,
    name: &str,
    pairs: &[String],
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut arguments = Map::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            anyhow::bail!(
                "argument {pair:?} is not key=value; give each prompt argument as NAME=VALUE"
            );
        };
        arguments.insert(key.to_string(), value.into());
    }
    let filled = pipeline
        .get_prompt(name, &arguments, CancellationToken::new())
        .await
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    let role = |role: PromptRole| match role {
        PromptRole::User => "user",
        PromptRole::Assistant => "assistant",
    };
    if json {
        let messages: Vec<Value> = filled
            .messages
            .iter()
            .map(|message| json!({ "role": role(message.role), "content": message.content }))
            .collect();
        super::render::stdout_line(&serde_json::to_string_pretty(
            &json!({ "description": filled.description, "messages": messages }),
        )?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    for message in &filled.messages {
        let text = match &message.content {
            Content::Text { text } => lines(text).into_owned(),
            Content::Image { mime_type, data } => {
                format!("[image {} of {} bytes]", lines(mime_type), data.len())
            }
        };
        out.push_str(&format!("{}: {text}\n", role(message.role)));
    }
    super::render::stdout_line(out.trim_end())?;
    Ok(ExitCode::SUCCESS)
}
