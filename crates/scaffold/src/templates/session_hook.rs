//! The session-hook templates `cordon new --template session-hook` writes, one per language: a
//! hook that routes small talk ("hi", "thanks") to an answer with no tools at the `prompt`
//! stage, and at the `stop` stage sends an answer that still says TODO back once to be finished;
//! with a native test of both rules, a test that runs `cordon test` on the built plugin, and the
//! cases `cordon test` runs against them (`cases.toml`).

use crate::project::Language;
use std::path::Path;

/// The files of a session-hook project in `language`.
pub(super) fn files(name: &str, language: Language, root: &Path) -> Vec<(&'static str, String)> {
    let mut files = sources(name, language, root);
    files.push((super::CASES_FILE, CASES.replace("{name}", name)));
    files
}

/// The sources, tests and README of a session-hook project in `language`.
fn sources(name: &str, language: Language, root: &Path) -> Vec<(&'static str, String)> {
    let fill = |text: &str| text.replace("{name}", name);
    match language {
        Language::Rust => vec![
            (
                "Cargo.toml",
                super::rust_manifest(name, &root.join("sdk/rust")),
            ),
            ("src/lib.rs", fill(RUST_LIB)),
            ("tests/conformance.rs", fill(super::RUST_CONFORMANCE)),
            (
                "README.md",
                readme(name, "Rust (cargo, the wasm32-wasip2 target)", "cargo test"),
            ),
        ],
        Language::Python => vec![
            ("app.py", fill(PYTHON_APP)),
            (
                "test_app.py",
                super::test_file(PYTHON_TEST, name)
                    .replace("{sdk}", &root.join("sdk/python").display().to_string()),
            ),
            (
                "README.md",
                readme(name, "Python (componentize-py)", "python3 test_app.py"),
            ),
        ],
        Language::Js => vec![
            ("app.js", fill(JS_APP)),
            ("test_app.js", super::test_file(JS_TEST, name)),
            (
                "package.json",
                fill(super::JS_MANIFEST)
                    .replace("{sdk}", &root.join("sdk/js").display().to_string()),
            ),
            (
                "README.md",
                readme(
                    name,
                    "JavaScript (componentize-js)",
                    "npm install && npm test",
                ),
            ),
        ],
        Language::C => vec![
            ("app.c", fill(C_APP)),
            ("rules.h", C_RULES.to_string()),
            ("test_app.c", super::test_file(C_TEST, name)),
            (
                "README.md",
                readme(
                    name,
                    "C (Zig's clang, wasm32-wasi)",
                    "cc test_app.c -o test_app && ./test_app",
                ),
            ),
        ],
    }
}

/// The cases `cordon test` runs against the hook's two rules.
const CASES: &str = r#"# What `{name}` must decide: `cordon test plugins/{name}.wasm` runs every case against the
# built plugin (docs/testing-plugins.md), and fails when one does not come out as expected.

[[case]]
name = "small talk gets no tools"
stage = "prompt"
payload = { prompt = "hello!" }
expect = { decision = "only_tools", only_tools = [] }

[[case]]
name = "a task keeps its tools"
stage = "prompt"
payload = { prompt = "hi, please read notes.txt and fix its typos" }
expect = { decision = "proceed" }

[[case]]
name = "an answer that says TODO goes back once"
stage = "stop"
payload = { answer = "Done. TODO: the tests", continuations = 0 }
expect = { decision = "replace", contains = "TODO" }

[[case]]
name = "and only once"
stage = "stop"
payload = { answer = "Done. TODO: the tests", continuations = 1 }
expect = { decision = "proceed" }
"#;

fn readme(name: &str, build: &str, test: &str) -> String {
    README
        .replace("{name}", name)
        .replace("{build}", build)
        .replace("{test}", test)
}

const README: &str = r#"# {name}

A cordon session hook in {build}. At the `prompt` stage it routes small talk ("hi", "thanks") to
an answer with no tools; at the `stop` stage it sends an answer that still says TODO back once to
be finished. Change the rules into yours: docs/session-hooks.md lists every stage, what it sends
and what a decision there may do.

- Build: `cordon build plugins/{name}` writes `plugins/{name}.wasm`.
- Grant it: a hook runs only when the operator says so, in `cordon.toml`:
  `[plugins.{name}]` then `hook = true`.
- Check it: `cordon test plugins/{name}.wasm` runs each stage it declares over a sample event
  and shows what it decided, then runs the cases in `cases.toml` (events and the decision each
  must get; add yours there).
- Test it: `{test}` here: the rules natively, then `cordon test` on the built plugin.
"#;

