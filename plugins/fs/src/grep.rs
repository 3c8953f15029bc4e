//! `grep`: lines matching a regular expression, as `path:line: text`. Each file is read whole and
//! searched once; only a file with a match is split into lines. Binary files (a NUL in their first
//! 8 KiB, as ripgrep decides) are skipped; other bytes that are not UTF-8 are shown replaced.

use crate::roots::Roots;
use crate::text::clip;
use crate::walk::{Skip, files_under};
use cordon_sdk::prelude::*;
use globset::GlobBuilder;
use regex::bytes::RegexBuilder;
use std::io::Read;

const DEFAULT_LIMIT: usize = 100;
const MAX_LINE_BYTES: usize = 300;
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Bytes at the start of a file looked at for a NUL, which marks it binary.
const BINARY_PROBE_BYTES: usize = 8 * 1024;

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
    /// Also search files that .gitignore or .ignore exclude, and hidden files (`.git` is always
    /// skipped).
    #[serde(default)]
    include_ignored: bool,
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
        matching lines as `path:line: text`. Like ripgrep, skips files that .gitignore or .ignore \
        exclude, hidden files, binary files, files over 8 MB and `.git` (set include_ignored to \
        search ignored and hidden files too); long lines are cut to 300 bytes. Returns at most \
        `limit` lines (default 100) and says when there were more. Use find_files to search by \
        file name.";

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
        let skip = Skip {
            include_ignored: args.include_ignored,
        };
        let mut lines = Vec::new();
        let mut total = 0;
        let mut buffer = Vec::new();
        for file in files_under(&base, skip) {
            if let Some(filter) = &name_filter
                && !file.file_name().is_some_and(|name| filter.is_match(name))
            {
                continue;
            }
            if !read_small_file(&file, &mut buffer) {
                continue;
            }
            if buffer[..buffer.len().min(BINARY_PROBE_BYTES)].contains(&0)
                || !regex.is_match(&buffer)
            {
                continue;
            }
            for (index, line) in buffer.split(|&b| b == b'\n').enumerate() {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if regex.is_match(line) {
                    total += 1;
                    if lines.len() < limit {
                        let text = String::from_utf8_lossy(line);
                        lines.push(format!(
                            "{}:{}: {}",
                            file.display(),
                            index + 1,
                            clip(&text, MAX_LINE_BYTES)
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

/// Reads `file` into `buffer` (reusing its allocation) if it is at most [`MAX_FILE_BYTES`]; one
/// open, one size check on the open file, and reads as large as the host allows.
fn read_small_file(file: &std::path::Path, buffer: &mut Vec<u8>) -> bool {
    let Ok(mut handle) = std::fs::File::open(file) else {
        return false;
    };
    let size = match handle.metadata() {
        Ok(meta) if meta.len() <= MAX_FILE_BYTES => meta.len() as usize,
        _ => return false,
    };
    buffer.clear();
    buffer.reserve(size);
    handle.read_to_end(buffer).is_ok()
}
