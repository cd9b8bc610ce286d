//! A visited point's record, built from its visit records (the lines of visits.jsonl): the
//! headline figures from the visits with no perf counter open, the counter figures from the
//! point's counter visit, the statistics from the visit means. Counts and CPU time are summed
//! over the headline visits; rates are the mean of the visit rates (every visit is as long as
//! the others, so this is the mean the interval is about); latency percentiles are the median
//! over visits of each visit's percentile (a histogram per visit is not kept). Nothing is
//! recomputed from a visit's threads: a point's record reads the same whether the visits were
//! just measured or read back for `--resume`.
use super::{
    notes, DatagramReport, PageRefsReport, RunRecord, SideMetrics, VerifyReport, VisitKind,
    ZerocopyReport,
};
use crate::config::{Pattern, RunSpec};
use crate::environment::Environment;
use crate::measure::histogram::LatencySummary;
use crate::mechanism::receive::KEPT_MISMATCHES;
use crate::record::{Metric, MetricSet};
use crate::stats::point::{slice_cv, visit_statistics, VisitPlan, VisitValue};

/// What the point-level latency means, added to each side's definition.
const LATENCY_OVER_VISITS: &str =
    "; for a point measured in visits, each percentile is the median over visits of that visit's percentile";

/// The point's record from its `visits` (headline and counter visits, any order). `None`
/// when no visit ran.
pub fn point_record(
    spec: &RunSpec,
    env: Environment,
    visits: &[&RunRecord],
    plan: &VisitPlan,
) -> Option<RunRecord> {
    let counters = visits.iter().find(|r| kind(r) == Some(VisitKind::Counters));
    let profiled = visits.iter().find(|r| kind(r) == Some(VisitKind::Profile));
    let headline = headline_visits(visits);
    let first = headline.first().or(counters)?;
    if first.skipped_reason.is_some() {
        return Some(RunRecord {
            visit: None,
            ..(*first).clone()
        });
    }
    let measured = with_status(&headline, "completed");
    let mut record = (*first).clone();
    record.visit = None;
    // A visit that failed twice (made once more at once, and failed again) costs the point
    // that visit, not the visits it completed: with two or more it keeps an interval.
    let failed = with_status(visits, "failed");
    let keeps = judge(
        &mut record,
        visits,
        &failed,
        measured.len(),
        plan.min_visits,
    );
    record.timestamp_unix_s = visits.iter().map(|r| r.timestamp_unix_s).max().unwrap_or(0);
    record.measured_s = measured.iter().map(|r| r.measured_s).sum();
    record.statistics = visit_statistics(spec.pattern, &visit_values(&measured), plan);
    // Two sides, or on a sink (`--sink`) the sender alone.
    record.sides = (0..first.sides.len())
        .map(|i| pooled_side(&measured, counters.map(|c| &c.sides[i]), i, &first.sides[i]))
        .collect();
    sum_reports(&mut record, spec, &measured);
    record.crr = super::crr::combine(&measured, &record.sides);
    set_machine_wide(&mut record, &measured);
    record.notes = notes(
        spec,
        &env,
        record.zerocopy.as_ref(),
        record.receive.as_ref(),
    );
    record
        .notes
        .push(visit_note(plan, measured.len(), counters.is_some()));
    if keeps {
        record.notes.push(failed_note(&failed, measured.len()));
    }
    if let Some(profiled) = profiled {
        attach_profile(&mut record, profiled, plan);
    }
    let copies = visits.iter().find(|r| kind(r) == Some(VisitKind::Copies));
    record.copies = copies.and_then(|c| c.copies.clone());
    record.environment = env;
    super::sink::restate(&mut record, spec);
    Some(record)
}

/// The visits of one status ("completed", "failed").
fn with_status<'a>(visits: &[&'a RunRecord], status: &str) -> Vec<&'a RunRecord> {
    visits
        .iter()
        .filter(|r| r.status == status)
        .copied()
        .collect()
}

/// The machine-wide CPU summed over the visits, or why there is none.
fn set_machine_wide(record: &mut RunRecord, measured: &[&RunRecord]) {
    record.machine_wide_cpu = sum_machine(measured);
    record.machine_wide_cpu_unavailable_reason = record
        .machine_wide_cpu
        .is_none()
        .then(|| "not read in every visit (a starved controller, or no visit measured)".into());
}

