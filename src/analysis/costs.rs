//! Costs read off pairs of mechanisms: what serialization alone costs (copy against the send
//! reference), how much MSG_ZEROCOPY traffic the kernel copied anyway (kernel doc
//! Documentation/networking/msg_zerocopy.rst, "Deferred copies"), and which cache level one
//! copy fewer relieves most (perf_event_open(2) L1D and LL read-miss counters).
use super::paired::{self, PAIRED_BASIS};
use super::point::Point;
use super::{
    capitalize, distinct, find, percent_change, plural, size_label, size_range, threads_label,
    Answer,
};
use crate::record::Metric;
use crate::stats::quantile;
use crate::stats::verdict::Verdict;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    quantile(values, 0.5)
}

/// MSG_ZEROCOPY sends the kernel copied anyway, over every zerocopy point.
pub fn zerocopy_answer(points: &[&Point]) -> Answer {
    let question = "How much of the zero-copy traffic did the kernel copy anyway?";
    let zc: Vec<&Point> = points
        .iter()
        .filter(|p| p.zerocopy.is_some())
        .copied()
        .collect();
    let (completions, copied) = zc.iter().fold((0.0, 0.0), |(n, c), p| {
        let z = p.zerocopy.expect("filtered");
        (n + z.completions, c + z.copied)
    });
    let mut mechanisms: Vec<&str> = zc.iter().map(|p| p.mechanism.as_str()).collect();
    mechanisms.sort_by_key(|m| super::mechanism_rank(m));
    mechanisms.dedup();
    let rests_on = format!(
        "zerocopy.completions and zerocopy.copied (completions flagged \
         SO_EE_CODE_ZEROCOPY_COPIED for zerocopy, IORING_NOTIF_USAGE_ZC_COPIED for uring-zc) \
         of {} zero-copy points ({})",
        zc.len(),
        mechanisms.join(", ")
    );
    if completions == 0.0 {
        return Answer {
            question,
            finding: "Cannot be said: the results hold no zerocopy point with completions.".into(),
            details: Vec::new(),
            rests_on,
            verdict: Some("cannot be said".into()),
        };
    }
    let percent = copied / completions * 100.0;
    let meaning = if percent >= 99.5 {
        "No send avoided its copy. Data delivered to a local socket (loopback, veth) is always \
         copied, so the zero-copy figures here measure the cost of the zero-copy interface \
         (page pinning, completion notifications), not zero-copy transmission; only a real \
         NIC can show the saving."
    } else if percent > 0.5 {
        "Part of the traffic went out without a copy; the rest fell back to copying (the \
         kernel does so for small sends, local destinations and devices without \
         scatter-gather), so zerocopy's figures mix both paths."
    } else {
        "The kernel transmitted straight from the sender's pages: zerocopy's figures show \
         zero-copy transmission."
    };
    let mut details = Vec::new();
    if let Some(w) = zc
        .first()
        .map(|p| &p.where_sides_run)
        .filter(|w| !w.is_empty())
    {
        details.push(format!("sides ran on: {w}"));
    }
    if mechanisms.len() > 1 {
        for m in &mechanisms {
            let of: Vec<&Point> = zc.iter().filter(|p| p.mechanism == *m).copied().collect();
            details.push(format!("{m}: {}", per_point_copied(&of)));
        }
    } else {
        details.push(per_point_copied(&zc));
    }
    Answer {
        question,
        finding: format!(
            "The kernel copied {percent:.1} % of the zero-copy sends ({copied:.0} of \
             {completions:.0} completions). {meaning}"
        ),
        details,
        rests_on,
        verdict: Some(
            if percent >= 99.5 {
                "every send copied"
            } else if percent > 0.5 {
                "some sends copied"
            } else {
                "no send copied"
            }
            .into(),
        ),
    }
}

