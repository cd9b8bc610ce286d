//! Run records flattened to CSV: one tidy row per run under a FIXED header, loadable by pandas
//! (`pd.read_csv`) with no cleaning. Quoting follows RFC 4180 (the `csv` crate).
//!
//! Every column is (name, JSON pointer into the record as `--json` prints it). Units are in the
//! names. A `null` or absent value is an empty cell; a metric that could not be measured has a
//! sibling `*_unavailable_reason` column with the reason as text. Per-side columns are prefixed
//! `sender_` (the record's first side: sender, or client for `rr`) and `receiver_` (the second:
//! receiver, or server); `sender_side`/`receiver_side` name the side as the record does.
//! `stat_mean` and the CI columns are in the unit named by `stat_metric`.
use super::Exporter;
use crate::measure::counters::CounterEvent;
use crate::record::RunRecord;
use serde_json::Value;
use std::io::{self, Write};

use super::csv_cell::column;
pub use super::csv_cell::{Cell, Column};
pub use super::csv_profile::profile_columns;
use super::csv_profile::PROFILED_VISIT;

use Cell::{Joined, Json, Scalar};

/// Columns about the run as a whole, in header order: (name, pointer, cell).
const RUN: &[(&str, &str, Cell)] = &[
    ("schema_version", "/schema_version", Scalar),
    ("key", "/sweep_point/key", Scalar),
    ("sweep_index", "/sweep_point/index", Scalar),
    ("sweep_total", "/sweep_point/total", Scalar),
    ("status", "/status", Scalar),
    ("interrupted", "/interrupted", Scalar),
    ("errors", "/errors", Joined),
    ("timestamp_unix_s", "/timestamp_unix_s", Scalar),
    ("bytepath_version", "/bytepath_version", Scalar),
    ("transport", "/config/transport", Scalar),
    ("mechanism", "/config/mechanism", Scalar),
    ("pattern", "/config/pattern", Scalar),
    ("message_size_bytes", "/config/message_size_bytes", Scalar),
    ("field_size_bytes", "/config/field_size_bytes", Scalar),
    ("fields", "/config/fields", Scalar),
    ("threads", "/config/threads", Scalar),
    ("duration_s", "/config/duration_s", Scalar),
    ("warmup_s", "/config/warmup_s", Scalar),
    ("pin", "/config/pin", Scalar),
    ("placement", "/config/placement", Json),
    ("recv_size_bytes", "/config/recv_size_bytes", Scalar),
    ("recv_mode", "/config/recv_mode", Scalar),
    ("spin", "/config/spin", Scalar),
    ("verify", "/config/verify", Scalar),
    ("counters", "/config/counters", Scalar),
    ("tcp_nodelay", "/config/tcp_nodelay", Scalar),
    ("queue_depth", "/config/queue_depth", Scalar),
    ("recv", "/config/recv", Scalar),
    ("where_sides_run", "/config/where_sides_run", Scalar),
    ("network", "/config/network/placement", Scalar),
    ("mtu_bytes", "/config/network/mtu", Scalar),
    ("netem", "/config/network/netem", Scalar),
    ("measured_s", "/measured_s", Scalar),
    ("skipped_reason", "/skipped_reason", Scalar),
];

