//! The machine's own part of a study's report: the canary's figures against wall time (one
//! small plot, each marker a round's start, also written as figures/canary_by_round.svg, .png
//! and .csv with the report's other figures) from the folder's canary.jsonl, and how many
//! visits others disturbed, by how much, and how many were made again, from the interference
//! blocks of its visits. A folder without canaries (older, or a study that records none) gets
//! one line saying so, never an empty plot.
use super::figure_files;
use super::plot::axis::{Scale, TickFormat};
use super::plot::{self, escape, Datum, Panel, Plot, Series};
use super::plots::Figure;
use crate::probe::canary::{Canary, Component};
use crate::probe::watch::{canary_lines, visit_blocks, CanaryLine, VisitBlocks};
use std::path::Path;

/// One canary line of canary.jsonl.
#[derive(Debug, Clone)]
struct Taken {
    round: usize,
    /// The host it was measured on, in a study of several (mesh).
    host: Option<String>,
    unix_s: f64,
    canary: Canary,
}

/// What the folder says about the machine while the study ran.
#[derive(Debug, Default)]
pub struct Watched {
    canaries: Vec<Taken>,
    /// Why a canary is missing, where a line says so ("host: reason").
    missing: Vec<String>,
    /// Visits that carry an interference block (folders before it have none).
    watched_visits: usize,
    /// Others' CPU share plus steal of each disturbed visit.
    disturbed_shares: Vec<f64>,
    /// Disturbed visits followed by another of the same point, round and kind.
    made_again: usize,
}

const COLORS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

/// Which visit this is, so a remake is found by the same identity later in the file.
fn identity(v: &VisitBlocks) -> (Option<&str>, u64, Option<&str>) {
    let visit = v.visit.as_ref();
    let key = visit
        .and_then(|b| b.key.as_deref())
        .or_else(|| v.sweep_point.as_ref()?.key.as_deref());
    (
        key,
        visit.and_then(|b| b.round).unwrap_or(0),
        visit.and_then(|b| b.kind.as_deref()),
    )
}

/// Reads canary.jsonl and the visits (visits.jsonl, or results.jsonl where each record is a
/// visit, as in servers).
pub fn read(dir: &Path) -> Watched {
    let lines: Vec<CanaryLine> = canary_lines(dir);
    let mut missing: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            let why = l.canary_unavailable_reason.as_deref()?;
            Some(format!("{}: {why}", l.host.as_deref().unwrap_or("here")))
        })
        .collect();
    missing.dedup();
    let canaries = lines
        .into_iter()
        .filter_map(|l| {
            Some(Taken {
                round: l.round?,
                host: l.host,
                unix_s: l.unix_s?,
                canary: l.canary?,
            })
        })
        .collect();
    let mut visits = visit_blocks(&dir.join(super::visit_folder::VISITS_JSONL));
    if visits.is_empty() {
        visits = visit_blocks(&dir.join(super::folder::RESULTS_JSONL));
    }
    let watched: Vec<&VisitBlocks> = visits
        .iter()
        .filter(|v| v.interference().is_some())
        .collect();
    let mut out = Watched {
        canaries,
        missing,
        watched_visits: watched.len(),
        ..Watched::default()
    };
    for (i, v) in watched.iter().enumerate() {
        let block = v.interference().expect("a watched visit");
        if !block.disturbed() {
            continue;
        }
        let others = block.others_cpu_share.unwrap_or(0.0);
        out.disturbed_shares
            .push(others + block.steal_share.unwrap_or(0.0));
        if watched[i + 1..]
            .iter()
            .any(|later| identity(later) == identity(v))
        {
            out.made_again += 1;
        }
    }
    out
}

