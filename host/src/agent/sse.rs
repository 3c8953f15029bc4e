//! Server-sent events, as model APIs stream them: bytes in (in whatever chunks the network
//! delivers), whole events out. Handles `\n` and `\r\n` line ends, multi-line `data:`, comments and
//! events split across chunks.

/// One event: its `event:` name (empty when none was given) and its joined `data:` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub name: String,
    pub data: String,
}

/// Accumulates bytes and hands out complete events.
#[derive(Default)]
pub struct SseDecoder {
    pending: Vec<u8>,
    name: String,
    data: Vec<String>,
}

impl SseDecoder {
    /// Adds a chunk; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.pending.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.pending.drain(..=end).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8_lossy(&line);
            if let Some(event) = self.line(&line) {
                events.push(event);
            }
        }
        events
    }

    /// Ends the stream: an event not followed by a blank line still counts.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            let line = String::from_utf8_lossy(&rest).into_owned();
            if let Some(event) = self.line(line.trim_end_matches('\r')) {
                return Some(event);
            }
        }
        self.dispatch()
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.name = value.to_string(),
            "data" => self.data.push(value.to_string()),
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let name = std::mem::take(&mut self.name);
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
            let mut events = decoder.feed(&stream[..split]);
            events.extend(decoder.feed(&stream[split..]));
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
        assert!(decoder.feed(b"data: {\"x\":true}").is_empty());
        assert_eq!(decoder.finish().unwrap().data, "{\"x\":true}");
    }
}
