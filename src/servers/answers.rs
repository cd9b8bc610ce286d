//! The servers report's own questions, answered from its visit records: per client count the
//! model with the most requests/s and the one with the least server CPU per request; each
//! model's knee; context switches, threads and memory per connection; and the seeds' comparison
//! (iterative, threaded, select at 5 and 15 clients). The models at one client count were
//! visited back to back in each round, so comparisons rest on per-round paired ratios;
//! "cannot be told apart" when the interval includes 1.
use super::visits::{connection_of, point_of, round, ServersView};
use crate::analysis::paired::{ratio_of, verdict_within};
use crate::analysis::separated::{self, leadership, Rounds, Words};
use crate::analysis::Answer;
use crate::stats::verdict::{judge_one, percent, Verdict};
use crate::stats::visits::Direction;

pub const BEST: &str = "Which model serves the most requests per second, and which costs the least server CPU per request, at each client count?";
pub const KNEE: &str = "Where is each model's knee?";
pub const COSTS: &str =
    "What does each model cost per request in context switches, threads and memory?";
pub const SEEDS: &str = "The seeds' comparison: iterative, threaded and select at 5 and 15 clients";

/// What every paired comparison of two models rests on, with the margin stated.
fn basis(margin: f64) -> String {
    format!(
        "per-round paired ratios (the models at one client count visited back to back in each \
         round, order reversed every other round); 95 % CI by Student's t on the per-round \
         log-ratios; each comparison alone (no family correction): beats/slower when that \
         interval excludes 1, \"equivalent within ±{}\" when two one-sided tests place it \
         inside [{:.3}, {:.3}] (90 % CI), \"undecided\" otherwise",
        percent(margin),
        1.0 - margin,
        1.0 + margin
    )
}

/// A figure of a visit.
type Figure = fn(&ServersView) -> Option<f64>;

fn rps(r: &ServersView) -> Option<f64> {
    r.metrics.as_ref()?.requests_per_s
}
fn cpu(r: &ServersView) -> Option<f64> {
    r.server()?.cpu_per_request_ns
}
fn p99(r: &ServersView) -> Option<f64> {
    r.metrics.as_ref()?.latency_ns?.p99
}

/// The study's visits, read once.
struct Visits<'a> {
    records: Vec<&'a ServersView>,
}

impl Visits<'_> {
    fn rounds(&self, model: &str, clients: u64, f: Figure) -> Vec<(usize, f64)> {
        self.records
            .iter()
            .filter(|r| point_of(r) == (model.to_string(), clients))
            .filter_map(|r| Some((round(r), f(r)?)))
            .collect()
    }
    fn mean(&self, model: &str, clients: u64, f: Figure) -> Option<f64> {
        let v = self.rounds(model, clients, f);
        (!v.is_empty()).then(|| v.iter().map(|x| x.1).sum::<f64>() / v.len() as f64)
    }
    fn models(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.records {
            let m = point_of(r).0;
            if !out.contains(&m) {
                out.push(m);
            }
        }
        out
    }
    fn clients(&self) -> Vec<u64> {
        let mut c: Vec<u64> = self.records.iter().map(|r| point_of(r).1).collect();
        c.sort();
        c.dedup();
        c
    }
    fn place(&self) -> String {
        self.records
            .first()
            .and_then(|r| r.config().where_sides_run.as_deref())
            .unwrap_or("not recorded")
            .to_string()
    }
}

/// Every answer, in the report's order, from the study's records (one per visit).
/// With both connection modes measured, the model answers rest on the persistent visits and
/// the churn answer compares the two modes.
pub fn answers(records: &[ServersView], margin: f64) -> Vec<Answer> {
    let both = super::churn::both_modes(records);
    let v = Visits {
        records: records
            .iter()
            .filter(|r| r.completed())
            .filter(|r| !both || connection_of(r) == "persistent")
            .collect(),
    };
    let mut out = vec![
        best(&v, margin),
        knee(&v, margin),
        costs(&v),
        seeds(&v, margin),
    ];
    if both {
        for a in &mut out {
            a.rests_on += "; the persistent-connection visits (per-request ones are compared in the churn answer)";
        }
    }
    out.extend(super::churn::answer(records, margin));
    let place = v.place();
    for a in &mut out {
        a.rests_on = format!("{}; placement: {place}", a.rests_on);
    }
    out
}

