//! The readable run summary: a header that states how the figures were measured, then one line
//! per metric with the sides in columns (two, or on a sink the sender alone), then zero-copy,
//! the sink, verify and notes.
use super::units::{bytes, count, duration_ns};
use super::Exporter;
use crate::measure::histogram::LatencySummary;
use crate::measure::unmeasured::{self, NO_PMU};
use crate::record::{Metric, RunRecord, SideMetrics};
use std::fmt::Write;

pub struct Table;

const LABEL: usize = 30;
const COLUMN: usize = 22;

impl Exporter for Table {
    fn export(&self, r: &RunRecord) -> String {
        let mut out = String::new();
        header(&mut out, r);
        if let Some(reason) = &r.skipped_reason {
            let _ = writeln!(out, "\nskipped: {reason}");
            return out;
        }
        headline(&mut out, r);
        metrics(&mut out, r);
        out.push_str(&super::breakdown::text(r));
        footer(&mut out, r);
        out
    }
}

fn header(out: &mut String, r: &RunRecord) {
    let c = &r.config;
    let _ = writeln!(
        out,
        "bytepath run: {} over {}, pattern {}, {} B messages (8 fields x {} B), {} flow(s)",
        c.mechanism_name(),
        c.transport,
        c.pattern,
        c.message_size_bytes,
        c.field_size_bytes,
        c.threads
    );
    let _ = writeln!(
        out,
        "  measured {:.2} s after {:.2} s warm-up; clock {}; status: {}",
        r.measured_s, c.warmup_s, r.environment.clock, r.status
    );
    let _ = writeln!(out, "  where: {}", c.where_sides_run);
    if let Some(bytes) = c.channel_buffer_bytes {
        let _ = writeln!(
            out,
            "  channel buffer: {bytes} B each way (pipe size or ring size)"
        );
    }
    let _ = writeln!(out, "  placement: {}", placement(r));
    if !c.network.is_sink() {
        let _ = writeln!(
            out,
            "  receive size: {} B per recv ({})",
            c.recv_size_bytes, c.recv_mode
        );
    }
    modes(out, c);
    let _ = writeln!(out);
}

/// The settings that change what a run is: receive path, TCP_NODELAY, io_uring's queue, spin.
fn modes(out: &mut String, c: &crate::record::RunConfig) {
    if c.recv != crate::mechanism::receive::path::RecvPath::Recv {
        let _ = writeln!(
            out,
            "  receive path: --recv {}{}",
            c.recv.name(),
            if c.recv.delivers_data() {
                ""
            } else {
                " (recv(MSG_TRUNC): the kernel discards the bytes; NOT delivered, nothing verified)"
            }
        );
    }
    if c.tcp_nodelay && c.pattern == crate::config::Pattern::Stream {
        let _ = writeln!(
            out,
            "  TCP_NODELAY: on (zero-copy buffers come back on ACK; Nagle with delayed ACKs would stall them), unlike the other stream mechanisms"
        );
    }
    match c.queue_depth {
        Some(depth) if c.mechanism == crate::mechanism::MechanismKind::SENDMMSG => {
            let per_call = match c.pattern {
                crate::config::Pattern::Stream => format!("{depth} messages per call"),
                _ => "each message in a call of its own (the peer answers only a whole one)".into(),
            };
            let _ = writeln!(out, "  sendmmsg: {per_call}");
        }
        Some(depth) => {
            let _ = writeln!(
                out,
                "  io_uring: {depth} sends per submission, linked so they go out in order"
            );
        }
        None => {}
    }
    if let Some(segment) = c.gso_segment_bytes {
        let _ = writeln!(
            out,
            "  UDP GSO: --gso {segment}, every send cut by the kernel into datagrams of {segment} B"
        );
    }
    if c.spin {
        let _ = writeln!(
            out,
            "  mode: --spin (receiving sides busy-poll; not comparable with blocking runs)"
        );
    }
}

