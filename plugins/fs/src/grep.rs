//! `grep`: lines matching a regular expression, as `path:line: text`.

use crate::roots::Roots;
use crate::text::{clip, is_text};
use crate::walk::files_under;
use cordon_sdk::prelude::*;
use globset::GlobBuilder;
use regex::RegexBuilder;

const DEFAULT_LIMIT: usize = 100;
const MAX_LINE_BYTES: usize = 300;
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// Regular expression (Rust regex syntax), e.g. `fn \w+_test` or `TODO|FIXME`.
    pattern: String,
    /// File or directory to search (default: the first granted directory).
    path: Option<String>,
    /// Only search files whose name matches this glob, e.g. `*.rs`.
    glob: Option<String>,
    /// Match case-insensitively.
    #[serde(default)]
    ignore_case: bool,
    /// Most matching lines to return (default 100).
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

pub struct Grep;

impl Tool for Grep {
    type Args = Args;
    const NAME: &'static str = "grep";
    const LABEL: &'static str = "Search file contents";
    const DESCRIPTION: &'static str = "Search text files for a regular expression and return \
        matching lines as `path:line: text`. Skips binary files, files over 8 MB and `.git`; \
        long lines are cut to 300 bytes. Returns at most `limit` lines (default 100) and says \
        when there were more. Use find_files to search by file name.";

    fn run(&self, args: Args, _cx: &Context) -> ToolResult {
        let roots = Roots::granted();
        let (base, _) = roots.resolve(args.path.as_deref().unwrap_or("."))?;
        let regex = RegexBuilder::new(&args.pattern)
            .case_insensitive(args.ignore_case)
            .build()
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
        let mut lines = Vec::new();
        let mut total = 0;
        for file in files_under(&base) {
            if let Some(filter) = &name_filter
                && !file.file_name().is_some_and(|name| filter.is_match(name))
            {
                continue;
            }
            if std::fs::metadata(&file)
                .map(|m| m.len() > MAX_FILE_BYTES)
                .unwrap_or(true)
            {
                continue;
            }
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            if !is_text(&bytes) {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            for (index, line) in text.lines().enumerate() {
                if regex.is_match(line) {
                    total += 1;
                    if lines.len() < limit {
                        lines.push(format!(
                            "{}:{}: {}",
                            file.display(),
                            index + 1,
                            clip(line, MAX_LINE_BYTES)
                        ));
                    }
                }
            }
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
