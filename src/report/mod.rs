//! Exporters: a run record in, bytes out, one file per format; the sweep report (report.html
//! with inline SVG plots, report.md) rendered from DIR/results.jsonl; the results folder every
//! study writes (`folder`, `visit_folder`); and the page, table and plot kit the single-study
//! reports share (`study`, `plot`); the OpenMetrics encoder and the samples studies share
//! (`openmetrics`). Which report a folder gets is the command's to say.
pub(crate) mod bidir;
pub(crate) mod breakdown;
pub(crate) mod canary;
pub(crate) mod cdf;
pub(crate) mod chosen_percentiles;
mod ci_rule;
pub(crate) mod copies;
pub(crate) mod crr;
pub mod csv;
pub(crate) mod csv_cell;
mod csv_profile;
mod csv_tcp;
pub(crate) mod delivery;
pub(crate) mod figure_files;
pub mod folder;
pub(crate) mod html;
pub(crate) mod html_table;
pub(crate) mod json;
pub(crate) mod limits;
pub(crate) mod margin_change;
pub(crate) mod markdown;
pub(crate) mod marker;
pub(crate) mod openmetrics;
pub(crate) mod placement;
pub mod plot;
pub(crate) mod plots;
mod sink;
pub(crate) mod stream;
mod stream_tcp;
pub(crate) mod study;
pub(crate) mod study_figures;
pub(crate) mod summary;
pub(crate) mod table;
mod tcp_info;
pub(crate) mod under_load;
pub(crate) mod visit_folder;
pub(crate) mod write;

use crate::record::RunRecord;

pub trait Exporter {
    fn export(&self, record: &RunRecord) -> String;
}

/// Label/value rows: the text blocks that HTML and Markdown both lay out (environment, method,
/// machine limits).
pub type Rows = Vec<(String, String)>;

/// Human-scaled figures shared by the text formats.
pub mod units {
    pub fn duration_ns(ns: f64) -> String {
        if ns < 1e3 {
            format!("{ns:.0} ns")
        } else if ns < 1e6 {
            format!("{:.2} µs", ns / 1e3)
        } else if ns < 1e9 {
            format!("{:.2} ms", ns / 1e6)
        } else {
            format!("{:.2} s", ns / 1e9)
        }
    }

    pub fn bytes(b: f64) -> String {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = b;
        let mut i = 0;
        while v >= 1024.0 && i + 1 < UNITS.len() {
            v /= 1024.0;
            i += 1;
        }
        if i == 0 {
            format!("{v:.0} B")
        } else {
            format!("{v:.2} {}", UNITS[i])
        }
    }

    pub fn count(v: f64) -> String {
        if v.abs() >= 1e9 {
            format!("{:.3} G", v / 1e9)
        } else if v.abs() >= 1e6 {
            format!("{:.3} M", v / 1e6)
        } else if v.abs() >= 1e4 {
            format!("{:.1} k", v / 1e3)
        } else if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.3}")
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn figures_scale_to_readable_units() {
            assert_eq!(duration_ns(12_345.0), "12.35 µs");
            assert_eq!(bytes(4096.0), "4.00 KiB");
            assert_eq!(count(2_500_000.0), "2.500 M");
            assert_eq!(count(12.0), "12");
        }
    }
}
