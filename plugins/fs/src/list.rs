//! `list_dir`: the entries of one directory.

use crate::roots::Roots;
use cordon_sdk::prelude::*;

const MAX_ENTRIES: usize = 500;

#[derive(Deserialize, JsonSchema)]
#[schemars(example = serde_json::json!({"path": "."}))]
pub struct Args {
    /// Directory to list (default: the first granted directory).
    path: Option<String>,
}

pub struct ListDir;

impl Tool for ListDir {
    type Args = Args;
    const NAME: &'static str = "list_dir";
    const TITLE: &'static str = "List directory";
    const ANNOTATIONS: Annotations = Annotations::new().read_only().idempotent().closed_world();
    const DESCRIPTION: &'static str = "List a directory's entries, sorted, directories marked with \
        a trailing `/` and files with their size. Shows at most 500 entries. Without a path, lists \
        the first granted directory and names every granted directory.";

    fn run(&self, args: Args, _cx: &Context) -> ToolResult {
        let roots = Roots::granted();
        let (path, _) = roots.resolve(args.path.as_deref().unwrap_or("."))?;
        let listing = std::fs::read_dir(&path).map_err(|err| {
            if err.kind() == std::io::ErrorKind::NotADirectory && path.is_file() {
                ToolError::new(format!(
                    "{} is a file, not a directory; use read_file to read it",
                    path.display()
                ))
            } else {
                roots.io_error(&path, &err)
            }
        })?;
        let mut entries: Vec<String> = listing
            .filter_map(Result::ok)
            .map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                match entry.metadata() {
                    Ok(meta) if meta.is_dir() => format!("{name}/"),
                    Ok(meta) => format!("{name} ({} bytes)", meta.len()),
                    Err(_) => name,
                }
            })
            .collect();
        entries.sort();
        let total = entries.len();
        let noun = if total == 1 { "entry" } else { "entries" };
        let mut out = format!("{} ({total} {noun})\n", path.display());
        for entry in entries.iter().take(MAX_ENTRIES) {
            out.push_str(entry);
            out.push('\n');
        }
        if total > MAX_ENTRIES {
            out.push_str(&format!(
                "[{} more entries not shown]\n",
                total - MAX_ENTRIES
            ));
        }
        if args.path.is_none() {
            out.push_str(&format!("\nGranted directories: {}\n", roots.describe()));
        }
        Ok(Output::text(out)
            .with_details(json!({ "path": path.display().to_string(), "entries": total })))
    }
}
