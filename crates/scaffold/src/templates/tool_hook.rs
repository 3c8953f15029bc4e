//! The tool-hook templates `cordon new --hook` writes, one per language, with a before-hook, an
//! after-hook or both: the before-hook refuses a call whose arguments name a secrets file (`.env`,
//! `.ssh/`, `id_rsa`, `.aws/credentials`); the after-hook cuts a result over 2,000 characters and
//! says how much it cut. Each project has a native test of its rules, a test that runs `cordon
//! test` on the built plugin, and `cases.toml`, the cases `cordon test` runs against the hook.

use crate::project::{HookPoints, Language};
use std::path::Path;

/// The files of a tool-hook project in `language` watching `points`.
pub(super) fn files(
    name: &str,
    language: Language,
    points: HookPoints,
    root: &Path,
) -> Vec<(&'static str, String)> {
    let parts = |before: &str, after: &str| -> String {
        let mut text = String::new();
        if points.before {
            text.push_str(before);
        }
        if points.after {
            text.push_str(after);
        }
        text
    };
    let fill = |text: String| {
        text.replace("{summary}", &summary(points))
            .replace("{name}", name)
    };
    let mut files = match language {
        Language::Rust => {
            let flags = match (points.before, points.after) {
                (true, false) => "    const AFTER: bool = false;\n",
                (false, true) => "    const BEFORE: bool = false;\n",
                _ => "",
            };
            let lib = RUST_HEAD.to_string()
                + &parts(RUST_BEFORE_RULE, RUST_AFTER_RULE)
                + RUST_IMPL_HEAD
                + flags
                + &parts(RUST_BEFORE_FN, RUST_AFTER_FN)
                + RUST_TAIL
                + &parts(RUST_BEFORE_TEST, RUST_AFTER_TEST)
                + "}\n";
            vec![
                (
                    "Cargo.toml",
                    super::rust_manifest(name, &root.join("sdk/rust")),
                ),
                ("src/lib.rs", fill(lib)),
                ("tests/conformance.rs", fill(super::RUST_CONFORMANCE.into())),
            ]
        }
        Language::Python => {
            let imports = match (points.before, points.after) {
                (true, false) => "Block, Plugin, before_tool_call",
                (false, true) => "CallResult, Plugin, Replace, after_tool_call",
                _ => "Block, CallResult, Plugin, Replace, after_tool_call, before_tool_call",
            };
            let app =
                PYTHON_HEAD.replace("{imports}", imports) + &parts(PYTHON_BEFORE, PYTHON_AFTER);
            let names = match (points.before, points.after) {
                (true, false) => "refuse_secret_files, secret_named",
                (false, true) => "cut, cut_long_results",
                _ => "cut, cut_long_results, refuse_secret_files, secret_named",
            };
            let mut calls = String::new();
            if points.before {
                calls.push_str("    test_a_call_naming_a_secrets_file_is_refused()\n");
            }
            if points.after {
                calls.push_str("    test_a_long_result_is_cut()\n");
            }
            let test = super::test_file(
                &(PYTHON_TEST_HEAD.replace("{names}", names)
                    + &parts(PYTHON_BEFORE_TEST, PYTHON_AFTER_TEST)
                    + PYTHON_TEST_TAIL),
                name,
            )
            .replace("{calls}", &calls)
            .replace("{sdk}", &root.join("sdk/python").display().to_string());
            vec![("app.py", fill(app)), ("test_app.py", test)]
        }
        Language::Js => {
            let hook = parts(JS_BEFORE_HOOK, JS_AFTER_HOOK);
            let app = JS_HEAD.to_string()
                + &parts(JS_BEFORE_RULE, JS_AFTER_RULE)
                + "\ndefineHook({\n"
                + &hook
                + "});\n";
            let names = match (points.before, points.after) {
                (true, false) => "secretNamed",
                (false, true) => "cut",
                _ => "cut, secretNamed",
            };
            let test = JS_TEST_HEAD.replace("{names}", names)
                + &parts(JS_BEFORE_TEST, JS_AFTER_TEST)
                + "\n{js_cordon_test}";
            vec![
                ("app.js", fill(app)),
                ("test_app.js", super::test_file(&test, name)),
                (
                    "package.json",
                    super::JS_MANIFEST
                        .replace("{name}", name)
                        .replace("{sdk}", &root.join("sdk/js").display().to_string()),
                ),
            ]
        }
        Language::C => {
            let fields = match (points.before, points.after) {
                (true, false) => ".before = refuse",
                (false, true) => ".after = cut",
                _ => ".before = refuse, .after = cut",
            };
            let app = C_HEAD.to_string()
                + &parts(C_BEFORE_FN, C_AFTER_FN)
                + &C_TAIL.replace("{fields}", fields);
            let rules = C_RULES_HEAD.to_string() + &parts(C_BEFORE_RULE, C_AFTER_RULE) + "#endif\n";
            let test = C_TEST_HEAD.to_string()
                + &parts(C_BEFORE_TEST, C_AFTER_TEST)
                + "\n{c_cordon_test}    puts(\"ok\");\n    return 0;\n}\n";
            vec![
                ("app.c", fill(app)),
                ("rules.h", rules),
                ("test_app.c", super::test_file(&test, name)),
            ]
        }
    };
    let (build, test) = match language {
        Language::Rust => ("Rust (cargo, the wasm32-wasip2 target)", "cargo test"),
        Language::Python => ("Python (componentize-py)", "python3 test_app.py"),
        Language::Js => ("JavaScript (componentize-js)", "npm install && npm test"),
        Language::C => (
            "C (Zig's clang, wasm32-wasi)",
            "cc test_app.c -o test_app && ./test_app",
        ),
    };
    files.push((
        "README.md",
        fill(README.to_string())
            .replace("{build}", build)
            .replace("{test}", test),
    ));
    files.push((
        super::CASES_FILE,
        fill(CASES_HEAD.to_string() + &parts(CASES_BEFORE, CASES_AFTER)),
    ));
    files
}

