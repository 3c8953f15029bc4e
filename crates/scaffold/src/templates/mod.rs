//! The project templates `cordon new` writes: a working example tool (or, in session_hook.rs, a
//! session hook), its test, and a README.

mod session_hook;
mod tool_hook;

use crate::project::{Language, ScaffoldError, Template, is_valid_name, source_root};
use std::path::{Path, PathBuf};

/// Creates `dir/NAME/` from `template` in `language`; returns the directory. With `cache`
/// (cordon's cache directory), a Rust project builds and tests in the target directory every
/// project shares there (`.cargo/config.toml`), so only its own crate is compiled.
pub fn create(
    name: &str,
    language: Language,
    template: Template,
    dir: &Path,
    cache: Option<&Path>,
) -> Result<PathBuf, ScaffoldError> {
    if !is_valid_name(name) {
        return Err(ScaffoldError::InvalidName {
            name: name.to_string(),
        });
    }
    let project = dir.join(name);
    if project.exists() {
        return Err(ScaffoldError::AlreadyExists { path: project });
    }
    let root = source_root()?;
    let mut files = match template {
        Template::Tool => tool_files(name, language, &root),
        Template::Hook(points) => tool_hook::files(name, language, points, &root),
        Template::SessionHook => session_hook::files(name, language, &root),
        Template::Skill => {
            let mut files = tool_files(name, language, &root);
            files.push((SKILL_FILE, SKILL.replace("{name}", name)));
            files
        }
    };
    if let (Language::Rust, Some(cache)) = (language, cache) {
        files.push((".cargo/config.toml", shared_target_config(cache)));
    }
    for (relative, text) in files {
        let path = project.join(relative);
        let parent = path.parent().expect("a file in the project");
        std::fs::create_dir_all(parent).map_err(ScaffoldError::io("create", parent))?;
        std::fs::write(&path, text).map_err(ScaffoldError::io("write", &path))?;
    }
    Ok(project)
}

/// The skill the skill template starts with: `cordon build` embeds `skills/` in the component
/// (docs/resources-prompts-skills.md#skills).
const SKILL_FILE: &str = "skills/counting-words/SKILL.md";

const SKILL: &str = r#"---
name: counting-words
description: How to count the words of a text exactly, with the {name} tool. Use it whenever a task asks how long a text is in words.
---
# Counting words

Do not estimate a text's length: call the `{name}` tool with the whole text as `text`, and give
the number it returns. Words are split by any whitespace, so a text of spaces only has 0 words.