/// Which kind of visit a record is (`None`: a record made outside visits).
fn kind(r: &&&RunRecord) -> Option<VisitKind> {
    r.visit.as_ref().map(|v| v.kind)
}

/// The visits the headline figures come from (a record made outside visits counts as one), in
/// round order.
fn headline_visits<'a>(visits: &[&'a RunRecord]) -> Vec<&'a RunRecord> {
    let mut headline: Vec<&RunRecord> = visits
        .iter()
        .filter(|r| matches!(kind(r), None | Some(VisitKind::Headline)))
        .copied()
        .collect();
    headline.sort_by_key(|r| r.visit.as_ref().map_or(0, |v| v.round));
    headline
}

/// The point's errors and status. With two or more completed visits the point keeps them when
/// others failed twice (returns `true`: no errors, a note says which failed); its status is
/// judged against the minimum visits.
fn judge(
    record: &mut RunRecord,
    visits: &[&RunRecord],
    failed: &[&RunRecord],
    measured: usize,
    min_visits: usize,
) -> bool {
    let keeps = !failed.is_empty() && measured >= 2;
    record.errors = if keeps {
        Vec::new()
    } else {
        visit_errors(visits)
    };
    let failed_headline = failed
        .iter()
        .filter(|r| {
            r.visit
                .as_ref()
                .is_none_or(|v| v.kind == VisitKind::Headline)
        })
        .count();
    record.status = status(&record.errors, measured + failed_headline, min_visits).into();
    record.interrupted = record.status == "interrupted";
    keeps
}

/// The profiled visit's blocks on the point's record, saying where they come from.
fn attach_profile(record: &mut RunRecord, profiled: &RunRecord, plan: &VisitPlan) {
    let about = format!(
        "a visit of its own ({:.0} ms measured, after the headline and counter visits) \
         with every side's threads sampled; its figures are in no headline",
        plan.visit_s * 1e3
    );
    super::profile::attach(record, profiled, about);
}

/// Every visit's errors, each naming its visit.
fn visit_errors(visits: &[&RunRecord]) -> Vec<String> {
    visits
        .iter()
        .flat_map(|r| {
            let at = r
                .visit
                .as_ref()
                .map_or("visit".to_string(), |v| format!("round {} visit", v.round));
            r.errors.iter().map(move |e| format!("{at}: {e}"))
        })
        .collect()
}

/// What a point that kept its completed visits says of the ones that failed twice.
fn failed_note(failed: &[&RunRecord], measured: usize) -> String {
    let errors = visit_errors(failed).join("; ");
    format!(
        "{} visit(s) failed twice and are left out ({errors}); the point's figures and interval \
         come from the {measured} headline visits that completed",
        failed.len()
    )
}

fn status(errors: &[String], measured: usize, min_visits: usize) -> &'static str {
    if !errors.is_empty() {
        "failed"
    } else if measured < min_visits {
        "interrupted"
    } else {
        "completed"
    }
}

/// Each measured visit's headline figure (the measured side's whole-window rate), its round
/// and its slices' spread.
fn visit_values(measured: &[&RunRecord]) -> Vec<VisitValue> {
    measured
        .iter()
        .map(|r| VisitValue {
            round: r.visit.as_ref().map_or(0, |v| v.round),
            mean: r.headline_value(),
            slices: r.statistics.slices,
            slice_cv: slice_cv(&r.statistics.values),
            sender_cpu_ns_per_byte: r
                .sides
                .iter()
                .find(|s| s.side == "sender")
                .and_then(|s| s.cpu_ns_per_byte),
            client_latency_ns: client_latency(r),
        })
        .collect()
}

/// One side over the measured visits, with its visits' latency histograms pooled.
fn pooled_side(
    measured: &[&RunRecord],
    counted: Option<&SideMetrics>,
    i: usize,
    first: &SideMetrics,
) -> SideMetrics {
    let mut point = side(measured, counted, i, first);
    let visits: Vec<&SideMetrics> = measured.iter().map(|r| &r.sides[i]).collect();
    super::distribution::pool(&mut point, &visits);
    point
}

/// An rr visit's client latency (p50, p99) in ns; `None` for other patterns.
fn client_latency(r: &RunRecord) -> Option<(f64, f64)> {
    let client = r
        .sides
        .first()
        .filter(|_| r.config.pattern == Pattern::Rr)?;
    let l = client.latency_ns.as_ref()?;
    Some((l.p50 as f64, l.p99 as f64))
}

