//! `read_file`: a text file's lines, with offset and limit, truncated to a size budget.

use crate::file_bytes::{Read, read_file};
use crate::roots::Roots;
use crate::text::{clip, is_text};
use cordon_sdk::prelude::*;

const DEFAULT_LINE_LIMIT: usize = 2000;
const MAX_OUTPUT_BYTES: usize = 50 * 1024;
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Deserialize, JsonSchema)]
#[schemars(example = serde_json::json!({"path": "README.md", "limit": 20}))]
pub struct Args {
    /// File to read: absolute, or relative to the first granted directory.
    path: String,
    /// First line to return, counting from 1.
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    /// Most lines to return (default 2000).
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

pub struct ReadFile;

impl Tool for ReadFile {
    type Args = Args;
    const NAME: &'static str = "read_file";
    const TITLE: &'static str = "Read file";
    const ANNOTATIONS: Annotations = Annotations::new().read_only().idempotent().closed_world();
    const DESCRIPTION: &'static str = "Read a text file. Returns up to 2000 lines or 50 KB, whichever \
        comes first, and says how to continue with `offset` when it stops early. Use `offset` and \
        `limit` for large files. Refuses binary files. Only works inside the granted directories.";

    fn run(&self, args: Args, _cx: &Context) -> ToolResult {
        let roots = Roots::granted();
        let (path, root) = roots.resolve(&args.path)?;
        let mut bytes = Vec::new();
        match read_file(
            &root.descriptor,
            &root.relative(&path),
            MAX_FILE_BYTES,
            &mut bytes,
        ) {
            Ok(Read::Whole) => {}
            Ok(Read::TooLarge(size)) => {
                return Err(ToolError::new(format!(
                    "{} is {size} bytes, too large to read; use grep to find what you need",
                    path.display()
                )));
            }
            Err(code) => return Err(roots.fs_error(&path, code)),
        }
        let size = bytes.len();
        if !is_text(&bytes) {
            return Err(ToolError::new(format!(
                "{} is a binary file ({size} bytes); read_file only reads UTF-8 text",
                path.display()
            )));
        }
        let text = String::from_utf8(bytes).expect("checked to be UTF-8 above");
        let total = text.lines().count();
        let first = args.offset.unwrap_or(1);
        if first > total.max(1) {
            return Err(ToolError::new(format!(
                "offset {first} is past the end of {} ({total} lines)",
                path.display()
            )));
        }
        let limit = args.limit.unwrap_or(DEFAULT_LINE_LIMIT);

        let mut out = String::new();
        let mut last = first - 1;
        for line in text.lines().skip(first - 1).take(limit) {
            if out.len() + line.len() + 1 > MAX_OUTPUT_BYTES {
                if last == first - 1 {
                    out.push_str(clip(line, MAX_OUTPUT_BYTES));
                    out.push_str(" [line cut at 50 KB]\n");
                    last += 1;
                }
                break;
            }
            out.push_str(line);
            out.push('\n');
            last += 1;
        }
        if last < total {
            out.push_str(&format!(
                "\n[Showing lines {first}-{last} of {total}. Use offset={} to continue.]",
                last + 1
            ));
        }
        Ok(Output::text(out).with_details(json!({
            "path": path.display().to_string(),
            "firstLine": first,
            "lastLine": last,
            "totalLines": total,
            "truncated": last < total,
        })))
    }
}