/// The leader in `f` at `clients` (most when `most`, else least): the model that beats every
/// other in all pairwise paired comparisons, held together by Holm; where none does, "no
/// single leader" and the models no other is shown to beat. Never the best estimate tested
/// against the rest, which names a leader among equals (the winner's curse).
fn leader(v: &Visits, clients: u64, f: Figure, most: bool, margin: f64) -> Option<String> {
    let candidates: Vec<(String, Rounds)> = v
        .models()
        .into_iter()
        .map(|m| {
            let r = v.rounds(&m, clients, f);
            (m, r)
        })
        .filter(|(_, r)| !r.is_empty())
        .collect();
    match candidates.as_slice() {
        [] => return None,
        [(only, _)] => return Some(format!("{only} (the only model measured)")),
        _ => {}
    }
    let l = leadership(&candidates, most, margin);
    let words = match most {
        true => Words::RATE,
        false => Words::COST,
    };
    Some(format!(
        "{} ({})",
        separated::describe(&candidates, &l, words, margin),
        l.family.control()
    ))
}

fn best(v: &Visits, margin: f64) -> Answer {
    let mut details = Vec::new();
    for c in v.clients() {
        let (Some(most), Some(least)) = (
            leader(v, c, rps, true, margin),
            leader(v, c, cpu, false, margin),
        ) else {
            continue;
        };
        details.push(format!(
            "{c} clients: most requests/s: {most}; least server CPU per request: {least}"
        ));
    }
    if details.is_empty() {
        return Answer::cannot(
            BEST,
            "Cannot be said: no point completed.".into(),
            basis(margin),
        );
    }
    Answer {
        question: BEST,
        finding: "Per client count, the leader in requests per second and in server CPU per request: the model that beats every other in paired comparisons (Holm across the pairs), or \"no single leader\" with the models the data do not separate:".into(),
        details,
        rests_on: format!("{}, except here: at each client count every pair of models is compared and the pairs are one Holm family per figure; a model leads only when it beats every other, never because its estimate is the highest (which names a leader among equals); \"A against B\" gives A's requests/s over B's, and for CPU per request B's over A's (so above 1 is A's advantage either way); requests per second from the load generator over each visit's window, server CPU per request from the server process's task clock (getrusage when perf is off)", basis(margin)),
        verdict: None,
    }
}

fn knee(v: &Visits, margin: f64) -> Answer {
    let clients = v.clients();
    if clients.len() < 2 {
        return Answer::cannot(
            KNEE,
            "Cannot be said: a knee needs two client counts or more (--clients 5,15,100).".into(),
            basis(margin),
        );
    }
    let mut details = Vec::new();
    for m in v.models() {
        let counts: Vec<u64> = clients
            .iter()
            .copied()
            .filter(|&c| v.mean(&m, c, rps).is_some())
            .collect();
        let mut found = None;
        for w in counts.windows(2) {
            let grows = ratio_of(&v.rounds(&m, w[1], rps), &v.rounds(&m, w[0], rps), "req/s");
            let rises = ratio_of(&v.rounds(&m, w[1], p99), &v.rounds(&m, w[0], p99), "p99");
            if let (Ok(g), Ok(r)) = (grows, rises) {
                // Flat means shown flat (equivalent within the margin) or falling, never merely
                // "growth not shown".
                let flat = matches!(
                    judge_one(&g, margin).state,
                    Verdict::Equivalent | Verdict::Slower
                );
                if flat && r.direction() == Direction::Higher {
                    found = Some(format!("{m}: knee at {} clients: from {} to {} clients requests/s {} while p99 rises {}", w[0], w[0], w[1], verdict_within(&g, margin), verdict_within(&r, margin)));
                    break;
                }
            }
        }
        details.push(found.unwrap_or_else(|| format!("{m}: no knee shown within {} clients: at no step measured was requests/s shown flat (equivalent within ±{}) or falling while p99 rose", counts.last().copied().unwrap_or(0), percent(margin))));
    }
    Answer {
        question: KNEE,
        finding: format!("A knee is the client count beyond which requests/s is shown to stop growing (its paired ratio to the next count equivalent within ±{} or below 1; a ratio merely not shown above 1 is undecided, not a knee) while p99 keeps rising (its ratio is above 1):", percent(margin)),
        details,
        rests_on: format!(
            "{}; here two client counts of one model, visited in the same round but not back to back",
            basis(margin)
        ),
        verdict: None,
    }
}

