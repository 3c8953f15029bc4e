//! `cordon lock` and locked loading: new, changed and widened plugins refuse to load, saying what
//! changed.

use crate::support::{Workspace, probe, text};

/// Why `file` was refused when `cordon ARGS list` loaded the workspace, if it was. Under a lock,
/// an approved plugin that is refused stops cordon from starting: the reason is then in what it
/// printed, which must name the file.
pub fn reason(ws: &Workspace, file: &str, args: &[&str]) -> Option<String> {
    let mut all = args.to_vec();
    all.extend(["list", "--json", "--allow-refused"]);
    let run = ws.cordon(&all);
    if run.code != 0 {
        assert!(
            run.stderr.contains("approved plugins did not load") && run.stderr.contains(file),
            "{}",
            run.stderr
        );
        return Some(run.stderr);
    }
    let list = run.json();
    list["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["file"].as_str().unwrap().ends_with(file))
        .map(|r| r["reason"].as_str().unwrap().to_string())
}

#[test]
fn locked_loading_refuses_new_changed_and_widened_plugins() {
    let ws = probe().config("[plugins.probe]\nenv = [\"LANG\"]\n");
    let locked = ws.cordon(&["lock"]);
    assert_eq!(locked.code, 0, "{}", locked.stderr);
    assert!(
        locked
            .stdout
            .contains("1 plugin(s) approved:\n  probe: env LANG; limits timeout="),
        "{}",
        locked.stdout
    );
    let lockfile = std::fs::read_to_string(ws.path().join("cordon.lock")).unwrap();
    assert!(
        lockfile.contains("[plugins.probe]") && lockfile.contains("env LANG"),
        "{lockfile}"
    );
    assert_eq!(
        reason(&ws, "probe.wasm", &["--locked"]),
        None,
        "the approved plugin loads"
    );
    assert_eq!(
        text(
            &ws.cordon(&["--locked", "call", "echo", r#"{"text": "ok"}"#, "--json"])
                .json()
        ),
        "ok"
    );

    let narrower = ws.config("");
    assert_eq!(
        reason(&narrower, "probe.wasm", &["--locked"]),
        None,
        "narrower grants are fine"
    );

    let widened = narrower.config("[plugins.probe]\nenv = [\"LANG\", \"HOME\"]\n");
    let why = reason(&widened, "probe.wasm", &["--locked"]).expect("refused");
    assert!(
        why.contains("grants changed or widened") && why.contains("added: env HOME"),
        "{why}"
    );

    let newcomer = widened
        .config("[plugins.probe]\nenv = [\"LANG\"]\n")
        .plugin("fixture_twin", "twin");
    let why = reason(&newcomer, "twin.wasm", &["--locked"]).expect("refused");
    assert!(why.contains("not in cordon.lock"), "{why}");

    let changed = newcomer.plugin("fixture_hook", "probe");
    let why = reason(&changed, "probe.wasm", &["--locked"]).expect("refused");
    assert!(
        why.contains("changed since it was locked") && why.contains("but the file is"),
        "{why}"
    );

    let by_config = changed.config("[host]\nlocked = true\n[plugins.probe]\nenv = [\"LANG\"]\n");
    assert!(
        reason(&by_config, "probe.wasm", &[]).is_some(),
        "[host] locked = true locks too"
    );
    assert!(reason(&by_config, "twin.wasm", &[]).is_some());
}

#[test]
fn locked_loading_without_a_lockfile_is_a_usage_error() {
    let run = probe().cordon(&["--locked", "list"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("cordon.lock") && run.stderr.contains("cordon lock"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_lockfile_can_live_elsewhere() {
    let ws = probe();
    let locked = ws.cordon(&["--lock-file", "approvals/plugins.lock", "lock"]);
    assert_eq!(
        locked.code, 2,
        "the directory must exist: {}",
        locked.stdout
    );
    std::fs::create_dir(ws.path().join("approvals")).unwrap();
    assert_eq!(
        ws.cordon(&["--lock-file", "approvals/plugins.lock", "lock"])
            .code,
        0
    );
    assert!(
        ws.path().join("approvals/plugins.lock").is_file()
            && !ws.path().join("cordon.lock").exists()
    );
    assert_eq!(
        reason(
            &ws,
            "probe.wasm",
            &["--locked", "--lock-file", "approvals/plugins.lock"]
        ),
        None
    );
}

#[test]
fn locked_loading_refuses_a_changed_secret_source_fixed_env_value_settings_or_limits() {
    let base = "[plugins.probe]\nhttp = [{ origin = \"http://127.0.0.1:9\", headers = { Authorization = \"Bearer ${env:CORDON_LOCK_READ_TOKEN}\" } }]\nenv_set = { MODE = \"safe\" }\nsettings = { strict = true }\nlimits = { timeout = \"5s\", memory = \"32MiB\" }\n";
    let env = [
        ("CORDON_LOCK_READ_TOKEN", "read-only"),
        ("CORDON_LOCK_ADMIN_TOKEN", "admin"),
    ];
    let ws = probe().config(base);
    assert_eq!(ws.cordon_with_env(&["lock"], &env).code, 0);
    let lockfile = std::fs::read_to_string(ws.path().join("cordon.lock")).unwrap();
    assert!(
        !lockfile.contains("read-only") && !lockfile.contains("admin"),
        "no secret value in the lockfile: {lockfile}"
    );
    let loads = |ws: &Workspace| {
        let run = ws.cordon_with_env(&["--locked", "list", "--json"], &env);
        if run.code != 0 {
            return Some(run.stderr);
        }
        run.json()["rejected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["reason"].as_str().unwrap().to_string())
            .next()
    };
    assert_eq!(loads(&ws), None, "unchanged, it loads");
    let mut ws = ws;
    for (change, from, to) in [
        (
            "secret source",
            "CORDON_LOCK_READ_TOKEN",
            "CORDON_LOCK_ADMIN_TOKEN",
        ),
        ("fixed env value", "MODE = \"safe\"", "MODE = \"unsafe\""),
        ("settings", "strict = true", "strict = false"),
        ("limits", "timeout = \"5s\"", "timeout = \"10m\""),
    ] {
        ws = ws.config(&base.replace(from, to));
        let reason = loads(&ws).unwrap_or_else(|| panic!("a changed {change} still loads"));
        assert!(reason.contains("changed or widened"), "{change}: {reason}");
    }
}

#[test]
fn describe_sees_a_stopped_clock_and_the_same_random_numbers_every_time() {
    let ws = Workspace::new().plugin("fixture_attacker", "attacker");
    let declared = || {
        let run = ws.cordon(&["describe", "shifting", "--json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()["parameters"]["description"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", run.stdout))
            .to_string()
    };
    let first = declared();
    assert!(
        first.starts_with("declared at 946684800 (monotonic 0) with luck "),
        "{first}"
    );
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(declared(), first, "what a plugin declares cannot drift");
}

#[test]
fn a_lock_pins_what_each_plugin_declares() {
    let ws = probe();
    assert_eq!(ws.cordon(&["lock"]).code, 0);
    let path = ws.path().join("cordon.lock");
    let approved = std::fs::read_to_string(&path).unwrap();
    assert!(
        approved.contains("\"tool echo parallel title="),
        "{approved}"
    );
    assert_eq!(reason(&ws, "probe.wasm", &["--locked"]), None);

    std::fs::write(
        &path,
        approved.replace("\"tool echo parallel", "\"tool echo sequential"),
    )
    .unwrap();
    let why = reason(&ws, "probe.wasm", &["--locked"]).expect("refused");
    assert!(
        why.contains("what it declares changed since it was locked (same file)")
            && why.contains("declared now: tool echo parallel")
            && why.contains("approved: tool echo sequential"),
        "{why}"
    );

    let declares = approved.find("declares = [").unwrap();
    let end = declares + approved[declares..].find(']').unwrap() + 1;
    std::fs::write(
        &path,
        format!("{}{}", &approved[..declares], &approved[end..]),
    )
    .unwrap();
    let why = reason(&ws, "probe.wasm", &["--locked"]).expect("refused");
    assert!(why.contains("predates that"), "{why}");
}

#[test]
fn a_locked_start_refuses_a_deleted_hook_plugin_or_a_dropped_audit_log() {
    let config = "[audit]\npath = \"audit.jsonl\"\n[plugins.guard]\nhook = true\n";
    let ws = probe().plugin("guard", "guard").config(config);
    let locked = ws.cordon(&["lock"]);
    assert_eq!(locked.code, 0, "{}", locked.stderr);
    assert!(
        locked.stdout.contains("audit.jsonl; hooks order=\n"),
        "{}",
        locked.stdout
    );
    let echo = ["--locked", "call", "echo", r#"{"text": "ok"}"#];
    assert_eq!(ws.cordon(&echo).code, 0);

    let unaudited = ws.config("[plugins.guard]\nhook = true\n");
    let run = unaudited.cordon(&echo);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("the deployment changed")
            && run
                .stderr
                .contains("audit.jsonl; hooks order=`, now `audit none"),
        "{}",
        run.stderr
    );

    let unguarded = unaudited.config(config);
    std::fs::remove_file(unguarded.plugin_path("guard")).unwrap();
    let run = unguarded.cordon(&echo);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains(
            "approved plugins did not load: guard (no guard.wasm in the plugins directory)"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "nothing ran: {}", run.stdout);
}

/// The guard still loads, but its hook grant is narrowed or gone: it would protect nothing, so a
/// locked start refuses it.
#[test]
fn a_locked_start_refuses_a_narrowed_or_removed_hook_grant() {
    let config = "[audit]\npath = \"audit.jsonl\"\n[plugins.guard]\nhook = true\n";
    let mut ws = probe().plugin("guard", "guard").config(config);
    assert_eq!(ws.cordon(&["lock"]).code, 0);
    let echo = ["--locked", "call", "echo", r#"{"text": "ok"}"#];
    for weakened in [
        "[audit]\npath = \"audit.jsonl\"\n[plugins.guard]\nhook = [\"nothing_matches\"]\n",
        "[audit]\npath = \"audit.jsonl\"\n",
    ] {
        ws = ws.config(weakened);
        let reason =
            reason(&ws, "guard.wasm", &["--locked"]).expect("the weakened hook is refused");
        assert!(
            reason.contains("hook grant changed") && reason.contains("approved hook *, now"),
            "{reason}"
        );
        let run = ws.cordon(&echo);
        assert_ne!(run.code, 0, "a locked start refuses it");
        assert!(run.stdout.is_empty(), "nothing ran: {}", run.stdout);
    }
}
