//! What a servers study becomes for a person: `report.md` and a self-contained `report.html`
//! with how it was measured, one table row per (model, clients) point, the points not measured
//! with their reason, and four plots against clients (log axes, one line per model): requests
//! per second, p99 latency, server CPU per request and context switches per request, each also
//! written as figures/NAME.svg, .png and .csv and linked from both pages. Rendered
//! from the records exactly as `record` writes them, so `bytepath report DIR` renders the same
//! report from the folder alone.
use super::report_table::{clients_cell, hardware_note, label, status, study_table};
use super::visits::{ServersConfig, ServersView};
use crate::analysis::pairs_table::PairsTable;
use crate::error::Error;
use crate::record::view::shown;
use crate::report::folder::MarkerHead;
use crate::report::plot::axis::{Scale, TickFormat};
use crate::report::plot::{escape, Datum, Series};
use crate::report::study::{self, page, HTML};
use crate::report::study_figures::{self, LogFigure};
use std::path::{Path, PathBuf};

const TITLE: &str = "bytepath servers: TCP server models under many clients";

fn color(model: &str) -> &'static str {
    match model {
        "iterative" => "#d62728",
        "threaded" => "#ff7f0e",
        "select" => "#8c564b",
        "poll" => "#9467bd",
        "epoll" => "#2ca02c",
        "uring" => "#1f77b4",
        _ => "#7f7f7f",
    }
}

/// Models in the order the study measured them first (its --models order).
/// With both connection modes, each model's per-request points are a series of their own.
fn models(records: &[ServersView]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in records {
        if !out.contains(&label(r)) {
            out.push(label(r));
        }
    }
    out
}

fn notes(records: &[ServersView]) -> Vec<String> {
    let mut out = Vec::new();
    for r in records {
        let what = format!("{} at {} clients", label(r), clients_cell(r));
        let errors = r.errors();
        match status(r) {
            "refused" | "skipped" => out.push(format!(
                "{what}: {}: {}",
                status(r),
                r.reason.as_deref().unwrap_or("no reason recorded")
            )),
            "interrupted" => out.push(format!(
                "{what}: interrupted (Ctrl-C); its figures cover the part measured"
            )),
            "failed" if errors.is_empty() => out.push(format!(
                "{what}: failed: echoes did not match what was sent"
            )),
            _ => {}
        }
        if !errors.is_empty() {
            out.push(format!("{what}: {}: {}", status(r), errors.join("; ")));
        }
        let accepted = r.server().and_then(|s| s.accepted_connections);
        let clients = r.config().clients;
        if let (Some(a), Some(n)) = (accepted, clients) {
            if a < n as f64 && status(r) == "completed" {
                // The iterative server in a closed loop: the first client keeps it.
                out.push(format!("{what}: the server accepted {a} of {n} connections; each client it did not serve in a visit's window counts its wait, to the window's end, in the latency"));
            }
        }
        if let Some(share) = r.load_limited() {
            out.push(format!(
                "{what}: the load generator was the limit at some visit (client CPU 90 % or more per thread; {:.0} % over the visits): not ranked in the answers",
                share * 100.0
            ));
        }
        if let Some(capped) = r.config().clients_capped_reason.as_deref() {
            out.push(format!("{what}: {capped}"));
        }
    }
    out
}

/// How the figures were measured, from the first point's configuration and environment.
/// What the client side did beyond the plain closed loop: connection churn, stalled clients,
/// CPU placement.
fn extras(records: &[ServersView], c: &ServersConfig) -> String {
    let per_connection = c
        .requests_per_connection
        .map(|n| format!(" Each client closes its connection after {n} requests; the point ends when all have, or at the end of the measured time."))
        .unwrap_or_default()
        + if super::churn::both_modes(records) {
            " --connection persistent,per-request: each model measured both ways, the two visited back to back in every round; per-request clients close after every echo and connect again, so every such request's latency holds a handshake and the server model's accept path."
        } else if c.connection.as_deref() == Some("per-request") {
            " --connection per-request: each client closes after every echo and connects again, so every request's latency holds a handshake and the server model's accept path."
        } else {
            ""
        };
    let stalled = match c.stalled_clients {
        Some(n) if n > 0 => {
            format!(" {n} extra stalled clients connect and never finish a request.")
        }
        _ => String::new(),
    };
    let pin = match (c.pin.as_deref(), &c.server_cpus, &c.client_cpus) {
        (Some("split"), server, clients) => format!(
            " CPU placement: --placement split, the server process on CPUs {}, the load generator on CPUs {}.",
            shown(server),
            shown(clients)
        ),
        (Some(p), _, _) => format!(" CPU placement: --placement {p} (the scheduler places both)."),
        (None, _, _) => String::new(),
    };
    format!("{per_connection}{stalled}{pin}")
}

