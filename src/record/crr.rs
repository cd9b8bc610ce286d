//! The `crr` block of a run record: transactions on each side, the accepts that carried them,
//! the split of one transaction (connect, response, close), each side's CPU and context
//! switches per transaction, and how the client's ports fared (close by FIN or reset, the
//! ephemeral port range, TIME_WAIT left at the end).
use super::{RunRecord, SideMetrics};
use crate::engine::crr::{port_range, tw_reuse, CrrStats};
use crate::engine::worker::Role;
use crate::engine::RunOutcome;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CrrReport {
    /// Transactions the client completed and the server answered, all phases.
    pub client_transactions: u64,
    pub server_transactions: u64,
    /// Connections the server accepted, all phases (one per transaction).
    pub server_accepts: u64,
    /// Transactions inside the measured window, which the split covers.
    pub timed_transactions: u64,
    pub connect_ns_total: u64,
    /// Absent in records written before the first-byte split (read as 0, mean `None`).
    #[serde(default)]
    pub first_byte_ns_total: u64,
    pub response_ns_total: u64,
    pub close_ns_total: u64,
    /// What each part of the split spans.
    pub split_definition: String,
    pub connect_us_mean: Option<f64>,
    #[serde(default)]
    pub first_byte_us_mean: Option<f64>,
    pub response_us_mean: Option<f64>,
    pub close_us_mean: Option<f64>,
    /// CPU (user + system) per transaction of the measured window, per side, in µs.
    pub client_cpu_us_per_transaction: Option<f64>,
    pub server_cpu_us_per_transaction: Option<f64>,
    /// Context switches (voluntary + involuntary) per transaction, per side.
    pub client_context_switches_per_transaction: Option<f64>,
    pub server_context_switches_per_transaction: Option<f64>,
    /// How the client closed: "fin" (TIME_WAIT on the client) or "reset" (SO_LINGER 0).
    pub client_close: String,
    /// How the client's port was chosen.
    pub port_choice: String,
    /// net.ipv4.ip_local_port_range and net.ipv4.tcp_tw_reuse when the run ended (tcp).
    pub ephemeral_port_range: Option<[u32; 2]>,
    pub tcp_tw_reuse: Option<u32>,
    /// Client sockets in TIME_WAIT towards the listeners when the run ended (tcp).
    pub time_wait_at_end: Option<u64>,
    pub time_wait_unavailable_reason: Option<String>,
}

const SPLIT: &str = "client clock (read five times per transaction: start, connected, first \
    response bytes, answered, closed), per transaction of the measured window: connect = from \
    the previous transaction's end through socket(2) until connect(2) returned; first byte = \
    request handed to the kernel until the first read of the response returned; response = \
    request handed to the kernel until the whole response was read (so it includes first \
    byte); close = close(2) and the bookkeeping before the next transaction";

