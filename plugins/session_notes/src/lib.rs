//! The bundled `session_notes` hook (compaction): when older turns are folded, it writes the
//! summary itself instead of asking the model, keeping what a long task must not forget: the
//! file paths mentioned, the decisions taken and the questions still open, with the previous
//! summary's notes carried forward. Deterministic, so a compaction costs no model request and
//! loses no path to a paraphrase. `settings.max_items` (default 40) bounds each list.

mod notes;

use cordon_sdk::prelude::*;
use notes::{Author, Notes};

struct SessionNotes;

impl Hook for SessionNotes {
    const BEFORE: bool = false;
    const AFTER: bool = false;
    const STAGES: &'static [SessionStage] = &[SessionStage::Compaction];

    fn session_hook(&self, event: &SessionEvent, cx: &Context) -> SessionDecision {
        if event.payload["phase"] != "before" {
            return SessionDecision::proceed();
        }
        let max_items = cx.settings_json()["max_items"]
            .as_u64()
            .map_or(notes::DEFAULT_MAX_ITEMS, |n| n.clamp(1, 500) as usize);
        let mut notes = Notes::new(max_items);
        if let Some(previous) = event.text("previous_summary") {
            notes.read_summary(previous);
        }
        for message in event.payload["messages"].as_array().into_iter().flatten() {
            let author = Author::of_role(message["role"].as_str().unwrap_or_default());
            notes.read_message(author, message["text"].as_str().unwrap_or_default());
        }
        let folded = event.payload["folded"].as_u64().unwrap_or(0);
        SessionDecision::replace(notes.summary(folded))
    }
}

cordon_sdk::export_plugin!(hook: SessionNotes);
