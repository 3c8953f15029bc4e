//! Loading plugins: every kind of bad file is refused with its reason while the good ones work.

use crate::support::{Workspace, kind, probe, text};
use sha2::{Digest, Sha256};

/// The `reason` cordon list --json gives for `file` (a file name), or panics.
pub fn rejection(ws: &Workspace, file: &str) -> String {
    let list = ws.cordon(&["list", "--json"]).json();
    list["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["file"].as_str().unwrap().ends_with(file))
        .unwrap_or_else(|| panic!("{file} not rejected: {list}"))["reason"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn garbage_beside_good_plugins_is_reported_and_the_good_ones_work() {
    let ws = probe()
        .plugin("fs", "fs")
        .raw_plugin("garbage", b"this is not wasm at all");
    let reason = rejection(&ws, "garbage.wasm");
    assert!(reason.contains("not a WebAssembly file"), "{reason}");
    let human = ws.cordon(&["list"]);
    assert!(
        human.stdout.contains("Rejected plugins (1):")
            && human
                .stdout
                .contains("garbage.wasm: it is not a WebAssembly file"),
        "{}",
        human.stdout
    );
    assert_eq!(text(&ws.call("echo", r#"{"text": "fine"}"#)), "fine");
}

#[test]
fn a_refused_file_fails_the_listing_and_is_named_when_its_tool_is_called() {
    let ws = probe().raw_plugin("greet", b"this is not wasm at all");
    // The listing shows everything, and says last why it fails.
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 1, "{}{}", listed.stdout, listed.stderr);
    assert!(
        listed
            .stdout
            .contains("greet.wasm: it is not a WebAssembly file"),
        "{}",
        listed.stdout
    );
    let last = listed.stderr.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.contains("1 plugin file was refused") && last.contains("--allow-refused"),
        "{}",
        listed.stderr
    );
    let as_json = ws.cordon(&["list", "--json"]);
    assert_eq!(as_json.code, 1);
    assert!(
        as_json.json()["rejected"][0]["file"]
            .as_str()
            .unwrap()
            .ends_with("greet.wasm")
    );
    let allowed = ws.cordon(&["list", "--allow-refused"]);
    assert_eq!(allowed.code, 0, "{}", allowed.stderr);
    assert!(allowed.stdout.contains("Rejected plugins (1):"));
    // A call of a tool the refused file might hold says the file was refused, and why.
    let result = ws.call("greet", r#"{"name": "Ada"}"#);
    assert_eq!(kind(&result), "not_found");
    assert_eq!(result["details"]["refused_count"], 1, "{result}");
    assert_eq!(
        result["details"]["refused"][0]["file"], "greet.wasm",
        "{result}"
    );
    let said = text(&result);
    assert!(
        said.contains("Unknown tool \"greet\"")
            && said.contains("echo")
            && said.contains("1 plugin file was refused")
            && said.contains("greet.wasm (it is not a WebAssembly file"),
        "{said}"
    );
    // However many files were refused, a result names five of them and counts the rest.
    let mut many = probe();
    for n in 0..7 {
        many = many.raw_plugin(&format!("broken{n}"), b"not wasm");
    }
    let result = many.call("greet", "{}");
    assert_eq!(result["details"]["refused_count"], 7, "{result}");
    assert_eq!(result["details"]["refused"].as_array().unwrap().len(), 5);
    assert!(
        text(&result).contains("7 plugin files were refused")
            && text(&result).contains("; and 2 more (`cordon list` shows all)."),
        "{}",
        text(&result)
    );
    // With nothing loaded at all, it says so instead of listing nothing.
    let empty = Workspace::new().raw_plugin("greet", b"this is not wasm at all");
    let said = text(&empty.call("greet", "{}"));
    assert!(
        said.starts_with("Unknown tool \"greet\": no tool is available. 1 plugin file was refused"),
        "{said}"
    );
}

#[test]
fn a_core_module_and_a_broken_component_are_refused() {
    let mut truncated =
        std::fs::read(crate::support::guest_dir().join("fixture_twin.wasm")).unwrap();
    truncated.truncate(truncated.len() / 2);
    let ws = probe()
        .raw_plugin("core", b"\0asm\x01\0\0\0")
        .raw_plugin("truncated", &truncated);
    assert!(rejection(&ws, "core.wasm").contains("core WebAssembly module, not a component"));
    assert!(rejection(&ws, "truncated.wasm").contains("cannot be compiled"));
}

/// A component exporting a function that takes a resource handle, and one that does not.
const RESOURCE_COMPONENT: &str = r#"
(component
  (type $res (resource (rep i32)))
  (export $file "file" (type $res))
  (core module $m (func (export "f") (param i32)))
  (core instance $i (instantiate $m))
  (func $take (param "handle" (own $file)) (canon lift (core func $i "f")))
  (export "take" (func $take))
  (func $count (param "n" u32) (canon lift (core func $i "f")))
  (export "count" (func $count))
)
"#;

/// A component exporting a function that borrows a resource handle.
const BORROW_COMPONENT: &str = r#"
(component
  (type $res (resource (rep i32)))
  (export $file "file" (type $res))
  (core module $m (func (export "f") (param i32)))
  (core instance $i (instantiate $m))
  (func $peek (param "handle" (borrow $file)) (canon lift (core func $i "f")))
  (export "peek" (func $peek))
)
"#;

/// A component importing two interfaces no host provides.
const TWO_FOREIGN_IMPORTS: &str = r#"
(component
  (import "test:first/gadget" (instance (export "poke" (func))))
  (import "test:second/widget" (instance (export "prod" (func))))
  (core module $m (func (export "f") (param i32)))
  (core instance $i (instantiate $m))
  (func $count (param "n" u32) (canon lift (core func $i "f")))
  (export "count" (func $count))
)
"#;

#[test]
fn a_component_that_exports_nothing_json_can_carry_is_refused() {
    let empty = wat::parse_str("(component)").unwrap();
    let resource = wat::parse_str(RESOURCE_COMPONENT).unwrap();
    let ws = probe()
        .raw_plugin("empty", &empty)
        .raw_plugin("handles", &resource);
    let reason = rejection(&ws, "empty.wasm");
    assert!(
        reason.contains("it exports no functions (it exports: nothing)")
            && reason.contains("wit/plugin-0.4.0"),
        "{reason}"
    );
    let reason = rejection(&ws, "handles.wasm");
    assert!(
        reason.contains("its function `take` (tool take) has an owned resource handle")
            && reason.contains("parameter \"handle\"")
            && reason.contains("skip = true"),
        "{reason}"
    );
    let borrowing = probe().raw_plugin("borrow", &wat::parse_str(BORROW_COMPONENT).unwrap());
    let reason = rejection(&borrowing, "borrow.wasm");
    assert!(
        reason.contains("its function `peek` (tool peek)")
            && reason.contains("handle")
            && reason.contains("parameter \"handle\""),
        "{reason}"
    );
    let skipped = ws.config("[plugins.handles.tools.take]\nskip = true\n");
    let listed = skipped.cordon(&["list", "--json"]).json();
    let plugin = listed["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|plugin| plugin["id"] == "handles")
        .cloned();
    assert_eq!(
        plugin.map(|plugin| plugin["tools"].clone()),
        Some(serde_json::json!(["count"])),
        "with the function skipped the rest loads: {listed}"
    );
}

#[test]
fn a_failing_describe_an_invalid_schema_and_an_invalid_name_are_refused() {
    let ws = probe()
        .plugin("fixture_broken_describe", "broken")
        .plugin("fixture_bad_schema", "badschema")
        .plugin("fixture_bad_name", "badname");
    let broken = rejection(&ws, "broken.wasm");
    assert!(
        broken.contains("describe() failed") && broken.contains("describe is broken on purpose"),
        "{broken}"
    );
    let schema = rejection(&ws, "badschema.wasm");
    assert!(
        schema.contains("tool \"bad_schema\"") && schema.contains("not a valid JSON Schema"),
        "{schema}"
    );
    let name = rejection(&ws, "badname.wasm");
    assert!(
        name.contains("tool \"read file!\"") && name.contains("^[a-zA-Z0-9_-]{1,64}$"),
        "{name}"
    );
    assert_eq!(text(&ws.call("echo", r#"{"text": "ok"}"#)), "ok");
    let two = probe().raw_plugin("two", &wat::parse_str(TWO_FOREIGN_IMPORTS).unwrap());
    let reason = rejection(&two, "two.wasm");
    assert!(
        reason.contains("test:first/gadget") && reason.contains("test:second/widget"),
        "every missing import is named: {reason}"
    );
}

#[test]
fn two_plugins_with_the_same_tool_name_are_reported() {
    // Neither is configured: file order decides nothing, so neither provides `echo` until
    // cordon.toml says which one does.
    let ws = probe().plugin("fixture_twin", "twin");
    for file in ["probe.wasm", "twin.wasm"] {
        let reason = rejection(&ws, file);
        assert!(
            reason.contains("its tool \"echo\" is also declared by `probe`, `twin`")
                && reason.contains("none of them is configured")
                && reason.contains("[tool_providers] echo ="),
            "{reason}"
        );
    }
    assert_eq!(kind(&ws.call("echo", r#"{"text": "x"}"#)), "not_found");
    let both = || probe().plugin("fixture_twin", "twin");
    let chosen = both().config("[tool_providers]\necho = \"twin\"\n");
    assert!(
        rejection(&chosen, "probe.wasm")
            .contains("`twin` provides it: [tool_providers] echo = \"twin\"")
    );
    assert_eq!(
        text(&chosen.call("echo", r#"{"text": "from twin"}"#)),
        "from twin"
    );
    let wrong = both().config("[tool_providers]\necho = \"nobody\"\n");
    assert!(rejection(&wrong, "twin.wasm").contains("names `nobody`, which does not declare it"));
}

#[test]
fn a_grantless_plugin_sorting_first_cannot_take_a_configured_plugins_tool() {
    // `aaa.wasm` sorts before `fs.wasm` and declares `read_file`: the operator configured `fs`,
    // so `fs` keeps all its tools and the newcomer is refused, loudly, and shown by `cordon list`.
    let ws = Workspace::new()
        .plugin("fs", "fs")
        .plugin("fixture_tool_thief", "aaa")
        .file("data/note.txt", "the real note\n")
        .config("[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\" }]\n");
    let read = ws.call("read_file", r#"{"path": "/data/note.txt"}"#);
    assert!(text(&read).contains("the real note"), "{read}");
    let reason = rejection(&ws, "aaa.wasm");
    assert!(
        reason.contains("its tool \"read_file\" is also declared by `aaa`, `fs`")
            && reason.contains("`fs` provides it")
            && reason.contains("the only one configured"),
        "{reason}"
    );
    let listed = ws.cordon(&["list"]);
    assert!(
        listed.stdout.contains("Tool name collisions (1):")
            && listed
                .stdout
                .contains("read_file is declared by aaa, fs: fs provides it"),
        "{}",
        listed.stdout
    );
    assert!(
        listed.stderr.contains("ERROR")
            && listed.stderr.contains("tool name collision: `read_file`"),
        "the load says so loudly: {}",
        listed.stderr
    );
    let json: serde_json::Value =
        serde_json::from_str(&ws.cordon(&["list", "--json"]).stdout).unwrap();
    assert_eq!(json["collisions"][0]["tool"], "read_file");
    assert_eq!(json["collisions"][0]["provider"], "fs");
    assert_eq!(
        json["collisions"][0]["declared_by"],
        serde_json::json!(["aaa", "fs"])
    );
    let tools: Vec<&str> = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        tools.contains(&"write_file") && tools.contains(&"read_file"),
        "{tools:?}"
    );
}

#[test]
fn a_sha256_pin_must_match_the_file() {
    let ws = probe();
    let actual = hex::encode(Sha256::digest(
        std::fs::read(ws.plugin_path("probe")).unwrap(),
    ));
    let wrong = "ab".repeat(32);
    let pinned_wrong = ws.config(&format!("[plugins.probe]\nsha256 = \"{wrong}\"\n"));
    let reason = rejection(&pinned_wrong, "probe.wasm");
    assert!(
        reason.contains(&format!(
            "its sha256 is {actual} but cordon.toml pins {wrong}"
        )),
        "{reason}"
    );
    assert_eq!(
        crate::support::kind(&pinned_wrong.call("echo", r#"{"text": "x"}"#)),
        "not_found"
    );

    let pinned_right = pinned_wrong.config(&format!("[plugins.probe]\nsha256 = \"{actual}\"\n"));
    assert_eq!(
        text(&pinned_right.call("echo", r#"{"text": "trusted"}"#)),
        "trusted"
    );
}

#[test]
fn a_component_importing_an_interface_the_host_does_not_offer_is_refused() {
    let ws = probe().plugin("fixture_foreign_import", "foreign");
    let reason = rejection(&ws, "foreign.wasm");
    assert!(
        reason.contains("it imports what this host does not provide: test:foreign/gadget."),
        "the reason names every missing import: {reason}"
    );
    assert_eq!(text(&ws.call("echo", r#"{"text": "ok"}"#)), "ok");
}

#[test]
fn a_component_declaring_a_huge_initial_memory_is_refused_at_load() {
    let ws = probe()
        .plugin("fixture_huge_memory", "heavy")
        .config("[plugins.heavy]\nlimits = { memory = \"64MiB\" }\n");
    let reason = rejection(&ws, "heavy.wasm");
    assert!(
        reason.contains("describe() failed") && reason.contains("out of memory"),
        "{reason}"
    );
    assert_eq!(text(&ws.call("echo", r#"{"text": "ok"}"#)), "ok");
}

#[test]
fn a_plugins_tool_named_like_a_group_refuses_the_start() {
    // The probe (unconfigured, no grants) declares a tool `spin`; the operator's group `spin`
    // names `echo` and `sleep`. A name must mean one thing (the active set, a hook's narrowing, a
    // route), so the start is refused, naming the group and the plugin.
    let ws = probe()
        .config("[agent]\ntools = [\"spin\"]\n[agent.groups]\nspin = [\"echo\", \"sleep\"]\n");
    let out = ws.cordon(&["call", "echo", r#"{"text": "x"}"#]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("a group named \"spin\"") && out.stderr.contains("plugin `probe`"),
        "{}",
        out.stderr
    );
}
