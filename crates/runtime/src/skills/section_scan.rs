//! Finds one custom section at the top level of a component while its bytes stream past (the same
//! pass that hashes them at load), so what is taken from the section is exactly what was hashed,
//! and the file is not read twice. Section bodies other than the one sought are skipped, not kept.

/// Looks for the top-level custom section `name` in bytes fed in order, the 8-byte preamble first.
pub struct SectionScan {
    name: &'static str,
    limit: usize,
    /// Bytes of the preamble still to skip.
    preamble: usize,
    state: State,
    found: Option<Vec<u8>>,
    too_large: bool,
}

enum State {
    /// Reading a section's id and size (`header` holds the bytes so far).
    Header(Vec<u8>),
    /// Skipping the rest of a section that is not the one sought.
    Skip(u64),
    /// Reading a custom section's name: the bytes so far, and the section's size left.
    Name(Vec<u8>, u64),
    /// Keeping the sought section's payload: the bytes left of it.
    Keep(u64),
    /// The bytes stopped making sense; nothing more is looked at.
    Lost,
}

impl SectionScan {
    /// A scan for section `name`, whose payload may be at most `limit` bytes.
    pub fn new(name: &'static str, limit: usize) -> Self {
        Self {
            name,
            limit,
            preamble: 8,
            state: State::Header(Vec::new()),
            found: None,
            too_large: false,
        }
    }

    /// Takes the next bytes.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        let skip = self.preamble.min(bytes.len());
        self.preamble -= skip;
        bytes = &bytes[skip..];
        while !bytes.is_empty() {
            match &mut self.state {
                State::Lost => return,
                State::Skip(left) => {
                    let n = (*left).min(bytes.len() as u64) as usize;
                    *left -= n as u64;
                    bytes = &bytes[n..];
                    if *left == 0 {
                        self.state = State::Header(Vec::new());
                    }
                }
                State::Keep(left) => {
                    let n = (*left).min(bytes.len() as u64) as usize;
                    *left -= n as u64;
                    if let Some(found) = &mut self.found {
                        found.extend_from_slice(&bytes[..n]);
                    }
                    bytes = &bytes[n..];
                    if *left == 0 {
                        self.state = State::Header(Vec::new());
                    }
                }
                State::Header(header) => {
                    header.push(bytes[0]);
                    bytes = &bytes[1..];
                    if header.len() < 2 || header[header.len() - 1] & 0x80 != 0 {
                        if header.len() > 6 {
                            self.state = State::Lost;
                        }
                        continue;
                    }
                    let id = header[0];
                    let size = leb(&header[1..]);
                    self.state = match (id, size) {
                        (_, 0) => State::Header(Vec::new()),
                        (0, size) => State::Name(Vec::new(), size),
                        (_, size) => State::Skip(size),
                    };
                }
                State::Name(name, left) => {
                    name.push(bytes[0]);
                    bytes = &bytes[1..];
                    *left -= 1;
                    // The name's length (a LEB128 of at most 5 bytes), then the name.
                    let length_bytes = name.iter().position(|b| b & 0x80 == 0).map(|i| i + 1);
                    let decided = match length_bytes {
                        None if name.len() >= 5 => Some(false),
                        None => None,
                        Some(n) => {
                            let length = leb(&name[..n]) as usize;
                            if length != self.name.len() {
                                Some(false)
                            } else if name.len() == n + length {
                                Some(&name[n..] == self.name.as_bytes())
                            } else {
                                None
                            }
                        }
                    };
                    let left = *left;
                    match decided {
                        Some(true) if self.found.is_some() || left > self.limit as u64 => {
                            // A second copy, or one too large: refused by `finish`.
                            self.too_large = true;
                            self.state = State::Skip(left);
                        }
                        Some(true) => {
                            self.found = Some(Vec::with_capacity(left as usize));
                            self.state = State::Keep(left);
                        }
                        Some(false) => self.state = State::Skip(left),
                        None if left == 0 => self.state = State::Header(Vec::new()),
                        None => {}
                    }
                    if matches!(self.state, State::Keep(0) | State::Skip(0)) {
                        self.state = State::Header(Vec::new());
                    }
                }
            }
        }
    }

    /// The section's payload, if there was one; `Err` when it was larger than the limit or there
    /// were two.
    pub fn finish(self) -> Result<Option<Vec<u8>>, String> {
        if self.too_large {
            return Err(format!(
                "its `{}` section is larger than {} bytes, or there are two",
                self.name, self.limit
            ));
        }
        if matches!(self.state, State::Keep(_)) {
            return Err(format!("its `{}` section is cut short", self.name));
        }
        Ok(self.found)
    }
}

/// The value of the complete LEB128 `bytes`.
fn leb(bytes: &[u8]) -> u64 {
    super::embedded::read_leb(bytes).map_or(0, |(value, _)| value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::embedded::append_section;

    const COMPONENT: &[u8] = b"\0asm\x0d\x00\x01\x00";

    fn scan_in_chunks(bytes: &[u8], chunk: usize) -> Result<Option<Vec<u8>>, String> {
        let mut scan = SectionScan::new("cordon-skills", 1 << 20);
        for part in bytes.chunks(chunk) {
            scan.feed(part);
        }
        scan.finish()
    }

    #[test]
    fn the_section_is_found_whatever_the_chunking_and_others_are_skipped() {
        let mut bytes = COMPONENT.to_vec();
        // A core module section (id 1) whose body happens to hold the name.
        bytes.extend_from_slice(&[1, 14, 13]);
        bytes.extend_from_slice(b"cordon-skills");
        append_section(&mut bytes, "producers", b"other");
        append_section(&mut bytes, "cordon-skill", b"near miss");
        append_section(&mut bytes, "cordon-skills", &vec![7u8; 300]);
        for chunk in [1, 2, 3, 7, 64, 4096] {
            assert_eq!(
                scan_in_chunks(&bytes, chunk).unwrap(),
                Some(vec![7u8; 300]),
                "chunk {chunk}"
            );
        }
        assert_eq!(scan_in_chunks(COMPONENT, 3).unwrap(), None);
    }

    #[test]
    fn two_sections_or_one_too_large_or_cut_short_is_an_error() {
        let mut two = COMPONENT.to_vec();
        append_section(&mut two, "cordon-skills", b"a");
        append_section(&mut two, "cordon-skills", b"b");
        assert!(scan_in_chunks(&two, 5).is_err());
        let mut large = COMPONENT.to_vec();
        append_section(&mut large, "cordon-skills", &vec![0u8; (1 << 20) + 1]);
        assert!(scan_in_chunks(&large, 4096).is_err());
        let mut cut = COMPONENT.to_vec();
        append_section(&mut cut, "cordon-skills", b"abcdef");
        cut.truncate(cut.len() - 2);
        assert!(scan_in_chunks(&cut, 4).is_err());
    }
}
