//! What a file study becomes for a person: the seeds' table (file size, mean time per
//! mechanism with its 95 % CI, and each mechanism's time as a fraction of readsend's) as text
//! on stdout, `report.md`, and a self-contained `report.html` with two SVG plots (time and CPU
//! per byte against file size, log axes, one line per mechanism) drawn by `report::plot`, each
//! also written as figures/NAME.svg, .png and .csv and linked from both pages.
use super::mechanisms::FileMechanism;
use super::record::{Figure, FileConfig, FileStudy, FileSummary, TransferRecord};
use crate::analysis::profile::{Profiled, SideProfile};
use crate::error::Error;
use crate::measure::profile::Profile;
use crate::report::breakdown;
use crate::report::plot::axis::{Scale, TickFormat};
use crate::report::plot::{escape, Datum, Series};
use crate::report::study::{self, page, Table};
use crate::report::study_figures::{self, LogFigure};
use std::path::Path;

pub use crate::report::study::HTML;

/// Sizes exactly: `98 MiB`, `4 KiB`, but `4097 B` (rounding would hide the awkward sizes).
pub fn size_label(bytes: f64) -> String {
    let b = bytes as u64;
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if b >= 1 << shift && b % (1 << shift) == 0 {
            return format!("{} {unit}", b >> shift);
        }
    }
    format!("{b} B")
}

fn color(m: FileMechanism) -> &'static str {
    match m {
        FileMechanism::Readsend => "#d62728",
        FileMechanism::Sendfile => "#2ca02c",
        FileMechanism::Splice => "#1f77b4",
        FileMechanism::Mmap => "#ff7f0e",
    }
}

fn figure(f: &Option<Figure>, decimals: usize) -> String {
    f.as_ref().map_or("n/a".into(), |f| f.text(decimals))
}

fn fraction(r: &FileSummary) -> String {
    r.fraction_of_readsend
        .map_or("n/a".into(), |f| format!("{:.0} %", f * 100.0))
}

fn residency(r: &FileSummary) -> String {
    r.residency_before
        .map_or("n/a".into(), |f| format!("{:.1} %", f * 100.0))
}

/// The rows every format shares: one per (size, mechanism), or per (size, cache, mechanism)
/// with a cache column when the study measured both caches.
fn rows(study: &FileStudy) -> Vec<Vec<String>> {
    study
        .summaries
        .iter()
        .map(|r| {
            let mut row = vec![
                size_label(r.size_bytes as f64),
                r.mechanism.name().to_string(),
                figure(&r.time_ms, 2),
                fraction(r),
                figure(&r.throughput_gbps, 2),
                figure(&r.cpu_ns_per_byte, 3),
                figure(&r.server_cpu_ns_per_byte, 3),
                figure(&r.server_syscalls, 0),
                figure(&r.context_switches, 0),
                figure(&r.page_faults, 0),
                residency(r),
                format!("{}/{}", r.reps_measured, r.reps_measured + r.reps_failed),
            ];
            if let Some(cache) = &r.cache {
                row.insert(2, cache.clone());
            }
            row
        })
        .collect()
}

fn header(study: &FileStudy) -> Vec<&'static str> {
    let mut header = HEADER.to_vec();
    if study.summaries.iter().any(|r| r.cache.is_some()) {
        header.insert(2, "cache");
    }
    header
}

const HEADER: [&str; 12] = [
    "size",
    "mechanism",
    "time ms (95 % CI)",
    "of readsend",
    "Gbit/s",
    "CPU ns/B",
    "server CPU ns/B",
    "server calls",
    "context switches",
    "page faults",
    "resident before",
    "reps ok",
];