This file is an Agent Skill: its front matter names and describes it (the name is the folder's),
and what follows is what a model reads when it loads the skill. `cordon build` embeds every folder
under `skills/` in the plugin; add files beside this one and refer to them by their path.
"#;

/// The author's cases `cordon test` runs for the project (docs/testing-plugins.md).
pub(super) const CASES_FILE: &str = "cases.toml";

/// The files of a tool project in `language`.
fn tool_files(name: &str, language: Language, root: &Path) -> Vec<(&'static str, String)> {
    let mut files = tool_sources(name, language, root);
    files.push((CASES_FILE, TOOL_CASES.replace("{name}", name)));
    files
}

const TOOL_CASES: &str = r#"# What `{name}` must answer: `cordon test plugins/{name}.wasm` calls the tool with each case's
# arguments, through the whole pipeline as a client's call would go, and fails when one does not
# come out as expected (docs/testing-plugins.md).

[[case]]
name = "counts words split by any whitespace"
tool = "{name}"
arguments = { text = "one two\n three" }
expect = { text = "3" }

[[case]]
name = "an empty text has no words"
tool = "{name}"
arguments = { text = "" }
expect = { text = "0" }
"#;

/// The sources, test and README of a tool project in `language`.
fn tool_sources(name: &str, language: Language, root: &Path) -> Vec<(&'static str, String)> {
    match language {
        Language::Rust => vec![
            ("Cargo.toml", rust_manifest(name, &root.join("sdk/rust"))),
            ("src/lib.rs", RUST_LIB.replace("{name}", name)),
            (
                "tests/conformance.rs",
                RUST_CONFORMANCE.replace("{name}", name),
            ),
            (
                "README.md",
                readme(name, "Rust (cargo, the wasm32-wasip2 target)"),
            ),
        ],
        Language::Python => vec![
            ("app.py", PYTHON_APP.replace("{name}", name)),
            (
                "test_app.py",
                test_file(PYTHON_TEST, name)
                    .replace("{sdk}", &root.join("sdk/python").display().to_string()),
            ),
            ("README.md", readme(name, "Python (componentize-py)")),
        ],
        Language::Js => vec![
            ("app.js", JS_APP.replace("{name}", name)),
            ("test_app.js", test_file(JS_TEST, name)),
            (
                "package.json",
                JS_MANIFEST
                    .replace("{name}", name)
                    .replace("{sdk}", &root.join("sdk/js").display().to_string()),
            ),
            (
                "README.md",
                readme(name, "JavaScript (componentize-js)") + JS_README,
            ),
        ],
        Language::C => vec![
            ("app.c", C_APP.replace("{name}", name)),
            ("words.h", C_WORDS.to_string()),
            ("test_app.c", test_file(C_TEST, name)),
            (
                "README.md",
                readme(name, "C (Zig's clang, wasm32-wasi)")
                    + &C_README.replace("{sdk}", &root.join("sdk/c").display().to_string()),
            ),
        ],
    }
}

/// A Rust project's cargo configuration: build in the target directory all projects share.
fn shared_target_config(cache: &Path) -> String {
    let target = cache.join("cargo-target");
    // A TOML literal string holds any path but one with a single quote.
    let quoted = match target.to_string_lossy() {
        path if path.contains('\'') => format!("{path:?}"),
        path => format!("'{path}'"),
    };
    format!(
        "# Every plugin project builds in one target directory in cordon's cache, so a new project\n# compiles only its own crate (the SDK and its dependencies are built once). Remove this\n# file to build in ./target instead.\n[build]\ntarget-dir = {quoted}\n"
    )
}

/// The project README, naming the plugin and how it is built.
fn readme(name: &str, build: &str) -> String {
    README.replace("{name}", name).replace("{build}", build)
}

pub(super) fn rust_manifest(name: &str, sdk: &Path) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
cordon-sdk = {{ path = "{sdk}" }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
schemars = "1"

[profile.release]
opt-level = "s"
strip = true

# A project of its own, even inside another Cargo workspace.
[workspace]
"#,
        sdk = sdk.display()
    )
}

const RUST_LIB: &str = r#"//! The `{name}` cordon plugin.
use cordon_sdk::prelude::*;

#[derive(Deserialize, JsonSchema)]
#[schemars(example = json!({ "text": "one two three" }))]
struct Args {
    /// The text to count words in.
    text: String,
}

/// Counts words, apart from the sandbox so it can be tested natively.
fn count_words(text: &str) -> usize {
    text.split_whitespace().count()
}

struct CountWords;
impl Tool for CountWords {
    type Args = Args;
    const NAME: &'static str = "{name}";
    const DESCRIPTION: &'static str = "Counts the words in a text.";
    fn run(&self, args: Args, _cx: &Context) -> ToolResult {
        Ok(Output::text(count_words(&args.text).to_string()))
    }
}

cordon_sdk::export_plugin!(tools: [CountWords]);

#[cfg(test)]
mod tests {
    #[test]
    fn counts_words() {
        assert_eq!(super::count_words("one two  three"), 3);
        assert_eq!(super::count_words(""), 0);
    }
}
"#;

pub(super) const RUST_CONFORMANCE: &str = r#"//! `cordon test` on the built plugin, as the host loads it: its schema, its examples called, its
//! hook run. Build it first: `cordon build plugins/{name}` (from the directory above `plugins/`).
//! `CORDON` names the cordon binary when it is not on PATH.

#[test]
fn passes_cordon_test() {
    let wasm = concat!(env!("CARGO_MANIFEST_DIR"), "/../{name}.wasm");
    let cordon = std::env::var("CORDON").unwrap_or_else(|_| "cordon".into());
    let status = std::process::Command::new(&cordon)
        .args(["test", wasm])
        .status()
        .unwrap_or_else(|err| {
            panic!("cannot run {cordon:?} ({err}): put cordon on PATH (`make install` in its repository) or set CORDON")
        });
    assert!(status.success(), "`cordon test {wasm}` failed: its report is above");
}
"#;

