//! `[plugins.ID.tools.NAME]`: what the operator says about one tool of a component that cannot say
//! it itself (a plain WIT component or a `wasi:cli` command), checked and turned into a
//! [`ToolOverride`]. NAME is the tool name cordon derives (what `cordon list` shows).

use super::KeyError;
use crate::capabilities::tool_glob::is_valid_tool_name;
use crate::capabilities::tool_overrides::ToolOverride;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The longest description and title the operator may give.
const MAX_DESCRIPTION_BYTES: usize = 4096;
const MAX_TITLE_BYTES: usize = 128;
/// The most examples one tool may have.
const MAX_EXAMPLES: usize = 16;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawToolOverride {
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    annotations: Option<RawAnnotations>,
    #[serde(default)]
    examples: Vec<RawExample>,
    execution_mode: Option<RawExecutionMode>,
    #[serde(default)]
    skip: bool,
    ok_exit_codes: Option<Vec<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnnotations {
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
}

/// An example arguments object: a TOML table, or JSON text (which can say `null`, as TOML cannot).
#[derive(Deserialize)]
#[serde(untagged)]
enum RawExample {
    Table(toml::Table),
    Json(String),
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum RawExecutionMode {
    Parallel,
    Sequential,
}

/// Checks every `[plugins.ID.tools.NAME]` table; the error's key is relative to `tools`.
pub(super) fn validate(
    raw: BTreeMap<String, RawToolOverride>,
) -> Result<BTreeMap<String, ToolOverride>, KeyError> {
    let mut overrides = BTreeMap::new();
    for (tool, raw) in raw {
        let key = |field: &str| format!("tools.{tool}.{field}");
        if !is_valid_tool_name(&tool) {
            return Err((
                format!("tools.{tool}"),
                "is not a tool name (letters, digits, _ and -, at most 64); use the name `cordon list` shows".into(),
            ));
        }
        if let Some(name) = &raw.name
            && !is_valid_tool_name(name)
        {
            return Err((
                key("name"),
                format!(
                    "{name:?} is not a tool name model APIs accept: letters, digits, _ and -, at most 64"
                ),
            ));
        }
        if let Some(title) = &raw.title
            && (title.len() > MAX_TITLE_BYTES || title.chars().any(char::is_control))
        {
            return Err((
                key("title"),
                format!("must be one line of at most {MAX_TITLE_BYTES} bytes"),
            ));
        }
        if let Some(description) = &raw.description
            && (description.trim().is_empty() || description.len() > MAX_DESCRIPTION_BYTES)
        {
            return Err((
                key("description"),
                format!("must be some text of at most {MAX_DESCRIPTION_BYTES} bytes"),
            ));
        }
        if raw.examples.len() > MAX_EXAMPLES {
            return Err((
                key("examples"),
                format!(
                    "has {} examples; at most {MAX_EXAMPLES}",
                    raw.examples.len()
                ),
            ));
        }
        let mut examples = Vec::with_capacity(raw.examples.len());
        for (index, example) in raw.examples.iter().enumerate() {
            let at = || key(&format!("examples[{index}]"));
            let value = match example {
                RawExample::Table(table) => {
                    serde_json::to_value(table).map_err(|err| (at(), err.to_string()))?
                }
                RawExample::Json(text) => match serde_json::from_str(text) {
                    Ok(value @ serde_json::Value::Object(_)) => value,
                    Ok(_) => return Err((at(), "must be a JSON object of arguments".into())),
                    Err(err) => return Err((at(), format!("is not JSON: {err}"))),
                },
            };
            examples.push(value);
        }
        let ok_exit_codes = match &raw.ok_exit_codes {
            None => None,
            Some(codes) if codes.is_empty() => {
                return Err((
                    key("ok_exit_codes"),
                    "is empty: no exit status would be success; list them, as in [0, 1]".into(),
                ));
            }
            Some(codes) => {
                let mut kept = Vec::with_capacity(codes.len());
                for code in codes {
                    match u8::try_from(*code) {
                        Ok(code) => kept.push(i32::from(code)),
                        Err(_) => {
                            return Err((
                                key("ok_exit_codes"),
                                format!("{code} is not an exit status: they are 0 to 255"),
                            ));
                        }
                    }
                }
                kept.sort_unstable();
                kept.dedup();
                Some(kept)
            }
        };
        let annotations = raw.annotations.unwrap_or(RawAnnotations {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        });
        overrides.insert(
            tool,
            ToolOverride {
                name: raw.name,
                title: raw.title,
                description: raw.description,
                read_only: annotations.read_only,
                destructive: annotations.destructive,
                idempotent: annotations.idempotent,
                open_world: annotations.open_world,
                examples,
                sequential: raw
                    .execution_mode
                    .map(|mode| matches!(mode, RawExecutionMode::Sequential)),
                skip: raw.skip,
                ok_exit_codes,
            },
        );
    }
    Ok(overrides)
}
