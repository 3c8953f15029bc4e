//! What a Rust build needs to know of cargo: whether the project's cargo configuration chooses
//! its own target directory (then cordon leaves it to it), and where cargo wrote the component,
//! read from its JSON messages rather than guessed from a target directory.

use std::path::{Path, PathBuf};

/// Whether a cargo configuration that applies to `project` (a `.cargo/config.toml` or
/// `.cargo/config` in it or a directory above it, or in `CARGO_HOME`) sets `target-dir`.
pub fn names_target_dir(project: &Path) -> bool {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    let configs = project
        .ancestors()
        .map(|dir| dir.join(".cargo"))
        .chain(cargo_home);
    configs
        .flat_map(|dir| [dir.join("config.toml"), dir.join("config")])
        .filter_map(|file| std::fs::read_to_string(file).ok())
        .any(|text| {
            text.lines()
                .any(|line| line.trim_start().starts_with("target-dir"))
        })
}

/// The `.wasm` file cargo's JSON `messages` say it wrote for the library `krate`.
pub fn component_in(messages: &str, krate: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| {
            message["target"]["name"]
                .as_str()
                .map(|name| name.replace('-', "_"))
                == Some(krate.to_string())
        })
        .flat_map(|message| message["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|name| name.as_str().map(PathBuf::from))
        .rfind(|path| path.extension().is_some_and(|ext| ext == "wasm"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_component_is_found_in_cargos_messages() {
        let messages = concat!(
            "{\"reason\":\"compiler-artifact\",\"target\":{\"name\":\"serde\"},\"filenames\":[\"/t/libserde.rlib\"]}\n",
            "not json\n",
            "{\"reason\":\"compiler-artifact\",\"target\":{\"name\":\"word-count\"},\"filenames\":[\"/t/wasm32-wasip2/release/word_count.wasm\"]}\n",
            "{\"reason\":\"build-finished\",\"success\":true}\n",
        );
        assert_eq!(
            component_in(messages, "word_count"),
            Some(PathBuf::from("/t/wasm32-wasip2/release/word_count.wasm"))
        );
        assert_eq!(component_in(messages, "other"), None);
    }

    #[test]
    fn a_project_config_naming_a_target_dir_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(project.join(".cargo")).unwrap();
        std::fs::write(
            project.join(".cargo/config.toml"),
            "[build]\ntarget-dir = \"/x\"\n",
        )
        .unwrap();
        assert!(names_target_dir(&project));
    }
}