impl Watched {
    /// The report's lines on the machine (plain text, the same in Markdown and HTML).
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![self.canary_line()];
        if !self.missing.is_empty() && !self.canaries.is_empty() {
            out.push(format!(
                "No canary was recorded from {}.",
                self.missing.join("; ")
            ));
        }
        if self.watched_visits == 0 {
            out.push("No interference was recorded per visit in this folder.".into());
            return out;
        }
        let mut shares = self.disturbed_shares.clone();
        shares.sort_by(f64::total_cmp);
        out.push(match (shares.first(), shares.last()) {
            (Some(lo), Some(hi)) => format!(
                "{} of {} visits were disturbed: others' CPU use plus steal took {:.0}–{:.0} % of the run's CPUs (median {:.0} %); {} of them were made again at the end of their round, and both stay in the visits file.",
                shares.len(),
                self.watched_visits,
                lo * 100.0,
                hi * 100.0,
                shares[shares.len() / 2] * 100.0,
                self.made_again
            ),
            _ => format!(
                "None of {} visits was disturbed (others' CPU use stayed under the quiet threshold).",
                self.watched_visits
            ),
        });
        out
    }

    fn canary_line(&self) -> String {
        let (Some(first), Some(last)) = (self.canaries.first(), self.canaries.last()) else {
            if !self.missing.is_empty() {
                return format!("No canary was recorded: {}.", self.missing.join("; "));
            }
            return "No canary was recorded in this folder (written before bytepath measured one, or by a study that does not).".into();
        };
        let spread = |c: Component| {
            let costs: Vec<f64> = self
                .canaries
                .iter()
                .filter_map(|t| t.canary.cost(c))
                .collect();
            let lo = costs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = costs.iter().copied().fold(0.0, f64::max);
            (!costs.is_empty()).then(|| format!("{} {:+.0} %", c.name(), (hi / lo - 1.0) * 100.0))
        };
        let spreads: Vec<String> = Component::ALL.into_iter().filter_map(spread).collect();
        format!(
            "{} canaries over {:.0} s (one at the start of each round); largest over smallest cost: {}.",
            self.canaries.len(),
            last.unix_s - first.unix_s,
            spreads.join(", ")
        )
    }

    /// The canary plot: each component's cost relative to its median over the study, against
    /// seconds since the first canary; `None` without canaries.
    pub fn plot(&self) -> Option<Plot> {
        let start = self.canaries.first()?.unix_s;
        let series = Component::ALL
            .into_iter()
            .zip(COLORS)
            .filter_map(|(c, color)| self.series(c, color, start))
            .collect();
        Some(Plot {
            id: "canary",
            x_label: "seconds since the first canary (a marker per round)".into(),
            y_label: "cost / its median".into(),
            x_scale: Scale::Linear,
            x_format: TickFormat::Number,
            y_scale: Scale::Linear,
            panels: vec![Panel {
                title: "canary by round".into(),
                series,
                note: None,
            }],
            columns: 1,
        })
    }

    /// The canary plot as a figure of the report, which also becomes its files
    /// (figures/canary_by_round.*); `None` without canaries.
    pub fn figure(&self) -> Option<Figure> {
        Some(Figure {
            heading: "Canary by round".into(),
            caption: "Each canary component's cost over its median in this study (per host where \
                      there are several), one marker per round: a machine that stayed the same \
                      keeps every marker near 1."
                .into(),
            plot: self.plot()?,
        })
    }

    /// One component's markers, each host's figure against its own median (hosts differ,
    /// rounds should not); `None` where no canary measured it.
    fn series(&self, c: Component, color: &'static str, start: f64) -> Option<Series> {
        let median = |host: &Option<String>| {
            let costs: Vec<f64> = self
                .canaries
                .iter()
                .filter(|t| t.host == *host)
                .filter_map(|t| t.canary.cost(c))
                .collect();
            crate::probe::summary::median(&costs)
        };
        let data: Vec<Datum> = self
            .canaries
            .iter()
            .filter_map(|t| {
                let ratio = t.canary.cost(c)? / median(&t.host)?;
                let on = t
                    .host
                    .as_ref()
                    .map_or(String::new(), |h| format!(" on {h}"));
                Some(Datum {
                    x: t.unix_s - start,
                    y: ratio,
                    ci: None,
                    title: format!(
                        "round {}{on} at {:.1} s: {} {ratio:.3}× its median",
                        t.round,
                        t.unix_s - start,
                        c.name(),
                    ),
                })
            })
            .collect();
        (!data.is_empty()).then_some(Series {
            name: c.name().into(),
            color,
            dashed: false,
            data,
        })
    }

    pub fn markdown(&self) -> String {
        let mut out = String::from("\n## The machine during the study\n\n");
        for line in self.lines() {
            out += &format!("{line}\n\n");
        }
        if let Some(f) = self.figure() {
            out += &figure_files::markdown_figure(&figure_files::stem(&f), &f.heading, &f.caption);
        }
        out
    }

    pub fn html(&self) -> String {
        let mut out = String::from("<h2>The machine during the study</h2>\n");
        for line in self.lines() {
            out += &format!("<p>{}</p>\n", escape(&line));
        }
        if let Some(f) = self.figure() {
            out += &plot::render(&f.plot);
            out += &figure_files::links_html(&figure_files::stem(&f));
        }
        out
    }
}

