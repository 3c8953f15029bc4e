//! Server-sent events, as model APIs stream them: bytes in (in whatever chunks the network
//! delivers), whole events out. Handles `\n` and `\r\n` line ends, multi-line `data:`, comments and
//! events split across chunks. Each byte is scanned once however the stream is chunked, and a line
//! or an event past its bound ([`MAX_LINE_BYTES`], [`MAX_EVENT_BYTES`]) is an error, so a
//! misbehaving server cannot make the decoder's work or memory grow without end.

/// The longest line accepted.
pub const MAX_LINE_BYTES: usize = 8 << 20;
/// The most `data:` one event may carry.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// One event: its `event:` name (empty when none was given) and its joined `data:` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub name: String,
    pub data: String,
}

/// Accumulates bytes and hands out complete events.
#[derive(Default)]
pub struct SseDecoder {
    /// Bytes of the line not yet complete.
    pending: Vec<u8>,
    name: String,
    data: Vec<String>,
    data_bytes: usize,
}

impl SseDecoder {
    /// Adds a chunk; returns the events it completed, or why the stream is refused.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, String> {
        let mut events = Vec::new();
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (head, tail) = (&rest[..end], &rest[end + 1..]);
            rest = tail;
            let line = if self.pending.is_empty() {
                String::from_utf8_lossy(head).into_owned()
            } else {
                self.pending.extend_from_slice(head);
                String::from_utf8_lossy(&std::mem::take(&mut self.pending)).into_owned()
            };
            if let Some(event) = self.line(line.strip_suffix('\r').unwrap_or(&line))? {
                events.push(event);
            }
        }
        self.pending.extend_from_slice(rest);
        if self.pending.len() > MAX_LINE_BYTES {
            return Err(format!(
                "a line of the event stream is over {MAX_LINE_BYTES} bytes"
            ));
        }
        Ok(events)
    }

    /// Ends the stream: an event not followed by a blank line still counts.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            let line = String::from_utf8_lossy(&rest).into_owned();
            if let Ok(Some(event)) = self.line(line.trim_end_matches('\r')) {
                return Some(event);
            }
        }
        self.dispatch()
    }

    fn line(&mut self, line: &str) -> Result<Option<SseEvent>, String> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.name = value.to_string(),
            "data" => {
                self.data_bytes += value.len() + 1;
                if self.data_bytes > MAX_EVENT_BYTES {
                    return Err(format!(
                        "an event of the stream carries over {MAX_EVENT_BYTES} bytes"
                    ));
                }
                self.data.push(value.to_string());
            }
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let name = std::mem::take(&mut self.name);
        self.data_bytes = 0;
        if self.data.is_empty() {
            return None;
        }
        let data = std::mem::take(&mut self.data).join("\n");
        Some(SseEvent { name, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_come_out_whole() {
        let stream = b"event: message_start\r\ndata: {\"a\":1}\r\n\r\n: keep-alive\n\ndata: one\ndata: two\n\ndata: [DONE]\n\n";
        for split in 0..stream.len() {
            let mut decoder = SseDecoder::default();
            let mut events = decoder.feed(&stream[..split]).unwrap();
            events.extend(decoder.feed(&stream[split..]).unwrap());
            events.extend(decoder.finish());
            assert_eq!(
                events,
                [
                    SseEvent {
                        name: "message_start".into(),
                        data: "{\"a\":1}".into()
                    },
                    SseEvent {
                        name: String::new(),
                        data: "one\ntwo".into()
                    },
                    SseEvent {
                        name: String::new(),
                        data: "[DONE]".into()
                    },
                ],
                "split at {split}"
            );
        }
    }

    #[test]
    fn a_last_event_without_a_blank_line_is_kept() {
        let mut decoder = SseDecoder::default();
        assert!(decoder.feed(b"data: {\"x\":true}").unwrap().is_empty());
        assert_eq!(decoder.finish().unwrap().data, "{\"x\":true}");
    }

    #[test]
    fn an_endless_line_or_event_is_refused_and_each_byte_is_scanned_once() {
        let mut decoder = SseDecoder::default();
        let chunk = vec![b'x'; 1 << 20];
        let mut fed = 0;
        let refused = loop {
            match decoder.feed(&chunk) {
                Ok(events) => assert!(events.is_empty()),
                Err(reason) => break reason,
            }
            fed += 1;
            assert!(fed <= 8, "still accepting after {fed} MiB");
        };
        assert!(refused.contains("line of the event stream"), "{refused}");

        let mut decoder = SseDecoder::default();
        let line = format!("data: {}\n", "y".repeat(1 << 20));
        let refused = (0..20)
            .find_map(|_| decoder.feed(line.as_bytes()).err())
            .expect("refused");
        assert!(refused.contains("an event of the stream"), "{refused}");
    }
}