fn costs(v: &Visits) -> Answer {
    let cs: Figure = |r| r.server()?.context_switches_per_request;
    let threads: Figure = |r| r.server()?.threads;
    let rss: Figure = |r| {
        let s = r.server()?;
        Some(s.peak_rss_bytes? - s.rss_at_fork_bytes.unwrap_or(0.0))
    };
    let mut details = Vec::new();
    for m in v.models() {
        let per: Vec<String> = v
            .clients()
            .into_iter()
            .filter_map(|c| {
                let t = v.mean(&m, c, threads)?;
                Some(format!(
                    "{c} clients {} cs/req, {t:.0} threads ({:.2} per client)",
                    v.mean(&m, c, cs)
                        .map_or("n/a".into(), |x| format!("{x:.2}")),
                    t / c as f64
                ))
            })
            .collect();
        if per.is_empty() {
            continue;
        }
        let mut line = format!("{m}: {}", per.join("; "));
        if m == "threaded" {
            if let Some(&c) = v
                .clients()
                .iter()
                .rev()
                .find(|&&c| v.mean(&m, c, rss).is_some())
            {
                let bytes = v.mean(&m, c, rss).unwrap_or(0.0);
                line += &format!("; memory per connection at {c} clients: {:.1} KiB (peak RSS above the RSS at fork, over clients)", bytes / c as f64 / 1024.0);
            }
        }
        details.push(line);
    }
    if details.is_empty() {
        return Answer::cannot(
            COSTS,
            "Cannot be said: no point completed.".into(),
            "the server process's own figures".into(),
        );
    }
    Answer {
        question: COSTS,
        finding: "Per model and client count: server context switches per request, the server's peak thread count (and per client), and for threaded the memory each connection costs at the highest client count measured:".into(),
        details,
        rests_on: "means over each point's completed visits; context switches from perf (getrusage when perf is off), threads counted by the server, RSS from /proc of the server process".into(),
        verdict: None,
    }
}

fn seeds(v: &Visits, margin: f64) -> Answer {
    let wanted = ["iterative", "threaded", "select"];
    let models = v.models();
    let missing: Vec<String> = wanted
        .iter()
        .filter(|m| !models.iter().any(|x| x == *m))
        .map(|m| format!("{m} (--models)"))
        .chain(
            [5u64, 15]
                .iter()
                .filter(|c| !v.clients().contains(c))
                .map(|c| format!("{c} clients (--clients)")),
        )
        .collect();
    if !missing.is_empty() {
        return Answer::cannot(
            SEEDS,
            format!("Cannot be said: not measured here: {}.", missing.join(", ")),
            basis(margin),
        );
    }
    let mut details = Vec::new();
    for c in [5u64, 15] {
        let figures: Vec<String> = wanted
            .iter()
            .map(|m| {
                format!(
                    "{m} {}",
                    v.mean(m, c, rps)
                        .map_or("n/a".into(), |x| format!("{x:.0} req/s"))
                )
            })
            .collect();
        let versus = |a: &str, b: &str| match ratio_of(
            &v.rounds(a, c, rps),
            &v.rounds(b, c, rps),
            &format!("{a} and {b}"),
        ) {
            Ok(r) => format!("{a} over {b} {}", verdict_within(&r, margin)),
            Err(why) => why,
        };
        details.push(format!(
            "{c} clients: {}; {}; {}",
            figures.join(", "),
            versus("threaded", "iterative"),
            versus("select", "iterative")
        ));
    }
    Answer {
        question: SEEDS,
        finding: "In the seeds' terms (requests per second of each design at 5 and 15 concurrent clients), with each concurrent design against the iterative server:".into(),
        details,
        rests_on: basis(margin),
        verdict: None,
    }
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;
