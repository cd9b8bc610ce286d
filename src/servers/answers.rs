//! The servers report's own questions, answered from its visit records: per client count the
//! model with the most requests/s and the one with the least server CPU per request; each
//! model's knee; context switches, threads and memory per connection; and the seeds' comparison
//! (iterative, threaded, select at 5 and 15 clients). The models at one client count were
//! visited back to back in each round, so comparisons rest on per-round paired ratios;
//! "cannot be told apart" when the interval includes 1. A point the load generator limited
//! (client CPU per thread at 90 % or more at some visit) is never a leader, never a knee and
//! never compared in the seeds' terms, and the answer says so.
use super::leaders::{limited_words, Leaders};
use super::visits::{connection_of, point_of, round, ServersView};
use crate::analysis::paired::{ratio_of, verdict_within};
use crate::analysis::separated::Rounds;
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
         inside [{:.3}, {:.3}] (90 % CI), \"undecided\" otherwise; {}",
        percent(margin),
        1.0 - margin,
        1.0 + margin,
        WATCHED
    )
}

/// How the load generator's limit and the clients a model never served enter every answer.
pub const WATCHED: &str = "a point whose client CPU per thread reached 90 % at a visit was \
     limited by the load generator (its figures may be the clients', not the server's): it is \
     never a leader, never a knee and not compared, and the answer names it; latency counts \
     every client: one that got no echo in a visit's window (an iterative server's queue) adds \
     its wait up to the window's end, so what a queued client of that server sees is in its \
     latency (its upper percentiles and max, one sample per client against one per echo)";

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
    /// Where `model` at `clients` was limited by the load generator at some visit: the
    /// busiest such visit's client CPU per thread.
    fn limited(&self, model: &str, clients: u64) -> Option<f64> {
        self.records
            .iter()
            .filter(|r| point_of(r) == (model.to_string(), clients))
            .filter_map(|r| r.load_limited())
            .reduce(f64::max)
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
    let v = visits(records);
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

/// The visits the model answers rest on: the completed ones, and with both connection modes
/// the persistent ones.
fn visits(records: &[ServersView]) -> Visits<'_> {
    let both = super::churn::both_modes(records);
    Visits {
        records: records
            .iter()
            .filter(|r| r.completed())
            .filter(|r| !both || connection_of(r) == "persistent")
            .collect(),
    }
}

/// The leaders in `f` at `clients` (most when `most`, else least): every pair of the models
/// the load generator did not limit, held together by Holm; a leader is the model that beats
/// every other, else "no single leader" and the models no other is shown to beat. Never the
/// best estimate tested against the rest, which names a leader among equals (the winner's
/// curse). `None` where no model has the figure there.
fn leaders_at(
    v: &Visits,
    (clients, figure): (u64, &'static str),
    f: Figure,
    most: bool,
    margin: f64,
) -> Option<Leaders> {
    let mut ranked: Vec<(String, Rounds)> = Vec::new();
    let mut limited: Vec<(String, f64)> = Vec::new();
    for m in v.models() {
        let r = v.rounds(&m, clients, f);
        match (r.is_empty(), v.limited(&m, clients)) {
            (true, _) => {}
            (false, Some(share)) => limited.push((m, share)),
            (false, None) => ranked.push((m, r)),
        }
    }
    (!ranked.is_empty() || !limited.is_empty())
        .then(|| Leaders::judge((clients, figure), ranked, limited, most, margin))
}

/// Per client count with both figures, the leaders in requests/s and in server CPU per
/// request: what the leaders answer says, and what the report shows as tables.
pub fn leaders(records: &[ServersView], margin: f64) -> Vec<Leaders> {
    let v = visits(records);
    let mut out = Vec::new();
    for c in v.clients() {
        let most = leaders_at(&v, (c, "most requests/s"), rps, true, margin);
        let least = leaders_at(&v, (c, "least server CPU per request"), cpu, false, margin);
        if let (Some(most), Some(least)) = (most, least) {
            out.extend([most, least]);
        }
    }
    out
}

fn best(v: &Visits, margin: f64) -> Answer {
    let mut details = Vec::new();
    for c in v.clients() {
        let (Some(most), Some(least)) = (
            leaders_at(v, (c, "most requests/s"), rps, true, margin),
            leaders_at(v, (c, "least server CPU per request"), cpu, false, margin),
        ) else {
            continue;
        };
        details.push(format!(
            "most requests/s: {}; least server CPU per request: {}",
            most.summary(),
            least.summary()
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
        finding: "Per client count, the leader in requests per second and in server CPU per request: the model that beats every other in paired comparisons (Holm across the pairs), or \"no single leader\" with the models the data do not separate; a model the load generator limited there is not ranked:".into(),
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
    let details = v
        .models()
        .iter()
        .map(|m| knee_of(v, m, &clients, margin))
        .collect();
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

/// One model's knee line: the first step judged (neither end limited by the load generator)
/// where requests/s is shown flat or falling while p99 rises, or that none was shown; the
/// client counts the load generator limited are named, not judged.
fn knee_of(v: &Visits, m: &str, clients: &[u64], margin: f64) -> String {
    let counts: Vec<u64> = clients
        .iter()
        .copied()
        .filter(|&c| v.mean(m, c, rps).is_some())
        .collect();
    let limited: Vec<String> = counts
        .iter()
        .filter_map(|&c| Some(limited_words(m, c, v.limited(m, c)?)))
        .collect();
    let mut found = None;
    for w in counts.windows(2) {
        if v.limited(m, w[0]).is_some() || v.limited(m, w[1]).is_some() {
            continue;
        }
        let grows = ratio_of(&v.rounds(m, w[1], rps), &v.rounds(m, w[0], rps), "req/s");
        let rises = ratio_of(&v.rounds(m, w[1], p99), &v.rounds(m, w[0], p99), "p99");
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
    let line = found.unwrap_or_else(|| format!("{m}: no knee shown within {} clients: at no step measured was requests/s shown flat (equivalent within ±{}) or falling while p99 rose", counts.last().copied().unwrap_or(0), percent(margin)));
    match limited.is_empty() {
        true => line,
        false => format!(
            "{line}; not judged (no step to or from such a count is a knee): {}",
            limited.join("; ")
        ),
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

/// `a` over `b` at `c` clients in requests/s, unless the load generator limited either.
fn versus(v: &Visits, c: u64, (a, b): (&str, &str), margin: f64) -> String {
    let limited = [a, b]
        .into_iter()
        .find_map(|m| Some(limited_words(m, c, v.limited(m, c)?)));
    if let Some(why) = limited {
        return format!("{a} over {b} not compared: {why}");
    }
    match ratio_of(
        &v.rounds(a, c, rps),
        &v.rounds(b, c, rps),
        &format!("{a} and {b}"),
    ) {
        Ok(r) => format!("{a} over {b} {}", verdict_within(&r, margin)),
        Err(why) => why,
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
        details.push(format!(
            "{c} clients: {}; {}; {}",
            figures.join(", "),
            versus(v, c, ("threaded", "iterative"), margin),
            versus(v, c, ("select", "iterative"), margin)
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