/// The report pages with the machine's section added (at the end of the Markdown and before
/// the HTML's `</body>`), and the canary figure the section links, which the caller writes
/// with the report's other figures (one `figure_files` write, so none is taken for stale).
pub fn with_machine(dir: &Path, markdown: &str, html: &str) -> (String, String, Option<Figure>) {
    let watched = read(dir);
    let section = watched.html();
    let html = match html.rfind("</body>") {
        Some(at) => format!("{}{section}{}", &html[..at], &html[at..]),
        None => format!("{html}{section}"),
    };
    (
        format!("{markdown}{}", watched.markdown()),
        html,
        watched.figure(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::canary::{fixture, CANARY_JSONL};

    fn folder(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "bytepath-canary-report-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn visit(key: &str, round: usize, others: f64, disturbed: bool) -> String {
        serde_json::json!({
            "sweep_point": { "key": key },
            "visit": { "key": key, "round": round, "kind": "plain", "interference": {
                "others_cpu_share": others, "steal_share": 0.0, "disturbed": disturbed } }
        })
        .to_string()
    }

    #[test]
    fn a_folder_with_canaries_gets_the_plot_and_counts_disturbed_and_remade_visits() {
        let dir = folder("with");
        let canaries: String = [(0, 100.0, 140.0), (1, 110.0, 154.0), (2, 125.0, 140.0)]
            .iter()
            .map(|(round, at, getpid)| {
                serde_json::json!({ "round": round, "unix_s": at, "canary": fixture(*getpid) })
                    .to_string()
                    + "\n"
            })
            .collect();
        std::fs::write(dir.join(CANARY_JSONL), canaries).unwrap();
        let visits = [
            visit("copy/4K", 0, 0.02, false),
            visit("gather/4K", 0, 0.45, true),
            visit("gather/4K", 0, 0.03, false),
            visit("copy/4K", 1, 0.25, true),
        ];
        std::fs::write(dir.join("visits.jsonl"), visits.join("\n") + "\n").unwrap();
        let w = read(&dir);
        let lines = w.lines();
        assert!(lines[0].starts_with("3 canaries over 25 s"), "{lines:?}");
        assert!(lines[0].contains("getpid +10 %"), "{lines:?}");
        assert!(
            lines[1].starts_with("2 of 4 visits were disturbed")
                && lines[1].contains("25–45 %")
                && lines[1].contains("1 of them were made again"),
            "{lines:?}"
        );
        let (md, html, figure) = with_machine(&dir, "# r\n", "<html><body><p>x</p></body></html>");
        assert!(md.contains("## The machine during the study"));
        assert!(md.contains("[CSV](figures/canary_by_round.csv)"), "{md}");
        assert!(
            html.contains("href=\"figures/canary_by_round.png\""),
            "{html}"
        );
        let figure = figure.expect("the canary figure, for its files");
        assert_eq!(figure_files::stem(&figure), "canary_by_round");
        let csv = figure_files::csv(&figure.plot);
        assert!(csv.contains("canary by round,getpid,10,1.1"), "{csv}");
        let svg = html.find("data-plot=\"canary\"").expect("the canary plot");
        assert!(svg < html.find("</body>").unwrap());
        assert!(
            html.contains("round 1 at 10.0 s: getpid 1.100× its median"),
            "{html}"
        );
    }

    #[test]
    fn a_host_without_the_canary_is_named_with_its_reason() {
        let dir = folder("hosts");
        let lines = [
            serde_json::json!({ "round": 0, "unix_s": 1.0, "host": "a:7000", "canary": fixture(140.0) }),
            serde_json::json!({ "round": 0, "unix_s": 1.1, "host": "b:7000",
                "canary_unavailable_reason": "the server cannot measure the canary" }),
            serde_json::json!({ "round": 1, "unix_s": 3.0, "host": "a:7000", "canary": fixture(280.0) }),
        ];
        let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
        std::fs::write(dir.join(CANARY_JSONL), text).unwrap();
        let w = read(&dir);
        let lines = w.lines();
        assert!(lines[0].starts_with("2 canaries over 2 s"), "{lines:?}");
        assert_eq!(
            lines[1],
            "No canary was recorded from b:7000: the server cannot measure the canary."
        );
        let svg = plot::render(&w.plot().unwrap());
        assert!(
            svg.contains("round 1 on a:7000 at 2.0 s: getpid 1.333× its median"),
            "{svg}"
        );
    }

    #[test]
    fn an_older_folder_says_no_canary_was_recorded_and_draws_nothing() {
        let dir = folder("older");
        std::fs::write(dir.join("visits.jsonl"), "{\"visit\":{\"round\":0}}\n").unwrap();
        let w = read(&dir);
        assert!(w.plot().is_none() && w.figure().is_none());
        assert_eq!(
            w.lines(),
            [
                "No canary was recorded in this folder (written before bytepath measured one, or by a study that does not).",
                "No interference was recorded per visit in this folder."
            ]
        );
    }
}