const PYTHON_APP: &str = r#""""The `{name}` cordon plugin."""

from cordon_sdk import Plugin, tool  # noqa: F401 (Plugin is the component's export)


@tool(
    name="{name}",
    label="Count words",
    description="Counts the words in a text.",
    examples=[{"text": "one two three"}],
)
def count_words(text: str) -> str:
    return str(len(text.split()))
"#;

const PYTHON_TEST: &str = r#""""Tests for the `{name}` plugin's tool, in plain Python: `python3 test_app.py`."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, "{sdk}"]
from app import count_words  # noqa: E402


def test_counts_words():
    assert count_words("one two  three") == "3"
    assert count_words("") == "0"


{python_cordon_test}

if __name__ == "__main__":
    test_counts_words()
    test_passes_cordon_test()
    print("ok")
"#;

/// The test every Python template ends with: `cordon test` on the built plugin.
pub(super) const PYTHON_PASSES_CORDON_TEST: &str = r#"def test_passes_cordon_test():
    """`cordon test` on the built plugin (`cordon build plugins/{name}` first); CORDON names the
    cordon binary when it is not on PATH."""
    cordon = os.environ.get("CORDON", "cordon")
    wasm = os.path.join(HERE, "..", "{name}.wasm")
    try:
        ran = subprocess.run([cordon, "test", wasm])
    except FileNotFoundError:
        raise AssertionError(f"cannot run {cordon!r}: put cordon on PATH or set CORDON")
    assert ran.returncode == 0, f"`cordon test {wasm}` failed: its report is above"
"#;

/// The test every JavaScript template ends with: `cordon test` on the built plugin.
pub(super) const JS_PASSES_CORDON_TEST: &str = r#"// `cordon test` on the built plugin (`cordon build plugins/{name}` first); CORDON names the
// cordon binary when it is not on PATH.
test("passes cordon test", () => {
  const cordon = process.env.CORDON ?? "cordon";
  const wasm = fileURLToPath(new URL("../{name}.wasm", import.meta.url));
  const ran = spawnSync(cordon, ["test", wasm], { stdio: "inherit" });
  assert.ifError(ran.error);
  assert.equal(ran.status, 0, `cordon test ${wasm} failed: its report is above`);
});
"#;

/// How every C template's native test ends: `cordon test` on the built plugin.
pub(super) const C_RUNS_CORDON_TEST: &str = r#"    const char *cordon = getenv("CORDON") ? getenv("CORDON") : "cordon";
    char command[4096];
    snprintf(command, sizeof command, "\"%s\" test ../{name}.wasm", cordon);
    if (system(command) != 0) {
        fprintf(stderr, "`cordon test ../{name}.wasm` failed: its report is above\n");
        return 1;
    }
"#;

/// A test template with its `cordon test` part in place (`{python_cordon_test}`,
/// `{js_cordon_test}` or `{c_cordon_test}`) and the plugin's name filled in.
pub(super) fn test_file(template: &str, name: &str) -> String {
    template
        .replace("{python_cordon_test}", PYTHON_PASSES_CORDON_TEST)
        .replace("{js_cordon_test}", JS_PASSES_CORDON_TEST)
        .replace("{c_cordon_test}", C_RUNS_CORDON_TEST)
        .replace("{name}", name)
}

const README: &str = r#"# {name}

A cordon plugin in {build}. Its example tool counts words; change it into yours.

- Build: `cordon build plugins/{name}` writes `plugins/{name}.wasm`.
- Try it: `cordon call {name} '{"text": "one two three"}'`.
- Check it: `cordon test plugins/{name}.wasm` loads it as the host would, checks its schema, calls
  it with its `examples`, runs its hook, if any, and runs the cases in `cases.toml` (arguments and
  what must come back; add yours there); the project's own test runs it too.
