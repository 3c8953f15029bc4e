//! JavaScript plugin projects: `sdk/js/build.mjs` bundles the project's `app.js` with the SDK
//! (rolldown) and makes it a component (componentize-js), both pinned in `sdk/js/package-lock.json`.

use super::output_cache::BuildKey;
use super::{require, run, tool_identity};
use crate::project::{ScaffoldError, source_root};
use std::path::Path;
use std::process::Command;

/// Whether `project` is a JavaScript project: it has an `app.js` or a `package.json`.
pub fn is_project(project: &Path) -> bool {
    project.join("app.js").is_file() || project.join("package.json").is_file()
}

/// Builds the JavaScript project in `project` (an absolute path) into the component `output`.
pub fn build(project: &Path, output: &Path) -> Result<(), ScaffoldError> {
    require(
        "node",
        "install Node.js 20 or later with npm (Debian: apt-get install nodejs npm)",
    )?;
    let sdk = source_root()?.join("sdk/js");
    if !sdk
        .join("node_modules/@bytecodealliance/componentize-js/package.json")
        .is_file()
    {
        return Err(ScaffoldError::MissingTool {
            tool: "componentize-js".into(),
            install: format!("install it with: npm ci --prefix {}", sdk.display()),
        });
    }
    run(Command::new("node")
        .arg(sdk.join("build.mjs"))
        .arg(project)
        .arg(output))
}

/// The digest of what a JavaScript build reads: Node (its path and version), the SDK (its build
/// script, sources and the lock pinning rolldown and componentize-js), the contract and the
/// project, its `node_modules` included (the bundle takes what the project imports from there).
pub fn key(project: &Path) -> Result<Option<String>, ScaffoldError> {
    let root = source_root()?;
    let mut key = BuildKey::new("javascript");
    key.value("node", &tool_identity(Path::new("node"), &["--version"]));
    key.tree("sdk", &root.join("sdk/js"), &["node_modules"]);
    key.tree("contract", &root.join(crate::project::CONTRACT_DIR), &[]);
    key.tree("project", project, &[]);
    Ok(key.finish())
}
