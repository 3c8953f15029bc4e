//! `edit_file`: replace one exact, unique piece of text in a file.

use crate::roots::Roots;
use cordon_sdk::prelude::*;

#[derive(Deserialize, JsonSchema)]
#[schemars(example = serde_json::json!({"path": "notes/todo.txt", "old_text": "water the plants", "new_text": "repot the plants"}))]
pub struct Args {
    /// File to edit: absolute, or relative to the first granted directory.
    path: String,
    /// Text to find. It must occur exactly once, whitespace included.
    old_text: String,
    /// Text to put in its place.
    new_text: String,
}

pub struct EditFile;

impl Tool for EditFile {
    type Args = Args;
    const NAME: &'static str = "edit_file";
    const TITLE: &'static str = "Edit file";
    const ANNOTATIONS: Annotations = Annotations::new().destructive().closed_world();
    const LOCKS: &'static [&'static str] = &["/path"];
    const PROMPT_GUIDELINES: &'static [&'static str] = &[
        "Read a file before you edit it, and copy the text to replace exactly as read_file showed it.",
    ];
    const DESCRIPTION: &'static str = "Replace one exact occurrence of `old_text` in a file with \
        `new_text`. `old_text` must match exactly once, including whitespace; when it matches \
        several times, include more surrounding lines. Read the file first. Only works inside \
        directories granted read-write.";

    fn run(&self, args: Args, _cx: &Context) -> ToolResult {
        let roots = Roots::granted();
        let path = roots.resolve_writable(&args.path)?;
        if args.old_text.is_empty() {
            return Err(ToolError::new(
                "old_text is empty; give the exact text to replace",
            ));
        }
        let text = std::fs::read_to_string(&path).map_err(|err| roots.io_error(&path, &err))?;
        let starts: Vec<usize> = text
            .match_indices(&args.old_text)
            .map(|(at, _)| at)
            .collect();
        let line_of = |at: usize| text[..at].matches('\n').count() + 1;
        match starts.as_slice() {
            [] => Err(ToolError::new(format!(
                "old_text was not found in {}. Read the file again and copy the text exactly, including whitespace and indentation.",
                path.display()
            ))),
            [at] => {
                let line = line_of(*at);
                let updated = format!(
                    "{}{}{}",
                    &text[..*at],
                    args.new_text,
                    &text[at + args.old_text.len()..]
                );
                std::fs::write(&path, updated).map_err(|err| roots.io_error(&path, &err))?;
                Ok(
                    Output::text(format!("Edited {} at line {line}", path.display()))
                        .with_details(json!({ "path": path.display().to_string(), "line": line })),
                )
            }
            many => {
                let lines: Vec<String> = many.iter().map(|at| line_of(*at).to_string()).collect();
                Err(ToolError::new(format!(
                    "old_text occurs {} times in {} (lines {}); include more surrounding text so it matches exactly once",
                    many.len(),
                    path.display(),
                    lines.join(", ")
                ))
                .with_details(json!({ "matches": many.len() })))
            }
        }
    }
}