/// How the figures were measured, in one paragraph; `note` says when the answers were judged
/// at a margin other than the study's (`report --margin`).
fn method(study: &FileStudy, note: Option<&str>) -> String {
    let c = &study.config;
    format!(
        "{} repetitions per point ({}), cache {}, chunk {} B, {}, pin {} (server CPU {}, client CPU {}). Time: {}. CPU ns/B: user+system time of both threads (RUSAGE_THREAD) per file byte; server CPU ns/B: the sending thread's alone. Context switches and page faults: both threads, per transfer. CI: 95 % Student t over repetitions (± omitted with one repetition). Comparisons: equivalence margin ±{} (--margin), each answer's per-size list one family (Holm for beats/slower, Benjamini–Hochberg for equivalent). {}{} Status: {}.",
        c.reps,
        match c.seed {
            Some(seed) => format!("{}; seed {seed}", c.order.as_deref().unwrap_or(super::ORDER)),
            None => "per repetition every mechanism in list order".into(),
        },
        c.cache, c.chunk_bytes, c.where_sides_run, c.pin, cpu(c.placement.sender_cpu),
        cpu(c.placement.receiver_cpu), c.timing, crate::stats::verdict::percent(c.margin),
        counters_note(study), note.map_or_else(String::new, |n| format!(" {n}")), study.status
    )
}

/// Where the perf counters were open: in transfers of their own, or (folders from before they
/// had them) during every measured transfer.
fn counters_note(study: &FileStudy) -> String {
    let c = &study.config.counters;
    if study.transfers.iter().any(|t| t.counter_transfer) {
        format!(
            "Perf counters ({c}): open only in one transfer of their own per size, mechanism and \
             cache after the measured ones (counter_transfer in results.jsonl), never in the \
             transfers the figures come from."
        )
    } else if c != "none" && !study.transfers.is_empty() {
        format!(
            "Perf counters ({c}): open during every measured transfer (a folder from before \
             they had a transfer of their own), so these figures include their cost."
        )
    } else {
        "No perf counters were open.".into()
    }
}

fn cpu(cpu: Option<usize>) -> String {
    cpu.map_or("any".into(), |c| c.to_string())
}

fn table(study: &FileStudy) -> Table {
    let rows = rows(study);
    Table {
        marked: vec![false; rows.len()],
        header: header(study).into_iter().map(String::from).collect(),
        rows,
    }
}

/// The table for stdout.
pub fn text_table(study: &FileStudy) -> String {
    table(study).text()
}

pub fn markdown(study: &FileStudy) -> String {
    markdown_noted(study, None)
}

fn markdown_noted(study: &FileStudy, note: Option<&str>) -> String {
    let mut out = String::from("# bytepath file: serving a file over a socket\n\n");
    out += &study::answers_markdown(&answers(study));
    out += "## How this was measured\n\n";
    out += &method(study, note);
    out += "\n\n";
    out += &table(study).markdown();
    out += "\n";
    out += &study_figures::markdown(&figures(study));
    out
}

/// The study's own answers, then with `--profile` where each mechanism's CPU goes.
fn answers(study: &FileStudy) -> Vec<crate::analysis::Answer> {
    let mut out = super::answers::answers(study);
    out.extend(crate::analysis::profile::answer_for(
        &profiled_points(study),
        "profiled transfer",
    ));
    out
}

/// The profiled transfers (`--profile`) as the breakdown's points: server and client sides.
fn profiled_points(study: &FileStudy) -> Vec<Profiled> {
    let mut points: Vec<Profiled> = study
        .transfers
        .iter()
        .filter(|t| t.profiled.is_some())
        .map(|t| {
            let side = |name: &str, usage: &Option<crate::record::wire::SideUsage>| SideProfile {
                side: name.into(),
                profile: match usage.as_ref().and_then(|u| u.profile.clone()) {
                    Some(Profile::Measured(b)) => Ok(*b),
                    Some(Profile::Unavailable { reason }) => Err(reason),
                    None => Err(t.error.clone().unwrap_or_else(|| "not sampled".into())),
                },
            };
            Profiled {
                series: t.mechanism.name().into(),
                mechanism: t.mechanism.name().into(),
                size: t.size_bytes as f64,
                at: size_label(t.size_bytes as f64),
                sides: vec![side("server", &t.server), side("client", &t.client)],
            }
        })
        .collect();
    let rank = |m: &str| study.config.mechanisms.iter().position(|x| x.name() == m);
    points.sort_by_key(|p| (rank(&p.mechanism), p.size as u64));
    points
}