const RUST_LIB: &str = r#"//! The `{name}` cordon session hook: small talk gets an answer without tools, and an answer that
//! still says TODO goes back once to be finished.
use cordon_sdk::prelude::*;

/// A greeting or a thank-you, which needs no tools.
fn is_small_talk(prompt: &str) -> bool {
    let words: Vec<String> = prompt
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.len() <= 3
        && words
            .iter()
            .any(|word| ["hi", "hello", "hey", "thanks", "thank"].contains(&word.as_str()))
}

/// An answer the model has not finished: it still says TODO, and it was not sent back already.
fn unfinished(answer: &str, continuations: u64) -> bool {
    answer.contains("TODO") && continuations == 0
}

struct Session;
impl Hook for Session {
    const BEFORE: bool = false;
    const AFTER: bool = false;
    const STAGES: &'static [SessionStage] = &[SessionStage::Prompt, SessionStage::Stop];

    fn session_hook(&self, event: &SessionEvent, _cx: &Context) -> SessionDecision {
        match event.stage {
            SessionStage::Prompt if is_small_talk(event.text("prompt").unwrap_or_default()) => {
                SessionDecision::only_tools(Vec::<String>::new())
            }
            SessionStage::Stop => {
                let continuations = event.payload["continuations"].as_u64().unwrap_or(0);
                if unfinished(event.text("answer").unwrap_or_default(), continuations) {
                    SessionDecision::replace("Your answer still says TODO: finish it before you stop.")
                } else {
                    SessionDecision::proceed()
                }
            }
            _ => SessionDecision::proceed(),
        }
    }
}

cordon_sdk::export_plugin!(hook: Session);

#[cfg(test)]
mod tests {
    #[test]
    fn small_talk_is_a_short_greeting() {
        assert!(super::is_small_talk("Hi!"));
        assert!(super::is_small_talk("thanks a lot"));
        assert!(!super::is_small_talk("hi, please read notes.txt and fix its typos"));
    }

    #[test]
    fn an_answer_with_a_todo_goes_back_once() {
        assert!(super::unfinished("done, TODO: tests", 0));
        assert!(!super::unfinished("done, TODO: tests", 1));
        assert!(!super::unfinished("all done", 0));
    }
}
"#;

const PYTHON_APP: &str = r#""""The `{name}` cordon session hook: small talk gets an answer without tools, and an answer
that still says TODO goes back once to be finished."""

import re

from cordon_sdk import Plugin, SessionDecision, session_hook  # noqa: F401 (Plugin is the export)

GREETINGS = {"hi", "hello", "hey", "thanks", "thank"}


def is_small_talk(prompt: str) -> bool:
    words = [word.lower() for word in re.split(r"\W+", prompt) if word]
    return len(words) <= 3 and any(word in GREETINGS for word in words)


def unfinished(answer: str, continuations: int) -> bool:
    return "TODO" in answer and continuations == 0


@session_hook(stages=["prompt"])
def route(event):
    if is_small_talk(event.payload.get("prompt", "")):
        return SessionDecision(only_tools=[])
    return None


@session_hook(stages=["stop"])
def finish(event):
    if unfinished(event.payload.get("answer", ""), event.payload.get("continuations", 0)):
        return SessionDecision(replace="Your answer still says TODO: finish it before you stop.")
    return None
"#;

const PYTHON_TEST: &str = r#""""Tests for the `{name}` session hook, in plain Python: `python3 test_app.py`."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, "{sdk}"]
from app import finish, is_small_talk, route  # noqa: E402
from cordon_sdk import SessionEvent  # noqa: E402


def test_small_talk_gets_no_tools():
    assert is_small_talk("Hi!") and is_small_talk("thanks a lot")
    assert not is_small_talk("hi, please read notes.txt and fix its typos")
    assert route(SessionEvent("prompt", {"prompt": "hello"})).only_tools == []
    assert route(SessionEvent("prompt", {"prompt": "read notes.txt"})) is None


def test_an_answer_with_a_todo_goes_back_once():
    assert finish(SessionEvent("stop", {"answer": "TODO: tests", "continuations": 0})).replace
    assert finish(SessionEvent("stop", {"answer": "TODO: tests", "continuations": 1})) is None


{python_cordon_test}

if __name__ == "__main__":
    test_small_talk_gets_no_tools()
    test_an_answer_with_a_todo_goes_back_once()
    test_passes_cordon_test()
    print("ok")
"#;

const JS_APP: &str = r#"// The `{name}` cordon session hook: small talk gets an answer without tools, and an answer that
// still says TODO goes back once to be finished.
import { defineSessionHook } from "cordon-sdk";

const GREETINGS = new Set(["hi", "hello", "hey", "thanks", "thank"]);

