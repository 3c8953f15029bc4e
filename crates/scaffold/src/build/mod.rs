//! Building a plugin project into a component, with the project's own toolchain: cargo for Rust
//! (`Cargo.toml`), componentize-py for Python (`app.py`), componentize-js for JavaScript
//! (`app.js` or `package.json`, see `js.rs`), Zig for C (`*.c`, see `c.rs`). Where the component
//! goes, and what it may replace there, is `output.rs`.

mod c;
mod js;
mod output;

pub use output::BuildRecords;

use crate::project::{ScaffoldError, build_venv_program, source_root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `cordon build` was asked to do besides the project.
pub struct BuildOptions<'a> {
    /// The plugins directory the component goes into.
    pub plugins: &'a Path,
    /// The plugin's name [default: the project directory's name].
    pub name: Option<&'a str>,
    /// Replace a `NAME.wasm` this project did not build.
    pub force: bool,
    /// Where builds record what they wrote (to tell a rebuild from a replacement).
    pub records: BuildRecords,
}

/// Builds the project in `project` into `plugins/NAME.wasm`: the name checked, an existing file
/// there replaced only when it is this project's own last build (or `force`), the component
/// renamed into place once whole.
pub fn build(project: &Path, options: &BuildOptions<'_>) -> Result<PathBuf, ScaffoldError> {
    let no_project = || ScaffoldError::NoProject {
        path: project.to_path_buf(),
    };
    let project = &project.canonicalize().map_err(|_| no_project())?;
    let crate_name = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(no_project)?;
    let language_known = project.join("Cargo.toml").is_file()
        || project.join("app.py").is_file()
        || js::is_project(project)
        || c::is_project(project);
    if !language_known {
        return Err(ScaffoldError::UnknownLanguage {
            path: project.clone(),
        });
    }
    let output = output::Output::prepare(
        project,
        options.plugins,
        options.name,
        options.force,
        &options.records,
    )?;
    let scratch = output.scratch_file();
    if project.join("Cargo.toml").is_file() {
        build_rust(project, &crate_name, &scratch)?;
    } else if project.join("app.py").is_file() {
        build_python(project, &scratch)?;
    } else if js::is_project(project) {
        js::build(project, &scratch)?;
    } else {
        c::build(project, &scratch)?;
    }
    output.finish(options.force, &options.records)
}

/// Builds the Rust project (the crate named after its directory) into the component `output`.
fn build_rust(project: &Path, name: &str, output: &Path) -> Result<(), ScaffoldError> {
    require("cargo", "install Rust with rustup: https://rustup.rs")?;
    let targets = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    let has_target = targets
        .map(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|t| t == "wasm32-wasip2")
        })
        .unwrap_or(false);
    if !has_target {
        return Err(ScaffoldError::MissingTool {
            tool: "the wasm32-wasip2 Rust target".into(),
            install: "install it with: rustup target add wasm32-wasip2".into(),
        });
    }
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| project.join("target"));
    run(Command::new("cargo")
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--manifest-path",
        ])
        .arg(project.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target_dir))?;
    let built = target_dir
        .join("wasm32-wasip2/release")
        .join(format!("{}.wasm", name.replace('-', "_")));
    std::fs::copy(&built, output).map_err(ScaffoldError::io("copy", &built))?;
    Ok(())
}

fn build_python(project: &Path, output: &Path) -> Result<(), ScaffoldError> {
    let componentize = find_componentize_py().ok_or_else(|| ScaffoldError::MissingTool {
        tool: "componentize-py".into(),
        install: "install it with: python3 -m pip install componentize-py==0.25.1".into(),
    })?;
    let root = source_root()?;
    run(Command::new(componentize)
        .arg("-d")
        .arg(root.join(crate::project::CONTRACT_DIR))
        .args(["-w", "cordon-plugin", "componentize", "app", "-p"])
        .arg(project)
        .arg("-p")
        .arg(root.join("sdk/python"))
        .arg("-o")
        .arg(output))
}

/// componentize-py on PATH, or in the venv `make` sets up.
fn find_componentize_py() -> Option<PathBuf> {
    if answers_version("componentize-py") {
        return Some(PathBuf::from("componentize-py"));
    }
    build_venv_program("componentize-py")
}

/// Fails with `install` (how to get it) unless `tool --version` runs and succeeds.
pub(super) fn require(tool: &str, install: &str) -> Result<(), ScaffoldError> {
    if !answers_version(tool) {
        return Err(ScaffoldError::MissingTool {
            tool: tool.into(),
            install: install.into(),
        });
    }
    Ok(())
}

fn answers_version(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

pub(super) fn run(command: &mut Command) -> Result<(), ScaffoldError> {
    let shown = format!("{command:?}");
    let status = command.status().map_err(|source| ScaffoldError::Spawn {
        command: shown.clone(),
        source,
    })?;
    if !status.success() {
        return Err(ScaffoldError::BuildFailed {
            command: shown,
            status,
        });
    }
    Ok(())
}