/// One line per mechanism; with both caches, per (mechanism, cache), the cold lines dashed.
fn series(study: &FileStudy, value: impl Fn(&FileSummary) -> Option<Figure>) -> Vec<Series> {
    let mut caches: Vec<Option<&str>> = Vec::new();
    for r in &study.summaries {
        if !caches.contains(&r.cache.as_deref()) {
            caches.push(r.cache.as_deref());
        }
    }
    let lines = study
        .config
        .mechanisms
        .iter()
        .flat_map(|&m| caches.iter().map(move |&c| (m, c)));
    lines
        .map(|(m, cache)| {
            let name = match cache {
                Some(c) => format!("{} {c}", m.name()),
                None => m.name().to_string(),
            };
            Series {
                color: color(m),
                dashed: cache == Some("cold"),
                data: study
                    .summaries
                    .iter()
                    .filter(|r| r.mechanism == m && r.cache.as_deref() == cache)
                    .filter_map(|r| {
                        let f = value(r)?;
                        (f.mean > 0.0).then(|| Datum {
                            x: r.size_bytes as f64,
                            y: f.mean,
                            ci: f.ci95.map(|s| (s.ci95_low.max(f.mean * 1e-3), s.ci95_high)),
                            title: format!(
                                "{name} {}: {:.4}",
                                size_label(r.size_bytes as f64),
                                f.mean
                            ),
                        })
                    })
                    .collect(),
                name,
            }
        })
        .collect()
}

/// The two figures against file size: time per transfer and CPU per byte, log axes.
fn figures(study: &FileStudy) -> Vec<crate::report::plots::Figure> {
    let x = ("file size", Scale::Log2, TickFormat::Bytes);
    let lines =
        "one line per mechanism (dashed: cold cache), error bars the 95 % CI over repetitions";
    let time = LogFigure {
        id: "file-time",
        heading: "Time per transfer",
        caption: &format!("Mean time per transfer against file size; {lines}."),
        x,
        y_label: "time (ms)",
    };
    let cpu = LogFigure {
        id: "file-cpu",
        heading: "CPU per byte (both sides)",
        caption: &format!("User and system CPU time of both threads per file byte; {lines}."),
        x,
        y_label: "CPU ns per byte",
    };
    vec![
        time.of(series(study, |r| r.time_ms), "nothing measured"),
        cpu.of(series(study, |r| r.cpu_ns_per_byte), "nothing measured"),
    ]
}

pub fn html(study: &FileStudy) -> String {
    html_noted(study, None)
}

fn html_noted(study: &FileStudy, note: Option<&str>) -> String {
    let mut body = study::answers_html(&answers(study));
    body += &format!(
        "<h2>How this was measured</h2>\n<p>{}</p>\n",
        escape(&method(study, note))
    );
    body += &table(study).html();
    body += &study_figures::html(&figures(study));
    body += &breakdown::section_for(&profiled_points(study));
    page("bytepath file: serving a file over a socket", &body)
}

/// Re-renders the report of a file results folder from its marker and results.jsonl (what
/// `bytepath report DIR` does for such a folder), judged at `margin` (`report --margin`) where
/// given and other than the study's, which the method text then states and the folder
/// records; returns the HTML path.
pub fn rerender(dir: &Path, margin: Option<f64>) -> Result<std::path::PathBuf, Error> {
    let mut config: FileConfig = study::marker_spec(dir)?.map_err(|e| {
        Error::Failed(format!(
            "{}: the marker holds no file study configuration ({e})",
            dir.display()
        ))
    })?;
    let transfers: Vec<TransferRecord> = study::records(dir)?;
    let judging = crate::report::margin_change::judging(dir, config.margin, margin)?;
    config.margin = judging.margin;
    let planned = config.sizes_bytes.len()
        * config.mechanisms.len()
        * config.caches().len()
        * config.reps as usize;
    let status = if transfers.iter().any(|t| !t.ok()) {
        "failed"
    } else if transfers.len() < planned {
        "interrupted"
    } else {
        "completed"
    };
    let study = FileStudy {
        schema_version: super::record::SCHEMA_VERSION,
        command: "file",
        summaries: super::record::summarize_transfers(
            &config.sizes_bytes,
            &config.mechanisms,
            &config.caches(),
            &transfers,
        ),
        config,
        environment: None,
        status,
        transfers,
    };
    let note = judging.note.as_deref();
    study::write(
        dir,
        &markdown_noted(&study, note),
        &html_noted(&study, note),
        study_figures::files(&figures(&study)),
    )?;
    Ok(dir.join(HTML))
}