/// The slice statistics and the stopping rule.
const STATISTICS: &[(&str, &str, Cell)] = &[
    ("stat_metric", "/statistics/metric", Scalar),
    ("stat_side", "/statistics/side", Scalar),
    ("stat_slice_s", "/statistics/slice_s", Scalar),
    ("stat_slices", "/statistics/slices", Scalar),
    ("stat_n", "/statistics/summary/n", Scalar),
    ("stat_mean", "/statistics/summary/mean", Scalar),
    ("stat_stddev", "/statistics/summary/stddev", Scalar),
    ("stat_ci95_low", "/statistics/summary/ci95_low", Scalar),
    ("stat_ci95_high", "/statistics/summary/ci95_high", Scalar),
    (
        "stat_ci95_half_width",
        "/statistics/summary/ci95_half_width",
        Scalar,
    ),
    ("stat_ci95_rel", "/statistics/summary/ci95_rel", Scalar),
    (
        "stat_lag1_autocorrelation",
        "/statistics/summary/lag1_autocorrelation",
        Scalar,
    ),
    (
        "stat_n_effective",
        "/statistics/summary/n_effective",
        Scalar,
    ),
    (
        "stat_summary_unavailable_reason",
        "/statistics/summary_unavailable_reason",
        Scalar,
    ),
    ("ci_target_rel", "/statistics/ci_target_rel", Scalar),
    ("ci_target_met", "/statistics/ci_target_met", Scalar),
    ("stop_reason", "/statistics/stop_reason", Scalar),
    ("stat_basis", "/statistics/basis", Scalar),
    ("stat_method", "/statistics/method", Scalar),
    ("counters_open", "/statistics/counters_open", Scalar),
    ("visits", "/statistics/visits/count", Scalar),
    ("visit_s", "/statistics/visits/visit_s", Scalar),
    (
        "between_visit_cv",
        "/statistics/visits/between_visit_cv",
        Scalar,
    ),
    (
        "within_visit_cv",
        "/statistics/visits/within_visit_cv",
        Scalar,
    ),
    (
        "counters_visit_round",
        "/statistics/visits/counters_round",
        Scalar,
    ),
    ("visit_seed", "/statistics/visits/seed", Scalar),
    (
        "outliers_low_severe",
        "/statistics/outliers/low_severe",
        Scalar,
    ),
    ("outliers_low_mild", "/statistics/outliers/low_mild", Scalar),
    (
        "outliers_high_mild",
        "/statistics/outliers/high_mild",
        Scalar,
    ),
    (
        "outliers_high_severe",
        "/statistics/outliers/high_severe",
        Scalar,
    ),
];

/// Per side; the name gets the side's prefix, the pointer is relative to the side.
const SIDE: &[(&str, &str, Cell)] = &[
    ("side", "/side", Scalar),
    ("threads", "/threads", Scalar),
    ("messages", "/messages", Scalar),
    ("payload_bytes", "/payload_bytes", Scalar),
    ("elapsed_s", "/elapsed_s", Scalar),
    ("throughput_gbps", "/throughput_gbps", Scalar),
    ("messages_per_s", "/messages_per_s", Scalar),
    ("latency_samples", "/latency_ns/count", Scalar),
    ("latency_ns_min", "/latency_ns/min", Scalar),
    ("latency_ns_p50", "/latency_ns/p50", Scalar),
    ("latency_ns_p90", "/latency_ns/p90", Scalar),
    ("latency_ns_p99", "/latency_ns/p99", Scalar),
    ("latency_ns_p99_9", "/latency_ns/p99_9", Scalar),
    ("latency_ns_max", "/latency_ns/max", Scalar),
    ("latency_ns_mean", "/latency_ns/mean", Scalar),
    (
        "latency_ns_unavailable_reason",
        "/latency_ns_unavailable_reason",
        Scalar,
    ),
    ("cpu_user_s", "/cpu_user_s", Scalar),
    ("cpu_sys_s", "/cpu_sys_s", Scalar),
    ("cpu_ns_per_byte", "/cpu_ns_per_byte", Scalar),
    (
        "voluntary_context_switches",
        "/voluntary_context_switches",
        Scalar,
    ),
    (
        "involuntary_context_switches",
        "/involuntary_context_switches",
        Scalar,
    ),
    ("counter_scope", "/counter_scope", Scalar),
    ("counters_multiplexed", "/counters_multiplexed", Scalar),
];

/// Figures derived from the counters, each with its reason column.
const DERIVED: &[&str] = &[
    "cycles_per_byte",
    "instructions_per_cycle",
    "llc_misses_per_kib",
];

