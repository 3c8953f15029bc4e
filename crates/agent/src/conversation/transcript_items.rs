//! How many items (messages and the tool calls inside them) a transcript line holds, counted
//! before the line is parsed into a [`Message`](crate::conversation::message::Message). A
//! message is read through serde's buffered form of an internally tagged enum, which costs
//! about 26 times its text for a line of many tiny calls; counting first, with nothing kept,
//! bounds what resuming can cost whatever the file holds.

use serde::de::{IgnoredAny, SeqAccess, Visitor};

/// The most items a transcript read back may hold: every message and every tool call counts as
/// one. Far more than a session that fits a context window writes (compaction included), and
/// few enough that resuming stays within a few hundred megabytes whatever the file holds.
pub const MAX_TRANSCRIPT_ITEMS: usize = 200_000;

/// The items the JSON line `text` holds: one for the message, one per tool call. `Err` with the
/// count reached when it holds more than `room`; `Ok(None)` when the line is not an object
/// cordon can count (the full parse reports why).
pub(crate) fn items_in_line(text: &str, room: usize) -> Result<Option<usize>, usize> {
    let mut seed = Counted { room, calls: 0 };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    match serde::de::DeserializeSeed::deserialize(&mut seed, &mut deserializer) {
        Ok(()) if seed.calls < room => Ok(Some(seed.calls + 1)),
        Ok(()) => Err(seed.calls + 1),
        Err(_) if seed.calls >= room => Err(seed.calls + 1),
        Err(_) => Ok(None),
    }
}

/// A message object, read for the length of its `tool_calls` and nothing else.
struct Counted {
    room: usize,
    calls: usize,
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut Counted {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut Counted {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a transcript message")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "tool_calls" {
                map.next_value_seed(CallList(self))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The `tool_calls` array, counted up to the room left.
struct CallList<'a>(&'a mut Counted);

impl<'de> serde::de::DeserializeSeed<'de> for CallList<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CallList<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a list of tool calls")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {
            self.0.calls += 1;
            if self.0.calls >= self.0.room {
                return Err(serde::de::Error::custom("too many tool calls"));
            }
        }
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_counts_itself_and_its_calls_and_stops_at_the_room_left() {
        let call = r#"{"id":"a","name":"e","arguments":""}"#;
        let line = |calls: usize| {
            format!(
                r#"{{"role":"assistant","content":"x","tool_calls":[{}],"stop":"tool_calls"}}"#,
                vec![call; calls].join(",")
            )
        };
        assert_eq!(
            items_in_line(r#"{"role":"user","content":"hi"}"#, 10),
            Ok(Some(1))
        );
        assert_eq!(items_in_line(&line(3), 10), Ok(Some(4)));
        assert_eq!(items_in_line(&line(9), 10), Ok(Some(10)));
        assert_eq!(items_in_line(&line(10), 10), Err(11));
        assert_eq!(items_in_line(&line(100_000), 10), Err(11));
        assert_eq!(items_in_line("not json", 10), Ok(None));
    }
}
