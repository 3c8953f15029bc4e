//! `cordon new --hook`: a tool-hook project in every language builds, passes its own test and the
//! cases it ships in `cases.toml` (run by `cordon test`), and works as a granted hook on real
//! calls; `--hook before` and `--hook after` write only that half; a case the hook does not meet
//! fails `cordon test`, naming what was expected and what came.

use crate::scaffold::project_test;
use crate::support::{Workspace, text};

/// The cargo target dir the template builds share (`make test` keeps it between runs).
fn scaffold_target(ws: &Workspace) -> String {
    std::env::var("CORDON_SCAFFOLD_TARGET")
        .unwrap_or_else(|_| ws.path().join("cargo-target").display().to_string())
}

/// `cordon new NAME --lang LANG ARGS…` then `cordon build`, asserting both worked.
fn new_and_build(ws: &Workspace, name: &str, lang: &str, args: &[&str], target: &str) {
    let mut command = vec!["new", name, "--lang", lang];
    command.extend_from_slice(args);
    let created = ws.cordon(&command);
    assert_eq!(created.code, 0, "{lang}: {}", created.stderr);
    let built = ws.cordon_with_env(
        &["build", &format!("plugins/{name}")],
        &[("CARGO_TARGET_DIR", target)],
    );
    assert_eq!(built.code, 0, "{lang} build failed: {}", built.stderr);
}

/// The project's own test, as its README says to run it.
fn own_test(ws: &Workspace, name: &str, lang: &str, target: &str) -> String {
    let dir = ws.path().join("plugins").join(name);
    match lang {
        "rust" => project_test(
            &dir,
            "cargo",
            &["test", "--quiet"],
            &[("CARGO_TARGET_DIR", target)],
        ),
        "python" => project_test(&dir, "python3", &["test_app.py"], &[]),
        "js" => {
            project_test(
                &dir,
                "npm",
                &["install", "--offline", "--no-audit", "--no-fund"],
                &[],
            );
            project_test(&dir, "npm", &["test"], &[])
        }
        // The command the README gives, run as written.
        _ => {
            let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
            let command = readme
                .split("Test it: `")
                .nth(1)
                .and_then(|rest| rest.split('`').next())
                .expect("the README says how to test");
            project_test(&dir, "sh", &["-c", command], &[])
        }
    }
}

const BEFORE_CASES: [&str; 2] = [
    "ok    case · a call naming a secrets file is refused: got decision block",
    "ok    case · an ordinary call runs: got decision allow",
];
const AFTER_CASES: [&str; 2] = [
    "ok    case · a long result is cut, saying how much: got decision replace",
    "ok    case · a short result is kept: got decision keep",
];