/// The per-point spread of the copied share: one figure when all agree, else the extremes.
fn per_point_copied(zc: &[&Point]) -> String {
    let share = |p: &Point| {
        let z = p.zerocopy.expect("zerocopy point");
        z.copied / z.completions.max(1.0) * 100.0
    };
    let at = |p: &Point| format!("{}, {}", size_label(p.size), threads_label(p.threads));
    let lowest = zc
        .iter()
        .min_by(|a, b| share(a).total_cmp(&share(b)))
        .expect("some");
    let highest = zc
        .iter()
        .max_by(|a, b| share(a).total_cmp(&share(b)))
        .expect("some");
    if format!("{:.1}", share(lowest)) == format!("{:.1}", share(highest)) {
        format!(
            "per point: {:.1} % at every point ({})",
            share(lowest),
            plural(zc.len(), "point")
        )
    } else {
        format!(
            "per point: from {:.1} % ({}) to {:.1} % ({})",
            share(lowest),
            at(lowest),
            share(highest),
            at(highest)
        )
    }
}

/// One (size, threads) pair of copy and send.
struct Serialization {
    size: f64,
    extra_ns_per_byte: Option<f64>,
    /// "lower", "higher", "equivalent within ±5 %" or "undecided" (each size alone); None
    /// without paired visits.
    throughput: Option<&'static str>,
    line: String,
}

fn serialization_at(copy: &Point, send: &Point) -> Serialization {
    let extra = copy
        .sender_cpu_ns_per_byte
        .zip(send.sender_cpu_ns_per_byte)
        .map(|(c, s)| c - s);
    let cpu = match (copy.sender_cpu_ns_per_byte, send.sender_cpu_ns_per_byte) {
        (Some(c), Some(s)) => format!(
            "sender {c:.3} vs {s:.3} CPU-ns/byte ({:+.3}, {})",
            c - s,
            percent_change(c / s)
        ),
        _ => "sender CPU-ns/byte not measured".into(),
    };
    let (verdict, throughput) = match paired::ratio(copy, send) {
        Ok(r) => {
            let state = match paired::state(&r) {
                Verdict::Beats => "higher",
                Verdict::Slower => "lower",
                Verdict::Equivalent => "equivalent within ±5 %",
                Verdict::Undecided => "undecided",
            };
            let text = format!(
                "throughput {} ({}; paired 95 % CI {} to {})",
                percent_change(r.ratio),
                state,
                percent_change(r.low),
                percent_change(r.high)
            );
            (Some(state), text)
        }
        Err(why) => (None, format!("throughput: not compared ({why})")),
    };
    Serialization {
        size: copy.size,
        extra_ns_per_byte: extra,
        throughput: verdict,
        line: format!("{}: {cpu}; {throughput}", size_label(copy.size)),
    }
}

/// " Throughput of copy against send: lower at 4 KiB, 64 KiB; undecided at 256 B."
fn throughput_summary(pairs: &[Serialization]) -> String {
    let mut parts = Vec::new();
    for verdict in ["lower", "higher", "equivalent within ±5 %", "undecided"] {
        let at: Vec<String> = pairs
            .iter()
            .filter(|p| p.throughput == Some(verdict))
            .map(|p| size_label(p.size))
            .collect();
        if !at.is_empty() {
            parts.push(format!("{verdict} at {}", at.join(", ")));
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" Throughput of copy against send: {}.", parts.join("; "))
    }
}

/// What serializing 8 fields into one buffer costs: copy against the send reference.
pub fn serialization_answer(points: &[&Point]) -> Answer {
    let question = "What does serialization alone cost (copy against the send reference)?";
    let chosen = serialization_pairs(points);
    let used: Vec<&Point> = points
        .iter()
        .filter(|p| p.series() == "copy" || p.series() == "send")
        .copied()
        .collect();
    let rests_on = format!(
        "sender cpu_ns_per_byte (getrusage) of copy and send stream points at the same size \
         and thread count ({}); their throughput from {PAIRED_BASIS}",
        size_range(&used)
    );
    let Some((threads, pairs)) = chosen else {
        return Answer {
            question,
            finding: "Cannot be said: the results hold no copy and send stream points at the \
                      same size and thread count (add send to the sweep's mechanisms)."
                .into(),
            details: Vec::new(),
            rests_on,
            verdict: Some("cannot be said".into()),
        };
    };
    let mut extra: Vec<f64> = pairs.iter().filter_map(|p| p.extra_ns_per_byte).collect();
    let cpu = if extra.is_empty() {
        "sender CPU not measured"
    } else if extra.iter().all(|e| *e > 0.0) {
        "copy costs the sender more CPU per byte"
    } else if extra.iter().all(|e| *e < 0.0) {
        "copy costs the sender less CPU per byte"
    } else {
        "no measurable CPU per byte"
    };
    let finding = serialization_finding(threads, &pairs, &mut extra);
    Answer {
        question,
        verdict: Some(format!("{cpu};{}", throughput_summary(&pairs))),
        finding: finding + &throughput_summary(&pairs),
        details: pairs.into_iter().map(|p| p.line).collect(),
        rests_on,
    }
}