- Grant it what it needs (directories, env vars, HTTP origins) under `[plugins.{name}]` in
  `cordon.toml`; without a grant it gets nothing.
"#;

const JS_APP: &str = r#"// The `{name}` cordon plugin.
import { defineTool } from "cordon-sdk";

/** Counts words, apart from the tool so it can be tested in plain Node. */
export function countWords(text) {
  return text.split(/\s+/).filter(Boolean).length;
}

defineTool({
  name: "{name}",
  label: "Count words",
  description: "Counts the words in a text.",
  examples: [{ text: "one two three" }],
  parameters: {
    type: "object",
    properties: { text: { type: "string", description: "The text to count words in." } },
    required: ["text"],
  },
  async execute(_toolCallId, { text }) {
    return String(countWords(text));
  },
});
"#;

const JS_TEST: &str = r#"// Tests for the `{name}` plugin, in plain Node: `npm install` once, then `npm test`.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { runTool } from "cordon-sdk";
import { countWords } from "./app.js";

test("counts words", () => {
  assert.equal(countWords("one two  three"), 3);
  assert.equal(countWords(""), 0);
});

test("the tool answers as text", async () => {
  assert.equal(await runTool("{name}", { text: "one two three" }), "3");
});

{js_cordon_test}"#;

pub(super) const JS_MANIFEST: &str = r#"{
  "name": "{name}",
  "private": true,
  "type": "module",
  "main": "app.js",
  "scripts": { "test": "node --test test_app.js" },
  "dependencies": { "cordon-sdk": "file:{sdk}" }
}
"#;

const JS_README: &str = r#"- Test it: `npm install` (links the SDK; no download), then `npm test` (after `cordon build`:
  the last test runs `cordon test` on the built plugin).
- npm packages the plugin imports are bundled into the component by `cordon build`.
"#;

const C_APP: &str = r#"/* The `{name}` cordon plugin. */
#include <stdio.h>
#include <stdlib.h>

#include "cordon.h"
#include "words.h"

static void count(const cordon_call *call, cordon_result *result) {
    char *text = NULL;
    if (!cordon_arg_string(call, "text", &text)) {
        cordon_fail(result, "give the text to count as \"text\"");
        return;
    }
    char answer[32];
    snprintf(answer, sizeof answer, "%zu", count_words(text));
    cordon_text(result, answer);
    free(text);
}

static const cordon_tool TOOLS[] = {
    {
        .name = "{name}",
        .label = "Count words",
        .description = "Counts the words in a text.",
        .parameters = "{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\"}}, \"required\": [\"text\"], "
                      "\"examples\": [{\"text\": \"one two three\"}]}",
        .run = count,
    },
};

CORDON_EXPORT_TOOLS(TOOLS)
"#;

const C_WORDS: &str = r#"/* Counting words, apart from the tool so it can be tested natively (test_app.c). */
#ifndef WORDS_H
#define WORDS_H

#include <ctype.h>
#include <stddef.h>

static size_t count_words(const char *text) {
    size_t words = 0;
    int inside = 0;
    for (; *text; text++) {
        if (isspace((unsigned char)*text)) {
            inside = 0;
        } else if (!inside) {
            inside = 1;
            words++;
        }
    }
    return words;
}

#endif
"#;

const C_TEST: &str = r#"/* Tests for the word counting, natively, then `cordon test` on the built plugin: in this
 * directory, `cc test_app.c -o test_app && ./test_app` (any C compiler: gcc, clang, `zig cc`),
 * after `cordon build`. CORDON names the cordon binary when it is not on PATH. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#include "words.h"

int main(void) {
    assert(count_words("one two  three") == 3);
    assert(count_words("") == 0);
    assert(count_words("  padded  ") == 1);

{c_cordon_test}    puts("ok");
    return 0;
}
"#;

const C_README: &str = r#"- Test it: `cc test_app.c -o test_app && ./test_app` here (any C compiler: gcc, clang, `zig cc`;
  files named `test_*.c` are not built into the plugin): the word counting natively, then
  `cordon test` on the built plugin.
- The C SDK is `{sdk}/cordon.h`; every `*.c` file here is compiled into the plugin.
"#;
