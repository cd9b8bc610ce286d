//! Every flow's CPUs, compactly: the record holds one (sender, receiver) pair per flow, and a
//! reader of a 16- or 64-flow point must see which CPUs each flow used, not flow 0's alone.
//! Flows whose CPUs step alike (sender +2, receiver +2; or the same pair again) form a run: a
//! run of up to four flows is listed in full, a longer one by its first two pairs, "…" and its
//! last, which names every flow's CPUs without 64 entries. The report's "CPU placement" row
//! (`summary`) and the run's text output (`table`) both write it here.

/// One flow's CPUs; `None`: any (unpinned), or no such side (a sink has no receiver).
pub type FlowCpus = (Option<usize>, Option<usize>);

/// Longest run written out in full; longer ones are elided in the middle.
const LISTED: usize = 4;

/// "flows 0–7: 0→1, 2→3, …, 14→15; flow 8: 5→9": each flow's CPUs (sender→receiver), or
/// the sender's alone where `sink` (no receiver on this host).
pub fn flows(cpus: &[FlowCpus], sink: bool) -> String {
    runs(cpus)
        .into_iter()
        .map(|(from, to)| run_text(&cpus[from..=to], from, sink))
        .collect::<Vec<_>>()
        .join("; ")
}

/// "8 threads, cross (CPU sender→receiver)": what a `flows` line is about.
pub fn heading(threads: usize, pin: &str, sides: [&str; 2], sink: bool) -> String {
    let noun = if threads == 1 { "thread" } else { "threads" };
    match sink {
        true => format!("{threads} {noun}, {pin} (CPU {})", sides[0]),
        false => format!("{threads} {noun}, {pin} (CPU {}→{})", sides[0], sides[1]),
    }
}

/// How one CPU changes from a flow to the next: a step, both unknown, or a break.
fn step(a: Option<usize>, b: Option<usize>) -> Option<Option<i64>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Some(b as i64 - a as i64)),
        (None, None) => Some(None),
        _ => None,
    }
}

/// Maximal stretches `(first, last)` of flows whose CPUs change by the same step each flow.
fn runs(cpus: &[FlowCpus]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while from < cpus.len() {
        let pair_step = |i: usize| {
            let (a, b) = (cpus[i], cpus[i + 1]);
            Some((step(a.0, b.0)?, step(a.1, b.1)?))
        };
        let first = (from + 1 < cpus.len()).then(|| pair_step(from)).flatten();
        let mut to = from;
        if first.is_some() {
            while to + 1 < cpus.len() && pair_step(to) == first {
                to += 1;
            }
        }
        out.push((from, to));
        from = to + 1;
    }
    out
}

fn pair_text((sender, receiver): FlowCpus, sink: bool) -> String {
    let cpu = |c: Option<usize>| c.map_or("any".to_string(), |c| c.to_string());
    match sink {
        true => cpu(sender),
        false => format!("{}→{}", cpu(sender), cpu(receiver)),
    }
}

/// One run: "flow 3: 6→7", "flows 0–2: 0→1, 2→3, 4→5", "flows 0–7: 0→1, 2→3, …, 14→15", or
/// "flows 0–7: each 0→1" where every flow of the run had the same CPUs.
fn run_text(run: &[FlowCpus], first: usize, sink: bool) -> String {
    let last = first + run.len() - 1;
    let pairs: Vec<String> = run.iter().map(|p| pair_text(*p, sink)).collect();
    if run.len() == 1 {
        return format!("flow {first}: {}", pairs[0]);
    }
    let body = if run.len() > 2 && run.iter().all(|p| *p == run[0]) {
        format!("each {}", pairs[0])
    } else if run.len() <= LISTED {
        pairs.join(", ")
    } else {
        format!("{}, {}, …, {}", pairs[0], pairs[1], pairs[run.len() - 1])
    };
    format!("flows {first}–{last}: {body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cross(n: usize, cpus: usize) -> Vec<FlowCpus> {
        (0..n)
            .map(|i| (Some((2 * i) % cpus), Some((2 * i + 1) % cpus)))
            .collect()
    }

    #[test]
    fn four_flows_are_each_named() {
        assert_eq!(flows(&cross(4, 16), false), "flows 0–3: 0→1, 2→3, 4→5, 6→7");
    }

    #[test]
    fn sixteen_flows_on_sixteen_cpus_read_as_two_runs() {
        assert_eq!(
            flows(&cross(16, 16), false),
            "flows 0–7: 0→1, 2→3, …, 14→15; flows 8–15: 0→1, 2→3, …, 14→15"
        );
    }

    #[test]
    fn sixty_four_flows_stay_short_and_name_every_flow() {
        let text = flows(&cross(64, 16), false);
        assert_eq!(text.matches("flows ").count(), 8, "{text}");
        assert!(text.ends_with("flows 56–63: 0→1, 2→3, …, 14→15"), "{text}");
        assert!(text.len() < 400, "{text}");
    }

    #[test]
    fn flows_sharing_cpus_and_broken_patterns_and_sinks() {
        let same = vec![(Some(0), Some(1)); 8];
        assert_eq!(flows(&same, false), "flows 0–7: each 0→1");
        let odd = vec![(Some(0), Some(1)), (Some(5), Some(1)), (Some(3), None)];
        assert_eq!(flows(&odd, false), "flows 0–1: 0→1, 5→1; flow 2: 3→any");
        let sink = vec![(Some(0), None), (Some(1), None), (Some(2), None)];
        assert_eq!(flows(&sink, true), "flows 0–2: 0, 1, 2");
        assert_eq!(
            heading(1, "cross", ["sender", "receiver"], false),
            "1 thread, cross (CPU sender→receiver)"
        );
        assert_eq!(
            heading(8, "same", ["sender", "receiver"], true),
            "8 threads, same (CPU sender)"
        );
    }
}
