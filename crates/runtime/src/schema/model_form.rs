//! A parameters schema as a model is sent it: without its `examples`, which are for `cordon test`
//! and the docs (the agent loop, `cordon test`'s prompt-size check).

use serde_json::Value;

/// `schema` as a model is sent it: without the `examples` (of the schema, its properties and its
/// items), which are for `cordon test` and the docs; a small model copies an example's values
/// into a real call.
pub fn without_examples(schema: &Value) -> Value {
    let mut schema = schema.clone();
    strip_examples(&mut schema);
    schema
}

fn strip_examples(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    object.remove("examples");
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for property in properties.values_mut() {
            strip_examples(property);
        }
    }
    if let Some(items) = object.get_mut("items") {
        strip_examples(items);
    }
}
