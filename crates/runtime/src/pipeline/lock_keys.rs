//! What a call touches, as its tool's locks name it: the values at the tool's lock pointers in the
//! arguments, made comparable. A string is read as a path the way file tools read one: a relative
//! one starts at the plugin's first granted directory, and `.`, `..` and repeated slashes are
//! resolved lexically (symlinks are not followed), so `/data/a.txt`, `a.txt`, `./a.txt`,
//! `//data/a.txt` and `/data/sub/../a.txt` are one lock; and a path under a granted directory
//! compares as the host file it names, so one directory granted under two guest paths (or to two
//! plugins) is one lock per file. Other values compare as JSON with their object keys sorted.

use crate::capabilities::grant::DirGrant;
use serde_json::Value;
use std::collections::BTreeSet;

/// One value a call locks, as the tool gave it and as it compares.
#[derive(Debug, Clone, PartialEq)]
pub struct Touched {
    /// The lock pointer (`/path`).
    pub pointer: String,
    /// The value in the arguments.
    pub value: Value,
    /// What it compares as: `path:/data/a.txt`, or `json:{...}`.
    pub key: String,
}

/// The values at `pointers` in `arguments`, for a plugin whose first granted directory is `base`.
pub fn touched(arguments: &Value, pointers: &[String], base: Option<&str>) -> Vec<Touched> {
    pointers
        .iter()
        .filter_map(|pointer| {
            let value = arguments.pointer(pointer)?;
            let key = match value {
                Value::String(path) => format!("path:{}", lexical_path(path, base)),
                other => format!("json:{}", canonical_json(other)),
            };
            Some(Touched {
                pointer: pointer.clone(),
                value: value.clone(),
                key,
            })
        })
        .collect()
}

/// `touched` with each path under one of `dirs` keyed by the host path it names (the grant with
/// the longest guest path that contains it), so every guest spelling of one host file is one key.
pub fn on_host(mut touched: Vec<Touched>, dirs: &[DirGrant]) -> Vec<Touched> {
    for item in &mut touched {
        let Some(path) = item.key.strip_prefix("path:") else {
            continue;
        };
        let grant = dirs
            .iter()
            .filter(|dir| {
                let guest = dir.guest.trim_end_matches('/');
                path == guest || path.starts_with(&format!("{guest}/")) || guest.is_empty()
            })
            .max_by_key(|dir| dir.guest.len());
        if let Some(dir) = grant {
            let rest = &path[dir.guest.trim_end_matches('/').len()..];
            item.key = format!("host:{}{rest}", dir.host.display());
        }
    }
    touched
}

/// The distinct keys of `touched`.
pub fn keys(touched: &[Touched]) -> Vec<String> {
    let distinct: BTreeSet<&str> = touched.iter().map(|t| t.key.as_str()).collect();
    distinct.into_iter().map(str::to_string).collect()
}

/// `path` made absolute from `base` (when relative and there is one) with `.`, `..` and empty
/// segments resolved; `..` at the root stays at the root.
pub fn lexical_path(path: &str, base: Option<&str>) -> String {
    let joined = match base {
        Some(base) if !path.starts_with('/') => format!("{base}/{path}"),
        _ => path.to_string(),
    };
    let absolute = joined.starts_with('/');
    let mut segments: Vec<&str> = Vec::new();
    for segment in joined.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.last().is_some_and(|last| *last != "..") {
                    segments.pop();
                } else if !absolute {
                    segments.push("..");
                }
            }
            other => segments.push(other),
        }
    }
    let body = segments.join("/");
    if absolute { format!("/{body}") } else { body }
}

/// JSON text with every object's keys sorted, so equal values compare equal.
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(object) => {
            let mut entries: Vec<(&String, &Value)> = object.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let fields: Vec<String> = entries
                .into_iter()
                .map(|(key, value)| {
                    format!("{}:{}", Value::String(key.clone()), canonical_json(value))
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spellings_of_one_path_are_one_lock() {
        let base = Some("/scratch");
        for spelling in [
            "/scratch/f.txt",
            "/scratch/./f.txt",
            "/scratch//f.txt",
            "f.txt",
            "./f.txt",
            "/scratch/sub/../f.txt",
            "//scratch/f.txt",
            "/scratch/f.txt/",
        ] {
            assert_eq!(lexical_path(spelling, base), "/scratch/f.txt", "{spelling}");
        }
        assert_eq!(lexical_path("/../../etc", None), "/etc");
        assert_eq!(lexical_path("a/../../b", None), "../b");
    }

    #[test]
    fn one_directory_granted_twice_is_one_lock_per_file() {
        use crate::capabilities::grant::Access;
        let dirs = [
            DirGrant {
                host: "/srv/scratch".into(),
                guest: "/a".into(),
                access: Access::ReadWrite,
            },
            DirGrant {
                host: "/srv/scratch".into(),
                guest: "/b".into(),
                access: Access::ReadWrite,
            },
        ];
        let key = |path: &str| {
            let touched = touched(&json!({ "path": path }), &["/path".into()], Some("/a"));
            keys(&on_host(touched, &dirs))
        };
        assert_eq!(key("/a/f.txt"), ["host:/srv/scratch/f.txt"]);
        assert_eq!(key("/b/./f.txt"), ["host:/srv/scratch/f.txt"]);
        assert_eq!(key("f.txt"), ["host:/srv/scratch/f.txt"]);
        assert_eq!(key("/elsewhere/f.txt"), ["path:/elsewhere/f.txt"]);
    }

    #[test]
    fn objects_compare_whatever_their_key_order() {
        assert_eq!(
            canonical_json(&json!({"b": 1, "a": [{"d": 2, "c": 3}]})),
            r#"{"a":[{"c":3,"d":2}],"b":1}"#
        );
        let touched = touched(
            &json!({"from": "a", "to": "./a", "n": {"y": 1, "x": 2}}),
            &["/from".into(), "/to".into(), "/n".into(), "/missing".into()],
            Some("/d"),
        );
        assert_eq!(keys(&touched), [r#"json:{"x":2,"y":1}"#, "path:/d/a"]);
    }
}