/// The block of a crr run, or `None` for other patterns.
pub fn report(outcome: &RunOutcome, sides: &[SideMetrics], tcp: bool) -> Option<CrrReport> {
    let of = |role: Role| {
        outcome
            .samples
            .iter()
            .filter(move |s| s.role == role)
            .filter_map(|s| s.crr.as_ref())
    };
    of(Role::Sender).next()?;
    let sum = |role, f: fn(&CrrStats) -> u64| of(role).map(f).sum::<u64>();
    let linger_zero = of(Role::Sender).any(|s| s.linger_zero);
    let waits: Vec<u64> = of(Role::Sender)
        .filter_map(|s| s.time_wait_at_end)
        .collect();
    let mut report = CrrReport {
        client_transactions: sum(Role::Sender, |s| s.transactions),
        server_transactions: sum(Role::Receiver, |s| s.transactions),
        server_accepts: sum(Role::Receiver, |s| s.accepts),
        timed_transactions: sum(Role::Sender, |s| s.timed),
        connect_ns_total: sum(Role::Sender, |s| s.connect_ns),
        first_byte_ns_total: sum(Role::Sender, |s| s.first_byte_ns),
        response_ns_total: sum(Role::Sender, |s| s.response_ns),
        close_ns_total: sum(Role::Sender, |s| s.close_ns),
        split_definition: SPLIT.into(),
        connect_us_mean: None,
        first_byte_us_mean: None,
        response_us_mean: None,
        close_us_mean: None,
        client_cpu_us_per_transaction: None,
        server_cpu_us_per_transaction: None,
        client_context_switches_per_transaction: None,
        server_context_switches_per_transaction: None,
        client_close: if linger_zero { "reset (SO_LINGER 0)" } else { "fin" }.into(),
        port_choice: if tcp {
            "chosen by connect(2) (no bind before connect, so IP_BIND_ADDRESS_NO_PORT is not needed)"
        } else {
            "none (unix sockets have no ports)"
        }
        .into(),
        ephemeral_port_range: tcp.then(port_range).flatten(),
        tcp_tw_reuse: tcp.then(tw_reuse).flatten(),
        time_wait_at_end: (tcp && waits.len() == outcome_clients(outcome)).then(|| waits.iter().sum()),
        time_wait_unavailable_reason: None,
    };
    if report.time_wait_at_end.is_none() {
        report.time_wait_unavailable_reason = Some(if tcp {
            "/proc/net/tcp could not be read by every client".into()
        } else {
            "unix sockets have no TIME_WAIT".into()
        });
    }
    derive(&mut report, sides);
    Some(report)
}

fn outcome_clients(outcome: &RunOutcome) -> usize {
    outcome
        .samples
        .iter()
        .filter(|s| s.role == Role::Sender && s.crr.is_some())
        .count()
}

/// The means and per-transaction figures from the totals and the (possibly combined) sides.
fn derive(report: &mut CrrReport, sides: &[SideMetrics]) {
    let timed = report.timed_transactions;
    let mean = |total: u64| (timed > 0).then(|| total as f64 / timed as f64 / 1e3);
    report.connect_us_mean = mean(report.connect_ns_total);
    // Records from before the split carry no first-byte total: no figure, not a zero.
    report.first_byte_us_mean = (report.first_byte_ns_total > 0)
        .then(|| mean(report.first_byte_ns_total))
        .flatten();
    report.response_us_mean = mean(report.response_ns_total);
    report.close_us_mean = mean(report.close_ns_total);
    let per =
        |side: &SideMetrics, value: f64| (side.messages > 0).then(|| value / side.messages as f64);
    let cpu = |s: &SideMetrics| per(s, (s.cpu_user_s + s.cpu_sys_s) * 1e6);
    let switches = |s: &SideMetrics| {
        per(
            s,
            (s.voluntary_context_switches + s.involuntary_context_switches) as f64,
        )
    };
    if let [client, server] = sides {
        report.client_cpu_us_per_transaction = cpu(client);
        report.server_cpu_us_per_transaction = cpu(server);
        report.client_context_switches_per_transaction = switches(client);
        report.server_context_switches_per_transaction = switches(server);
    }
}

/// A study's point from its visits: the totals summed, the figures derived again over the
/// combined sides; TIME_WAIT as the last visit left it.
pub fn combine(visits: &[&RunRecord], sides: &[SideMetrics]) -> Option<CrrReport> {
    let blocks: Vec<&CrrReport> = visits.iter().filter_map(|r| r.crr.as_ref()).collect();
    let mut report = (*blocks.last()?).clone();
    let sum = |f: fn(&CrrReport) -> u64| blocks.iter().map(|b| f(b)).sum::<u64>();
    report.client_transactions = sum(|b| b.client_transactions);
    report.server_transactions = sum(|b| b.server_transactions);
    report.server_accepts = sum(|b| b.server_accepts);
    report.timed_transactions = sum(|b| b.timed_transactions);
    report.connect_ns_total = sum(|b| b.connect_ns_total);
    report.first_byte_ns_total = sum(|b| b.first_byte_ns_total);
    report.response_ns_total = sum(|b| b.response_ns_total);
    report.close_ns_total = sum(|b| b.close_ns_total);
    derive(&mut report, sides);
    Some(report)
}