/// What the hook does, in a sentence.
fn summary(points: HookPoints) -> String {
    match (points.before, points.after) {
        (true, false) => "a call whose arguments name a secrets file is refused".into(),
        (false, true) => "a result over 2,000 characters is cut, saying how much".into(),
        _ => "a call whose arguments name a secrets file is refused, and a result over 2,000 characters is cut, saying how much".into(),
    }
}

const README: &str = r#"# {name}

A cordon tool hook in {build}: {summary}. Change the rules into yours: docs/pipeline.md says what
a hook sees and what each decision does.

- Build: `cordon build plugins/{name}` writes `plugins/{name}.wasm`.
- Grant it: a hook runs only when the operator says so, in `cordon.toml`: `[plugins.{name}]` then
  `hook = true` (every tool) or `hook = ["read_*"]` (the tools it may watch). It runs in its own
  sandbox, with its own plugin's grants, never the tool's.
- Check it: `cordon test plugins/{name}.wasm` runs it over a sample call and runs the cases in
  `cases.toml` (calls and results, and the decision each must get); add yours there.
- Test it: `{test}` here: the rules natively, then `cordon test` on the built plugin.
"#;

const CASES_HEAD: &str = r#"# What `{name}` must decide: `cordon test plugins/{name}.wasm` runs every case against the
# built plugin (docs/testing-plugins.md), and fails when one does not come out as expected.
"#;

const CASES_BEFORE: &str = r#"
[[case]]
name = "a call naming a secrets file is refused"
before = "read_file"
arguments = { path = "/project/.env" }
expect = { decision = "block", contains = ".env" }

[[case]]
name = "an ordinary call runs"
before = "read_file"
arguments = { path = "/project/notes.txt" }
expect = { decision = "allow" }
"#;

const CASES_AFTER: &str = r#"
[[case]]
name = "a long result is cut, saying how much"
after = "read_file"
arguments = { path = "/project/big.log" }
result = { text = "0123456789", repeat = 500 }
expect = { decision = "replace", contains = "[cut by {name}: 3000 more characters", max_chars = 2200 }

[[case]]
name = "a short result is kept"
after = "read_file"
result = { text = "three short lines" }
expect = { decision = "keep", text = "three short lines" }
"#;

const RUST_HEAD: &str = r#"//! The `{name}` cordon hook: {summary}.
use cordon_sdk::prelude::*;
"#;

