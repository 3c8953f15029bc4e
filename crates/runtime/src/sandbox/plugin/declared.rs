//! What a plugin's `describe` may declare: bounds on its tools and schemas checked before anything
//! in it is compiled, tool names as model APIs accept them, and each declared tool turned into a
//! [`ToolInfo`] with its compiled schema.

use super::{ExecutionMode, LoadError, ToolInfo};
use crate::sandbox::bindings;
use crate::schema::ArgumentSchema;

/// The most tools one plugin may declare.
pub const MAX_TOOLS_PER_PLUGIN: usize = 256;
/// The most bytes of parameters schemas one plugin may declare, all its tools together.
pub const MAX_SCHEMA_BYTES_PER_PLUGIN: usize = 4 << 20;
/// The most tool globs a hook may declare.
const MAX_HOOK_GLOBS: usize = 256;

/// Refuses a `describe` answer that is too large to be a real plugin's, or that names one tool
/// twice, before anything in it is compiled.
pub(super) fn check_declarations(info: &bindings::PluginInfo) -> Result<(), LoadError> {
    if info.tools.len() > MAX_TOOLS_PER_PLUGIN {
        return Err(LoadError::TooManyTools {
            count: info.tools.len(),
            limit: MAX_TOOLS_PER_PLUGIN,
        });
    }
    let schema_bytes: usize = info.tools.iter().map(|t| t.parameters.len()).sum();
    if schema_bytes > MAX_SCHEMA_BYTES_PER_PLUGIN {
        return Err(LoadError::SchemasTooLarge {
            bytes: schema_bytes,
            limit: MAX_SCHEMA_BYTES_PER_PLUGIN,
        });
    }
    let mut names = std::collections::HashSet::new();
    if let Some(tool) = info.tools.iter().find(|t| !names.insert(t.name.as_str())) {
        return Err(LoadError::InvalidTool {
            tool: tool.name.clone(),
            reason: "it is declared twice by this plugin; tool names must be unique".into(),
        });
    }
    if let Some(hook) = &info.hook
        && (hook.tools.len() > MAX_HOOK_GLOBS
            || hook
                .tools
                .iter()
                .any(|glob| !crate::capabilities::tool_glob::is_valid(glob)))
    {
        return Err(LoadError::InvalidHookGlobs {
            count: hook.tools.len(),
            limit: MAX_HOOK_GLOBS,
        });
    }
    Ok(())
}

/// Checks one declared tool: its name and its schema.
pub(super) fn tool_info(spec: bindings::ToolSpec) -> Result<ToolInfo, LoadError> {
    let invalid = |reason: String| LoadError::InvalidTool {
        tool: spec.name.clone(),
        reason,
    };
    if !is_valid_tool_name(&spec.name) {
        return Err(invalid(
            "tool names must match ^[a-zA-Z0-9_-]{1,64}$".into(),
        ));
    }
    let schema_json: serde_json::Value = serde_json::from_str(&spec.parameters)
        .map_err(|err| invalid(format!("the parameters schema is not JSON: {err}")))?;
    let schema = ArgumentSchema::compile(schema_json).map_err(invalid)?;
    Ok(ToolInfo {
        label: if spec.label.is_empty() {
            spec.name.clone()
        } else {
            spec.label
        },
        name: spec.name,
        description: spec.description,
        schema,
        execution_mode: match spec.execution_mode {
            bindings::ExecutionMode::Parallel => ExecutionMode::Parallel,
            bindings::ExecutionMode::Sequential => ExecutionMode::Sequential,
        },
    })
}

/// OpenAI's rule for function names: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_openai_rule() {
        let long = "a".repeat(65);
        let cases = [
            ("read_file", true),
            ("a-b_C9", true),
            ("x", true),
            ("", false),
            ("read file", false),
            ("read.file", false),
            ("é", false),
            (long.as_str(), false),
        ];
        for (name, valid) in cases {
            assert_eq!(is_valid_tool_name(name), valid, "{name:?}");
        }
    }
}
