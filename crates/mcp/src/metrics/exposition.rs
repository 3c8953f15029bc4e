//! The Prometheus text exposition format (version 0.0.4), written by hand: `# HELP` and `# TYPE`
//! lines, then one line per sample, with label values escaped and numbers written the way
//! Prometheus parses them (`+Inf`, `-Inf`, `NaN`).

use std::fmt::Write as _;

/// The `Content-Type` of a scrape's body.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A metric's kind, as its `# TYPE` line names it.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Counter => "counter",
            Self::Gauge => "gauge",
            Self::Histogram => "histogram",
        }
    }
}

/// A scrape's body, built one metric family at a time.
#[derive(Default)]
pub struct Exposition {
    text: String,
}

impl Exposition {
    /// Starts a metric family: its help text (one line) and its kind.
    pub fn family(&mut self, name: &str, help: &str, kind: Kind) {
        let help = help.replace('\\', r"\\").replace('\n', r"\n");
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {}", kind.as_str());
    }

    /// One sample: `name{label="value",...} value`.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (index, (label, value)) in labels.iter().enumerate() {
                if index > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{label}=\"{}\"", escape_label(value));
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {}", number(value));
    }

    pub fn finish(self) -> String {
        self.text
    }
}

/// A label value with `\`, `"` and line feeds escaped.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

/// A sample value as Prometheus reads it: integers without a fraction, `+Inf`, `-Inf`, `NaN`.
pub fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value == f64::INFINITY {
        "+Inf".into()
    } else if value == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        // Rust writes the shortest text that reads back as the same f64, without an exponent.
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_families_samples_and_escaped_labels() {
        let mut out = Exposition::default();
        out.family("x_total", "Things.\nMore", Kind::Counter);
        out.sample("x_total", &[("tool", "a\"b\\c\nd"), ("outcome", "ok")], 3.0);
        out.sample("y", &[], 0.25);
        assert_eq!(
            out.finish(),
            "# HELP x_total Things.\\nMore\n# TYPE x_total counter\n\
             x_total{tool=\"a\\\"b\\\\c\\nd\",outcome=\"ok\"} 3\ny 0.25\n"
        );
    }

    #[test]
    fn numbers_read_back_as_prometheus_reads_them() {
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(1e-3), "0.001");
        assert_eq!(number(1_700_000_000.5), "1700000000.5");
    }
}