const RUST_BEFORE_RULE: &str = r#"
/// What in a call's arguments names a secrets file.
const SECRET_FILES: &[&str] = &[".env", ".ssh/", "id_rsa", ".aws/credentials"];

/// The secrets file a call's arguments name anywhere, if any.
fn secret_named(arguments: &Value) -> Option<&'static str> {
    let text = arguments.to_string();
    SECRET_FILES.iter().copied().find(|file| text.contains(file))
}
"#;

const RUST_AFTER_RULE: &str = r#"
/// The most characters of a result the model is given.
const MAX_CHARS: usize = 2000;

/// `text` cut to `MAX_CHARS` characters with a note of how much was cut, or `None` if it fits.
fn cut(text: &str) -> Option<String> {
    let total = text.chars().count();
    if total <= MAX_CHARS {
        return None;
    }
    let kept: String = text.chars().take(MAX_CHARS).collect();
    Some(format!(
        "{kept}\n[cut by {name}: {} more characters; ask for a smaller part]",
        total - MAX_CHARS
    ))
}
"#;

const RUST_IMPL_HEAD: &str = r#"
struct Rules;
impl Hook for Rules {
"#;

const RUST_BEFORE_FN: &str = r#"    fn before_tool_call(&self, call: &ToolCall, _cx: &Context) -> BeforeDecision {
        match secret_named(&call.arguments) {
            Some(file) => BeforeDecision::Block(format!(
                "{name}: this {} call names a secrets file ({file}); do the task without it",
                call.name
            )),
            None => BeforeDecision::Allow,
        }
    }
"#;

const RUST_AFTER_FN: &str = r#"    fn after_tool_call(&self, _call: &ToolCall, result: &CallResult, _cx: &Context) -> AfterDecision {
        match cut(&result.text()) {
            // The whole new result: structured output is left out, as it may hold what was cut.
            Some(text) => AfterDecision::Replace(CallResult {
                content: vec![Content::Text(text)],
                structured: None,
                details: result.details.clone(),
                is_error: result.is_error,
            }),
            None => AfterDecision::Keep,
        }
    }
"#;

const RUST_TAIL: &str = r#"}

cordon_sdk::export_plugin!(hook: Rules);

