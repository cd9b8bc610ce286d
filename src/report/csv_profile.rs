//! The `--profile` columns of the CSV header: which visit the profile blocks come from, and
//! each side's profile block with a share and a CPU cost per category. Run records and the
//! file study's transfers both carry them.
use super::csv_cell::{column, Cell, Column};
use crate::measure::profile::Category;
use Cell::Scalar;

/// Which visit the profile blocks come from, and the memcpy cost "copies' worth" divides by.
pub const PROFILED_VISIT: &[(&str, &str, Cell)] = &[
    ("profiled_visit_round", "/profiled_visit/round", Scalar),
    (
        "profiled_visit_measured_s",
        "/profiled_visit/measured_s",
        Scalar,
    ),
    (
        "profiled_visit_headline_value",
        "/profiled_visit/headline_value",
        Scalar,
    ),
    (
        "profile_memcpy_ns_per_byte",
        "/profiled_visit/memcpy_ns_per_byte",
        Scalar,
    ),
    (
        "profile_memcpy_source",
        "/profiled_visit/memcpy_source",
        Scalar,
    ),
];

/// A side's profile block (pointer relative to it), before the per-category columns.
const PROFILE: &[(&str, &str, Cell)] = &[
    ("status", "/status", Scalar),
    ("unavailable_reason", "/reason", Scalar),
    ("event", "/event", Scalar),
    ("frequency_hz", "/frequency_hz", Scalar),
    ("samples", "/samples", Scalar),
    ("lost", "/lost", Scalar),
    ("irq_reenable_share", "/skew/irq_reenable_share", Scalar),
    ("recharged_samples", "/skew/recharged_samples", Scalar),
    ("copies_per_byte", "/copies_per_byte/copies", Scalar),
    (
        "copies_per_byte_ci95_low",
        "/copies_per_byte/ci95_low",
        Scalar,
    ),
    (
        "copies_per_byte_ci95_high",
        "/copies_per_byte/ci95_high",
        Scalar,
    ),
];

/// Per category: its share of the side's samples with the 95 % interval, and its CPU-ns per
/// byte. The block lists every category in `Category::ALL` order, so the index is the key.
pub fn profile_columns(prefix: &str, base: &str) -> Vec<Column> {
    let mut out: Vec<Column> = PROFILE
        .iter()
        .map(|(n, p, c)| column(format!("{prefix}_profile_{n}"), format!("{base}{p}"), *c))
        .collect();
    for (i, category) in Category::ALL.iter().enumerate() {
        let name = category.name();
        for (field, key) in [
            ("share", "share"),
            ("share_ci95_low", "ci95_low"),
            ("share_ci95_high", "ci95_high"),
            ("cpu_ns_per_byte", "cpu_ns_per_byte"),
        ] {
            out.push(column(
                format!("{prefix}_profile_{name}_{field}"),
                format!("{base}/categories/{i}/{key}"),
                Scalar,
            ));
        }
    }
    out
}
