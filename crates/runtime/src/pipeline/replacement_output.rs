//! An after-hook's replacement of a result held to the tool's output schema. The replacement is
//! the whole new result: structured output the hook returned must match the schema (else the hook
//! failed, and fails closed), and a replacement without structured output stands as the hook's
//! text alone. Nothing of the original result, its structured output least of all, survives it:
//! a hook that cut or masked the text must not have the cut part reach clients that read
//! `structuredContent`.

use crate::report::ToolResult;
use crate::schema::ArgumentSchema;

/// The most schema violations a hook failure lists.
const LISTED_VIOLATIONS: usize = 5;

/// Why `replacement`, an after-hook's new result for tool `tool`, cannot stand; `None` when it
/// can. Only a success's structured output is checked, as a tool's own is: an error result need
/// not match the schema.
pub(super) async fn refusal(
    replacement: &ToolResult,
    tool: &str,
    output_schema: Option<&ArgumentSchema>,
) -> Option<String> {
    let (Some(schema), Some(structured)) = (output_schema, replacement.structured.as_ref()) else {
        return None;
    };
    if replacement.is_error {
        return None;
    }
    let size = serde_json::to_string(structured).map_or(usize::MAX, |text| text.len());
    let violations = match schema.check_bounded(structured, size).await {
        Ok(violations) => violations,
        Err(refused) => {
            return Some(format!(
                "its replacement's structured output could not be checked against the output schema of `{tool}`: {refused}"
            ));
        }
    };
    if violations.is_empty() {
        return None;
    }
    let listed: Vec<String> = violations
        .iter()
        .take(LISTED_VIOLATIONS)
        .map(ToString::to_string)
        .collect();
    Some(format!(
        "its replacement's structured output does not match the output schema of `{tool}`: {}; return structured output that matches it, or none (then the replacement's text stands alone)",
        listed.join("; ")
    ))
}