#[cfg(test)]
mod tests {
"#;

const RUST_BEFORE_TEST: &str = r#"    #[test]
    fn a_call_naming_a_secrets_file_is_refused() {
        let named = |arguments| super::secret_named(&arguments);
        assert_eq!(named(serde_json::json!({ "path": "app/.env" })), Some(".env"));
        assert_eq!(named(serde_json::json!({ "paths": ["~/.ssh/id_ed25519"] })), Some(".ssh/"));
        assert_eq!(named(serde_json::json!({ "path": "notes.txt" })), None);
    }
"#;

const RUST_AFTER_TEST: &str = r#"    #[test]
    fn a_long_result_is_cut() {
        assert_eq!(super::cut("short"), None);
        let cut = super::cut(&"é".repeat(2500)).expect("over the limit");
        assert!(cut.starts_with(&"é".repeat(2000)));
        assert!(cut.ends_with("[cut by {name}: 500 more characters; ask for a smaller part]"));
    }
"#;

const PYTHON_HEAD: &str = r#""""The `{name}` cordon hook: {summary}."""

import json

from cordon_sdk import {imports}  # noqa: F401 (Plugin is the export)
"#;

const PYTHON_BEFORE: &str = r#"
SECRET_FILES = (".env", ".ssh/", "id_rsa", ".aws/credentials")


def secret_named(arguments):
    """The secrets file a call's arguments name anywhere, if any."""
    text = json.dumps(arguments, ensure_ascii=False)
    return next((file for file in SECRET_FILES if file in text), None)


@before_tool_call()
def refuse_secret_files(call):
    found = secret_named(call.arguments)
    if found:
        return Block(f"{name}: this {call.name} call names a secrets file ({found}); do the task without it")
    return None
"#;

const PYTHON_AFTER: &str = r#"
MAX_CHARS = 2000


def cut(text):
    """`text` cut to MAX_CHARS characters with a note of how much was cut, or None if it fits."""
    if len(text) <= MAX_CHARS:
        return None
    return f"{text[:MAX_CHARS]}\n[cut by {name}: {len(text) - MAX_CHARS} more characters; ask for a smaller part]"


@after_tool_call()
def cut_long_results(call, result):
    text = cut(result.text())
    if text is None:
        return None
    # The whole new result: structured output is left out, as it may hold what was cut.
    return Replace(CallResult([text], result.details, result.is_error))
"#;

const PYTHON_TEST_HEAD: &str = r#""""Tests for the `{name}` hook, in plain Python: `python3 test_app.py`."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, "{sdk}"]
from app import {names}  # noqa: E402
from cordon_sdk import CallResult, ToolCall  # noqa: E402,F401
"#;

const PYTHON_BEFORE_TEST: &str = r#"

def test_a_call_naming_a_secrets_file_is_refused():
    assert secret_named({"path": "app/.env"}) == ".env"
    assert secret_named({"paths": ["~/.ssh/id_ed25519"]}) == ".ssh/"
    assert secret_named({"path": "notes.txt"}) is None
    assert refuse_secret_files(ToolCall("1", "read_file", {"path": ".env"})).reason
    assert refuse_secret_files(ToolCall("1", "read_file", {"path": "notes.txt"})) is None
"#;

const PYTHON_AFTER_TEST: &str = r#"

def test_a_long_result_is_cut():
    assert cut("short") is None
    text = cut("é" * 2500)
    assert text.startswith("é" * 2000)
    assert text.endswith("[cut by {name}: 500 more characters; ask for a smaller part]")
    assert cut_long_results(ToolCall("1", "read_file", {}), CallResult(["short"], None, False)) is None
"#;

const PYTHON_TEST_TAIL: &str = r#"

{python_cordon_test}

if __name__ == "__main__":
{calls}    test_passes_cordon_test()
    print("ok")
"#;

const JS_HEAD: &str = r#"// The `{name}` cordon hook: {summary}.
import { defineHook } from "cordon-sdk";
"#;

const JS_BEFORE_RULE: &str = r#"
const SECRET_FILES = [".env", ".ssh/", "id_rsa", ".aws/credentials"];

/** The secrets file a call's arguments name anywhere, if any. */
export function secretNamed(args) {
  const text = JSON.stringify(args ?? {});
  return SECRET_FILES.find((file) => text.includes(file));
}
"#;

const JS_AFTER_RULE: &str = r#"
const MAX_CHARS = 2000;

/** `text` cut to MAX_CHARS characters with a note of how much was cut, or undefined if it fits. */
export function cut(text) {
  const chars = [...text];
  if (chars.length <= MAX_CHARS) return undefined;
  const more = chars.length - MAX_CHARS;
  return `${chars.slice(0, MAX_CHARS).join("")}\n[cut by {name}: ${more} more characters; ask for a smaller part]`;
}
"#;

const JS_BEFORE_HOOK: &str = r#"  beforeToolCall(call) {
    const found = secretNamed(call.arguments);
    if (found === undefined) return undefined;
    return { block: true, reason: `{name}: this ${call.name} call names a secrets file (${found}); do the task without it` };
  },
"#;

const JS_AFTER_HOOK: &str = r#"  afterToolCall(_call, result) {
    const text = cut(result.content.map((block) => block.text ?? "").join("\n"));
    if (text === undefined) return undefined;
    // The whole new result: structured output is left out, as it may hold what was cut.
    return { content: [{ type: "text", text }], details: result.details, isError: result.isError };
  },
"#;

const JS_TEST_HEAD: &str = r#"// Tests for the `{name}` hook, in plain Node: `npm install` once, then `npm test`.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { {names} } from "./app.js";
"#;

const JS_BEFORE_TEST: &str = r#"
test("a call naming a secrets file is refused", () => {
  assert.equal(secretNamed({ path: "app/.env" }), ".env");
  assert.equal(secretNamed({ paths: ["~/.ssh/id_ed25519"] }), ".ssh/");
  assert.equal(secretNamed({ path: "notes.txt" }), undefined);
});
"#;

