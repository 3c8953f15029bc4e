//! Files in `plugins/` (or given to `cordon add`) that would make loading hang or take the host's
//! memory: a sparse file of gigabytes with a component header, a larger one without, a FIFO, and a
//! 28 KB-class component whose WIT types are a DAG that expands to millions of parts. Each is
//! refused in seconds with a reason that says what was wrong, the host's memory stays low, and the
//! other plugins load.

use crate::support::stdio_server::Server;
use crate::support::{Workspace, probe};
use std::time::{Duration, Instant};

/// A file of `size` bytes that takes almost no disk: `head` written at its start, the rest a hole.
fn sparse_file(path: &std::path::Path, head: &[u8], size: u64) {
    use std::io::Write as _;
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(head).unwrap();
    file.set_len(size).unwrap();
}

/// A component header (`\0asm`, component layer) and nothing else valid.
const COMPONENT_HEADER: &[u8] = &[0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

fn rejection_line<'a>(listed: &'a str, file: &str) -> &'a str {
    listed
        .lines()
        .find(|line| line.contains(file))
        .unwrap_or_else(|| panic!("{file} is not listed as rejected:\n{listed}"))
}

#[test]
fn sparse_giant_files_are_refused_by_their_size_before_a_byte_is_read() {
    let ws = probe();
    sparse_file(
        &ws.path().join("plugins/giant.wasm"),
        COMPONENT_HEADER,
        5 << 30,
    );
    sparse_file(&ws.path().join("plugins/vast.wasm"), b"not wasm", 100 << 30);
    let started = Instant::now();
    let listed = ws.cordon(&["list"]);
    let took = started.elapsed();
    let all = format!("{}{}", listed.stdout, listed.stderr);
    assert!(took < Duration::from_secs(30), "cordon list took {took:?}");
    for file in ["giant.wasm", "vast.wasm"] {
        let line = rejection_line(&all, file);
        assert!(
            line.contains("over the 268435456 bytes a plugin file may be"),
            "{line}"
        );
    }
    assert!(listed.stdout.contains("echo"), "{all}");

    // And served: the host's memory stays low while it refuses them.
    let server = Server::start(&ws);
    let peak = server.peak_rss();
    assert!(peak < 1 << 30, "cordon serve peaked at {} MiB", peak >> 20);
}

#[test]
fn a_fifo_is_refused_at_once_by_cordon_add_and_skipped_in_plugins() {
    let ws = probe();
    let fifo = ws.path().join("fifo.wasm");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let started = Instant::now();
    let added = ws.cordon(&["add", fifo.to_str().unwrap(), "--yes"]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "cordon add of a FIFO took {:?}",
        started.elapsed()
    );
    assert_ne!(added.code, 0);
    assert!(
        added.stderr.contains("not a regular file"),
        "{}",
        added.stderr
    );
}

/// A plain component exporting `take(x: t12)`, where `t1` is a tuple of two 1,000-case enums and
/// each `tN` a tuple of two `tN-1`: a few kilobytes of types that expand to 4,096 enums of 1,000
/// cases each (and far more as a JSON Schema).
fn type_dag_component(depth: usize) -> Vec<u8> {
    let cases: Vec<String> = (0..1_000).map(|n| format!("\"case{n}\"")).collect();
    // A named type in an exported function's signature must be exported itself.
    let mut types = format!(
        "(type $case (enum {}))\n(export $t0 \"case\" (type $case))\n",
        cases.join(" ")
    );
    for level in 1..=depth {
        types.push_str(&format!(
            "(type $t{level} (tuple $t{prev} $t{prev}))\n",
            prev = level - 1
        ));
    }
    // The canonical ABI passes up to 16 flat parameters directly, more through memory.
    let flat = 1usize << depth;
    let core_params = if flat <= 16 {
        vec!["i32"; flat].join(" ")
    } else {
        "i32".to_string()
    };
    let text = format!(
        r#"(component
  {types}
  (core module $m
    (memory (export "memory") 1)
    (func (export "take") (param {core_params}))
    (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (i32.const 1024)))
  (core instance $i (instantiate $m))
  (func $take (param "x" $t{depth})
    (canon lift (core func $i "take") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (export "take" (func $take)))"#
    );
    wat::parse_str(&text).expect("the type DAG component assembles")
}

#[test]
fn a_type_dag_is_refused_part_way_with_a_reason_for_plain_components() {
    let component = type_dag_component(12);
    assert!(component.len() < 64 << 10, "{} bytes", component.len());
    let ws = probe().raw_plugin("dag", &component);
    let started = Instant::now();
    let listed = ws.cordon(&["list"]);
    let took = started.elapsed();
    let all = format!("{}{}", listed.stdout, listed.stderr);
    assert!(took < Duration::from_secs(30), "cordon list took {took:?}");
    let line = rejection_line(&all, "dag.wasm");
    assert!(line.contains("too large to describe"), "{line}");
    assert!(
        !line.contains("describe()"),
        "a plain component has no describe(): {line}"
    );
    assert!(listed.stdout.contains("echo"), "{all}");

    let server = Server::start(&ws);
    let peak = server.peak_rss();
    assert!(peak < 1 << 30, "cordon serve peaked at {} MiB", peak >> 20);
}

#[test]
fn a_small_type_dag_still_loads() {
    // Depth 2 (four enums): well within the budget, a tool like any other.
    let ws = Workspace::new().raw_plugin("dag", &type_dag_component(2));
    let listed = ws.cordon(&["list"]);
    assert!(
        listed.stdout.contains("take"),
        "{}{}",
        listed.stdout,
        listed.stderr
    );
}
