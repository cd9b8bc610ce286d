//! The OpenMetrics text format (OpenMetrics 1.0, "Text format"): families of gauges with
//! `# HELP`, `# TYPE` and `# UNIT`, the unit at the end of each name, one sample per label
//! set, `# EOF` last. Written here rather than with `prometheus-client`: that crate is made for
//! live instrumentation (values behind atomics, label sets in a hash map), so its samples come
//! out in a different order on every run; an export should be the same bytes for the same
//! folder. Checked against the specification's examples below and, in tests/export.rs, by an
//! independent parser.
//!
//! Beside the encoder, what the samples of more than one study are built from: the families
//! they share (`families`), a point's labels and its latest record (`point`), and the samples
//! of run records (`run`: sweep and ipc folders hold them, a mesh's visits are them). Here in
//! the exporters' layer so that each study's own samples can be built in its folder, which
//! `export` asks for them.
pub(crate) mod families;
pub(crate) mod point;
pub(crate) mod run;

use std::fmt::Write;

/// Every family's name starts with this (`bytepath_throughput_gbit_per_second`).
pub const PREFIX: &str = "bytepath";

/// One metric family: `PREFIX_name_unit`, a gauge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    pub name: &'static str,
    pub unit: &'static str,
    /// One sentence, without its final period (the encoder adds it).
    pub help: &'static str,
}

impl Family {
    /// The name as it appears on the sample lines.
    pub fn full_name(&self) -> String {
        format!("{PREFIX}_{}_{}", self.name, self.unit)
    }
}

/// One sample: its family, its labels in order, its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub family: Family,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

/// The text of `samples`: families in order of first appearance, each family's samples in
/// the order given, `# EOF` at the end. A family with no sample is left out.
pub fn render(samples: &[Sample]) -> String {
    let mut families: Vec<Family> = Vec::new();
    for s in samples {
        if !families.contains(&s.family) {
            families.push(s.family);
        }
    }
    let mut text = String::new();
    for family in families {
        let name = family.full_name();
        let _ = writeln!(text, "# HELP {name} {}.", escape_help(family.help));
        let _ = writeln!(text, "# TYPE {name} gauge");
        let _ = writeln!(text, "# UNIT {name} {}", family.unit);
        for s in samples.iter().filter(|s| s.family == family) {
            let labels: Vec<String> = s
                .labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                .collect();
            let _ = writeln!(text, "{name}{{{}}} {}", labels.join(","), number(s.value));
        }
    }
    text + "# EOF\n"
}

/// `# HELP` text: backslash and newline escaped.
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A label value: backslash, double quote and newline escaped.
fn escape_label(text: &str) -> String {
    escape_help(text).replace('"', "\\\"")
}

/// A value as the format spells numbers: `NaN`, `+Inf`, `-Inf`, or Rust's shortest decimal
/// that reads back as the same f64.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEED: Family = Family {
        name: "throughput",
        unit: "gbit_per_second",
        help: "Payload received whole",
    };

    fn sample(size: &str, value: f64) -> Sample {
        Sample {
            family: SPEED,
            labels: vec![
                ("size".into(), size.into()),
                ("side".into(), "receiver".into()),
            ],
            value,
        }
    }

    /// The specification's gauge example, in bytepath's words: metadata, then the samples,
    /// then `# EOF` alone on the last line.
    #[test]
    fn a_family_renders_as_the_specification_shows_a_gauge() {
        let text = render(&[sample("4096", 6.5), sample("65536", 17.25)]);
        assert_eq!(
            text,
            "# HELP bytepath_throughput_gbit_per_second Payload received whole.\n\
             # TYPE bytepath_throughput_gbit_per_second gauge\n\
             # UNIT bytepath_throughput_gbit_per_second gbit_per_second\n\
             bytepath_throughput_gbit_per_second{size=\"4096\",side=\"receiver\"} 6.5\n\
             bytepath_throughput_gbit_per_second{size=\"65536\",side=\"receiver\"} 17.25\n\
             # EOF\n"
        );
    }

    #[test]
    fn label_values_are_escaped_as_the_specification_says() {
        let mut s = sample("1", 1.0);
        s.labels = vec![("dst".into(), "a\"b\\c\nd".into())];
        assert!(render(&[s]).contains(r#"{dst="a\"b\\c\nd"}"#));
    }

    #[test]
    fn numbers_read_back_as_the_same_value() {
        assert_eq!(number(1.0), "1.0");
        assert_eq!(number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(1e21), "1e21");
    }

    #[test]
    fn nothing_to_say_is_just_the_end_marker() {
        assert_eq!(render(&[]), "# EOF\n");
    }
}
