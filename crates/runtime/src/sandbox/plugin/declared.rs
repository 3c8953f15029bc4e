//! What a plugin's `describe` may declare: bounds on its tools and schemas checked before anything
//! in it is compiled, tool names as model APIs accept them, and each declared tool turned into a
//! [`ToolInfo`] with its compiled schemas, bounded prompt guidelines and valid lock pointers.

use super::{LoadError, ToolInfo};
use crate::sandbox::contract::host_terms::{Declared, DeclaredTool};
use crate::schema::ArgumentSchema;

/// The most tools one plugin may declare.
pub const MAX_TOOLS_PER_PLUGIN: usize = 256;
/// The most bytes of parameters schemas one plugin may declare, all its tools together.
pub const MAX_SCHEMA_BYTES_PER_PLUGIN: usize = 4 << 20;
/// The most tool globs a hook may declare.
const MAX_HOOK_GLOBS: usize = 256;
/// The most prompt guidelines one tool may declare, and the longest one.
pub const MAX_PROMPT_GUIDELINES: usize = 8;
pub const MAX_PROMPT_GUIDELINE_BYTES: usize = 200;
/// The most lock pointers one tool may declare, and the longest one.
const MAX_LOCKS: usize = 8;
const MAX_LOCK_POINTER_BYTES: usize = 256;
/// The longest title.
const MAX_TITLE_BYTES: usize = 128;

/// Refuses a `describe` answer that is too large to be a real plugin's, or that names one tool
/// twice, before anything in it is compiled.
pub(super) fn check_declarations(info: &Declared) -> Result<(), LoadError> {
    if info.tools.len() > MAX_TOOLS_PER_PLUGIN {
        return Err(LoadError::TooManyTools {
            count: info.tools.len(),
            limit: MAX_TOOLS_PER_PLUGIN,
        });
    }
    let schema_bytes: usize = info
        .tools
        .iter()
        .map(|t| t.parameters.len() + t.output_schema.as_ref().map_or(0, String::len))
        .sum();
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

/// Checks one declared tool: its name, schemas, title, guidelines and locks.
pub(super) fn tool_info(spec: DeclaredTool) -> Result<ToolInfo, LoadError> {
    let invalid = |reason: String| LoadError::InvalidTool {
        tool: spec.name.clone(),
        reason,
    };
    if !is_valid_tool_name(&spec.name) {
        return Err(invalid(
            "tool names must match ^[a-zA-Z0-9_-]{1,64}$".into(),
        ));
    }
    // `none` and `all` are routes (intent routing, a hook's narrowing): a name means one thing.
    if ["none", "all"].contains(&spec.name.to_ascii_lowercase().as_str()) {
        return Err(invalid(format!(
            "{:?} is a route of cordon's own (`none`: no tools, `all`: every tool), never a tool's name; rename the tool ([plugins.ID.tools.NAME] name = ... for a component that cannot)",
            spec.name
        )));
    }
    let schema_json: serde_json::Value = serde_json::from_str(&spec.parameters)
        .map_err(|err| invalid(format!("the parameters schema is not JSON: {err}")))?;
    let schema = ArgumentSchema::compile(schema_json).map_err(invalid)?;
    let output_schema = match &spec.output_schema {
        None => None,
        Some(text) => {
            let json: serde_json::Value = serde_json::from_str(text)
                .map_err(|err| invalid(format!("the output schema is not JSON: {err}")))?;
            Some(ArgumentSchema::compile_as(json, "output schema").map_err(invalid)?)
        }
    };
    if spec.title.len() > MAX_TITLE_BYTES || spec.title.chars().any(char::is_control) {
        return Err(invalid(format!(
            "its title must be one line of at most {MAX_TITLE_BYTES} bytes"
        )));
    }
    if spec.prompt_guidelines.len() > MAX_PROMPT_GUIDELINES
        || spec.prompt_guidelines.iter().any(|line| {
            line.trim().is_empty()
                || line.len() > MAX_PROMPT_GUIDELINE_BYTES
                || line.chars().any(char::is_control)
        })
    {
        return Err(invalid(format!(
            "it may declare at most {MAX_PROMPT_GUIDELINES} prompt guidelines, each one non-empty line of at most {MAX_PROMPT_GUIDELINE_BYTES} bytes"
        )));
    }
    if spec.locks.len() > MAX_LOCKS {
        return Err(invalid(format!(
            "it declares {} locks; at most {MAX_LOCKS}",
            spec.locks.len()
        )));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = spec
        .locks
        .iter()
        .find(|pointer| !seen.insert(pointer.as_str()))
    {
        return Err(invalid(format!("its lock {twice:?} is declared twice")));
    }
    if let Some(bad) = spec.locks.iter().find(|pointer| !is_json_pointer(pointer)) {
        return Err(invalid(format!(
            "its lock {bad:?} is not a JSON pointer into the arguments (like \"/path\", at most {MAX_LOCK_POINTER_BYTES} bytes)"
        )));
    }
    Ok(ToolInfo {
        title: if spec.title.is_empty() {
            spec.name.clone()
        } else {
            spec.title
        },
        name: spec.name,
        description: spec.description,
        schema,
        output_schema,
        execution_mode: spec.execution_mode,
        annotations: spec.annotations,
        prompt_guidelines: spec.prompt_guidelines,
        locks: spec.locks,
    })
}

/// RFC 6901: empty (the whole arguments, which locks do not allow) or `/`-separated tokens in
/// which `~` is only ever followed by `0` or `1`.
fn is_json_pointer(pointer: &str) -> bool {
    pointer.starts_with('/')
        && pointer.len() <= MAX_LOCK_POINTER_BYTES
        && !pointer.chars().any(char::is_control)
        && pointer
            .split('~')
            .skip(1)
            .all(|rest| rest.starts_with('0') || rest.starts_with('1'))
}

use crate::capabilities::tool_glob::is_valid_tool_name;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_pointers_follow_rfc_6901() {
        for (pointer, valid) in [
            ("/path", true),
            ("/a/0/b", true),
            ("/a~1b", true),
            ("/a~0", true),
            ("", false),
            ("path", false),
            ("/a~2", false),
            ("/a~", false),
        ] {
            assert_eq!(is_json_pointer(pointer), valid, "{pointer:?}");
        }
    }

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
