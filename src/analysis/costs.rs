//! Costs read off pairs of mechanisms: how much MSG_ZEROCOPY traffic the kernel copied anyway (kernel doc
//! Documentation/networking/msg_zerocopy.rst, "Deferred copies"), and which cache level one
//! copy fewer relieves most (perf_event_open(2) L1D and LL read-miss counters).
use super::point::Point;
use super::{capitalize, find, plural, size_label, threads_label, Answer};
use crate::mechanism::MechanismKind;
use crate::record::Metric;
use crate::stats::quantile;

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
    let (verdict, meaning) = copied_meaning(percent);
    Answer {
        question,
        finding: format!(
            "The kernel copied {percent:.1} % of the zero-copy sends ({copied:.0} of \
             {completions:.0} completions). {meaning}"
        ),
        details: zerocopy_details(&zc, &mechanisms),
        rests_on,
        verdict: Some(verdict.into()),
    }
}

/// The verdict and what it means for the zero-copy figures, from the copied share (percent).
fn copied_meaning(percent: f64) -> (&'static str, &'static str) {
    if percent >= 99.5 {
        (
            "every send copied",
            "No send avoided its copy. Data delivered to a local socket (loopback, veth) is \
             always copied, so the zero-copy figures here measure the cost of the zero-copy \
             interface (page pinning, completion notifications), not zero-copy transmission; \
             only a real NIC can show the saving.",
        )
    } else if percent > 0.5 {
        (
            "some sends copied",
            "Part of the traffic went out without a copy; the rest fell back to copying (the \
             kernel does so for small sends, local destinations and devices without \
             scatter-gather), so zerocopy's figures mix both paths.",
        )
    } else {
        (
            "no send copied",
            "The kernel transmitted straight from the sender's pages: zerocopy's figures show \
             zero-copy transmission.",
        )
    }
}

/// Where the sides ran, and the copied share per point (per mechanism when there are two).
fn zerocopy_details(zc: &[&Point], mechanisms: &[&str]) -> Vec<String> {
    let mut details = Vec::new();
    if let Some(w) = zc
        .first()
        .map(|p| &p.where_sides_run)
        .filter(|w| !w.is_empty())
    {
        details.push(format!("sides ran on: {w}"));
    }
    if mechanisms.len() > 1 {
        for m in mechanisms {
            let of: Vec<&Point> = zc.iter().filter(|p| p.mechanism == *m).copied().collect();
            details.push(format!("{m}: {}", per_point_copied(&of)));
        }
    } else {
        details.push(per_point_copied(zc));
    }
    details
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

/// Relative reduction (1 − challenger / baseline) of one counter at every shared point.
fn reductions(
    points: &[&Point],
    challenger: &str,
    level: fn(&Point) -> &Metric,
) -> (Vec<f64>, Vec<String>) {
    let (mut found, mut reasons) = (Vec::new(), Vec::new());
    let baseline = MechanismKind::COPY.name();
    for p in points.iter().filter(|p| p.series() == baseline) {
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
    let gather = MechanismKind::GATHER.name();
    let (mut l1, l1_why) = reductions(points, gather, |p| &p.l1d_misses_per_kib);
    let (mut llc, llc_why) = reductions(points, gather, |p| &p.llc_misses_per_kib);
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