/// How the answers judge: the three states with the margin, and Holm for the leaders.
fn verdicts(margin: f64) -> String {
    let m = crate::stats::verdict::percent(margin);
    format!(
        " Verdicts: a comparison of two models (paired per round) is beats/slower when its 95 % interval excludes 1, equivalent within ±{m} (--margin) when two one-sided tests place its 90 % interval inside [{:.3}, {:.3}], else undecided; a model leads only when it beats every other at that client count, the pairs held together by Holm, else \"no single leader\".",
        1.0 - margin,
        1.0 + margin
    )
}

fn method(records: &[ServersView], status: &str, margin: f64) -> String {
    let Some(first) = records.first() else {
        return format!("No point was measured. Status: {status}.");
    };
    let c = first.config();
    let e = first.environment.clone().unwrap_or_default();
    let load = match c.rate_per_s {
        Some(rate) => format!(
            "open loop at {rate:.0} requests/s over all clients, latency from each request's intended send time"
        ),
        None => "closed loop (each client sends its next request when the whole echo of the last has arrived), latency from send to the whole echo".into(),
    };
    let extras = extras(records, c);
    let visits = match first.visit.and_then(|v| v.seed) {
        Some(seed) => format!(
            " Visits: {} per point, each with the measured time above; {} (seed {seed}). Table and plots: means over a point's completed visits.",
            records.iter().map(|r| super::visits::round(r) + 1).max().unwrap_or(1),
            super::ORDER
        ),
        None => " One visit per point (a folder from before visits).".into(),
    };
    let client_threads = records
        .iter()
        .max_by_key(|r| r.config().client_threads.unwrap_or(0))
        .map(|r| {
            let c = r.config();
            c.client_threads_chosen
                .clone()
                .unwrap_or_else(|| format!("up to {}", shown(&c.client_threads)))
        })
        .unwrap_or_else(|| "?".into());
    let limited = super::record::LOAD_LIMITED_SHARE * 100.0;
    format!(
        "Every point forks a fresh server process on loopback TCP and drives it with {} B requests, each echoed whole and checked byte for byte; {load}. {} s warm-up, then {} s measured per visit.{visits} Load: client threads as each record states, at most one per client (the most: {client_threads}), in bytepath's own process, each with its own epoll over its share of the connections. Server threads: as the model has them (iterative one, threaded one per client, select/poll/uring one), epoll --server-threads {}.{extras} Server CPU per request: CPU time of the forked server process alone (all its threads, none of the load generator's), perf task-clock where counted, else getrusage(RUSAGE_SELF) user + system, over the measured window divided by the requests served; context switches per request likewise (perf, else getrusage voluntary + involuntary). Server peak RSS: the server's VmHWM, pages shared with bytepath since the fork included. Client CPU/thread: the client threads' CPU time as a share of the measured time, per thread; at {limited:.0} % or more in a visit the point is marked load-limited (the load generator, not the server, may have been the limit) and the answers rank it nowhere. Latency percentiles from an HDR histogram over every echo in the window, plus one sample per client that got no echo in it while a request of its waited (its wait to the window's end), so a model that leaves clients queued shows it. Environment: Linux {}, {}, {} online CPUs, allowed {}, RLIMIT_NOFILE {}. Status: {status}.{}",
        shown(&c.size_bytes),
        shown(&c.warmup_s),
        shown(&c.duration_s),
        shown(&c.server_threads),
        e.kernel_release.as_deref().unwrap_or("?"),
        e.cpu_model.as_deref().unwrap_or("?"),
        shown(&e.online_cpus),
        e.allowed_cpus.as_deref().unwrap_or("?"),
        shown(&c.open_file_limit),
        verdicts(margin),
    )
}

/// The study as a whole: failed or interrupted if a point was, interrupted if points are
/// missing, else completed.
fn overall(records: &[ServersView], planned: usize) -> &'static str {
    if records.iter().any(|r| status(r) == "failed") {
        "failed"
    } else if records.len() < planned || records.iter().any(|r| status(r) == "interrupted") {
        "interrupted"
    } else {
        "completed"
    }
}

/// One series per model: `value` of each completed point against its clients.
fn series(records: &[ServersView], value: impl Fn(&ServersView) -> Option<f64>) -> Vec<Series> {
    models(records)
        .into_iter()
        .map(|name| Series {
            name: name.clone(),
            color: color(name.trim_end_matches(" per-request")),
            dashed: name.ends_with(" per-request"),
            data: records
                .iter()
                .filter(|r| label(r) == name && status(r) == "completed")
                .filter_map(|r| {
                    let clients = r.config().clients? as f64;
                    // A log axis has no place for zero; such a point is in the table.
                    let y = value(r).filter(|&y| y > 0.0)?;
                    Some(Datum {
                        x: clients,
                        y,
                        ci: None,
                        title: format!("{name} at {clients} clients: {y:.3}"),
                    })
                })
                .collect(),
        })
        .collect()
}

