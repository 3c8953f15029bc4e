//! The "real repository" of section 10: a generated source tree, the same bytes on every run and
//! every machine (a fixed-seed generator), made once into a cache directory and reused. 16,000
//! files, about 210 MB: nested module directories of Rust-like sources (some with `unsafe impl Send`
//! and `fn …_test(`, the needles the grep rows look for), Markdown and JSON files, one directory of
//! 1,000 entries, and one file of 1 MiB. No ignore files and no hidden files, so cordon, grep, find
//! and ripgrep all see the same files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Bump when the layout or the generator changes: a different tree gets a different directory.
const VERSION: u32 = 1;
const SOURCE_FILES: usize = 14_000;
const OTHER_FILES: usize = 1_000;
pub const WIDE_DIR_ENTRIES: usize = 1_000;
/// Lines of a generated source file range from 40 to 600 (about 2 to 40 KiB).
const MIN_LINES: u64 = 40;
const MAX_LINES: u64 = 600;

/// The generated tree and what the rows need to know about it.
pub struct RepoTree {
    pub root: PathBuf,
    pub files: usize,
    pub bytes: u64,
    /// A directory with [`WIDE_DIR_ENTRIES`] entries, relative to `root`.
    pub wide_dir: &'static str,
    /// A file of 1 MiB, relative to `root`.
    pub big_file: &'static str,
}

/// A small, fast, fixed-seed generator (xorshift64*): the tree must be the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: [&str; 24] = [
    "buffer", "index", "count", "entry", "value", "result", "config", "handle", "reader", "writer",
    "stream", "token", "parser", "node", "graph", "cache", "request", "session", "record",
    "offset", "length", "window", "schema", "table",
];

fn ident(rng: &mut Rng) -> String {
    let a = WORDS[rng.below(WORDS.len() as u64) as usize];
    let b = WORDS[rng.below(WORDS.len() as u64) as usize];
    format!("{a}_{b}")
}

/// One Rust-like source file.
fn source(rng: &mut Rng, index: usize) -> String {
    let lines = MIN_LINES + rng.below(MAX_LINES - MIN_LINES);
    let mut out = format!(
        "//! Module {index}: generated for the cordon benchmark.\n\nuse std::collections::HashMap;\n\n"
    );
    let mut written = 4;
    while written < lines {
        let name = ident(rng);
        match rng.below(20) {
            0 => {
                let _ = writeln!(
                    out,
                    "#[test]\nfn {name}_test() {{\n    assert_eq!({}, {});\n}}",
                    rng.below(100),
                    rng.below(100)
                );
                written += 4;
            }
            1 if index.is_multiple_of(7) => {
                let _ = writeln!(
                    out,
                    "unsafe impl Send for {}Holder {{}}",
                    name.replace('_', "")
                );
                written += 1;
            }
            _ => {
                let _ = writeln!(
                    out,
                    "pub fn {name}(input: &[u8], {}: usize) -> Option<usize> {{\n    let mut map: HashMap<usize, usize> = HashMap::new();\n    map.insert({}, input.len() + {});\n    map.get(&{}).copied()\n}}\n",
                    ident(rng),
                    rng.below(1000),
                    rng.below(1000),
                    rng.below(1000)
                );
                written += 6;
            }
        }
    }
    out
}

/// The tree, generated into `cache` unless a complete one is already there.
pub fn ensure(cache: &Path) -> anyhow::Result<RepoTree> {
    let root = cache.join(format!("repo-tree-v{VERSION}"));
    let marker = root.join("GENERATED");
    let mut tree = RepoTree {
        root: root.clone(),
        files: 0,
        bytes: 0,
        wide_dir: "assets/icons",
        big_file: "data/big.log.txt",
    };
    if let Ok(text) = std::fs::read_to_string(&marker) {
        let mut numbers = text
            .split_whitespace()
            .filter_map(|n| n.parse::<u64>().ok());
        if let (Some(files), Some(bytes)) = (numbers.next(), numbers.next()) {
            tree.files = files as usize;
            tree.bytes = bytes;
            return Ok(tree);
        }
    }
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let mut rng = Rng(0x5eed_c0de_2026_1130);
    let mut write = |relative: &str, content: &[u8]| -> anyhow::Result<()> {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().expect("a file has a parent"))?;
        std::fs::write(&path, content)?;
        tree.files += 1;
        tree.bytes += content.len() as u64;
        Ok(())
    };
    for index in 0..SOURCE_FILES {
        let (a, b, c) = (index % 12, (index / 12) % 10, (index / 120) % 6);
        let relative = format!("crates/crate_{a}/src/mod_{b}/sub_{c}/file_{index}.rs");
        write(&relative, source(&mut rng, index).as_bytes())?;
    }
    for index in 0..OTHER_FILES {
        let (relative, content) = if index % 2 == 0 {
            (
                format!("docs/section_{}/page_{index}.md", index % 20),
                format!(
                    "# Page {index}\n\n{}\n",
                    "Some prose about the project. ".repeat(40 + index % 60)
                ),
            )
        } else {
            (
                format!("data/json_{}/item_{index}.json", index % 20),
                format!(
                    "{{\"id\": {index}, \"values\": [{}]}}\n",
                    (0..200)
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        };
        write(&relative, content.as_bytes())?;
    }
    for index in 0..WIDE_DIR_ENTRIES {
        write(
            &format!("assets/icons/icon_{index:04}.svg"),
            format!("<svg id=\"{index}\"/>\n").as_bytes(),
        )?;
    }
    let mut big = String::with_capacity(1 << 20);
    let mut line = 0;
    while big.len() < (1 << 20) - 100 {
        let _ = writeln!(
            big,
            "{line:08} INFO request handled in {} ms by {}",
            rng.below(500),
            ident(&mut rng)
        );
        line += 1;
    }
    write("data/big.log.txt", big.as_bytes())?;
    std::fs::write(&marker, format!("{} {}\n", tree.files, tree.bytes))?;
    Ok(tree)
}
