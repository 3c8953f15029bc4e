//! `cordon remove`: a plugin installed with `cordon add`, granted and approved, comes out of
//! plugins/, cordon.toml (the rest of the file kept as written) and cordon.lock's sources, the
//! grants it held are listed; its approval stays, so a locked run refuses to start until `cordon
//! lock` approves the set without it; a name with nothing behind it is an error.

use crate::support::{Workspace, guest_dir};

#[test]
fn remove_undoes_add_and_lists_the_grants_it_drops() {
    let ws = Workspace::new();
    std::fs::copy(
        guest_dir().join("fixture_probe.wasm"),
        ws.path().join("probe.wasm"),
    )
    .unwrap();
    std::fs::copy(guest_dir().join("guard.wasm"), ws.path().join("guard.wasm")).unwrap();
    for file in ["probe.wasm", "guard.wasm"] {
        let out = ws.cordon(&["add", file]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    // The operator grants probe something, keeps a comment, and orders the hooks.
    let config_path = ws.path().join("cordon.toml");
    let config = std::fs::read_to_string(&config_path).unwrap();
    let config = config.replace(
        "[plugins.probe]\n",
        "# probe reads HOME\n[plugins.probe]\nenv = [\"HOME\"]\n",
    ) + "\n[hooks]\norder = [\"probe\", \"guard\"]\n";
    std::fs::write(&config_path, &config).unwrap();
    let out = ws.cordon(&["lock"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lock = std::fs::read_to_string(ws.path().join("cordon.lock")).unwrap();
    assert!(
        lock.contains("[plugins.probe]") && lock.contains("[sources.probe]"),
        "{lock}"
    );

    let out = ws.cordon(&["remove", "probe"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for line in [
        "removed probe",
        "deleted plugins/probe.wasm",
        "dropped [plugins.probe] from cordon.toml, with its grants: env",
        "dropped its source from ./cordon.lock",
        "still named in [hooks] order in cordon.toml",
        "./cordon.lock still approves it: `cordon --locked` will not start until `cordon lock`",
    ] {
        assert!(out.stdout.contains(line), "{line:?} in {}", out.stdout);
    }
    assert!(!ws.path().join("plugins/probe.wasm").exists());
    assert!(ws.path().join("plugins/guard.wasm").exists());
    let config: toml::Value =
        toml::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    assert!(config["plugins"].get("probe").is_none(), "{config}");
    assert!(config["plugins"].get("guard").is_some(), "{config}");
    let lock: toml::Value =
        toml::from_str(&std::fs::read_to_string(ws.path().join("cordon.lock")).unwrap()).unwrap();
    assert!(
        lock["plugins"].get("probe").is_some(),
        "still approved: {lock}"
    );
    assert!(lock["sources"].get("probe").is_none(), "{lock}");
    assert!(lock["sources"].get("guard").is_some(), "{lock}");

    // The approved set lacks probe now: a locked run refuses to start, and a locked remove is refused.
    let out = ws.cordon(&["--locked", "list"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(out.stderr.contains("probe"), "{}", out.stderr);
    let out = ws.cordon(&["--locked", "remove", "guard"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("--locked keeps exactly the approved set"),
        "{}",
        out.stderr
    );
    assert!(ws.path().join("plugins/guard.wasm").exists());

    // Taking probe out of the hook order too and approving the set again: a locked run starts.
    let text = std::fs::read_to_string(&config_path)
        .unwrap()
        .replace("order = [\"probe\", \"guard\"]", "order = [\"guard\"]");
    std::fs::write(&config_path, text).unwrap();
    assert_eq!(ws.cordon(&["lock"]).code, 0);
    let out = ws.cordon(&["--locked", "list"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("echo"), "{}", out.stdout);

    let out = ws.cordon(&["remove", "probe"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("there is no plugin probe"),
        "{}",
        out.stderr
    );
    let out = ws.cordon(&["remove", "../guard"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("is not a plugin name"),
        "{}",
        out.stderr
    );
    assert!(ws.path().join("plugins/guard.wasm").exists());
}
