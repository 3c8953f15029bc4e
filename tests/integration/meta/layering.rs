//! The crates' architecture, checked on their source: each module at the top of
//! `crates/runtime/src/` (every one is a layer) uses only the layers below it (report at the bottom,
//! builder at the top), as does each folder of `crates/agent/src/` (settings at the bottom, session
//! at the top), and no source file of the host's crates (every crate under `crates/`) takes part in
//! an import cycle with others of its crate (paths after `crate::` and
//! `super::` are read; a `mod.rs` that re-exports its children through a bare `use child::X` is
//! not, since a child naming its parent's items is how a folder is meant to be read).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The runtime's modules from the bottom up; `lib.rs` stands above them all. What each is for:
/// docs/architecture.md.
const RUNTIME_LAYERS: [&str; 12] = [
    "report",
    "trace_spans",
    "schema",
    "skills",
    "capabilities",
    "config",
    "sandbox",
    "registry",
    "pipeline",
    "tool_search",
    "conformance",
    "builder",
];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`, as paths relative to it.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    files.sort();
    files
}

/// The code of a file without comments and without its unit tests.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module of `file` (relative to its crate's `src/`): `a/b.rs` and `a/b/mod.rs` are `a::b`.
fn module_of(file: &Path) -> Vec<String> {
    let mut module: Vec<String> = file
        .with_extension("")
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        module.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        module.pop();
    }
    module
}

/// The module paths `file` names from the crate's root: after `crate::` and after `super::`
/// (resolved against the file's own module), including `{a, b::c}` groups.
fn crate_paths(file: &Path, code: &str) -> Vec<Vec<String>> {
    let mut paths = module_paths(code, "crate::", &[]);
    let parent = module_of(file)
        .split_last()
        .map(|(_, parent)| parent.to_vec())
        .unwrap_or_default();
    paths.extend(module_paths(code, "super::", &parent));
    paths
}

fn module_paths(code: &str, anchor: &str, base: &[String]) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for (start, _) in code.match_indices(anchor) {
        if code[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        {
            continue; // e.g. `cordon_runtime::`, or `super::super::`
        }
        let rest = &code[start + anchor.len()..];
        let mut found = Vec::new();
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                found.push(segments(item.trim()));
            }
        } else {
            found.push(segments(rest));
        }
        for path in found.into_iter().filter(|path| !path.is_empty()) {
            paths.push(base.iter().cloned().chain(path).collect());
        }
    }
    paths
}

fn segments(text: &str) -> Vec<String> {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    text[..end]
        .split("::")
        .take_while(|segment| segment.chars().next().is_some_and(|c| c.is_lowercase()))
        .map(str::to_string)
        .collect()
}

/// The source file a module path lands in: the longest prefix that is a file of the crate.
fn file_of(src: &Path, path: &[String]) -> Option<PathBuf> {
    (1..=path.len()).rev().find_map(|len| {
        let joined: PathBuf = path[..len].iter().collect();
        [joined.with_extension("rs"), joined.join("mod.rs")]
            .into_iter()
            .find(|candidate| src.join(candidate).is_file())
    })
}

/// The agent crate's folders from the bottom up: its part of cordon.toml, the conversation
/// (messages, transcripts) under
/// the model client, the context window over both, tool search, and the session over them all.
const AGENT_LAYERS: [&str; 6] = [
    "settings",
    "conversation",
    "model",
    "context",
    "tool_search",
    "session",
];

/// Every import in the crate at `src` from a folder of `layers` to one above it.
fn upward_imports(src: &Path, layers: &[&str]) -> Vec<String> {
    let layer = |file: &Path| {
        let top = file
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        layers.iter().position(|name| *name == top)
    };
    let mut upward = Vec::new();
    for file in sources(src) {
        let Some(own) = layer(&file) else { continue };
        for path in crate_paths(&file, &code(&src.join(&file))) {
            if let Some(used) = layers.iter().position(|name| *name == path[0])
                && used > own
            {
                upward.push(format!(
                    "{} uses crate::{}",
                    file.display(),
                    path.join("::")
                ));
            }
        }
    }
    upward
}

/// The modules at the top of the crate at `src` (folders and files besides `lib.rs`).
fn top_modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir() || path.extension().is_some_and(|ext| ext == "rs"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|name| name != "lib" && name != "main")
        .collect()
}

#[test]
fn every_top_module_of_the_runtime_and_the_agent_is_a_layer() {
    for (krate, layers) in [
        ("runtime", &RUNTIME_LAYERS[..]),
        ("agent", &AGENT_LAYERS[..]),
    ] {
        let unlayered: Vec<String> =
            top_modules(&repository().join("crates").join(krate).join("src"))
                .into_iter()
                .filter(|module| !layers.contains(&module.as_str()))
                .collect();
        assert!(
            unlayered.is_empty(),
            "crates/{krate}/src has modules in no layer: {unlayered:?}; add each to its crate's layers in tests/integration/meta/layering.rs, where it belongs"
        );
    }
}

#[test]
fn runtime_folders_use_only_the_folders_below_them() {
    let upward = upward_imports(&repository().join("crates/runtime/src"), &RUNTIME_LAYERS);
    assert!(
        upward.is_empty(),
        "imports up the layers:\n{}",
        upward.join("\n")
    );
}

#[test]
fn agent_folders_use_only_the_folders_below_them() {
    let upward = upward_imports(&repository().join("crates/agent/src"), &AGENT_LAYERS);
    assert!(
        upward.is_empty(),
        "imports up the agent's layers:\n{}",
        upward.join("\n")
    );
}

/// What a hook or a summary writes reaches the model only through the gate
/// (`conversation/user_text.rs`): a user message's text is a `UserText`, and the two raw ways to
/// make one are taken only where the user's own prompt is (the prompt stage) and where cordon
/// renders older turns for a summary request.
#[test]
fn hook_and_summary_text_reaches_the_model_only_through_the_gate() {
    let src = repository().join("crates/agent/src");
    let allowed = [
        ("Prompt::Typed(", "session/session_hooks.rs"),
        ("UserText::typed(", "session/session_hooks.rs"),
        ("UserText::history_to_summarise(", "context/summary.rs"),
    ];
    let mut stray = Vec::new();
    for file in sources(&src) {
        if file == Path::new("conversation/user_text.rs") {
            continue;
        }
        let code = code(&src.join(&file));
        for (raw, _) in allowed {
            let here = file.to_string_lossy().replace('\\', "/");
            if code.contains(raw) && !allowed.contains(&(raw, here.as_str())) {
                stray.push(format!("{here} calls {raw}"));
            }
        }
    }
    assert!(
        stray.is_empty(),
        "raw text into a user message outside the gate: {stray:?}; build it with UserText::gated or UserText::prompt_with_context"
    );
}

#[test]
fn no_crate_has_an_import_cycle_between_its_files() {
    let crates: BTreeSet<String> = std::fs::read_dir(repository().join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("src").is_dir())
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(crates.len() >= 7, "the host's crates: {crates:?}");
    for krate in &crates {
        let src = repository().join("crates").join(krate).join("src");
        let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
        for file in sources(&src) {
            let targets = crate_paths(&file, &code(&src.join(&file)))
                .into_iter()
                .filter_map(|path| file_of(&src, &path))
                .filter(|target| *target != file && !is_entry(target))
                .collect();
            edges.insert(file, targets);
        }
        if let Some(cycle) = find_cycle(&edges) {
            panic!(
                "crates/{krate}/src has an import cycle: {}",
                cycle
                    .iter()
                    .map(|file| file.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" -> ")
            );
        }
    }
}

/// A crate's `lib.rs` or `main.rs`: it declares and re-exports everything, so a path that names an
/// item through it (`crate::Event`) is not an import of the entry point.
fn is_entry(file: &Path) -> bool {
    file == Path::new("lib.rs") || file == Path::new("main.rs")
}

fn find_cycle(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        file: &PathBuf,
        edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        marks: &mut BTreeMap<PathBuf, Mark>,
        trail: &mut Vec<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        match marks.get(file) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = trail.iter().position(|f| f == file).unwrap();
                let mut cycle = trail[start..].to_vec();
                cycle.push(file.clone());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(file.clone(), Mark::Open);
        trail.push(file.clone());
        for next in edges.get(file).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, marks, trail) {
                return Some(cycle);
            }
        }
        trail.pop();
        marks.insert(file.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    edges
        .keys()
        .find_map(|file| visit(file, edges, &mut marks, &mut Vec::new()))
}

/// Packages an embedder of the runtime must not pay for: an exporter, a model client, a log
/// subscriber. (hyper is there, and must be: a plugin's granted outgoing HTTP is wasi:http, which
/// wasmtime serves with hyper's client.)
const NOT_IN_THE_RUNTIME: [&str; 7] = [
    "opentelemetry",
    "tracing-opentelemetry",
    "reqwest",
    "hyper-util",
    "tracing-subscriber",
    "prost",
    "cordon-telemetry",
];

#[test]
fn the_runtime_depends_on_no_exporter_model_client_or_subscriber() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["tree", "--offline", "-p", "cordon-runtime", "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}"])
        .current_dir(repository())
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).unwrap();
    let packages: BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(
        packages.contains("wasmtime"),
        "the listing is the runtime's: {packages:?}"
    );
    let unwanted: Vec<&&str> = packages
        .iter()
        .filter(|name| {
            NOT_IN_THE_RUNTIME
                .iter()
                .any(|banned| name.starts_with(banned))
        })
        .collect();
    assert!(
        unwanted.is_empty(),
        "cordon-runtime depends on {unwanted:?}; move that code to the crate that needs it"
    );
}
