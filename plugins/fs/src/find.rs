//! `find_files`: files whose path matches a glob.

use crate::roots::Roots;
use crate::walk::{Skip, files_under};
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
    /// Also list files that .gitignore or .ignore exclude, and hidden files (`.git` is always
    /// skipped; default false).
    include_ignored: Option<bool>,
    /// Most paths to return (default 200).
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

pub struct FindFiles;

impl Tool for FindFiles {
    type Args = Args;
    const NAME: &'static str = "find_files";
    const TITLE: &'static str = "Find files";
    const ANNOTATIONS: Annotations = Annotations::new().read_only().idempotent().closed_world();
    const DESCRIPTION: &'static str = "Find files by glob pattern (`*`, `**`, `?`, `[abc]`, \
        `{a,b}`), returning their paths sorted. A pattern may also be an absolute path inside a \
        granted directory (`/repo/src/*.rs`). Like fd, skips files that .gitignore or .ignore \
        exclude, hidden files and `.git` (set include_ignored to list ignored and hidden files \
        too). Returns at most `limit` paths (default 200) and says when there were more. Use \
        grep to search file contents.";

    fn run(&self, args: Args, _cx: &Context) -> ToolResult {
        let roots = Roots::granted();
        let (dir, root, pattern) = match (&args.path, args.pattern.strip_prefix('/')) {
            // An absolute pattern names its own directory: the granted one it lies in.
            (None, Some(_)) => {
                let (root, rest) = roots.split_absolute_pattern(&args.pattern)?;
                (root.path.clone(), root, rest)
            }
            _ => {
                let (dir, root) = roots.resolve(args.path.as_deref().unwrap_or("."))?;
                let relative = args
                    .pattern
                    .strip_prefix(&format!("{}/", dir.display()))
                    .unwrap_or(&args.pattern)
                    .to_string();
                (dir, root, relative)
            }
        };
        let pattern = if pattern.contains('/') {
            pattern
        } else {
            format!("**/{pattern}")
        };
        let glob = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|err| ToolError::new(format!("invalid glob {:?}: {err}", args.pattern)))?
            .compile_matcher();
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        let mut found = Vec::new();
        let mut total = 0;
        let skip = Skip {
            include_ignored: args.include_ignored.unwrap_or(false),
        };
        for file in files_under(root, &dir, skip) {
            let file = file.path;
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