/// The four plots: (id, heading, y label, value).
type Drawn = (
    &'static str,
    &'static str,
    &'static str,
    fn(&ServersView) -> Option<f64>,
);
const FIGURES: [Drawn; 4] = [
    ("servers-rps", "Requests per second", "requests/s", |r| {
        r.metrics.as_ref()?.requests_per_s
    }),
    ("servers-p99", "p99 latency", "p99 latency (µs)", |r| {
        r.metrics.as_ref()?.latency_ns?.p99.map(|v| v / 1e3)
    }),
    (
        "servers-cpu",
        "Server CPU per request",
        "server CPU ns per request",
        |r| r.server()?.cpu_per_request_ns,
    ),
    (
        "servers-cs",
        "Context switches per request (server)",
        "context switches per request",
        |r| r.server()?.context_switches_per_request,
    ),
];

/// The four figures against clients, log axes, one line per model (dashed: per-request
/// connections), each point the mean over its completed visits.
fn figures(records: &[ServersView]) -> Vec<crate::report::plots::Figure> {
    FIGURES
        .iter()
        .map(|&(id, heading, y_label, value)| {
            let caption = format!(
                "{heading} against clients, one line per model (dashed: a connection per request), \
                 each point the mean over its completed visits; a point without a positive value \
                 is in the table only."
            );
            let figure = LogFigure {
                id,
                heading,
                caption: &caption,
                x: ("clients", Scale::Log10, TickFormat::Number),
                y_label,
            };
            figure.of(series(records, value), "no completed point")
        })
        .collect()
}

pub fn markdown(records: &[ServersView], status: &str, margin: f64) -> String {
    let points = &super::visits::points(records);
    let mut out = format!(
        "# {TITLE}\n\n{}## How this was measured\n\n{}\n\n",
        study::answers_markdown_with(
            &answers(records, points, margin),
            &leaders_tables(records, margin)
        ),
        method(records, status, margin)
    );
    let records = points;
    out += &study_table(records).markdown();
    if let Some(note) = hardware_note(records) {
        out += &format!("\n{note}\n");
    }
    let notes = notes(records);
    if !notes.is_empty() {
        out += "\nNot measured, or not as asked:\n\n";
        for n in notes {
            out += &format!("- {}\n", n.replace('\n', " "));
        }
    }
    out += "\n";
    out += &study_figures::markdown(&figures(records));
    out
}

pub fn html(records: &[ServersView], status: &str, margin: f64) -> String {
    let points = &super::visits::points(records);
    let mut body = study::answers_html_with(
        &answers(records, points, margin),
        &leaders_tables(records, margin),
    );
    body += &format!(
        "<h2>How this was measured</h2>\n<p>{}</p>\n",
        escape(&method(records, status, margin))
    );
    let records = points;
    body += &study_table(records).html();
    if let Some(note) = hardware_note(records) {
        body += &format!("<p class=\"note\">{}</p>\n", escape(&note));
    }
    let notes = notes(records);
    if !notes.is_empty() {
        body += "<h2>Not measured, or not as asked</h2>\n<ul>";
        for n in notes {
            body += &format!("<li>{}</li>", escape(&n));
        }
        body += "</ul>\n";
    }
    body += &study_figures::html(&figures(records));
    body += &crate::report::breakdown::section_for(&super::profile_points::points(records));
    page(TITLE, &body)
}

/// The leaders answer's pairs tables, one per client count and figure, for the Answers section.
fn leaders_tables(records: &[ServersView], margin: f64) -> Vec<PairsTable> {
    let leaders = super::answers::leaders(records, margin);
    leaders
        .iter()
        .map(|l| l.pairs_table(super::answers::BEST))
        .collect()
}

/// The study's own answers (from every visit), then with `--profile` where each model's CPU
/// goes (from the points, which carry their profiled visit).
fn answers(
    records: &[ServersView],
    points: &[ServersView],
    margin: f64,
) -> Vec<crate::analysis::Answer> {
    let mut out = super::answers::answers(records, margin);
    out.extend(crate::analysis::profile::answer_for(
        &super::profile_points::points(points),
        "profile window",
    ));
    out
}

/// Writes report.md and report.html for the points measured so far (all of them, or those
/// before a failure or Ctrl-C) out of `planned`; returns the HTML path.
pub fn write(
    dir: &Path,
    records: &[ServersView],
    planned: usize,
    margin: f64,
) -> Result<PathBuf, Error> {
    let status = overall(&super::visits::points(records), planned);
    study::write(
        dir,
        &markdown(records, status, margin),
        &html(records, status, margin),
        study_figures::files(&figures(&super::visits::points(records))),
    )?;
    Ok(dir.join(HTML))
}

/// Re-renders a servers results folder's report from its marker and results.jsonl (what
/// `bytepath report DIR` does for such a folder); returns the HTML path.
pub fn rerender(dir: &Path) -> Result<PathBuf, Error> {
    study::marker(dir)?; // a folder without a readable marker is refused with its reason
    let head = MarkerHead::read(dir).unwrap_or_default();
    let records: Vec<ServersView> = study::records(dir)?;
    // A folder from before --margin was judged with the default.
    let margin = head
        .margin()
        .unwrap_or(crate::stats::verdict::DEFAULT_MARGIN);
    write(dir, &records, head.points.unwrap_or(0), margin)
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
