//! The `crr` lines of a run's table: transactions each side saw, the split of a transaction,
//! CPU and context switches per transaction, and how the client's ports fared.
use crate::record::crr::CrrReport;
use std::fmt::Write;

/// µs with two decimals, or "n/a".
fn us(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{v:.2} µs"))
}

fn per(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{v:.2}"))
}

/// Appends the crr block to a run's table.
pub fn lines(out: &mut String, c: &CrrReport) {
    let _ = writeln!(
        out,
        "crr: {} transactions by the client, {} answered by the server over {} accepted connections",
        c.client_transactions, c.server_transactions, c.server_accepts
    );
    let _ = writeln!(
        out,
        "  split (mean of {} timed transactions): connect {}, response {} (first byte {}), close {}",
        c.timed_transactions,
        us(c.connect_us_mean),
        us(c.response_us_mean),
        us(c.first_byte_us_mean),
        us(c.close_us_mean)
    );
    let _ = writeln!(
        out,
        "  per transaction: CPU client {}, server {}; context switches client {}, server {}",
        us(c.client_cpu_us_per_transaction),
        us(c.server_cpu_us_per_transaction),
        per(c.client_context_switches_per_transaction),
        per(c.server_context_switches_per_transaction)
    );
    let range = c
        .ephemeral_port_range
        .map_or_else(|| "n/a".into(), |[lo, hi]| format!("{lo}-{hi}"));
    let tw = match (c.time_wait_at_end, &c.time_wait_unavailable_reason) {
        (Some(n), _) => n.to_string(),
        (None, Some(why)) => format!("n/a ({why})"),
        (None, None) => "n/a".into(),
    };
    let _ = writeln!(
        out,
        "  ports: client close {}; port {}; ephemeral range {range}; tcp_tw_reuse {}; TIME_WAIT at end {tw}",
        c.client_close,
        c.port_choice,
        c.tcp_tw_reuse.map_or_else(|| "n/a".into(), |v| v.to_string()),
    );
}

/// The crr block's CSV columns (empty for other patterns), units in the names.
pub const CSV: &[(&str, &str, super::csv_cell::Cell)] = &[
    (
        "crr_client_transactions",
        "/crr/client_transactions",
        Scalar,
    ),
    (
        "crr_server_transactions",
        "/crr/server_transactions",
        Scalar,
    ),
    ("crr_server_accepts", "/crr/server_accepts", Scalar),
    ("crr_timed_transactions", "/crr/timed_transactions", Scalar),
    ("crr_connect_us_mean", "/crr/connect_us_mean", Scalar),
    ("crr_first_byte_us_mean", "/crr/first_byte_us_mean", Scalar),
    ("crr_response_us_mean", "/crr/response_us_mean", Scalar),
    ("crr_close_us_mean", "/crr/close_us_mean", Scalar),
    (
        "crr_client_cpu_us_per_transaction",
        "/crr/client_cpu_us_per_transaction",
        Scalar,
    ),
    (
        "crr_server_cpu_us_per_transaction",
        "/crr/server_cpu_us_per_transaction",
        Scalar,
    ),
    (
        "crr_client_context_switches_per_transaction",
        "/crr/client_context_switches_per_transaction",
        Scalar,
    ),
    (
        "crr_server_context_switches_per_transaction",
        "/crr/server_context_switches_per_transaction",
        Scalar,
    ),
    ("crr_client_close", "/crr/client_close", Scalar),
    (
        "crr_ephemeral_port_low",
        "/crr/ephemeral_port_range/0",
        Scalar,
    ),
    (
        "crr_ephemeral_port_high",
        "/crr/ephemeral_port_range/1",
        Scalar,
    ),
    ("crr_tcp_tw_reuse", "/crr/tcp_tw_reuse", Scalar),
    ("crr_time_wait_at_end", "/crr/time_wait_at_end", Scalar),
];
use super::csv_cell::Cell::Scalar;
