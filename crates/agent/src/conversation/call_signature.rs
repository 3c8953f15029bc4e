//! A tool call's identity, for noticing repeats: its tool and its arguments as canonical JSON
//! (key order aside). The stream gate and the session's repetition stop compare calls by it.

use serde_json::Value;

/// A call's identity: its tool and its arguments as canonical JSON (key order aside).
pub fn signature_of(name: &str, arguments: &str) -> String {
    let arguments = match serde_json::from_str::<Value>(arguments) {
        Ok(value) => canonical(&value),
        Err(_) => arguments.trim().to_string(),
    };
    format!("{name}\u{0}{arguments}")
}

/// JSON text with object keys sorted at every level.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|key| format!("{}:{}", Value::String(key.clone()), canonical(&map[key])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}
