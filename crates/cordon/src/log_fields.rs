//! How a log line's fields reach stderr: every value, the message included, passed through the one
//! terminal sanitiser (`cordon_runtime::report::terminal_text::one_line`) as the log formatter
//! writes it. A plugin's file name, a model's tool name or a guest's log text logged anywhere in
//! the host, in an event's fields or in a span's, cannot start a line of its own or drive the
//! terminal, and no call site has to remember to clean it. The layout is the default one:
//! `message name=value name="text"`.

use cordon_runtime::report::terminal_text::one_line;
use std::fmt;
use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::Writer;

/// The field formatter of cordon's log output.
pub struct TerminalSafeFields;

impl<'writer> FormatFields<'writer> for TerminalSafeFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let mut visitor = SafeFieldWriter {
            writer: &mut writer,
            result: Ok(()),
            wrote_one: false,
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

/// Writes each field it visits as `name=value` (the message bare), its value sanitised.
struct SafeFieldWriter<'a, 'writer> {
    writer: &'a mut Writer<'writer>,
    result: fmt::Result,
    wrote_one: bool,
}

impl SafeFieldWriter<'_, '_> {
    fn write(&mut self, field: &Field, value: &str) {
        let name = field.name();
        if self.result.is_err() || name.starts_with("log.") {
            return;
        }
        let separator = if self.wrote_one { " " } else { "" };
        self.wrote_one = true;
        let value = one_line(value);
        self.result = match name {
            "message" => write!(self.writer, "{separator}{value}"),
            name => {
                let name = name.strip_prefix("r#").unwrap_or(name);
                write!(self.writer, "{separator}{name}={value}")
            }
        };
    }
}

impl Visit for SafeFieldWriter<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.write(field, value);
        } else {
            self.write(field, &format!("{value:?}"));
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        let mut text = value.to_string();
        let mut source = value.source();
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        self.write(field, &text);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.write(field, &format!("{value:?}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// What the subscriber wrote, as one string.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn logged(emit: impl FnOnce()) -> String {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .without_time()
            .with_target(false)
            .fmt_fields(TerminalSafeFields)
            .finish();
        tracing::subscriber::with_default(subscriber, emit);
        let bytes = captured.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn no_field_value_or_message_can_break_the_line_or_reach_the_terminal_raw() {
        let file = "\u{1b}]0;owned\u{7}\u{1b}[2J.wasm";
        let reason = "bad\nWARN forged line \u{202e}";
        let out = logged(|| {
            let span = tracing::warn_span!("load", dir = %"plug\rins");
            let _entered = span.enter();
            tracing::warn!(file = %file, quoted = file, "rejected plugin: {reason}");
        });
        assert_eq!(out.lines().count(), 1, "{out:?}");
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\r'));
        assert!(!out.contains('\u{202e}'), "{out:?}");
        assert!(
            out.contains("rejected plugin: bad\\nWARN forged line \\u{202e}"),
            "{out:?}"
        );
        assert!(
            out.contains("file=\\u{1b}]0;owned\\u{7}\\u{1b}[2J.wasm"),
            "{out:?}"
        );
        assert!(out.contains("load{dir=plug\\rins}"), "{out:?}");
    }

    #[test]
    fn an_error_field_keeps_its_causes() {
        let error = anyhow::anyhow!("inner\u{1b}[31m").context("outer");
        let source: &(dyn std::error::Error + 'static) = error.as_ref();
        let out = logged(|| tracing::warn!(error = source, "failed"));
        assert!(
            out.contains("failed error=outer: inner\\u{1b}[31m"),
            "{out:?}"
        );
    }
}