const JS_AFTER_TEST: &str = r#"
test("a long result is cut", () => {
  assert.equal(cut("short"), undefined);
  const text = cut("é".repeat(2500));
  assert.ok(text.startsWith("é".repeat(2000)));
  assert.ok(text.endsWith("[cut by {name}: 500 more characters; ask for a smaller part]"));
});
"#;

const C_HEAD: &str = r#"/* The `{name}` cordon hook: {summary}. */
#include "cordon.h"
#include "rules.h"
"#;

const C_BEFORE_FN: &str = r#"
static void refuse(const cordon_call *call, cordon_decision *decision) {
    const char *found = secret_named(call->arguments);
    if (found != NULL) {
        cordon_block(decision, "{name}: this %s call names a secrets file (%s); do the task without it",
                     call->name, found);
    }
}
"#;

const C_AFTER_FN: &str = r#"
/* Leaving `replacement` untouched keeps the result. The new one has no structured output, as it
 * may hold what was cut. */
static void cut(const cordon_call *call, const cordon_outcome *outcome, cordon_result *replacement) {
    (void)call;
    size_t at = cut_at(outcome->text);
    if (at == 0) return;
    size_t more = char_count(outcome->text + at);
    if (outcome->is_error) {
        cordon_fail(replacement, "%.*s\n[cut by {name}: %zu more characters; ask for a smaller part]",
                    (int)at, outcome->text, more);
        return;
    }
    cordon_textf(replacement, "%.*s\n[cut by {name}: %zu more characters; ask for a smaller part]",
                 (int)at, outcome->text, more);
    if (outcome->details[0] != '\0') cordon_details(replacement, outcome->details);
}
"#;

const C_TAIL: &str = r#"
static const cordon_hook HOOK = {{fields}};
CORDON_EXPORT_HOOK(HOOK)
"#;

const C_RULES_HEAD: &str = r#"/* The hook's rules, apart from the hook so they can be tested natively (test_app.c). */
#ifndef RULES_H
#define RULES_H

#include <stddef.h>
#include <string.h>
"#;

const C_BEFORE_RULE: &str = r#"
/* The secrets file a call's arguments (JSON text) name anywhere, or NULL. */
static const char *secret_named(const char *arguments) {
    static const char *const files[] = {".env", ".ssh/", "id_rsa", ".aws/credentials"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (strstr(arguments, files[i]) != NULL) return files[i];
    }
    return NULL;
}
"#;

const C_AFTER_RULE: &str = r#"
/* The most characters (not bytes: UTF-8 continuation bytes do not count) the model is given. */
#define MAX_CHARS 2000

/* How many characters `text` holds. */
static size_t char_count(const char *text) {
    size_t chars = 0;
    for (; *text; text++) {
        if (((unsigned char)*text & 0xC0) != 0x80) chars++;
    }
    return chars;
}

/* The byte offset after the first MAX_CHARS characters of `text`, or 0 when it holds no more. */
static size_t cut_at(const char *text) {
    size_t chars = 0;
    for (size_t i = 0; text[i]; i++) {
        if (((unsigned char)text[i] & 0xC0) != 0x80) {
            if (chars == MAX_CHARS) return i;
            chars++;
        }
    }
    return 0;
}
"#;

const C_TEST_HEAD: &str = r#"/* Tests for the hook's rules, natively, then `cordon test` on the built plugin: in this
 * directory, `cc test_app.c -o test_app && ./test_app` (any C compiler: gcc, clang, `zig cc`),
 * after `cordon build`. CORDON names the cordon binary when it is not on PATH. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

int main(void) {
"#;

const C_BEFORE_TEST: &str = r#"    assert(strcmp(secret_named("{\"path\": \"app/.env\"}"), ".env") == 0);
    assert(strcmp(secret_named("{\"paths\": [\"~/.ssh/id_ed25519\"]}"), ".ssh/") == 0);
    assert(secret_named("{\"path\": \"notes.txt\"}") == NULL);
"#;

const C_AFTER_TEST: &str = r#"    assert(cut_at("short") == 0);
    char *long_text = calloc(2501 * 2 + 1, 1);
    for (int i = 0; i < 2500; i++) strcat(long_text, "\xc3\xa9");
    assert(cut_at(long_text) == 2000 * 2);
    assert(char_count(long_text + cut_at(long_text)) == 500);
    free(long_text);
"#;
