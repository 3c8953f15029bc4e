//! The one way cordon shortens a text it shows, records or passes on: cut at a character boundary,
//! then marked as cut, the mark saying what the reader needs (how much is missing, how long the
//! whole was, or just that something was). A text that fits comes back borrowed, unchanged. Where
//! the mark stands decides the bound: [`cut`] keeps at most the limit and adds the mark after it
//! (log lines, records, previews), [`cut_within`] keeps the whole, mark included, within the limit
//! (what a hook or an exporter is promised never to exceed).

use std::borrow::Cow;

/// How a cut text says it was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutMark {
    /// `…[N more bytes]`: N bytes were left out.
    MoreBytes,
    /// `[cut: N bytes in all]`: the whole text was N bytes. Cutting such a text again to the same
    /// bound leaves it as it is.
    BytesInAll,
    /// `…`
    Ellipsis,
}

impl CutMark {
    fn render(self, whole: usize, kept: usize) -> String {
        match self {
            Self::MoreBytes => format!("…[{} more bytes]", whole - kept),
            Self::BytesInAll => format!("[cut: {whole} bytes in all]"),
            Self::Ellipsis => "…".to_string(),
        }
    }

    /// The longest this mark can be for a text of `whole` bytes.
    fn room(self, whole: usize) -> usize {
        self.render(whole, 0).len()
    }
}

/// At most `limit` bytes of `text` (on a character boundary), followed by `mark` when anything
/// was cut.
pub fn cut(text: &str, limit: usize, mark: CutMark) -> Cow<'_, str> {
    if text.len() <= limit {
        return Cow::Borrowed(text);
    }
    let kept = &text[..text.floor_char_boundary(limit)];
    Cow::Owned(format!("{kept}{}", mark.render(text.len(), kept.len())))
}

/// `text` in at most `limit` bytes, `mark` included: whole when it fits, else cut at a character
/// boundary so that what is kept and the mark together fit. (A limit shorter than the mark itself
/// keeps nothing of the text and is the mark alone.)
pub fn cut_within(text: &str, limit: usize, mark: CutMark) -> Cow<'_, str> {
    if text.len() <= limit {
        return Cow::Borrowed(text);
    }
    let kept = &text[..text.floor_char_boundary(limit.saturating_sub(mark.room(text.len())))];
    Cow::Owned(format!("{kept}{}", mark.render(text.len(), kept.len())))
}

/// At most `chars` characters of `text`, followed by `mark` when anything was cut (for texts
/// shown to a person or a model, where characters are what reads as length).
pub fn cut_chars(text: &str, chars: usize, mark: CutMark) -> Cow<'_, str> {
    match text.char_indices().nth(chars) {
        Some((end, _)) => Cow::Owned(format!("{}{}", &text[..end], mark.render(text.len(), end))),
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_that_fits_is_untouched_and_borrowed() {
        for mark in [CutMark::MoreBytes, CutMark::BytesInAll, CutMark::Ellipsis] {
            assert!(matches!(cut("abc", 3, mark), Cow::Borrowed("abc")));
            assert!(matches!(cut_within("abc", 3, mark), Cow::Borrowed("abc")));
            assert!(matches!(cut_chars("ééé", 3, mark), Cow::Borrowed("ééé")));
        }
    }

    #[test]
    fn cuts_land_on_character_boundaries_with_their_marks() {
        assert_eq!(cut("abcdef", 3, CutMark::MoreBytes), "abc…[3 more bytes]");
        assert_eq!(cut("ééé", 3, CutMark::MoreBytes), "é…[4 more bytes]");
        assert_eq!(cut("ééé", 3, CutMark::Ellipsis), "é…");
        assert_eq!(cut_chars("ééé", 2, CutMark::Ellipsis), "éé…");
        assert_eq!(
            cut_chars("abcdef", 2, CutMark::MoreBytes),
            "ab…[4 more bytes]"
        );
    }

    #[test]
    fn a_cut_within_its_limit_stays_within_it_and_is_stable() {
        let text = "é".repeat(5000);
        for mark in [CutMark::MoreBytes, CutMark::BytesInAll, CutMark::Ellipsis] {
            for limit in [40, 41, 99, 1000] {
                let once = cut_within(&text, limit, mark);
                assert!(once.len() <= limit, "{mark:?} {limit}: {}", once.len());
            }
        }
        let once = cut_within(&text, 100, CutMark::BytesInAll).into_owned();
        assert!(once.ends_with("[cut: 10000 bytes in all]"));
        assert_eq!(cut_within(&once, 100, CutMark::BytesInAll), once);
        // A limit the mark alone passes keeps nothing of the text.
        assert_eq!(
            cut_within(&text, 3, CutMark::BytesInAll),
            "[cut: 10000 bytes in all]"
        );
    }
}
