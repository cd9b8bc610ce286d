//! What a servers study becomes for a person: `report.md` and a self-contained `report.html`
//! with how it was measured, one table row per (model, clients) point, the points not measured
//! with their reason, and four plots against clients (log axes, one line per model): requests
//! per second, p99 latency, server CPU per request and context switches per request. Rendered
//! from the records exactly as `record` writes them, so `bytepath report DIR` renders the same
//! report from the folder alone.
use super::report_table::{clients_cell, hardware_note, label, server, status, study_table};
use crate::error::Error;
use crate::report::plot::axis::{Scale, TickFormat};
use crate::report::plot::{escape, Datum, Series};
use crate::report::study::{self, page, HTML};
use serde_json::Value;
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
fn models(records: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in records {
        if !out.contains(&label(r)) {
            out.push(label(r));
        }
    }
    out
}

fn notes(records: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for r in records {
        let what = format!("{} at {} clients", label(r), clients_cell(r));
        let errors: Vec<&str> = r["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match status(r) {
            "refused" | "skipped" => out.push(format!(
                "{what}: {}: {}",
                status(r),
                r["reason"].as_str().unwrap_or("no reason recorded")
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
        let accepted = server(r)["accepted_connections"].as_u64();
        let clients = r["config"]["clients"].as_u64();
        if let (Some(a), Some(n)) = (accepted, clients) {
            if a < n && status(r) == "completed" {
                // The iterative server in a closed loop: the first client keeps it.
                out.push(format!("{what}: the server accepted {a} of {n} connections; the figures cover only the clients it served"));
            }
        }
        if let Some(capped) = r["config"]["clients_capped_reason"].as_str() {
            out.push(format!("{what}: {capped}"));
        }
    }
    out
}

/// How the figures were measured, from the first point's configuration and environment.
/// What the client side did beyond the plain closed loop: connection churn, stalled clients,
/// CPU placement.
fn extras(records: &[Value], c: &Value) -> String {
    let per_connection = c["requests_per_connection"]
        .as_u64()
        .map(|n| format!(" Each client closes its connection after {n} requests; the point ends when all have, or at the end of the measured time."))
        .unwrap_or_default()
        + if super::churn::both_modes(records) {
            " --connection persistent,per-request: each model measured both ways, the two visited back to back in every round; per-request clients close after every echo and connect again, so every such request's latency holds a handshake and the server model's accept path."
        } else if c["connection"] == "per-request" {
            " --connection per-request: each client closes after every echo and connects again, so every request's latency holds a handshake and the server model's accept path."
        } else {
            ""
        };
    let stalled = match c["stalled_clients"].as_u64() {
        Some(n) if n > 0 => {
            format!(" {n} extra stalled clients connect and never finish a request.")
        }
        _ => String::new(),
    };
    let pin = match (c["pin"].as_str(), &c["server_cpus"], &c["client_cpus"]) {
        (Some("split"), server, clients) => format!(
            " CPU placement: --pin split, the server process on CPUs {server}, the load generator on CPUs {clients}."
        ),
        (Some(p), _, _) => format!(" CPU placement: --pin {p} (the scheduler places both)."),
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

fn method(records: &[Value], status: &str, margin: f64) -> String {
    let Some(first) = records.first() else {
        return format!("No point was measured. Status: {status}.");
    };
    let c = &first["config"];
    let e = &first["environment"];
    let load = match c["rate_per_s"].as_f64() {
        Some(rate) => format!(
            "open loop at {rate:.0} requests/s over all clients, latency from each request's intended send time"
        ),
        None => "closed loop (each client sends its next request when the whole echo of the last has arrived), latency from send to the whole echo".into(),
    };
    let extras = extras(records, c);
    let visits = match first["visit"]["seed"].as_u64() {
        Some(seed) => format!(
            " Visits: {} per point, each with the measured time above; {} (seed {seed}). Table and plots: means over a point's completed visits.",
            records.iter().map(|r| r["visit"]["round"].as_u64().unwrap_or(0) + 1).max().unwrap_or(1),
            super::ORDER
        ),
        None => " One visit per point (a folder from before visits).".into(),
    };
    let client_threads = records
        .iter()
        .filter_map(|r| r["config"]["client_threads"].as_u64())
        .max()
        .unwrap_or(0);
    format!(
        "Every point forks a fresh server process on loopback TCP and drives it with {} B requests, each echoed whole and checked byte for byte; {load}. {} s warm-up, then {} s measured per visit.{visits} Load: up to {client_threads} client threads in bytepath's own process, each with its own epoll over its share of the connections. Server threads: as the model has them (iterative one, threaded one per client, select/poll/uring one), epoll --server-threads {}.{extras} Server CPU per request: CPU time of the forked server process alone (all its threads, none of the load generator's), perf task-clock where counted, else getrusage(RUSAGE_SELF) user + system, over the measured window divided by the requests served; context switches per request likewise (perf, else getrusage voluntary + involuntary). Server peak RSS: the server's VmHWM, pages shared with bytepath since the fork included. Client CPU/thread: the client threads' CPU time as a share of the measured time, per thread (near 100 % means the load generator, not the server, was the limit). Latency percentiles from an HDR histogram. Environment: Linux {}, {}, {} online CPUs, allowed {}, RLIMIT_NOFILE {}. Status: {status}.{}",
        c["size_bytes"],
        c["warmup_s"],
        c["duration_s"],
        c["server_threads"],
        e["kernel_release"].as_str().unwrap_or("?"),
        e["cpu_model"].as_str().unwrap_or("?"),
        e["online_cpus"],
        e["allowed_cpus"].as_str().unwrap_or("?"),
        c["open_file_limit"],
        verdicts(margin),
    )
}

/// The study as a whole: failed or interrupted if a point was, interrupted if points are
/// missing, else completed.
fn overall(records: &[Value], planned: usize) -> &'static str {
    if records.iter().any(|r| status(r) == "failed") {
        "failed"
    } else if records.len() < planned || records.iter().any(|r| status(r) == "interrupted") {
        "interrupted"
    } else {
        "completed"
    }
}

/// One series per model: `value` of each completed point against its clients.
fn series(records: &[Value], value: impl Fn(&Value) -> Option<f64>) -> Vec<Series> {
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
                    let clients = r["config"]["clients"].as_f64()?;
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

fn plot_of(id: &'static str, y_label: &str, data: Vec<Series>) -> String {
    crate::report::study::log_plot(
        id,
        ("clients", Scale::Log10, TickFormat::Number),
        y_label,
        data,
        "no completed point",
    )
}

/// The four plots: (id, heading, y label, value).
type Figure = (
    &'static str,
    &'static str,
    &'static str,
    fn(&Value) -> Option<f64>,
);
const FIGURES: [Figure; 4] = [
    ("servers-rps", "Requests per second", "requests/s", |r| {
        r["metrics"]["requests_per_s"].as_f64()
    }),
    ("servers-p99", "p99 latency", "p99 latency (µs)", |r| {
        r["metrics"]["latency_ns"]["p99"].as_f64().map(|v| v / 1e3)
    }),
    (
        "servers-cpu",
        "Server CPU per request",
        "server CPU ns per request",
        |r| server(r)["cpu_per_request_ns"].as_f64(),
    ),
    (
        "servers-cs",
        "Context switches per request (server)",
        "context switches per request",
        |r| server(r)["context_switches_per_request"].as_f64(),
    ),
];

pub fn markdown(records: &[Value], status: &str, margin: f64) -> String {
    let points = &super::visits::points(records);
    let mut out = format!(
        "# {TITLE}\n\n{}## How this was measured\n\n{}\n\n",
        study::answers_markdown(&answers(records, points, margin)),
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
    out += "\nPlots: see report.html (requests/s, p99 latency, server CPU and context switches per request against clients).\n";
    out
}

pub fn html(records: &[Value], status: &str, margin: f64) -> String {
    let points = &super::visits::points(records);
    let mut body = study::answers_html(&answers(records, points, margin));
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
    for (id, heading, y_label, value) in FIGURES {
        body += &format!("<h2>{}</h2>\n", escape(heading));
        body += &plot_of(id, y_label, series(records, value));
        body += "\n";
    }
    body += &crate::report::breakdown::section_for(&super::profile_points::points(records));
    page(TITLE, &body)
}

/// The study's own answers (from every visit), then with `--profile` where each model's CPU
/// goes (from the points, which carry their profiled visit).
fn answers(records: &[Value], points: &[Value], margin: f64) -> Vec<crate::analysis::Answer> {
    let mut out = super::answers::answers(records, margin);
    out.extend(crate::analysis::profile::answer_for(
        &super::profile_points::points(points),
        "profile window",
    ));
    out
}

/// Writes report.md and report.html for the points measured so far (all of them, or those
/// before a failure or Ctrl-C) out of `planned`; returns the HTML path.
pub fn write(dir: &Path, records: &[Value], planned: usize, margin: f64) -> Result<PathBuf, Error> {
    let status = overall(&super::visits::points(records), planned);
    study::write(
        dir,
        &markdown(records, status, margin),
        &html(records, status, margin),
    )?;
    Ok(dir.join(HTML))
}

/// The end of `bytepath servers` (after the last point, a failure or Ctrl-C): the report of
/// what the folder holds, and its path on stdout unless the output is JSON. Rendered from the
/// folder rather than from the records in memory so that `bytepath report DIR` gives the same
/// page byte for byte (serde_json reads some floats back one ulp off what it wrote).
pub fn at_end(dir: &Path, json: bool) -> Result<(), Error> {
    let html = rerender(dir)?;
    if !json {
        println!("report: {}", html.display());
    }
    Ok(())
}

/// Re-renders a servers results folder's report from its marker and results.jsonl (what
/// `bytepath report DIR` does for such a folder); returns the HTML path.
pub fn rerender(dir: &Path) -> Result<PathBuf, Error> {
    let marker = study::marker(dir)?;
    let planned = marker["points"].as_u64().unwrap_or(0) as usize;
    let records: Vec<Value> = study::records(dir)?;
    write(dir, &records, planned, margin_of(&marker))
}

/// The `--margin` a study's marker records; the default for a folder from before the flag.
pub fn margin_of(marker: &Value) -> f64 {
    marker["spec"]["margin"]
        .as_f64()
        .filter(|m| *m > 0.0)
        .unwrap_or(crate::stats::verdict::DEFAULT_MARGIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::report_table::table;
    use serde_json::json;

    /// A record shaped as `record::point` writes it; `rps` None for a point not measured.
    fn point(model: &str, clients: u64, status: &str, rps: Option<f64>) -> Value {
        let mut r = json!({
            "config": {"model": model, "clients": clients, "clients_requested": clients,
                "size_bytes": 64, "duration_s": 0.3, "warmup_s": 0.05, "loop": "closed",
                "rate_per_s": null, "client_threads": 2, "server_threads": 1,
                "requests_per_connection": null, "stalled_clients": 0, "open_file_limit": 20000},
            "environment": {"kernel_release": "6.1.0", "cpu_model": "Test CPU", "online_cpus": 2,
                "allowed_cpus": "0-1"},
            "status": status,
            "errors": [],
        });
        if let Some(rps) = rps {
            r["metrics"] = json!({
                "requests": (rps * 0.3) as u64, "requests_per_s": rps,
                "latency_ns": {"min": 9000, "p50": 20000, "p99": 90000, "p99_9": 150000, "max": 400000},
                "mismatched_requests": 0, "connection_errors": 0,
                "server": {"cpu_per_request_ns": 1e9 / rps, "context_switches_per_request": 0.5,
                    "threads": 1, "peak_rss_bytes": 3 << 20,
                    "cycles": null, "cycles_unavailable_reason": "no PMU",
                    "instructions": null, "instructions_unavailable_reason": "no PMU",
                    "ipc": null, "ipc_unavailable_reason": "no PMU",
                    "cache_misses": null, "cache_misses_unavailable_reason": "no PMU"},
                "client": {"cpu_share_per_thread": 0.4, "threads": 2},
            });
        }
        r
    }

    fn study() -> Vec<Value> {
        let mut refused = point("select", 2000, "refused", None);
        refused["reason"] = json!("select cannot watch 2000 clients: descriptors would pass FD_SETSIZE (1024); at most 1000 clients here");
        let mut skipped = point("uring", 2000, "skipped", None);
        skipped["reason"] = json!("io_uring_setup: Operation not permitted");
        let mut failed = point("poll", 2000, "failed", Some(1000.0));
        failed["errors"] = json!(["the server process ended: killed by signal 9"]);
        vec![
            point("select", 15, "completed", Some(50000.0)),
            point("epoll", 15, "completed", Some(60000.0)),
            refused,
            point("epoll", 2000, "completed", Some(55000.0)),
            skipped,
            failed,
        ]
    }

    #[test]
    fn the_table_has_a_row_per_record_in_the_order_measured() {
        let records = study();
        let (_, rows) = table(&records);
        let keys: Vec<(String, String, String)> = rows
            .iter()
            .map(|r| (r[0].clone(), r[1].clone(), r[2].clone()))
            .collect();
        assert_eq!(keys.len(), 6);
        assert_eq!(keys[2], ("select".into(), "2000".into(), "refused".into()));
        assert_eq!(rows[1][3], "60000", "req/s");
        assert_eq!(rows[1][5], "90.0", "p99 in µs");
        assert_eq!(rows[2][3], "", "a refused point has no figures, not zeros");
        let md = markdown(&records, "completed", 0.05);
        assert_eq!(md.lines().filter(|l| l.starts_with("| ")).count(), 1 + 6);
    }

    #[test]
    fn points_not_measured_carry_their_reason() {
        let records = study();
        let notes = notes(&records);
        assert!(notes.contains(&"select at 2000 clients: refused: select cannot watch 2000 clients: descriptors would pass FD_SETSIZE (1024); at most 1000 clients here".to_string()), "{notes:?}");
        assert!(notes
            .iter()
            .any(|n| n.starts_with("uring at 2000 clients: skipped: io_uring_setup")));
        assert!(notes
            .iter()
            .any(|n| n.contains("poll at 2000 clients: failed: the server process ended")));
        assert_eq!(notes.len(), 3, "completed points need no note: {notes:?}");

        let mut waiting = point("iterative", 15, "completed", Some(18000.0));
        waiting["metrics"]["server"]["accepted_connections"] = json!(1);
        assert!(super::notes(&[waiting])[0].contains("accepted 1 of 15 connections"));
        assert!(html(&records, "failed", 0.05).contains("FD_SETSIZE (1024)"));
    }

    #[test]
    fn a_capped_client_count_shows_what_was_asked_and_why() {
        let mut r = point("epoll", 136, "completed", Some(1000.0));
        r["config"]["clients_requested"] = json!(500);
        r["config"]["clients_capped_reason"] =
            json!("--clients 500 capped to 136: RLIMIT_NOFILE is 200");
        assert_eq!(table(std::slice::from_ref(&r)).1[0][1], "136 of 500");
        assert!(notes(&[r])[0].contains("RLIMIT_NOFILE is 200"));
    }

    #[test]
    fn unmeasured_hardware_counters_get_one_note_and_no_column() {
        let records = study();
        let (header, _) = table(&records);
        assert!(!header.contains(&"IPC"), "{header:?}");
        let md = markdown(&records, "completed", 0.05);
        assert_eq!(md.matches("n/a: no PMU").count(), 1, "{md}");

        let mut counted = study();
        counted[1]["metrics"]["server"]["cycles"] = json!(18000.0 * 1000.0);
        let (header, rows) = table(&counted);
        assert_eq!(header.last(), Some(&"cycles/req"));
        assert_eq!(
            rows[1].last().unwrap(),
            "1000.00",
            "cycles / 18000 requests"
        );
        assert_eq!(
            rows[0].last().unwrap(),
            "n/a",
            "measured there, not counted"
        );
        assert!(hardware_note(&counted)
            .unwrap()
            .contains("instructions, IPC, cache misses"));
    }

    #[test]
    fn the_page_is_well_formed_and_holds_the_four_plots() {
        let page = html(&study(), "completed", 0.05);
        let doc = roxmltree::Document::parse_with_options(
            &page,
            roxmltree::ParsingOptions {
                allow_dtd: true,
                ..Default::default()
            },
        )
        .expect("well-formed XHTML");
        for (id, ..) in FIGURES {
            let svg = doc
                .descendants()
                .find(|n| n.has_tag_name("svg") && n.attribute("data-plot") == Some(id))
                .unwrap_or_else(|| panic!("no plot {id}"));
            let points = svg
                .descendants()
                .filter(|n| n.attribute("class") == Some("point"))
                .count();
            assert_eq!(points, 3, "{id}: the three completed points only");
        }
    }

    #[test]
    fn an_empty_study_still_renders_and_says_so() {
        let page = html(&[], "interrupted", 0.05);
        assert!(page.contains("No point was measured. Status: interrupted."));
        assert_eq!(page.matches("no completed point").count(), 4);
        assert_eq!(overall(&[], 3), "interrupted");
        assert_eq!(overall(&study(), 6), "failed");
    }
}
