//! Building a plugin project into a component, with the project's own toolchain: cargo for Rust
//! (`Cargo.toml`), componentize-py for Python (`app.py`), componentize-js for JavaScript
//! (`app.js` or `package.json`, see `js.rs`), Zig for C (`*.c`, see `c.rs`).

mod c;
mod js;

use crate::{build_venv_program, source_root};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the project in `project` and copies the component to `plugins/NAME.wasm`.
pub fn build(project: &Path, plugins: &Path) -> anyhow::Result<PathBuf> {
    let project = &project
        .canonicalize()
        .with_context(|| format!("{} does not exist", project.display()))?;
    let name = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .context("the project directory has no name")?;
    let output = plugins.join(format!("{name}.wasm"));
    std::fs::create_dir_all(plugins).with_context(|| format!("creating {}", plugins.display()))?;
    if project.join("Cargo.toml").is_file() {
        build_rust(project, &name, &output)?;
    } else if project.join("app.py").is_file() {
        build_python(project, &output)?;
    } else if js::is_project(project) {
        js::build(project, &output)?;
    } else if c::is_project(project) {
        c::build(project, &output)?;
    } else {
        bail!(
            "{} has no Cargo.toml (Rust), app.py (Python), app.js or package.json (JavaScript), or .c files (C); create a project with `cordon new NAME --lang rust|python|js|c`",
            project.display()
        );
    }
    Ok(output)
}

fn build_rust(project: &Path, name: &str, output: &Path) -> anyhow::Result<()> {
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
        bail!(
            "the wasm32-wasip2 Rust target is missing; install it with: rustup target add wasm32-wasip2"
        );
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
    std::fs::copy(&built, output)
        .with_context(|| format!("copying {} to {}", built.display(), output.display()))?;
    Ok(())
}

fn build_python(project: &Path, output: &Path) -> anyhow::Result<()> {
    let componentize = find_componentize_py().context(
        "componentize-py is not installed; install it with: python3 -m pip install componentize-py==0.25.1",
    )?;
    let root = source_root();
    run(Command::new(componentize)
        .arg("-d")
        .arg(root.join("wit/plugin-0.1.0"))
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
pub(super) fn require(tool: &str, install: &str) -> anyhow::Result<()> {
    if !answers_version(tool) {
        bail!("{tool} is not installed; {install}");
    }
    Ok(())
}

fn answers_version(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

pub(super) fn run(command: &mut Command) -> anyhow::Result<()> {
    let shown = format!("{command:?}");
    let status = command
        .status()
        .with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!("the build failed ({status}): {shown}");
    }
    Ok(())
}