/// The record's sides in order, as column prefixes.
const SIDES: [(&str, &str); 2] = [("sender", "/sides/0"), ("receiver", "/sides/1")];

/// Zero copy, byte verification, delivery totals and machine-wide CPU.
const TAIL: &[(&str, &str, Cell)] = &[
    ("zerocopy_send_calls", "/zerocopy/send_calls", Scalar),
    ("zerocopy_completions", "/zerocopy/completions", Scalar),
    ("zerocopy_copied", "/zerocopy/copied", Scalar),
    (
        "zerocopy_copied_anyway_percent",
        "/zerocopy/copied_anyway_percent",
        Scalar,
    ),
    (
        "zerocopy_outstanding_at_end",
        "/zerocopy/outstanding_at_end",
        Scalar,
    ),
    (
        "zerocopy_enobufs_retries",
        "/zerocopy/enobufs_retries",
        Scalar,
    ),
    ("zerocopy_bad_ranges", "/zerocopy/bad_ranges", Scalar),
    ("zerocopy_pool_messages", "/zerocopy/pool_messages", Scalar),
    ("pages_messages", "/page_refs/messages", Scalar),
    (
        "pages_calls_per_message",
        "/page_refs/calls_per_message",
        Scalar,
    ),
    (
        "pages_gifted_messages",
        "/page_refs/gifted_messages",
        Scalar,
    ),
    (
        "pages_fresh_page_messages",
        "/page_refs/fresh_page_messages",
        Scalar,
    ),
    ("pages_pipe_bytes", "/page_refs/pipe_bytes", Scalar),
    ("receive_delivers_data", "/receive/delivers_data", Scalar),
    ("receive_calls", "/receive/calls", Scalar),
    ("receive_mapped_bytes", "/receive/mapped_bytes", Scalar),
    ("receive_copied_bytes", "/receive/copied_bytes", Scalar),
    ("receive_mapped_percent", "/receive/mapped_percent", Scalar),
    (
        "receive_discarded_bytes",
        "/receive/discarded_bytes",
        Scalar,
    ),
    ("receive_segment_bytes", "/receive/segment_bytes", Scalar),
    ("receive_reason", "/receive/reason", Scalar),
    (
        "datagrams_per_message",
        "/datagrams/datagrams_per_message",
        Scalar,
    ),
    ("datagrams_sent", "/datagrams/forward/sent", Scalar),
    ("datagrams_received", "/datagrams/forward/received", Scalar),
    ("datagrams_lost", "/datagrams/forward/lost", Scalar),
    (
        "datagrams_lost_percent",
        "/datagrams/forward/lost_percent",
        Scalar,
    ),
    (
        "datagrams_reordered",
        "/datagrams/forward/reordered",
        Scalar,
    ),
    ("answers_lost", "/datagrams/back/lost", Scalar),
    ("round_trips_lost", "/datagrams/lost_round_trips", Scalar),
    ("stale_answers", "/datagrams/stale_answers", Scalar),
    ("verify_checked_bytes", "/verify/checked_bytes", Scalar),
    (
        "verify_mismatched_bytes",
        "/verify/mismatched_bytes",
        Scalar,
    ),
    (
        "transfer_sender_sent_bytes",
        "/transfer/sender_sent_bytes",
        Scalar,
    ),
    (
        "transfer_receiver_received_bytes",
        "/transfer/receiver_received_bytes",
        Scalar,
    ),
    (
        "transfer_receiver_sent_bytes",
        "/transfer/receiver_sent_bytes",
        Scalar,
    ),
    (
        "transfer_sender_received_bytes",
        "/transfer/sender_received_bytes",
        Scalar,
    ),
    ("transfer_all_delivered", "/transfer/all_delivered", Scalar),
    ("machine_user_s", "/machine_wide_cpu/user_s", Scalar),
    ("machine_system_s", "/machine_wide_cpu/system_s", Scalar),
    ("machine_softirq_s", "/machine_wide_cpu/softirq_s", Scalar),
    ("machine_irq_s", "/machine_wide_cpu/irq_s", Scalar),
    ("machine_idle_s", "/machine_wide_cpu/idle_s", Scalar),
    (
        "machine_wide_cpu_unavailable_reason",
        "/machine_wide_cpu_unavailable_reason",
        Scalar,
    ),
    ("hostname", "/environment/hostname", Scalar),
    ("kernel_release", "/environment/kernel_release", Scalar),
    ("cpu_model", "/environment/cpu_model", Scalar),
    ("online_cpus", "/environment/online_cpus", Scalar),
    ("allowed_cpus", "/environment/allowed_cpus", Scalar),
    ("pmu_available", "/environment/pmu_available", Scalar),
    (
        "perf_event_paranoid",
        "/environment/perf_event_paranoid",
        Scalar,
    ),
    ("running_as_root", "/environment/running_as_root", Scalar),
    ("optmem_max_bytes", "/environment/optmem_max_bytes", Scalar),
    (
        "tcp_wmem_max_bytes",
        "/environment/tcp_wmem_max_bytes",
        Scalar,
    ),
    ("loopback_mtu", "/environment/loopback_mtu", Scalar),
    ("notes", "/notes", Joined),
];