#[test]
fn the_hook_template_builds_passes_its_cases_and_its_own_test_in_every_language() {
    let ws = Workspace::new();
    let target = scaffold_target(&ws);
    for (name, lang) in [
        ("guard_rs", "rust"),
        ("guard_py", "python"),
        ("guard_js", "js"),
        ("guard_c", "c"),
    ] {
        new_and_build(&ws, name, lang, &["--hook"], &target);
        let wasm = ws.plugin_path(name).display().to_string();
        let tested = ws.cordon(&["test", &wasm]);
        assert_eq!(tested.code, 0, "{lang}: {}{}", tested.stdout, tested.stderr);
        for line in BEFORE_CASES.iter().chain(&AFTER_CASES).chain(&[
            "a hook (before and after)",
            "ok    plugin · cases: 4 case(s) of the author's from",
        ]) {
            assert!(
                tested.stdout.contains(line),
                "{lang}: {line}\n{}",
                tested.stdout
            );
        }
        let own = own_test(&ws, name, lang, &target);
        assert!(own.contains("passed: 0 failed"), "{lang}: {own}");
    }

    // Granted, the Rust one refuses a call naming a secrets file and cuts a long result.
    let ws = ws
        .plugin("fs", "fs")
        .file("data/.env", "TOKEN=1")
        .file("data/big.log", &"0123456789".repeat(500))
        .config(
            "[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"ro\" }]\n\n[plugins.guard_rs]\nhook = [\"read_*\"]\n",
        );
    for other in ["guard_py", "guard_js", "guard_c"] {
        std::fs::remove_file(ws.plugin_path(other)).unwrap();
    }
    let refused = ws.call("read_file", r#"{"path": "/data/.env"}"#);
    assert_eq!(refused["errorKind"], "blocked", "{refused}");
    assert!(
        text(&refused).contains("guard_rs: this read_file call names a secrets file (.env)"),
        "{refused}"
    );
    let cut = text(&ws.call("read_file", r#"{"path": "/data/big.log"}"#));
    assert!(
        cut.contains("\n[cut by guard_rs: ")
            && cut.ends_with("more characters; ask for a smaller part]"),
        "{cut}"
    );
    assert!(cut.chars().count() < 2100, "{cut}");
}

#[test]
fn a_hook_template_can_be_one_half_and_a_case_it_misses_fails_cordon_test() {
    let ws = Workspace::new();
    let target = scaffold_target(&ws);
    new_and_build(&ws, "before_rs", "rust", &["--hook", "before"], &target);
    new_and_build(&ws, "after_c", "c", &["--hook", "after"], &target);
    for (name, lang, present, absent) in [
        ("before_rs", "rust", BEFORE_CASES, AFTER_CASES),
        ("after_c", "c", AFTER_CASES, BEFORE_CASES),
    ] {
        let wasm = ws.plugin_path(name).display().to_string();
        let tested = ws.cordon(&["test", &wasm]);
        assert_eq!(tested.code, 0, "{lang}: {}{}", tested.stdout, tested.stderr);
        for line in present {
            assert!(tested.stdout.contains(line), "{line}\n{}", tested.stdout);
        }
        for line in absent {
            let case = line.split(':').next().unwrap();
            assert!(!tested.stdout.contains(case), "{case}\n{}", tested.stdout);
        }
        let own = own_test(&ws, name, lang, &target);
        assert!(own.contains("passed: 0 failed"), "{lang}: {own}");
    }
    // `cordon build` run inside a project writes where `cordon new` put it, beside the project.
    let project = ws.path().join("plugins/after_c");
    let before = std::fs::metadata(ws.plugin_path("after_c"))
        .unwrap()
        .modified()
        .unwrap();
    let inside = crate::support::Run::from(
        ws.cordon_command(&["build"])
            .current_dir(&project)
            .output()
            .unwrap(),
    );
    assert_eq!(inside.code, 0, "{}", inside.stderr);
    assert!(!project.join("plugins").exists(), "{}", inside.stdout);
    let after = std::fs::metadata(ws.plugin_path("after_c"))
        .unwrap()
        .modified()
        .unwrap();
    assert!(
        after > before,
        "the build inside the project replaced plugins/after_c.wasm"
    );

    let source = std::fs::read_to_string(ws.path().join("plugins/before_rs/src/lib.rs")).unwrap();
    assert!(
        source.contains("const AFTER: bool = false;") && !source.contains("fn after_tool_call")
    );

    // A case the hook does not meet fails the run, saying what was expected and what came.
    let cases = ws.path().join("plugins/before_rs/cases.toml");
    let mut text = std::fs::read_to_string(&cases).unwrap();
    text.push_str(
        "\n[[case]]\nname = \"wrong on purpose\"\nbefore = \"read_file\"\narguments = { path = \"id_rsa\" }\nexpect = { decision = \"allow\" }\n",
    );
    std::fs::write(&cases, text).unwrap();
    let wasm = ws.plugin_path("before_rs").display().to_string();
    let failed = ws.cordon(&["test", &wasm]);
    assert_eq!(failed.code, 1, "{}", failed.stdout);
    assert!(
        failed.stdout.contains(
            "FAIL  case · wrong on purpose: expected the decision allow; got decision block; text of"
        ),
        "{}",
        failed.stdout
    );
    // A cases file cordon cannot read is refused before anything runs, naming the case and key.
    std::fs::write(
        ws.path().join("broken.toml"),
        "[[case]]\nbefore = \"read_file\"\nexpect = { max_chars = 3 }\n",
    )
    .unwrap();
    let refused = ws.cordon(&["test", "--cases", "broken.toml", &wasm]);
    assert_eq!(refused.code, 2, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused
            .stderr
            .contains("case 1: `expect.max_chars` cannot be checked in this kind of case"),
        "{}",
        refused.stderr
    );
}
