//! `write_file`: create or overwrite a file inside a read-write grant.

use crate::roots::Roots;
use cordon_sdk::prelude::*;

#[derive(Deserialize, JsonSchema)]
#[schemars(example = serde_json::json!({"path": "notes/todo.txt", "content": "water the plants\n"}))]
pub struct Args {
    /// File to write: absolute, or relative to the first granted directory.
    path: String,
    /// The complete new content of the file.
    content: String,
}

pub struct WriteFile;

impl Tool for WriteFile {
    type Args = Args;
    const NAME: &'static str = "write_file";
    const TITLE: &'static str = "Write file";
    const ANNOTATIONS: Annotations = Annotations::new().destructive().idempotent().closed_world();
    const LOCKS: &'static [&'static str] = &["/path"];
    const DESCRIPTION: &'static str = "Create a file, or overwrite it completely, creating parent \
        directories as needed. For changing part of an existing file use edit_file instead. Only \
        works inside directories granted read-write.";

    fn run(&self, args: Args, _cx: &Context) -> ToolResult {
        let roots = Roots::granted();
        let path = roots.resolve_writable(&args.path)?;
        let existed = path.exists();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|err| roots.cannot_create(&path, &err))?;
        }
        std::fs::write(&path, &args.content).map_err(|err| match err.kind() {
            std::io::ErrorKind::IsADirectory => ToolError::new(format!(
                "{} is a directory; give the path of a file to write",
                path.display()
            )),
            _ => roots.io_error(&path, &err),
        })?;
        let verb = if existed { "Overwrote" } else { "Created" };
        Ok(Output::text(format!("{verb} {} ({} bytes)", path.display(), args.content.len()))
            .with_details(json!({ "path": path.display().to_string(), "bytes": args.content.len(), "created": !existed })))
    }
}
