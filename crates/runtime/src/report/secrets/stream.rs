//! Text that arrives in pieces (a model's streamed reply), scrubbed as it comes: what could
//! still be the start of a secret is held back until the next piece shows what it is.

use super::{Secrets, masked};

/// Scrubs text that arrives in pieces: what [`StreamScrubber::push`] returns is safe to show at
/// once; the end of the text that could still be the start of a secret is held until the next
/// piece shows what it is, or [`StreamScrubber::finish`].
#[derive(Debug)]
pub struct StreamScrubber {
    pub(super) secrets: Secrets,
    pub(super) held: String,
}

impl StreamScrubber {
    /// Takes one piece; returns the scrubbed text that can be shown now (maybe empty).
    pub fn push(&mut self, piece: &str) -> String {
        if !self.secrets.any() && self.held.is_empty() {
            return piece.to_string();
        }
        self.held.push_str(piece);
        let spans = self.secrets.secret_spans(&self.held);
        let mut cut = self.held.len() - self.secrets.held_back(&self.held);
        while !self.held.is_char_boundary(cut) {
            cut -= 1;
        }
        // A secret found across the cut is held whole.
        if let Some(&(start, _)) = spans.iter().find(|(start, end)| *start < cut && *end > cut) {
            cut = start;
        }
        let before: Vec<(usize, usize)> =
            spans.into_iter().filter(|(_, end)| *end <= cut).collect();
        let ready = masked(&self.held[..cut], &before);
        self.held.drain(..cut);
        ready
    }

    /// Whatever is still held, scrubbed: the stream ended.
    pub fn finish(&mut self) -> String {
        let held = std::mem::take(&mut self.held);
        self.secrets.scrub(&held).into_owned()
    }
}
