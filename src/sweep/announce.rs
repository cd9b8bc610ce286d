//! What a sweep prints before its first visit: the matrix, the visits and budget, and what a
//! resumed folder already holds.
use super::spec::SweepSpec;
use crate::config::format_cpu_list;
use crate::report::visit_folder::PriorVisits;
use std::path::Path;

pub fn print_plan(spec: &SweepSpec, dir: &Path, prior: &PriorVisits) {
    let pin = if spec.pin_defaulted {
        format!(
            "{} (default: this process may use CPUs {})",
            spec.pinning.name(),
            format_cpu_list(&spec.cpus)
        )
    } else {
        spec.pinning.name()
    };
    let n =
        |count: usize, what: &str| format!("{count} {what}{}", if count == 1 { "" } else { "s" });
    println!(
        "sweep: {} ({} × {} × {} × {}), pin {pin}, results in {}",
        n(spec.total(), "point"),
        n(spec.mechanisms.len(), "mechanism"),
        n(spec.patterns.len(), "pattern"),
        n(spec.sizes.len(), "size"),
        n(spec.threads.len(), "thread count"),
        dir.display()
    );
    println!(
        "visits: at least {} of {:.0} ms per point (after {:.0} ms warm-up each){}; more to the groups whose crossover verdicts are undecided (margin ±{}; shared equally, with the groups that have no crossover), until {:.0} s are spent ({:.1} s per point); order seed {}{}",
        spec.min_visits,
        spec.visit.as_secs_f64() * 1e3,
        spec.warmup.as_secs_f64() * 1e3,
        extra_visits(spec),
        crate::stats::verdict::percent(spec.margin),
        spec.total_budget().as_secs_f64(),
        spec.budget.as_secs_f64(),
        spec.seed,
        if spec.seed_given { "" } else { " (drawn; --seed repeats the order)" }
    );
    if prior.resumed {
        println!(
            "resuming: {} visits already made, {} failed or interrupted made again",
            prior.visits.len(),
            prior.dropped
        );
    }
    if prior.truncated_line {
        eprintln!("bytepath: the last line of visits.jsonl was cut short (a crash while writing it); that visit is made again");
    }
}

/// The visits each point gets beside the headline ones, as the start line says them.
fn extra_visits(spec: &SweepSpec) -> String {
    let mut extra = Vec::new();
    if spec.counter_visits() {
        extra.push("one with perf counters open");
    }
    if spec.count_copies {
        extra.push("one with the kernel's tracepoints open (--count-copies)");
    }
    match extra.is_empty() {
        true => String::new(),
        false => format!(", plus {}", extra.join(", ")),
    }
}
