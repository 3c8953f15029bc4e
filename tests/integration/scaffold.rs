//! `cordon new` and `cordon build`: a project from a template builds into a working plugin, in Rust,
//! Python, JavaScript and C, and passes its own test unchanged; a missing toolchain is an error
//! with the install command.

use crate::support::{Workspace, text};

#[test]
fn new_then_build_makes_a_working_plugin_in_rust_and_python() {
    let ws = Workspace::new();
    // `make test` keeps the template builds' cargo target between runs (outside the main one,
    // which cargo test holds); elsewhere they build in the workspace.
    let target = std::env::var("CORDON_SCAFFOLD_TARGET")
        .unwrap_or_else(|_| ws.path().join("cargo-target").display().to_string());
    let target = target.as_str();
    for (name, lang) in [("count_py", "python"), ("count_rs", "rust")] {
        let created = ws.cordon(&["new", name, "--lang", lang]);
        assert_eq!(created.code, 0, "{}", created.stderr);
        let built = ws.cordon_with_env(
            &["build", &format!("plugins/{name}")],
            &[("CARGO_TARGET_DIR", target)],
        );
        assert_eq!(built.code, 0, "{lang} build failed: {}", built.stderr);
        assert!(
            ws.plugin_path(name).is_file(),
            "plugins/{name}.wasm was not written"
        );
        assert_eq!(
            text(&ws.call(name, r#"{"text": "one two three"}"#)),
            "3",
            "{lang}"
        );
    }
    // A rebuild with nothing changed reuses the component instead of running componentize-py.
    let again = ws.cordon(&["build", "plugins/count_py"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again
            .stdout
            .contains("(its inputs are those of an earlier build: its component was reused)"),
        "{}",
        again.stdout
    );
    assert!(ws.path().join("plugins/count_py/test_app.py").is_file());
    assert!(
        std::fs::read_to_string(ws.path().join("plugins/count_rs/src/lib.rs"))
            .unwrap()
            .contains("#[cfg(test)]")
    );
    // Each project's own test, `cordon test` of the built plugin included.
    let python_test = std::process::Command::new("python3")
        .arg(ws.path().join("plugins/count_py/test_app.py"))
        .env("CORDON", env!("CARGO_BIN_EXE_cordon"))
        .output()
        .unwrap();
    assert!(
        python_test.status.success(),
        "{}{}",
        String::from_utf8_lossy(&python_test.stdout),
        String::from_utf8_lossy(&python_test.stderr)
    );
    assert!(
        String::from_utf8_lossy(&python_test.stdout).contains("passed: 0 failed"),
        "{}",
        String::from_utf8_lossy(&python_test.stdout)
    );
    let rust_test = std::process::Command::new("cargo")
        .args(["test", "--quiet", "--test", "conformance"])
        .current_dir(ws.path().join("plugins/count_rs"))
        .env("CARGO_TARGET_DIR", target)
        .env("CORDON", env!("CARGO_BIN_EXE_cordon"))
        .output()
        .unwrap();
    assert!(
        rust_test.status.success(),
        "{}{}",
        String::from_utf8_lossy(&rust_test.stdout),
        String::from_utf8_lossy(&rust_test.stderr)
    );

    let again = ws.cordon(&["new", "count_py", "--lang", "python"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    let bad = ws.cordon(&["new", "Count-Words"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("not a plugin name"), "{}", bad.stderr);
}

#[test]
fn build_says_what_is_missing() {
    let ws = Workspace::new().file("plugins/empty/notes.txt", "nothing to build");
    let nothing = ws.cordon(&["build", "plugins/empty"]);
    assert_eq!(nothing.code, 2);
    assert!(
        nothing
            .stderr
            .contains("no Cargo.toml (Rust), app.py (Python), app.js or package.json (JavaScript), or .c files (C)"),
        "{}",
        nothing.stderr
    );

    let ws = ws.file("plugins/py/app.py", "");
    let no_toolchain = ws.cordon_with_env(
        &["build", "plugins/py"],
        &[("PATH", "/usr/bin:/bin"), ("HOME", "/nonexistent")],
    );
    assert_eq!(no_toolchain.code, 2);
    assert!(
        no_toolchain.stderr.contains("pip install componentize-py"),
        "{}",
        no_toolchain.stderr
    );

    let ws = ws.file("plugins/c/app.c", "int x;");
    let no_zig = ws.cordon_with_env(
        &["build", "plugins/c"],
        &[("PATH", "/usr/bin:/bin"), ("HOME", "/nonexistent")],
    );
    assert_eq!(no_zig.code, 2);
    assert!(
        no_zig
            .stderr
            .contains("install it with: python3 -m pip install ziglang==0.17.0"),
        "{}",
        no_zig.stderr
    );

    // The SDKs and contract come from the checkout cordon was built from, or CORDON_SOURCE_ROOT:
    // one that does not hold them is named, and nothing is created.
    let nowhere = ws.path().join("not-a-checkout");
    let moved = ws.cordon_with_env(
        &["new", "stray", "--lang", "python"],
        &[("CORDON_SOURCE_ROOT", nowhere.to_str().unwrap())],
    );
    assert_eq!(moved.code, 2, "{}", moved.stderr);
    assert!(
        moved.stderr.contains(&format!(
            "CORDON_SOURCE_ROOT names {}, which does not hold cordon's contract and SDKs",
            nowhere.display()
        )),
        "{}",
        moved.stderr
    );
    assert!(!ws.path().join("plugins/stray").exists());
    let here = ws.cordon_with_env(
        &["new", "placed", "--lang", "python"],
        &[(
            "CORDON_SOURCE_ROOT",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        )],
    );
    assert_eq!(here.code, 0, "{}", here.stderr);
    assert!(ws.path().join("plugins/placed/app.py").is_file());
}

#[test]
fn new_then_build_makes_a_working_plugin_in_javascript_and_c() {
    let ws = Workspace::new();
    for (name, lang) in [("count_js", "js"), ("count_c", "c")] {
        let created = ws.cordon(&["new", name, "--lang", lang]);
        assert_eq!(created.code, 0, "{}", created.stderr);
        let built = ws.cordon(&["build", &format!("plugins/{name}")]);
        assert_eq!(built.code, 0, "{lang} build failed: {}", built.stderr);
        assert_eq!(
            text(&ws.call(name, r#"{"text": "one two three"}"#)),
            "3",
            "{lang}"
        );
    }

    // The JavaScript project's own test: `npm install` links the SDK (no download), `npm test`.
    let js = ws.path().join("plugins/count_js");
    for args in [
        &["install", "--offline", "--no-audit", "--no-fund"][..],
        &["test"][..],
    ] {
        let npm = std::process::Command::new("npm")
            .args(args)
            .env("CORDON", env!("CARGO_BIN_EXE_cordon"))
            .current_dir(&js)
            .output()
            .unwrap();
        assert!(
            npm.status.success(),
            "npm {args:?}: {}{}",
            String::from_utf8_lossy(&npm.stdout),
            String::from_utf8_lossy(&npm.stderr)
        );
    }

    // The C project's own test, compiled natively with Zig.
    let c = ws.path().join("plugins/count_c");
    let report = crate::support::run_native_c_test(&c, &["test_app.c"]);
    assert!(report.contains("passed: 0 failed"), "{report}");
}

/// `program args` in `dir` with the cordon under test as `CORDON`; its output, after asserting
/// it succeeded.
pub(crate) fn project_test(
    dir: &std::path::Path,
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> String {
    let ran = std::process::Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .env("CORDON", env!("CARGO_BIN_EXE_cordon"))
        .current_dir(dir)
        .output()
        .unwrap();
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(
        ran.status.success(),
        "{program} {args:?} in {}: {output}",
        dir.display()
    );
    output
}

#[test]
fn the_session_hook_template_builds_passes_its_own_test_and_routes_small_talk_in_every_language() {
    let ws = Workspace::new();
    let target = std::env::var("CORDON_SCAFFOLD_TARGET")
        .unwrap_or_else(|_| ws.path().join("cargo-target").display().to_string());
    let target = target.as_str();
    for (name, lang) in [
        ("hook_rs", "rust"),
        ("hook_py", "python"),
        ("hook_js", "js"),
        ("hook_c", "c"),
    ] {
        let created = ws.cordon(&["new", name, "--lang", lang, "--template", "session-hook"]);
        assert_eq!(created.code, 0, "{}", created.stderr);
        let built = ws.cordon_with_env(
            &["build", &format!("plugins/{name}")],
            &[("CARGO_TARGET_DIR", target)],
        );
        assert_eq!(built.code, 0, "{lang} build failed: {}", built.stderr);
        let wasm = ws.plugin_path(name).display().to_string();
        let tested = ws.cordon(&["test", &wasm]);
        assert_eq!(tested.code, 0, "{lang}: {}{}", tested.stdout, tested.stderr);
        for line in [
            "a hook (session stages prompt, stop)",
            "ok    session hook · prompt: proceeds on the sample event",
            "ok    session hook · stop: proceeds on the sample event",
        ] {
            assert!(
                tested.stdout.contains(line),
                "{lang}: {line}\n{}",
                tested.stdout
            );
        }

        let dir = ws.path().join("plugins").join(name);
        let own = match lang {
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
            _ => crate::support::run_native_c_test(&dir, &["test_app.c"]),
        };
        assert!(own.contains("passed: 0 failed"), "{lang}: {own}");
    }
}