/// One side over the measured visits; its counters from the counter visit.
fn side(
    measured: &[&RunRecord],
    counted: Option<&SideMetrics>,
    i: usize,
    first: &SideMetrics,
) -> SideMetrics {
    let sides: Vec<&SideMetrics> = measured.iter().map(|r| &r.sides[i]).collect();
    let n = sides.len().max(1) as f64;
    let sum_u = |f: fn(&SideMetrics) -> u64| sides.iter().map(|s| f(s)).sum::<u64>();
    let sum_f = |f: fn(&SideMetrics) -> f64| sides.iter().map(|s| f(s)).fold(0.0, |a, b| a + b);
    let (bytes, cpu_user_s, cpu_sys_s) = (
        sum_u(|s| s.payload_bytes),
        sum_f(|s| s.cpu_user_s),
        sum_f(|s| s.cpu_sys_s),
    );
    let latency = latency_over_visits(&sides);
    let no_counters = |set: &MetricSet| {
        MetricSet(
            set.0
                .iter()
                .map(|(k, _)| {
                    let why = "counted in no visit of this point (--counters none)";
                    (k.clone(), Metric::Unavailable(why.into()))
                })
                .collect(),
        )
    };
    SideMetrics {
        side: first.side.clone(),
        threads: first.threads,
        pid: first.pid,
        messages: sum_u(|s| s.messages),
        payload_bytes: bytes,
        elapsed_s: sum_f(|s| s.elapsed_s),
        throughput_gbps: sum_f(|s| s.throughput_gbps) / n,
        messages_per_s: sum_f(|s| s.messages_per_s) / n,
        latency_definition: format!("{}{LATENCY_OVER_VISITS}", first.latency_definition),
        latency_ns_unavailable_reason: latency
            .is_none()
            .then(|| first.latency_ns_unavailable_reason.clone())
            .flatten()
            .or_else(|| {
                latency
                    .is_none()
                    .then(|| "no visit measured a latency".into())
            }),
        latency_ns: latency,
        distribution: Default::default(),
        cpu_user_s,
        cpu_sys_s,
        cpu_ns_per_byte: (bytes > 0).then(|| (cpu_user_s + cpu_sys_s) * 1e9 / bytes as f64),
        voluntary_context_switches: sum_u(|s| s.voluntary_context_switches),
        involuntary_context_switches: sum_u(|s| s.involuntary_context_switches),
        counters: counted.map_or_else(|| no_counters(&first.counters), |c| c.counters.clone()),
        derived: counted.map_or_else(|| no_counters(&first.derived), |c| c.derived.clone()),
        counter_scope: counted.and_then(|c| c.counter_scope),
        counters_multiplexed: counted.is_some_and(|c| c.counters_multiplexed),
        profile: None,
    }
}

/// Each percentile's median over the visits that measured one; counts added, extremes kept,
/// the mean weighted by each visit's count.
fn latency_over_visits(sides: &[&SideMetrics]) -> Option<LatencySummary> {
    let all: Vec<LatencySummary> = sides.iter().filter_map(|s| s.latency_ns).collect();
    if all.is_empty() {
        return None;
    }
    let median = |f: fn(&LatencySummary) -> u64| -> u64 {
        let mut v: Vec<u64> = all.iter().map(f).collect();
        v.sort_unstable();
        let mid = v.len() / 2;
        if v.len() % 2 == 1 {
            v[mid]
        } else {
            (v[mid - 1] + v[mid]) / 2
        }
    };
    let count: u64 = all.iter().map(|l| l.count).sum();
    Some(LatencySummary {
        count,
        min: all.iter().map(|l| l.min).min().unwrap_or(0),
        p50: median(|l| l.p50),
        p90: median(|l| l.p90),
        p99: median(|l| l.p99),
        p99_9: median(|l| l.p99_9),
        max: all.iter().map(|l| l.max).max().unwrap_or(0),
        mean: all.iter().map(|l| l.mean * l.count as f64).sum::<f64>() / count.max(1) as f64,
    })
}

