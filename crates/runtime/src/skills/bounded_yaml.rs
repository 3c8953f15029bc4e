//! YAML front matter read into JSON with a bound on what it expands to. A YAML alias repeats the
//! node its anchor names, so a few hundred bytes can stand for gigabytes: the YAML parser replays
//! an alias node by node, and this reader counts every node and every byte of text as it builds the
//! value, stopping at the bound instead of after the allocation.

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::Cell;

/// The most values (scalars, lists and mappings) front matter may expand to.
pub const MAX_NODES: usize = 10_000;
/// The most bytes of text (keys and strings) front matter may expand to.
pub const MAX_TEXT_BYTES: usize = 256 << 10;

/// Reads `text` (one YAML document) into JSON, within the bounds.
pub fn read(text: &str) -> Result<Value, String> {
    let budget = Budget::default();
    let deserializer = serde_yaml::Deserializer::from_str(text);
    Node(&budget)
        .deserialize(deserializer)
        .map_err(|err| format!("its front matter is not YAML cordon reads: {err}"))
}

#[derive(Default)]
struct Budget {
    nodes: Cell<usize>,
    bytes: Cell<usize>,
}

impl Budget {
    fn spend<E: serde::de::Error>(&self, text_bytes: usize) -> Result<(), E> {
        self.nodes.set(self.nodes.get() + 1);
        self.bytes.set(self.bytes.get().saturating_add(text_bytes));
        if self.nodes.get() > MAX_NODES || self.bytes.get() > MAX_TEXT_BYTES {
            return Err(E::custom(format!(
                "it expands to more than {MAX_NODES} values or {MAX_TEXT_BYTES} bytes of text (YAML anchors repeat what they name); write it out plainly"
            )));
        }
        Ok(())
    }
}

struct Node<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("YAML that JSON can hold")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Value, E> {
        self.0.spend(0)?;
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Value, E> {
        self.0.spend(0)?;
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Value, E> {
        self.0.spend(0)?;
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<Value, E> {
        self.0.spend(0)?;
        Number::from_f64(value)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold (.nan or .inf)"))
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Value, E> {
        self.0.spend(value.len())?;
        Ok(Value::String(value.to_string()))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.0.spend(0)?;
        Ok(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.0.spend(0)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Node(self.0))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.0.spend(0)?;
        let mut fields = Map::new();
        while let Some(key) = map.next_key_seed(Node(self.0))? {
            let Value::String(key) = key else {
                return Err(A::Error::custom(format!(
                    "a key that is not text ({key}); JSON keys are text"
                )));
            };
            let value = map.next_value_seed(Node(self.0))?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_yaml_reads_as_json() {
        let value =
            read("name: a\nn: 3\nf: 1.5\nok: true\nnone: ~\nlist: [x, \"1.0\"]\nmap:\n  k: v\n")
                .unwrap();
        assert_eq!(
            value,
            serde_json::json!({"name": "a", "n": 3, "f": 1.5, "ok": true, "none": null,
                "list": ["x", "1.0"], "map": {"k": "v"}})
        );
    }

    #[test]
    fn an_alias_bomb_stops_at_the_bound_not_after_the_allocation() {
        let strings: Vec<String> = (0..200)
            .map(|i| format!("\"{}{i}\"", "x".repeat(100)))
            .collect();
        let mut bomb = format!("big: &b [{}]\nrefs: [", strings.join(", "));
        bomb.push_str(&vec!["*b"; 30_000].join(", "));
        bomb.push_str("]\n");
        let err = read(&bomb).unwrap_err();
        assert!(err.contains("anchors repeat"), "{err}");
        let laughs = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
        assert!(read(laughs).is_err());
        assert!(read("? [a]\n: b\n").unwrap_err().contains("not text"));
    }
}