fn side_columns(prefix: &str, base: &str) -> Vec<Column> {
    let mut out: Vec<Column> = SIDE
        .iter()
        .map(|(n, p, c)| column(format!("{prefix}_{n}"), format!("{base}{p}"), *c))
        .collect();
    // The counters are exactly the events the record carries (`CounterEvent::key`).
    let counters: Vec<&str> = CounterEvent::ALL.iter().map(|e| e.key()).collect();
    for (group, keys) in [("counters", &counters[..]), ("derived", DERIVED)] {
        for key in keys {
            let (label, pointer) = if group == "counters" {
                (
                    format!("{prefix}_counters_{key}"),
                    format!("{base}/counters/{key}"),
                )
            } else {
                (format!("{prefix}_{key}"), format!("{base}/derived/{key}"))
            };
            let reason = (
                format!("{label}_unavailable_reason"),
                format!("{pointer}_unavailable_reason"),
            );
            out.push(column(label, pointer, Scalar));
            out.push(column(reason.0, reason.1, Scalar));
        }
    }
    out
}

/// Columns from a table of (name, JSON pointer, cell), for records of other shapes (the file
/// study's transfers) that go through the same results folder.
pub fn fixed(table: &[(&str, &str, Cell)]) -> Vec<Column> {
    table
        .iter()
        .map(|(n, p, c)| column(n.to_string(), p.to_string(), *c))
        .collect()
}

/// The fixed header of run records, in order, with where each column comes from.
pub fn columns() -> Vec<Column> {
    let mut out = fixed(RUN);
    out.extend(fixed(STATISTICS));
    for (prefix, base) in SIDES {
        out.extend(side_columns(prefix, base));
    }
    out.extend(fixed(TAIL));
    // `--profile` columns come last, so every column before them keeps its place.
    out.extend(fixed(PROFILED_VISIT));
    for (prefix, base) in SIDES {
        out.extend(profile_columns(prefix, &format!("{base}/profile")));
    }
    // `--pattern crr` columns after those, for the same reason.
    out.extend(fixed(super::crr::CSV));
    // `--bidir` columns after those.
    out.extend(fixed(super::bidir::CSV));
    // `--count-copies` columns, then `--sink` columns, last of all.
    out.extend(fixed(super::copies::CSV));
    out.extend(fixed(super::sink::CSV));
    // TCP_INFO's headline and `--under-load`'s pair after those.
    out.extend(fixed(super::csv_tcp::CSV));
    out
}

pub fn header() -> Vec<String> {
    columns().into_iter().map(|c| c.name).collect()
}

/// One record's cells under `columns`.
pub fn row_of(columns: &[Column], record: &Value) -> Vec<String> {
    columns
        .iter()
        .map(|c| cell(record.pointer(&c.pointer), c.cell))
        .collect()
}

