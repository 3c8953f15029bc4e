//! `find_files`: files whose path matches a glob.

use crate::roots::Roots;
use crate::walk::files_under;
use cordon_sdk::prelude::*;
use globset::GlobBuilder;

const DEFAULT_LIMIT: usize = 200;

#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// Glob relative to `path`, e.g. `**/*.rs` or `src/*.toml`. A pattern without `/` matches
    /// file names at any depth.
    pattern: String,
    /// Directory to search (default: the first granted directory).
    path: Option<String>,
    /// Most paths to return (default 200).
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

pub struct FindFiles;

impl Tool for FindFiles {
    type Args = Args;
    const NAME: &'static str = "find_files";
    const LABEL: &'static str = "Find files";
    const DESCRIPTION: &'static str = "Find files by glob pattern (`*`, `**`, `?`, `[abc]`, \
        `{a,b}`), returning their paths sorted. Skips `.git`. Returns at most `limit` paths \
        (default 200) and says when there were more. Use grep to search file contents.";

    fn run(&self, args: Args, _cx: &Context) -> ToolResult {
        let roots = Roots::granted();
        let (dir, _) = roots.resolve(args.path.as_deref().unwrap_or("."))?;
        let pattern = if args.pattern.contains('/') {
            args.pattern.clone()
        } else {
            format!("**/{}", args.pattern)
        };
        let glob = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|err| ToolError::new(format!("invalid glob {:?}: {err}", args.pattern)))?
            .compile_matcher();
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        let mut found = Vec::new();
        let mut total = 0;
        for file in files_under(&dir) {
            let relative = file.strip_prefix(&dir).unwrap_or(&file);
            if glob.is_match(relative) {
                total += 1;
                if found.len() < limit {
                    found.push(file.display().to_string());
                }
            }
        }
        let mut out = if found.is_empty() {
            format!("No files under {} match {:?}", dir.display(), args.pattern)
        } else {
            found.join("\n")
        };
        if total > found.len() {
            out.push_str(&format!(
                "\n[{} of {total} matches shown; narrow the pattern or raise limit]",
                found.len()
            ));
        }
        Ok(Output::text(out).with_details(json!({ "matches": total })))
    }
}
