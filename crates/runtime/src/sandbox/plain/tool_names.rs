//! The tool names of a plain component's functions: the WIT name in snake case (`list-directory`
//! becomes `list_directory`), qualified by its interface only where two functions would share a
//! name, valid for MCP, OpenAI and Anthropic (`[a-zA-Z0-9_-]`, at most 64 characters) and the same
//! on every load, since they depend only on the component's exports.

use sha2::{Digest, Sha256};

/// Where an exported function sits: the exported interface (`local:geometry/shapes@0.1.0`, or a
/// plain name for an unnamed instance) or the component itself, and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionPath {
    pub interface: Option<String>,
    pub function: String,
}

impl FunctionPath {
    /// How docs and messages name it: `local:geometry/shapes#measure`, or `measure`.
    pub fn display(&self) -> String {
        match &self.interface {
            Some(interface) => format!("{interface}#{}", self.function),
            None => self.function.clone(),
        }
    }
}

/// The longest tool name model APIs accept.
const MAX_NAME: usize = 64;

/// One tool name per function, in the same order, all distinct.
pub fn tool_names(functions: &[FunctionPath]) -> Vec<String> {
    let levels: Vec<[String; 3]> = functions.iter().map(candidates).collect();
    let mut chosen: Vec<String> = levels.iter().map(|names| names[0].clone()).collect();
    // Qualify, one level at a time, every name more than one function would take.
    for level in [1, 2] {
        let clashing: Vec<bool> = chosen
            .iter()
            .map(|name| chosen.iter().filter(|other| *other == name).count() > 1)
            .collect();
        for (index, clashes) in clashing.into_iter().enumerate() {
            if clashes {
                chosen[index] = levels[index][level].clone();
            }
        }
    }
    // Names that still clash (a world's `shapes-area` beside interface `shapes`'s `area`) are
    // numbered in export order.
    let mut fitted: Vec<String> = chosen.iter().map(|name| fit(name)).collect();
    for index in 0..fitted.len() {
        let mut suffix = 2;
        while fitted[..index].contains(&fitted[index]) {
            fitted[index] = fit(&format!("{}_{suffix}", chosen[index]));
            suffix += 1;
        }
    }
    fitted
}

/// The name of a function alone, with its interface's name, and with its whole interface path.
fn candidates(path: &FunctionPath) -> [String; 3] {
    let function = snake(&path.function);
    let Some(interface) = &path.interface else {
        return [function.clone(), function.clone(), function];
    };
    let without_version = interface.split('@').next().unwrap_or(interface);
    let short = without_version
        .rsplit(['/', ':'])
        .next()
        .unwrap_or(without_version);
    [
        function.clone(),
        format!("{}_{function}", snake(short)),
        format!("{}_{function}", snake(without_version)),
    ]
}

/// A WIT name (kebab case, maybe a whole interface path) in the characters tool names take.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let trimmed = out.trim_matches('_');
    if trimmed.is_empty() {
        "function".to_string()
    } else {
        trimmed.to_string()
    }
}

/// A name cut to [`MAX_NAME`] characters, ending in a hash of the whole name when it had to be cut
/// (so two long names that share their start stay distinct).
fn fit(name: &str) -> String {
    if name.len() <= MAX_NAME {
        return name.to_string();
    }
    let hash = hex::encode(&Sha256::digest(name.as_bytes())[..4]);
    format!("{}_{hash}", &name[..MAX_NAME - hash.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::tool_glob::is_valid_tool_name;

    fn path(interface: Option<&str>, function: &str) -> FunctionPath {
        FunctionPath {
            interface: interface.map(Into::into),
            function: function.into(),
        }
    }

    #[test]
    fn names_are_snake_case_and_qualified_only_where_they_clash() {
        let functions = [
            path(None, "list-directory"),
            path(Some("local:geometry/shapes@0.1.0"), "area"),
            path(Some("local:geometry/solids@0.1.0"), "area"),
            path(Some("local:geometry/solids@0.1.0"), "volume"),
            path(Some("a:x/same"), "go"),
            path(Some("b:y/same"), "go"),
        ];
        assert_eq!(
            tool_names(&functions),
            [
                "list_directory",
                "shapes_area",
                "solids_area",
                "volume",
                "a_x_same_go",
                "b_y_same_go",
            ]
        );
        let nested = [
            path(None, "x-y"),
            path(Some("x"), "y"),
            path(Some("z"), "y"),
        ];
        assert_eq!(tool_names(&nested), ["x_y", "x_y_2", "z_y"]);
    }

    #[test]
    fn long_names_are_cut_with_a_hash_and_stay_valid() {
        let long = "very-long-function-name-".repeat(5);
        let names = tool_names(&[
            path(None, &format!("{long}a")),
            path(None, &format!("{long}b")),
        ]);
        assert_ne!(names[0], names[1]);
        for name in &names {
            assert!(is_valid_tool_name(name), "{name}");
        }
    }
}