export function isSmallTalk(prompt) {
  const words = prompt.toLowerCase().split(/\W+/).filter(Boolean);
  return words.length <= 3 && words.some((word) => GREETINGS.has(word));
}

export function unfinished(answer, continuations) {
  return answer.includes("TODO") && continuations === 0;
}

defineSessionHook({
  stages: ["prompt", "stop"],
  run({ stage, payload }) {
    if (stage === "prompt" && isSmallTalk(payload.prompt ?? "")) return { onlyTools: [] };
    if (stage === "stop" && unfinished(payload.answer ?? "", payload.continuations ?? 0)) {
      return { replace: "Your answer still says TODO: finish it before you stop." };
    }
    return undefined;
  },
});
"#;

const JS_TEST: &str = r#"// Tests for the `{name}` session hook, in plain Node: `npm install` once, then `npm test`.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { runSessionHook } from "cordon-sdk";
import { isSmallTalk } from "./app.js";

test("small talk gets no tools", async () => {
  assert.ok(isSmallTalk("Hi!") && isSmallTalk("thanks a lot"));
  assert.ok(!isSmallTalk("hi, please read notes.txt and fix its typos"));
  assert.deepEqual((await runSessionHook("prompt", { prompt: "hello" })).onlyTools, []);
});

test("an answer with a TODO goes back once", async () => {
  assert.ok((await runSessionHook("stop", { answer: "TODO: tests", continuations: 0 })).replace);
  assert.equal((await runSessionHook("stop", { answer: "TODO: tests", continuations: 1 })).replace, undefined);
});

{js_cordon_test}"#;

const C_APP: &str = r#"/* The `{name}` cordon session hook: small talk gets an answer without tools, and an answer that
 * still says TODO goes back once to be finished. */
#include <stdlib.h>
#include <string.h>

#include "cordon.h"
#include "rules.h"

static void decide(const cordon_session_event *event, cordon_session_decision *decision) {
    char *text = NULL;
    if (strcmp(event->stage, "prompt") == 0 && cordon_payload_string(event, "prompt", &text)) {
        if (is_small_talk(text)) cordon_session_only_tools(decision, "");
    } else if (strcmp(event->stage, "stop") == 0 && cordon_payload_string(event, "answer", &text)) {
        long long continuations = 0;
        cordon_payload_int(event, "continuations", &continuations);
        if (unfinished(text, continuations)) {
            cordon_session_replace(decision, "Your answer still says TODO: finish it before you stop.");
        }
    }
    free(text);
}

static const cordon_hook HOOK = {.stages = "prompt, stop", .session = decide};
CORDON_EXPORT_HOOK(HOOK)
"#;

const C_RULES: &str = r#"/* The hook's rules, apart from the hook so they can be tested natively (test_app.c). */
#ifndef RULES_H
#define RULES_H

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

/* A greeting or a thank-you of at most three words, which needs no tools. */
static bool is_small_talk(const char *prompt) {
    static const char *const greetings[] = {"hi", "hello", "hey", "thanks", "thank"};
    int words = 0;
    bool greeting = false;
    while (*prompt) {
        while (*prompt && !isalnum((unsigned char)*prompt)) prompt++;
        if (!*prompt) break;
        char word[16];
        size_t length = 0;
        for (; isalnum((unsigned char)*prompt); prompt++) {
            if (length + 1 < sizeof word) word[length++] = (char)tolower((unsigned char)*prompt);
        }
        word[length] = '\0';
        words++;
        for (size_t i = 0; i < sizeof greetings / sizeof greetings[0]; i++) {
            if (strcmp(word, greetings[i]) == 0) greeting = true;
        }
    }
    return words <= 3 && greeting;
}

/* An answer that still says TODO and was not sent back already. */
static bool unfinished(const char *answer, long long continuations) {
    return strstr(answer, "TODO") != NULL && continuations == 0;
}

#endif
"#;

const C_TEST: &str = r#"/* Tests for the hook's rules, natively, then `cordon test` on the built plugin: in this
 * directory, `cc test_app.c -o test_app && ./test_app` (any C compiler: gcc, clang, `zig cc`),
 * after `cordon build`. CORDON names the cordon binary when it is not on PATH. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#include "rules.h"

int main(void) {
    assert(is_small_talk("Hi!") && is_small_talk("thanks a lot"));
    assert(!is_small_talk("hi, please read notes.txt and fix its typos"));
    assert(unfinished("TODO: tests", 0) && !unfinished("TODO: tests", 1) && !unfinished("done", 0));

{c_cordon_test}    puts("ok");
    return 0;
}
"#;