fn cell(value: Option<&Value>, kind: Cell) -> String {
    match (value, kind) {
        (None | Some(Value::Null), _) => String::new(),
        (Some(Value::String(s)), _) => s.clone(),
        (Some(Value::Array(items)), Joined) => items
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join("; "),
        (Some(v @ (Value::Array(_) | Value::Object(_))), Scalar) | (Some(v), Json) => v.to_string(),
        (Some(v), _) => v.to_string(),
    }
}

/// One row for a record given as JSON (as `--json` prints it, or as read back from
/// results.jsonl); always exactly `header().len()` cells.
pub fn row(record: &Value) -> Vec<String> {
    row_of(&columns(), record)
}

/// Writes one CSV line (quoted as needed) to `out`.
pub fn write_line<W: Write>(out: W, cells: &[String]) -> io::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(cells).map_err(io::Error::other)?;
    writer.flush()
}

/// The header line followed by one row per run record.
pub fn to_csv(records: &[Value]) -> String {
    to_csv_with(&columns(), records)
}

/// The header line of `columns` followed by one row per record.
pub fn to_csv_with(columns: &[Column], records: &[Value]) -> String {
    let mut out = Vec::new();
    let header: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    write_line(&mut out, &header).expect("writing to memory cannot fail");
    for record in records {
        write_line(&mut out, &row_of(columns, record)).expect("writing to memory cannot fail");
    }
    String::from_utf8(out).expect("cells are UTF-8")
}

/// The header and one row.
pub struct Csv;

impl Exporter for Csv {
    fn export(&self, record: &RunRecord) -> String {
        let value = serde_json::to_value(record).expect("the record serializes");
        to_csv(&[value])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashSet;

    #[test]
    fn column_names_are_unique() {
        let names = header();
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
    }

    #[test]
    fn every_column_name_is_a_plain_identifier() {
        for name in header() {
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{name}"
            );
        }
    }

    #[test]
    fn a_metric_column_is_followed_by_its_reason_column() {
        let names = header();
        let at = names
            .iter()
            .position(|n| n == "receiver_counters_cycles")
            .unwrap();
        assert_eq!(names[at + 1], "receiver_counters_cycles_unavailable_reason");
        assert!(names.contains(&"sender_cpu_ns_per_byte".to_string()));
        assert!(names.contains(&"receiver_latency_ns_p99".to_string()));
    }

    #[test]
    fn null_and_absent_values_are_empty_cells_and_reasons_are_text() {
        let record = json!({
            "status": "completed",
            "errors": ["a", "b"],
            "config": {"placement": [{"sender_cpu": 0, "receiver_cpu": 1}], "verify": false},
            "sides": [{}, {"counters": {"cycles": null, "cycles_unavailable_reason": "no PMU", "task_clock_ns": 5.0}}],
        });
        let names = header();
        let cells = row(&record);
        assert_eq!(cells.len(), names.len());
        let get = |name: &str| cells[names.iter().position(|n| n == name).unwrap()].clone();
        assert_eq!(get("status"), "completed");
        assert_eq!(get("errors"), "a; b");
        assert_eq!(get("verify"), "false");
        assert_eq!(get("placement"), r#"[{"receiver_cpu":1,"sender_cpu":0}]"#);
        assert_eq!(get("receiver_counters_cycles"), "");
        assert_eq!(get("receiver_counters_cycles_unavailable_reason"), "no PMU");
        assert_eq!(get("receiver_counters_task_clock_ns"), "5.0");
        assert_eq!(get("stat_mean"), "");
    }

    #[test]
    fn cells_with_commas_quotes_and_newlines_are_quoted() {
        let text = to_csv(&[json!({"notes": ["a, \"b\"\nc"]})]);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].len(), header().len());
        let notes = header().iter().position(|n| n == "notes").unwrap();
        assert_eq!(&rows[0][notes], "a, \"b\"\nc");
    }
}