/// The per-run blocks summed over the measured visits.
fn sum_reports(record: &mut RunRecord, spec: &RunSpec, measured: &[&RunRecord]) {
    let zerocopy = measured.iter().filter_map(|r| r.zerocopy.as_ref());
    record.zerocopy = zerocopy.fold(None, |acc: Option<ZerocopyReport>, z| {
        let mut stats = acc.map_or_else(Default::default, |a| a.stats);
        stats.add(&z.stats);
        Some(ZerocopyReport::from_stats(spec.mechanism, stats))
    });
    let page_refs = measured.iter().filter_map(|r| r.page_refs.as_ref());
    record.page_refs = page_refs.fold(None, |acc: Option<PageRefsReport>, p| {
        let mut stats = acc.map_or_else(Default::default, |a| a.stats);
        stats.add(&p.stats);
        Some(PageRefsReport::from_stats(stats))
    });
    let receive = measured.iter().filter_map(|r| r.receive.as_ref());
    record.receive = receive.fold(None, |acc: Option<super::ReceiveReport>, r| {
        let mut stats = acc.map_or_else(
            || crate::mechanism::receive::path::ReceivePathStats::new(spec.recv_path),
            |a| a.stats,
        );
        stats.add(&r.stats);
        Some(super::receive::from_stats(spec, stats))
    });
    record.datagrams = sum_datagrams(measured);
    let sinks: Vec<_> = measured
        .iter()
        .filter_map(|r| Some((r.sink.as_ref()?, r.sides[0].payload_bytes)))
        .collect();
    record.sink = super::sink::combine(&sinks);
    record.under_load = super::under_load::combine(measured);
    record.tcp = super::tcp::combine(&record.tcp, measured);
    record.verify = sum_verify(spec, measured);
    let mut transfer = super::TransferTotals {
        all_delivered: !measured.is_empty(),
        ..Default::default()
    };
    for t in measured.iter().map(|r| &r.transfer) {
        transfer.sender_sent_bytes += t.sender_sent_bytes;
        transfer.receiver_received_bytes += t.receiver_received_bytes;
        transfer.receiver_sent_bytes += t.receiver_sent_bytes;
        transfer.sender_received_bytes += t.sender_received_bytes;
        transfer.all_delivered &= t.all_delivered;
    }
    record.transfer = transfer;
}

fn sum_datagrams(measured: &[&RunRecord]) -> Option<DatagramReport> {
    let mut all = measured.iter().filter_map(|r| r.datagrams.as_ref());
    let mut total = all.next()?.clone();
    for d in all {
        total.forward.add(&d.forward);
        if let (Some(b), Some(o)) = (total.back.as_mut(), d.back.as_ref()) {
            b.add(o);
        }
        total.lost_round_trips += d.lost_round_trips;
        total.stale_answers += d.stale_answers;
        total.incomplete_messages += d.incomplete_messages;
        total.end_markers_lost += d.end_markers_lost;
    }
    total.summary = total.describe();
    Some(total)
}

fn sum_verify(spec: &RunSpec, measured: &[&RunRecord]) -> VerifyReport {
    let mut report = VerifyReport {
        enabled: spec.verify,
        ..Default::default()
    };
    for v in measured.iter().map(|r| &r.verify) {
        report.checked_bytes += v.checked_bytes;
        report.mismatched_bytes += v.mismatched_bytes;
        let room = KEPT_MISMATCHES.saturating_sub(report.first_mismatches.len());
        report
            .first_mismatches
            .extend(v.first_mismatches.iter().take(room).copied());
    }
    report
}

/// Machine-wide CPU over the measured visits, when every one of them read it.
fn sum_machine(measured: &[&RunRecord]) -> Option<crate::measure::machine::MachineCpu> {
    measured
        .iter()
        .try_fold(crate::measure::machine::MachineCpu::default(), |acc, r| {
            let m = r.machine_wide_cpu?;
            Some(crate::measure::machine::MachineCpu {
                user_s: acc.user_s + m.user_s,
                system_s: acc.system_s + m.system_s,
                softirq_s: acc.softirq_s + m.softirq_s,
                irq_s: acc.irq_s + m.irq_s,
                idle_s: acc.idle_s + m.idle_s,
            })
        })
        .filter(|_| !measured.is_empty())
}

fn visit_note(plan: &VisitPlan, measured: usize, counted: bool) -> String {
    let counters = if counted {
        "perf counter figures come from a visit of their own, not from these"
    } else {
        "no visit opened perf counters"
    };
    format!(
        "measured in {measured} visits of {:.0} ms (after {:.0} ms of warm-up each), spread over the study in a seeded shuffled order; the figure and its interval come from the visit means ({}); {counters}",
        plan.visit_s * 1e3,
        plan.warmup_s * 1e3,
        crate::stats::visits::VISIT_METHOD
    )
}

#[cfg(test)]
#[path = "aggregate_tests.rs"]
mod tests;