/// Writes report.md and report.html into the results folder.
pub fn write(dir: &Path, study: &FileStudy) -> Result<(), Error> {
    study::write(
        dir,
        &markdown(study),
        &html(study),
        study_figures::files(&figures(study)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::file::record::{summarize_transfers, FileConfig, TransferRecord, SCHEMA_VERSION};

    fn study() -> FileStudy {
        let mechanisms = vec![FileMechanism::Readsend, FileMechanism::Sendfile];
        let transfers: Vec<TransferRecord> = [(1u64 << 20, 10.0), (8 << 20, 70.0)]
            .iter()
            .flat_map(|&(size, ms)| {
                mechanisms.iter().map(move |&m| TransferRecord {
                    schema_version: SCHEMA_VERSION,
                    counter_transfer: false,
                    size_bytes: size,
                    mechanism: m,
                    rep: 0,
                    residency_before: None,
                    elapsed_ms: Some(if m == FileMechanism::Sendfile {
                        ms / 2.0
                    } else {
                        ms
                    }),
                    throughput_gbps: None,
                    server_syscalls: Some(1),
                    client_recv_calls: Some(1),
                    server: None,
                    client: None,
                    verified: None,
                    error: None,
                    profiled: None,
                    cache: None,
                })
            })
            .collect();
        FileStudy {
            schema_version: SCHEMA_VERSION,
            command: "file",
            config: FileConfig {
                where_sides_run: "test".into(),
                ..FileConfig::for_tests(vec![1 << 20, 8 << 20], mechanisms.clone(), 1)
            },
            environment: None,
            status: "completed",
            summaries: summarize_transfers(
                &[1 << 20, 8 << 20],
                &mechanisms,
                &["warm".into()],
                &transfers,
            ),
            transfers,
        }
    }

    #[test]
    fn the_table_gives_each_mechanism_as_a_fraction_of_readsend() {
        let text = text_table(&study());
        let sendfile_1m = text
            .lines()
            .find(|l| l.contains("1 MiB") && l.contains("sendfile"))
            .unwrap();
        assert!(
            sendfile_1m.contains("50 %") && sendfile_1m.contains("5.00"),
            "{text}"
        );
        assert!(markdown(&study()).contains("| 8 MiB | readsend | 70.00 | 100 % |"));
    }

    #[test]
    fn the_html_holds_both_plots_as_well_formed_svg() {
        let page = html(&study());
        for id in ["file-time", "file-cpu"] {
            let start = page.find(&format!("data-plot=\"{id}\"")).unwrap();
            let open = page[..start].rfind("<svg").unwrap();
            let close = open + page[open..].find("</svg>").unwrap() + 6;
            roxmltree::Document::parse(&page[open..close]).unwrap();
        }
        assert_eq!(
            page.matches("<polyline").count(),
            2,
            "time only: CPU is n/a here"
        );
    }

    #[test]
    fn sizes_are_labelled_exactly() {
        assert_eq!(size_label(98.0 * 1048576.0), "98 MiB");
        assert_eq!(size_label(4096.0), "4 KiB");
        assert_eq!(size_label(4097.0), "4097 B");
        assert_eq!(size_label(1073741824.0), "1 GiB");
    }
}
