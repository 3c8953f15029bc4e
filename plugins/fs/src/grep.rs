//! `grep`: lines matching a regular expression, as `path:line: text`. Each file is read whole and
//! searched as one buffer (line_search.rs). Binary files (a NUL in their first 8 KiB, as ripgrep
//! decides) are skipped; other bytes that are not UTF-8 are shown replaced.

use crate::file_bytes::Read;
use crate::line_search::LineMatcher;
use crate::roots::Roots;
use crate::text::clip;
use crate::walk::{Skip, files_under};
use cordon_sdk::prelude::*;
use globset::GlobBuilder;

const DEFAULT_LIMIT: usize = 100;
const MAX_LINE_BYTES: usize = 300;
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Bytes at the start of a file looked at for a NUL, which marks it binary.
const BINARY_PROBE_BYTES: usize = 8 * 1024;

#[derive(Deserialize, JsonSchema)]
#[schemars(example = serde_json::json!({"pattern": "TODO|FIXME", "glob": "*.rs"}))]
pub struct Args {
    /// Regular expression (Rust regex syntax), e.g. `fn \w+_test` or `TODO|FIXME`.
    pattern: String,
    /// File or directory to search (default: the first granted directory).
    path: Option<String>,
    /// Only search files whose name matches this glob, e.g. `*.rs`.
    glob: Option<String>,
    /// Match case-insensitively (default false).
    ignore_case: Option<bool>,
    /// Also search files that .gitignore or .ignore exclude, and hidden files (`.git` is always
    /// skipped; default false).
    include_ignored: Option<bool>,
    /// Most matching lines to return (default 100).
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

pub struct Grep;

impl Tool for Grep {
    type Args = Args;
    const NAME: &'static str = "grep";
    const TITLE: &'static str = "Search file contents";
    const ANNOTATIONS: Annotations = Annotations::new().read_only().idempotent().closed_world();
    const DESCRIPTION: &'static str = "Search text files for a regular expression and return \
        matching lines as `path:line: text`. Like ripgrep, skips files that .gitignore or .ignore \
        exclude, hidden files, binary files, files over 8 MB and `.git` (set include_ignored to \
        search ignored and hidden files too); long lines are cut to 300 bytes. Returns at most \
        `limit` lines (default 100) and says when there were more. Use find_files to search by \
        file name.";

    fn run(&self, args: Args, _cx: &Context) -> ToolResult {
        let roots = Roots::granted();
        let (base, root) = roots.resolve(args.path.as_deref().unwrap_or("."))?;
        root.check_exists(&base, &roots)?;
        let matcher = LineMatcher::new(&args.pattern, args.ignore_case.unwrap_or(false))
            .map_err(|err| ToolError::new(format!("invalid regex {:?}: {err}", args.pattern)))?;
        let name_filter = match &args.glob {
            Some(glob) => Some(
                GlobBuilder::new(glob)
                    .build()
                    .map_err(|err| ToolError::new(format!("invalid glob {glob:?}: {err}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        let skip = Skip {
            include_ignored: args.include_ignored.unwrap_or(false),
        };
        let mut lines = Vec::new();
        let mut total = 0;
        let mut buffer = Vec::new();
        for found in files_under(root, &base, skip) {
            let file = &found.path;
            if let Some(filter) = &name_filter
                && !file.file_name().is_some_and(|name| filter.is_match(name))
            {
                continue;
            }
            if !matches!(found.read(MAX_FILE_BYTES, &mut buffer), Ok(Read::Whole)) {
                continue;
            }
            if buffer[..buffer.len().min(BINARY_PROBE_BYTES)].contains(&0) {
                continue;
            }
            matcher.each_match(&buffer, |number, line| {
                total += 1;
                if lines.len() < limit {
                    let text = String::from_utf8_lossy(line);
                    lines.push(format!(
                        "{}:{number}: {}",
                        file.display(),
                        clip(&text, MAX_LINE_BYTES)
                    ));
                }
            });
        }
        let mut out = if lines.is_empty() {
            format!("No matches for {:?} under {}", args.pattern, base.display())
        } else {
            lines.join("\n")
        };
        if total > lines.len() {
            out.push_str(&format!(
                "\n[{} of {total} matching lines shown; narrow the search or raise limit]",
                lines.len()
            ));
        }
        Ok(Output::text(out).with_details(json!({ "matches": total })))
    }
}