/// The copy and send pairs of the first thread count that has any, by size.
fn serialization_pairs(points: &[&Point]) -> Option<(f64, Vec<Serialization>)> {
    for threads in distinct(points, |p| p.threads) {
        let pairs: Vec<Serialization> = distinct(points, |p| p.size)
            .into_iter()
            .filter_map(|size| {
                let copy = find(points, "copy", size, threads)?;
                Some(serialization_at(copy, find(points, "send", size, threads)?))
            })
            .collect();
        if !pairs.is_empty() {
            return Some((threads, pairs));
        }
    }
    None
}

/// The finding: the extra CPU per byte copy costs the sender (`extra`, per size), or that it
/// was not measured.
fn serialization_finding(threads: f64, pairs: &[Serialization], extra: &mut [f64]) -> String {
    if extra.is_empty() {
        format!(
            "At {}: CPU per byte was not measured; throughput per size below.",
            threads_label(threads)
        )
    } else {
        let (lo, hi) = (
            extra.iter().copied().fold(f64::INFINITY, f64::min),
            extra.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let median = median(extra);
        // Per-size differences on both sides of zero: the copy costs less than the run-to-run
        // spread of the sender's CPU time, and a signed median would read as a finding.
        let measurable = lo > 0.0 || hi < 0.0;
        format!(
            "At {}, serializing the 8 fields into one buffer costs the sender {} \
             (median {median:+.3} CPU-ns per byte over {} sizes, {} to {}; range {lo:+.3} to {hi:+.3}).",
            threads_label(threads),
            if measurable {
                format!("{median:+.3} CPU-ns per byte")
            } else {
                "no measurable CPU per byte: the per-size differences fall on both sides of zero, \
                 within the spread of the sender's CPU time"
                    .to_string()
            },
            pairs.len(),
            size_label(pairs[0].size),
            size_label(pairs[pairs.len() - 1].size),
        )
    }
}

/// Relative reduction (1 − challenger / baseline) of one counter at every shared point.
fn reductions(
    points: &[&Point],
    challenger: &str,
    level: fn(&Point) -> &Metric,
) -> (Vec<f64>, Vec<String>) {
    let (mut found, mut reasons) = (Vec::new(), Vec::new());
    for p in points.iter().filter(|p| p.series() == "copy") {
        let Some(c) = find(points, challenger, p.size, p.threads) else {
            continue;
        };
        match (level(p), level(c)) {
            (Metric::Value(base), Metric::Value(v)) if *base > 0.0 => found.push(1.0 - v / base),
            (Metric::Unavailable(r), _) | (_, Metric::Unavailable(r)) => reasons.push(r.clone()),
            _ => {}
        }
    }
    reasons.sort();
    reasons.dedup();
    (found, reasons)
}

/// Which cache level shows the largest reduction when a copy is removed (copy -> gather).
pub fn cache_answer(points: &[&Point]) -> Answer {
    let question = "Which cache level shows the largest reduction (copy -> gather)?";
    let rests_on = "l1d_load_misses and llc_load_misses (perf counters, both sides) per KiB of \
                    payload, copy against gather at the same size and thread count"
        .to_string();
    let (mut l1, l1_why) = reductions(points, "gather", |p| &p.l1d_misses_per_kib);
    let (mut llc, llc_why) = reductions(points, "gather", |p| &p.llc_misses_per_kib);
    if l1.is_empty() || llc.is_empty() {
        let mut why: Vec<String> = l1_why.into_iter().chain(llc_why).collect();
        why.dedup();
        let finding = if why.is_empty() {
            "Cannot be said: the results hold no copy and gather stream points at the same \
             size and thread count."
                .to_string()
        } else {
            format!(
                "Cannot be said: L1 and LLC misses were not counted ({}); without a PMU only \
                 CPU time per byte (getrusage) shows the cost of a copy.",
                why.join("; ")
            )
        };
        return Answer {
            question,
            finding,
            details: Vec::new(),
            rests_on,
            verdict: Some("cannot be said".into()),
        };
    }
    let n = l1.len().min(llc.len());
    let (l1_med, llc_med) = (median(&mut l1), median(&mut llc));
    let largest = if llc_med >= l1_med {
        "the last-level cache (LLC)"
    } else {
        "L1d"
    };
    Answer {
        question,
        finding: format!(
            "{} shows the largest reduction: gather has {:.0} % fewer LLC load misses per KiB \
             and {:.0} % fewer L1d load misses than copy (medians over {n} points).",
            capitalize(largest),
            llc_med * 100.0,
            l1_med * 100.0
        ),
        details: vec![spread("LLC", &llc), spread("L1d", &l1)],
        rests_on,
        verdict: Some(largest.into()),
    }
}

/// "LLC: 40 % to 62 % fewer across points" over sorted reductions.
fn spread(level: &str, sorted: &[f64]) -> String {
    let (lo, hi) = (sorted[0] * 100.0, sorted[sorted.len() - 1] * 100.0);
    if format!("{lo:.0}") == format!("{hi:.0}") {
        format!(
            "{level}: {lo:.0} % fewer at every point ({})",
            plural(sorted.len(), "point")
        )
    } else {
        format!(
            "{level}: {lo:.0} % to {hi:.0} % fewer ({})",
            plural(sorted.len(), "point")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{jsonl, Shape};
    use crate::analysis::Dataset;

    fn data(shapes: &[Shape]) -> Dataset {
        parse(&jsonl(shapes), "r").unwrap()
    }

    #[test]
    fn loopback_zerocopy_is_all_copied_and_says_what_that_means() {
        let d = data(&[Shape::stream("zerocopy", 65536, 1, 10.0)]);
        let a = zerocopy_answer(&d.completed());
        assert!(
            a.finding.starts_with("The kernel copied 100.0 %"),
            "{}",
            a.finding
        );
        assert!(a.finding.contains("always copied"));
        assert!(a.details[0].starts_with("sides ran on: loopback"));
        assert_eq!(a.details[1], "per point: 100.0 % at every point (1 point)");
    }

    #[test]
    fn the_copied_share_is_given_per_zero_copy_mechanism_when_there_are_two() {
        let mut msg = Shape::stream("zerocopy", 65536, 1, 10.0);
        msg.copied_fraction = 1.0;
        let mut ring = Shape::stream("uring-zc", 65536, 1, 10.0);
        ring.copied_fraction = 0.5;
        let a = zerocopy_answer(&data(&[msg, ring]).completed());
        assert!(a.finding.contains("75.0 %"), "{}", a.finding);
        assert!(
            a.rests_on.contains("(zerocopy, uring-zc)"),
            "{}",
            a.rests_on
        );
        assert_eq!(
            &a.details[1..],
            [
                "zerocopy: per point: 100.0 % at every point (1 point)",
                "uring-zc: per point: 50.0 % at every point (1 point)"
            ]
        );
    }

    #[test]
    fn partly_copied_zerocopy_says_both_paths_mix() {
        let mut s = Shape::stream("zerocopy", 65536, 1, 10.0);
        s.copied_fraction = 0.25;
        let mut all = Shape::stream("zerocopy", 4096, 1, 10.0);
        all.copied_fraction = 1.0;
        let a = zerocopy_answer(&data(&[s, all]).completed());
        assert!(
            a.finding.contains("62.5 %") && a.finding.contains("mix"),
            "{}",
            a.finding
        );
        assert_eq!(
            a.details[1],
            "per point: from 25.0 % (64 KiB, 1 thread) to 100.0 % (4 KiB, 1 thread)"
        );
    }

    #[test]
    fn no_zerocopy_points_cannot_be_said() {
        let a = zerocopy_answer(&data(&[Shape::stream("copy", 4096, 1, 10.0)]).completed());
        assert!(a.finding.starts_with("Cannot be said"));
    }

    #[test]
    fn serialization_is_copy_minus_send_per_byte() {
        let d = data(&[
            Shape::stream("send", 4096, 1, 12.0),
            Shape::stream("copy", 4096, 1, 10.0),
        ]);
        let a = serialization_answer(&d.completed());
        assert!(
            a.finding.contains("+0.150 CPU-ns per byte"),
            "{}",
            a.finding
        );
        let tail = "Throughput of copy against send: lower at 4 KiB.";
        assert!(a.finding.ends_with(tail), "{}", a.finding);
        assert!(
            a.details[0].contains("throughput -17 %"),
            "{}",
            a.details[0]
        );
    }

    #[test]
    fn differences_on_both_sides_of_zero_are_not_reported_as_a_cost() {
        let with_cpu = |mechanism, size, cpu| {
            let mut shape = Shape::stream(mechanism, size, 1, 10.0);
            shape.sender_cpu_ns_per_byte = cpu;
            shape
        };
        let d = data(&[
            with_cpu("send", 4096, 0.50),
            with_cpu("copy", 4096, 0.45),
            with_cpu("send", 65536, 0.30),
            with_cpu("copy", 65536, 0.33),
        ]);
        let a = serialization_answer(&d.completed());
        assert!(
            a.finding.contains("no measurable CPU per byte"),
            "{}",
            a.finding
        );
        assert!(
            a.finding.contains("range -0.050 to +0.030"),
            "{}",
            a.finding
        );
    }

    #[test]
    fn serialization_within_the_margin_is_equivalent_and_a_noisy_tie_undecided() {
        let d = data(&[
            Shape::stream("send", 4096, 1, 10.01),
            Shape::stream("copy", 4096, 1, 10.0),
        ]);
        let a = serialization_answer(&d.completed());
        assert!(
            a.details[0].contains("(equivalent within ±5 %; paired 95 % CI -1 % to +1 %)"),
            "{}",
            a.details[0]
        );
        let mut noisy = [
            Shape::stream("send", 4096, 1, 10.01),
            Shape::stream("copy", 4096, 1, 10.0),
        ];
        noisy.iter_mut().for_each(|s| s.pair_noise = 0.08);
        let a = serialization_answer(&data(&noisy).completed());
        assert!(
            a.details[0].contains("(undecided; paired 95 % CI"),
            "{}",
            a.details[0]
        );
        assert!(a.verdict.unwrap().contains("undecided at 4 KiB"));
    }

    #[test]
    fn serialization_without_send_cannot_be_said() {
        let a = serialization_answer(&data(&[Shape::stream("copy", 4096, 1, 10.0)]).completed());
        assert!(a.finding.starts_with("Cannot be said"));
    }

    #[test]
    fn with_a_pmu_the_llc_shows_the_largest_reduction() {
        let shapes: Vec<Shape> = ["copy", "gather"]
            .into_iter()
            .map(|m| Shape {
                pmu: true,
                ..Shape::stream(m, 65536, 1, 10.0)
            })
            .collect();
        let a = cache_answer(&data(&shapes).completed());
        // copy 8 -> gather 3 LLC misses/KiB (62 %), 40 -> 30 L1d (25 %).
        assert!(
            a.finding.starts_with("The last-level cache (LLC) shows"),
            "{}",
            a.finding
        );
        assert!(a.finding.contains("62 % fewer LLC") && a.finding.contains("25 % fewer L1d"));
    }

    #[test]
    fn without_a_pmu_the_cache_level_cannot_be_said_and_names_the_reason() {
        let d = data(&[
            Shape::stream("copy", 4096, 1, 10.0),
            Shape::stream("gather", 4096, 1, 11.0),
        ]);
        let a = cache_answer(&d.completed());
        assert!(
            a.finding
                .starts_with("Cannot be said: L1 and LLC misses were not counted (no PMU)"),
            "{}",
            a.finding
        );
    }
}
