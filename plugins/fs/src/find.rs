//! `find_files`: files whose path matches a glob.

use crate::roots::{GLOB_CHARACTERS, Roots};
use crate::walk::{Skip, files_under};
use cordon_sdk::prelude::*;
use globset::GlobBuilder;

const DEFAULT_LIMIT: usize = 200;

#[derive(Deserialize, JsonSchema)]
#[schemars(example = serde_json::json!({"pattern": "**/*.md"}))]
pub struct Args {
    /// Glob relative to `path`, e.g. `**/*.rs` or `src/*.toml`, or absolute inside a granted
    /// directory, e.g. `/repo/src/*.rs`. A pattern without `/` matches file names at any depth.
    pattern: String,
    /// Directory to search (default: the first granted directory; for an absolute pattern, the
    /// granted directory it lies in).
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
        // Where to walk (`dir`, inside `root`), and the glob that a file's path relative to
        // `glob_base` must match.
        let (dir, root, glob_base, pattern, plain) = if args.pattern.starts_with('/') {
            // An absolute pattern names its own directory: the granted one it lies in, matched
            // as the same pattern relative to that directory would be.
            let absolute = roots.split_absolute_pattern(&args.pattern)?;
            if absolute.has_glob && absolute.prefix != absolute.root.path {
                absolute.root.check_exists(&absolute.prefix, &roots)?;
            }
            let glob_base = absolute.root.path.clone();
            let plain = (!absolute.has_glob).then(|| absolute.prefix.clone());
            match &args.path {
                None => (
                    glob_base.clone(),
                    absolute.root,
                    glob_base,
                    absolute.relative,
                    plain,
                ),
                // With a `path` too, only the files under it that the pattern matches.
                Some(path) => {
                    let (dir, root) = roots.resolve(path)?;
                    if !dir.starts_with(&absolute.prefix) && !absolute.prefix.starts_with(&dir) {
                        return Err(ToolError::new(format!(
                            "pattern {:?} is not inside path {}; leave out path (an absolute pattern names its own directory) or give a pattern relative to path",
                            args.pattern,
                            dir.display()
                        )));
                    }
                    (dir, root, glob_base, absolute.relative, plain)
                }
            }
        } else {
            let (dir, root) = roots.resolve(args.path.as_deref().unwrap_or("."))?;
            let plain = (!args.pattern.contains(GLOB_CHARACTERS))
                .then(|| {
                    roots
                        .resolve(&dir.join(&args.pattern).to_string_lossy())
                        .ok()
                })
                .flatten()
                .map(|(plain, _)| plain);
            (dir.clone(), root, dir, args.pattern.clone(), plain)
        };
        root.check_exists(&dir, &roots)?;
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
            let Ok(relative) = file.strip_prefix(&glob_base) else {
                continue;
            };
            if glob.is_match(relative) {
                total += 1;
                if found.len() < limit {
                    found.push(file.display().to_string());
                }
            }
        }
        let mut out = if found.is_empty() {
            let mut none = format!("No files under {} match {:?}", dir.display(), args.pattern);
            // A directory named as if it were a pattern: say how to see what is in it.
            if let Some(plain) = plain.filter(|plain| plain.is_dir()) {
                none.push_str(&format!(
                    "; {0} is a directory: list it with list_dir, or find the files in it with the pattern \"{0}/**\"",
                    plain.display()
                ));
            }
            none
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