/// The one figure a reader wants first, from the side that can state it honestly, with its CI.
fn headline(out: &mut String, r: &RunRecord) {
    let _ = writeln!(out, "result: {}", result_line(r));
    let st = &r.statistics;
    let spread = match &st.summary {
        Some(s) => format!(
            "mean {} ± {:.2} % (95 % CI {} … {})",
            count(s.mean),
            100.0 * s.ci95_rel,
            count(s.ci95_low),
            count(s.ci95_high)
        ),
        None => format!(
            "no CI: {}",
            st.summary_unavailable_reason.as_deref().unwrap_or("-")
        ),
    };
    let target = match (st.ci_target_rel, st.ci_target_met) {
        (Some(t), Some(met)) => format!(
            "; target ±{:.1} % {}",
            100.0 * t,
            if met { "met" } else { "NOT met" }
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "  {} per slice ({} slices of {:.0} ms, {} side): {spread}; outlier slices {}; stop: {}{target}\n",
        st.metric,
        st.slices,
        st.slice_s * 1e3,
        st.side,
        st.outliers.total(),
        crate::stats::point::describe_stop(&st.stop_reason)
    );
}

/// The headline figure in words: round trips, transactions or Gbit/s, from the side that
/// measured it.
fn result_line(r: &RunRecord) -> String {
    if r.config.network.is_sink() {
        return super::sink::result_line(r);
    }
    let (client, receiver) = (&r.sides[0], &r.sides[1]);
    match (r.config.pattern, &client.latency_ns) {
        (crate::config::Pattern::Rr, Some(l)) => format!(
            "round trip p50 {} (p99 {}), {} round trips/s",
            duration_ns(l.p50 as f64),
            duration_ns(l.p99 as f64),
            count(client.messages_per_s)
        ),
        (crate::config::Pattern::Rr, None) => "no round trip completed".to_string(),
        (crate::config::Pattern::Crr, Some(l)) => format!(
            "transaction (connect, request, response, close) p50 {} (p99 {}), {} transactions/s",
            duration_ns(l.p50 as f64),
            duration_ns(l.p99 as f64),
            count(client.messages_per_s)
        ),
        (crate::config::Pattern::Crr, None) => "no transaction completed".to_string(),
        (crate::config::Pattern::Stream, _) => format!(
            "{:.3} Gbit/s {}, {} messages/s",
            receiver.throughput_gbps,
            if r.config.recv.delivers_data() {
                "received whole"
            } else {
                "counted and discarded in the kernel (--recv trunc: NOT delivered)"
            },
            count(receiver.messages_per_s)
        ),
    }
}

/// "pinned — 4 threads, cross (CPU sender→receiver): flows 0–3: 0→1, 2→3, 4→5, 6→7": every
/// flow's CPUs (`report::placement`).
fn placement(r: &RunRecord) -> String {
    use super::placement::{flows, heading, FlowCpus};
    let names = crate::record::side_names(r.config.pattern);
    if r.config.pin == "unpinned" {
        return "unpinned (the scheduler chose the CPUs)".into();
    }
    let sink = r.config.network.is_sink();
    let cpus: Vec<FlowCpus> = r
        .config
        .placement
        .iter()
        .map(|p| (p.sender_cpu, p.receiver_cpu))
        .collect();
    let threads = heading(cpus.len(), &r.config.pin, names, sink);
    format!("pinned — {threads}: {}", flows(&cpus, sink))
}

fn row(out: &mut String, label: &str, cells: Vec<String>) {
    // A cell wider than its column (a long n/a reason) keeps two spaces before it rather than
    // running into its neighbour.
    let _ = write!(out, "{label:<LABEL$}");
    for cell in &cells {
        let width = COLUMN.max(cell.chars().count() + 2);
        let _ = write!(out, "{cell:>width$}");
    }
    out.push('\n');
}

/// One cell per side the record has: both, or on a sink the sender alone.
fn both(r: &RunRecord, f: impl Fn(&SideMetrics) -> String) -> Vec<String> {
    r.sides.iter().map(f).collect()
}

fn metric(m: Option<&Metric>, fmt: impl Fn(f64) -> String) -> String {
    match m {
        Some(Metric::Value(v)) => fmt(*v),
        Some(Metric::Unavailable(reason)) => format!("n/a ({reason})"),
        None => "n/a".into(),
    }
}

fn metrics(out: &mut String, r: &RunRecord) {
    row(out, "", both(r, |s| s.side.to_string()));
    row(out, "messages", both(r, |s| count(s.messages as f64)));
    row(out, "payload", both(r, |s| bytes(s.payload_bytes as f64)));
    row(
        out,
        "throughput",
        both(r, |s| format!("{:.3} Gbit/s", s.throughput_gbps)),
    );
    row(out, "messages/s", both(r, |s| count(s.messages_per_s)));
    latency_rows(out, r);
    row(
        out,
        "CPU user",
        both(r, |s| format!("{:.3} s", s.cpu_user_s)),
    );
    row(out, "CPU sys", both(r, |s| format!("{:.3} s", s.cpu_sys_s)));
    row(
        out,
        "CPU-ns per byte",
        both(r, |s| {
            s.cpu_ns_per_byte
                .map_or("n/a".into(), |v| format!("{v:.3}"))
        }),
    );
    row(
        out,
        "context switches vol/invol",
        both(r, |s| {
            format!(
                "{} / {}",
                s.voluntary_context_switches, s.involuntary_context_switches
            )
        }),
    );
    counter_rows(out, r);
    let scope = r.sides[0]
        .counter_scope
        .map_or("none counted".to_string(), |s| format!("{s:?}"));
    let _ = writeln!(
        out,
        "  (perf counters per thread, scope {scope}{})",
        if r.sides.iter().any(|s| s.counters_multiplexed) {
            ", some scaled for multiplexing"
        } else {
            ""
        }
    );
}

/// The perf counter rows, then the derived figures' (cycles per byte …); the rows that are
/// n/a in both columns for one reason fold into one line per reason, which says it once.
fn counter_rows(out: &mut String, r: &RunRecord) {
    let cells = counter_cells(r);
    let folded = unmeasured::fold(&cells);
    let counted = r.sides[0].counters.0.len();
    for &i in &folded.kept {
        let key = cells[i].0;
        let cells = match i < counted {
            true => both(r, |s| metric(s.counters.get(key), count)),
            false => both(r, |s| metric(s.derived.get(key), |v| format!("{v:.3}"))),
        };
        row(out, key, cells);
    }
    for line in &folded.unmeasured {
        let instead = match line.reason {
            NO_PMU => " (CPU cost: CPU-ns per byte above, from getrusage)",
            _ => "",
        };
        let _ = writeln!(out, "{line}{instead}");
    }
}

/// Each counter's and derived figure's name, with each column's reason when it is n/a for
/// one (a value, or no reason recorded, is `None`).
fn counter_cells(r: &RunRecord) -> Vec<(&str, Vec<Option<&str>>)> {
    let counters = r.sides[0].counters.0.iter().map(|(key, _)| {
        let cells = r.sides.iter().map(|s| reason(s.counters.get(key)));
        (key.as_str(), cells.collect())
    });
    let derived = r.sides[0].derived.0.iter().map(|(key, _)| {
        let cells = r.sides.iter().map(|s| reason(s.derived.get(key)));
        (key.as_str(), cells.collect())
    });
    counters.chain(derived).collect()
}

/// A cell's reason for being n/a, when it is n/a for one.
fn reason(m: Option<&Metric>) -> Option<&str> {
    match m {
        Some(Metric::Unavailable(reason)) => Some(reason.as_str()),
        _ => None,
    }
}

/// Whether the record's no-PMU note says what a folded counter line already says: the
/// hardware counters' rows folded for that reason.
fn no_pmu_line_printed(r: &RunRecord) -> bool {
    let cells = counter_cells(r);
    let folded = unmeasured::fold(&cells);
    folded.unmeasured.iter().any(|u| u.reason == NO_PMU)
}

/// The note `record::notes` adds on a machine without a PMU.
fn is_no_pmu_note(note: &str) -> bool {
    note.contains("exposes no PMU")
}

fn latency_rows(out: &mut String, r: &RunRecord) {
    type Pick = fn(&LatencySummary) -> f64;
    let pick: [(&str, Pick); 7] = [
        ("latency min", |l| l.min as f64),
        ("latency p50", |l| l.p50 as f64),
        ("latency p90", |l| l.p90 as f64),
        ("latency p99", |l| l.p99 as f64),
        ("latency p99.9", |l| l.p99_9 as f64),
        ("latency max", |l| l.max as f64),
        ("latency mean", |l| l.mean),
    ];
    for (label, f) in pick {
        row(
            out,
            label,
            both(r, |s| match &s.latency_ns {
                Some(l) => duration_ns(f(l)),
                None => "n/a".into(),
            }),
        );
    }
    chosen_percentile_rows(out, r);
    if r.config.network.is_sink() {
        let _ = writeln!(
            out,
            "  (on a sink the sender is the only side: its figures count bytes the kernel accepted)"
        );
    } else if r.config.pattern == crate::config::Pattern::Stream {
        let _ = writeln!(
            out,
            "  (sender figures count bytes handed to the kernel; receiver figures count bytes {})",
            if r.config.recv.delivers_data() {
                "received whole"
            } else {
                "the kernel discarded (--recv trunc: NOT delivered)"
            }
        );
    }
    for s in &r.sides {
        match &s.latency_ns_unavailable_reason {
            Some(reason) => {
                let _ = writeln!(out, "  ({} latency n/a: {reason})", s.side);
            }
            None => {
                let _ = writeln!(out, "  ({} latency = {})", s.side, s.latency_definition);
            }
        }
    }
}

/// `--percentiles` beyond today's set: a row each, read from the side's whole histogram.
fn chosen_percentile_rows(out: &mut String, r: &RunRecord) {
    use crate::measure::percentiles::{label, DEFAULT};
    let mut extra: Vec<f64> = r
        .sides
        .iter()
        .flat_map(|s| {
            s.distribution
                .latency_percentiles_ns
                .iter()
                .map(|v| v.percentile)
        })
        .filter(|p| !DEFAULT.contains(p))
        .collect();
    extra.sort_by(f64::total_cmp);
    extra.dedup();
    for p in extra {
        let cell = |s: &SideMetrics| {
            let v = s
                .distribution
                .latency_percentiles_ns
                .iter()
                .find(|v| v.percentile == p);
            v.map_or_else(|| "n/a".into(), |v| duration_ns(v.ns as f64))
        };
        row(out, &format!("latency {}", label(p)), both(r, cell));
    }
}

fn footer(out: &mut String, r: &RunRecord) {
    let _ = writeln!(out);
    if let Some(z) = &r.zerocopy {
        let s = &z.stats;
        let _ = writeln!(
            out,
            "zerocopy: {} send calls, {} completions, {} copied anyway, {} outstanding at end, {} ENOBUFS retries, pool {} messages per flow",
            s.send_calls, s.completions, s.copied, s.outstanding_at_end, s.enobufs_retries, s.pool_messages
        );
        let _ = writeln!(out, "  {}", z.summary);
    }
    if let Some(p) = &r.page_refs {
        let _ = writeln!(out, "pages: {}", p.summary);
    }
    if let Some(c) = &r.crr {
        super::crr::lines(out, c);
    }
    if let Some(b) = &r.bidir {
        super::bidir::lines(out, b);
    }
    if let Some(l) = &r.under_load {
        super::under_load::lines(out, l);
    }
    if let Some(rx) = &r.receive {
        let _ = writeln!(out, "receive: {}", rx.summary);
    }
    if let Some(d) = &r.datagrams {
        let _ = writeln!(out, "datagrams: {}", d.summary);
    }
    super::copies::run_lines(out, r);
    match &r.sink {
        Some(sink) => super::sink::lines(out, sink),
        None => super::delivery::transfer_line(out, r),
    }
    super::delivery::verify_lines(out, r);
    if let Some(reason) = &r.machine_wide_cpu_unavailable_reason {
        let _ = writeln!(out, "machine-wide CPU: n/a ({reason})");
    }
    if let Some(m) = &r.machine_wide_cpu {
        let _ = writeln!(
            out,
            "machine-wide CPU over the measured phase (all CPUs): user {:.2} s, system {:.2} s, softirq {:.2} s, irq {:.2} s, idle {:.2} s",
            m.user_s, m.system_s, m.softirq_s, m.irq_s, m.idle_s
        );
    }
    for e in &r.errors {
        let _ = writeln!(out, "error: {e}");
    }
    let folded_pmu = no_pmu_line_printed(r);
    for n in r
        .notes
        .iter()
        .filter(|n| !(folded_pmu && is_no_pmu_note(n)))
    {
        let _ = writeln!(out, "note: {n}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RunSpec;
    use crate::engine::RunOutcome;
    use crate::environment::Environment;
    use crate::record::MetricSet;
    use std::time::Duration;

    type Figures<'a> = [Vec<(&'a str, Metric)>; 2];

    /// A record of a run on a machine without a PMU (its notes as `record::notes` writes
    /// them), each side with the given counters and derived figures.
    fn record(counters: Figures, derived: Figures) -> RunRecord {
        let spec = RunSpec::plain(4096, Duration::from_secs(1));
        let mut env = Environment::detect(&[0]);
        env.pmu_available = false;
        let mut r = crate::record::build(&spec, &RunOutcome::not_run(&spec, "a test".into()), env);
        r.notes = crate::record::notes(&spec, &r.environment, None, None);
        let set = |m: &[(&str, Metric)]| {
            MetricSet(m.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
        };
        for (i, side) in r.sides.iter_mut().enumerate() {
            side.counters = set(&counters[i]);
            side.derived = set(&derived[i]);
        }
        r
    }

    fn na(reason: &str) -> Metric {
        Metric::Unavailable(reason.into())
    }

    /// The counter rows and the notes, as the table prints them.
    fn printed(r: &RunRecord) -> (String, String) {
        let (mut rows, mut notes) = (String::new(), String::new());
        counter_rows(&mut rows, r);
        footer(&mut notes, r);
        (rows, notes)
    }

    #[test]
    fn rows_n_a_for_one_reason_in_both_columns_fold_and_the_note_is_not_repeated() {
        let side = || {
            vec![
                ("task_clock_ns", Metric::Value(2e6)),
                ("cycles", na(NO_PMU)),
                ("instructions", na(NO_PMU)),
            ]
        };
        let derived = || vec![("cycles_per_byte", na(NO_PMU))];
        let (rows, notes) = printed(&record([side(), side()], [derived(), derived()]));
        assert!(rows.starts_with("task_clock_ns "), "{rows}");
        assert_eq!(rows.lines().count(), 2, "{rows}");
        assert!(
            rows.contains("\nhardware counters (cycles, instructions, cycles_per_byte): not measured: this machine exposes no PMU (CPU cost: CPU-ns per byte above, from getrusage)\n"),
            "{rows}"
        );
        assert!(!rows.contains("n/a"), "{rows}");
        assert!(!notes.contains("PMU"), "the note is not repeated: {notes}");
        assert!(notes.contains("note: threads were not pinned"), "{notes}");
    }

    #[test]
    fn a_row_with_a_value_in_one_column_stays_and_so_does_the_note() {
        let sender = vec![("cycles", Metric::Value(1e6))];
        let receiver = vec![("cycles", na(NO_PMU))];
        let (rows, notes) = printed(&record([sender, receiver], [vec![], vec![]]));
        assert!(rows.starts_with("cycles "), "{rows}");
        assert!(rows.contains("n/a (no PMU)"), "{rows}");
        assert_eq!(rows.lines().count(), 1, "{rows}");
        assert!(notes.contains("exposes no PMU"), "{notes}");
    }

    #[test]
    fn rows_n_a_for_different_reasons_do_not_merge() {
        let paranoid = "permission: perf_event_paranoid=2";
        let side = || vec![("context_switches", na(paranoid)), ("cycles", na(NO_PMU))];
        let mixed = |r: &str| vec![("cycles_per_byte", na(r))];
        let (rows, _) = printed(&record([side(), side()], [mixed(NO_PMU), mixed(paranoid)]));
        let lines: Vec<&str> = rows.lines().collect();
        assert_eq!(lines.len(), 3, "{rows}");
        assert!(lines[0].starts_with("cycles_per_byte ") && lines[0].contains("n/a (no PMU)"));
        assert_eq!(
            lines[1],
            "perf counters (context_switches): not measured: permission: perf_event_paranoid=2"
        );
        assert!(lines[2].starts_with("hardware counters (cycles): not measured"));
    }

    /// The note dropped after a folded no-PMU line is the one `record::notes` writes when
    /// the machine has no PMU, and no other.
    #[test]
    fn the_no_pmu_note_is_recognised_and_nothing_else() {
        let spec = RunSpec::plain(4096, Duration::from_secs(1));
        let mut env = Environment::detect(&[0]);
        env.pmu_available = false;
        let notes = crate::record::notes(&spec, &env, None, None);
        let pmu = notes.iter().filter(|n| is_no_pmu_note(n)).count();
        assert_eq!(pmu, 1, "{notes:#?}");
        env.pmu_available = true;
        let notes = crate::record::notes(&spec, &env, None, None);
        assert!(!notes.iter().any(|n| is_no_pmu_note(n)), "{notes:#?}");
    }
}
