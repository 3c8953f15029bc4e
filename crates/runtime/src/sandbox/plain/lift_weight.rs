//! How many times more host memory a plain component's result may take than wasmtime charges to
//! the call's lift budget (its hostcall fuel; see `sandbox::result_memory`), by the result's WIT
//! type, so the budget can be divided by it before the call.
//!
//! wasmtime charges a whole value (`size_of::<Val>()`) for each list element, record field and
//! tuple item, so for most types what it charges is within a small factor of what it allocates.
//! Flags are the exception: each set flag becomes a `String` of its name, charged only the name's
//! length (one byte for a flag named `a`) while it costs the host a `String` in a `Vec` and a heap
//! block, some 80 bytes. A `list<flags>` of one-letter names would lift to about 25 times its
//! budget (found by a red team), so such a result gets a budget that many times smaller.

use super::shape::Shape;

/// What one set flag costs the host at most: its `String` (24 bytes), the `Vec` slot growth may
/// leave spare (24) and the smallest heap block its name takes (32).
const HOST_BYTES_PER_FLAG: u64 = 80;

/// The factor to divide a call's lift budget by for a result of `shape` (1: none needed).
pub fn lift_divisor(shape: &Shape) -> u64 {
    match shape {
        Shape::Flags { flags, .. } => flags
            .iter()
            .map(|flag| HOST_BYTES_PER_FLAG.div_ceil(flag.name.len().max(1) as u64))
            .max()
            .unwrap_or(1),
        Shape::List(item) | Shape::FixedList(item, _) | Shape::Option(item) => lift_divisor(item),
        Shape::Map(key, value) => lift_divisor(key).max(lift_divisor(value)),
        Shape::Record { fields, .. } => fields
            .iter()
            .map(|field| lift_divisor(&field.shape))
            .max()
            .unwrap_or(1),
        Shape::Tuple(items) => items.iter().map(lift_divisor).max().unwrap_or(1),
        Shape::Variant { cases, .. } => cases
            .iter()
            .filter_map(|case| case.shape.as_ref())
            .map(lift_divisor)
            .max()
            .unwrap_or(1),
        Shape::Result { ok, err } => [ok, err]
            .into_iter()
            .flatten()
            .map(|shape| lift_divisor(shape))
            .max()
            .unwrap_or(1),
        Shape::Bool
        | Shape::Integer(_)
        | Shape::Float { .. }
        | Shape::Char
        | Shape::String
        | Shape::Bytes
        | Shape::Enum { .. } => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::plain::shape::Part;

    fn flags(names: &[&str]) -> Shape {
        Shape::Flags {
            flags: names
                .iter()
                .map(|name| Part {
                    name: name.to_string(),
                    shape: (),
                    docs: None,
                })
                .collect(),
            docs: None,
        }
    }

    #[test]
    fn short_flag_names_shrink_the_budget_wherever_they_sit() {
        assert_eq!(lift_divisor(&Shape::String), 1);
        assert_eq!(lift_divisor(&Shape::List(Box::new(Shape::String))), 1);
        assert_eq!(lift_divisor(&flags(&["a", "bb"])), 80);
        assert_eq!(lift_divisor(&flags(&["readable", "writable"])), 10);
        let nested = Shape::Result {
            ok: Some(Box::new(Shape::List(Box::new(Shape::Tuple(vec![
                Shape::Bool,
                flags(&["a"]),
            ]))))),
            err: None,
        };
        assert_eq!(lift_divisor(&nested), 80);
    }
}
