//! Every figure of the report also as files a reader can put in a document, under `figures/`
//! beside report.html: NAME.svg (the very SVG the page inlines), NAME.png (that SVG drawn
//! `PNG_WIDTH` pixels wide) and NAME.csv (exactly the numbers drawn: panel, series, x, y and the
//! interval where one is drawn). NAME says what the figure shows; the seeds' four plots keep
//! the seeds' names (throughput vs size, latency vs threads, cache misses vs size, cycles per
//! byte).
//!
//! The page, report.md and [`write()`] all take their figures from [`report_figures`] and their
//! names from [`named`], the one place that gives a figure its file name: a figure added to
//! that list gets its three files and its "SVG · PNG · CSV" links with no more code, named
//! after its heading unless [`KNOWN`] names it. The other studies' figures (file, servers:
//! `report::study_figures`; mesh's heatmaps; the canary plot of every report) are written by
//! the same [`write_files`], and a report's figures/ keeps only the figure files that report
//! wrote.
use super::plot::heatmap::{self, Heatmap};
use super::plot::{escape, raster, render, Datum, Plot};
use super::plots::Figure;
use crate::analysis::Dataset;
use crate::error::Error;
use std::path::{Path, PathBuf};

/// The folder of the figure files, beside report.html; the links are relative to it.
pub const FIGURES_DIR: &str = "figures";
/// A PNG's width in pixels: sharp on a page or a slide at 1080 SVG units.
pub const PNG_WIDTH: u32 = 1200;
/// The three files of a figure, in the order the links list them.
pub const KINDS: [(&str, &str); 3] = [("svg", "SVG"), ("png", "PNG"), ("csv", "CSV")];

/// Every figure of the run-record report (sweep, ipc, `bytepath report`) in page order: the one
/// list the page, report.md and [`write()`] take. A figure another module draws joins by being
/// appended here (`figures.extend(module::figure(data))` on `plots::figures(data)`), and so
/// gets its files and links.
pub fn report_figures(data: &Dataset) -> Vec<Figure> {
    let mut figures = super::plots::figures(data);
    figures.extend(super::cdf::latency_cdf(data));
    figures
}

/// The file names of the figures whose name is not their heading's words: by plot id and,
/// where one id draws different things, by what it draws (an x or y label).
pub const KNOWN: [(&str, &str, &str); 17] = [
    ("throughput", "", "throughput_vs_size"),
    ("latency", "threads", "latency_vs_threads"),
    ("latency", "", "latency_vs_size"),
    ("cpu", "cycles / byte", "cycles_per_byte"),
    ("cpu", "", "cpu_ns_per_byte"),
    ("cycles", "", "cycles_per_byte"),
    ("cache", "", "cache_misses_vs_size"),
    ("context-switches", "", "context_switches_vs_size"),
    ("roofline", "", "memcpy_roofline_vs_threads"),
    ("latency-cdf", "", "latency_cdf"),
    ("file-time", "", "transfer_time_vs_file_size"),
    ("file-cpu", "", "cpu_ns_per_byte_vs_file_size"),
    ("servers-rps", "", "requests_per_s_vs_clients"),
    ("servers-p99", "", "p99_latency_vs_clients"),
    ("servers-cpu", "", "server_cpu_per_request_vs_clients"),
    ("servers-cs", "", "context_switches_per_request_vs_clients"),
    ("canary", "", "canary_by_round"),
];

/// The name of a figure's files (without extension), from [`KNOWN`] or else its heading:
/// lower case, each run of other characters one `_`.
pub fn stem(f: &Figure) -> String {
    let known = KNOWN.iter().find(|(id, label, _)| {
        *id == f.plot.id
            && (label.is_empty() || *label == f.plot.x_label || *label == f.plot.y_label)
    });
    if let Some((.., name)) = known {
        return (*name).to_string();
    }
    match file_name(&f.heading).as_str() {
        "" => f.plot.id.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        name => name.to_string(),
    }
}

/// `text` as a file name: lower case ASCII letters and digits, each run of other characters
/// one `_`, none at either end (empty when `text` has no letter or digit).
pub fn file_name(text: &str) -> String {
    let mut name = String::new();
    for c in text.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('_') {
            name.push('_');
        }
    }
    name.trim_end_matches('_').to_string()
}

/// Each figure with the name of its files, in order; a name a figure before it took gets
/// `_2`, `_3`… so no figure's files overwrite another's.
pub fn named(figures: &[Figure]) -> Vec<(String, &Figure)> {
    let mut out: Vec<(String, &Figure)> = Vec::with_capacity(figures.len());
    for f in figures {
        let base = stem(f);
        let mut name = base.clone();
        for n in 2.. {
            if !out.iter().any(|(taken, _)| *taken == name) {
                break;
            }
            name = format!("{base}_{n}");
        }
        out.push((name, f));
    }
    out
}

/// A figure's file of one kind, relative to the report: `figures/NAME.EXT`.
pub fn link(stem: &str, ext: &str) -> String {
    format!("{FIGURES_DIR}/{stem}.{ext}")
}

/// The line under a figure on the page: "SVG · PNG · CSV", each a link to its file.
pub fn links_html(stem: &str) -> String {
    let links: Vec<String> = KINDS
        .iter()
        .map(|(ext, label)| {
            format!(
                "<a href=\"{}\" type=\"{}\">{label}</a>",
                escape(&link(stem, ext)),
                media_type(ext)
            )
        })
        .collect();
    format!("<p class=\"figure-files\">{}</p>", links.join(" · "))
}

fn media_type(ext: &str) -> &'static str {
    match ext {
        "svg" => "image/svg+xml",
        "png" => "image/png",
        _ => "text/csv",
    }
}

/// report.md's figures: each one's heading, its PNG shown, its caption and "SVG · PNG · CSV".
pub fn markdown_section(figures: &[Figure]) -> String {
    let mut out = String::from("## Figures\n\n");
    for (stem, f) in named(figures) {
        out += &markdown_figure(&stem, &f.heading, &f.caption);
    }
    out
}

/// One figure in report.md: its heading, its PNG shown, its caption and "SVG · PNG · CSV".
pub fn markdown_figure(stem: &str, heading: &str, caption: &str) -> String {
    let links: Vec<String> = KINDS
        .iter()
        .map(|(ext, label)| format!("[{label}]({})", link(stem, ext)))
        .collect();
    format!(
        "**{heading}**\n\n![{heading}]({})\n\n{caption}\n\n{}\n\n",
        link(stem, "png"),
        links.join(" · ")
    )
}

/// The CSV of a plot: a row per datum drawn, in panel and series order and by x within a
/// series; the columns are named by the axes, and the interval's bounds are columns only where
/// the plot draws intervals. A plot with no data (its panels' notes say why) is the header
/// alone, which every CSV reader takes as no rows.
pub fn csv(plot: &Plot) -> String {
    let with_ci = plot
        .panels
        .iter()
        .flat_map(|p| &p.series)
        .flat_map(|s| &s.data)
        .any(|d| d.ci.is_some());
    let x = match plot.x_format {
        super::plot::axis::TickFormat::Bytes => format!("{} (bytes)", plot.x_label),
        _ => plot.x_label.clone(),
    };
    let mut header = vec!["panel".to_string(), "series".to_string(), x];
    header.push(plot.y_label.clone());
    if with_ci {
        header.push(format!("{} CI low", plot.y_label));
        header.push(format!("{} CI high", plot.y_label));
    }
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(&header).expect("in memory");
    for panel in &plot.panels {
        for series in &panel.series {
            let mut data: Vec<&Datum> = series.data.iter().collect();
            data.sort_by(|a, b| a.x.total_cmp(&b.x));
            for d in data {
                let mut row = vec![panel.title.clone(), series.name.clone()];
                row.extend([d.x.to_string(), d.y.to_string()]);
                if with_ci {
                    let (lo, hi) = d.ci.map_or((String::new(), String::new()), |(l, h)| {
                        (l.to_string(), h.to_string())
                    });
                    row.extend([lo, hi]);
                }
                out.write_record(&row).expect("in memory");
            }
        }
    }
    String::from_utf8(out.into_inner().expect("in memory")).expect("UTF-8 in, UTF-8 out")
}

/// One figure as its files hold it: the name of its files (without extension), the SVG the
/// page inlines and the CSV of exactly the numbers drawn. A plot ([`FigureFile::of`]) and a
/// heatmap ([`FigureFile::heatmap`]) both become one, so [`write_files`] is the one writer.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureFile {
    pub stem: String,
    pub svg: String,
    pub csv: String,
}

impl FigureFile {
    /// A plot's files, named `stem`.
    pub fn of(stem: &str, f: &Figure) -> FigureFile {
        FigureFile {
            stem: stem.to_string(),
            svg: render(&f.plot),
            csv: csv(&f.plot),
        }
    }

    /// A heatmap's files, named `stem`: a CSV row per cell that has a value (the colour
    /// drawn), with its row and column labels, the value under `value_label` and the cell's
    /// text as shown.
    pub fn heatmap(stem: &str, h: &Heatmap, value_label: &str) -> FigureFile {
        let mut out = csv::Writer::from_writer(Vec::new());
        let header = [&h.row_label, &h.column_label, value_label, "as shown"];
        out.write_record(header).expect("in memory");
        for (row, cells) in h.rows.iter().zip(&h.cells) {
            for (column, cell) in h.columns.iter().zip(cells) {
                if let Some(v) = cell.value {
                    let record = [row, column, &v.to_string(), &cell.text];
                    out.write_record(record).expect("in memory");
                }
            }
        }
        FigureFile {
            stem: stem.to_string(),
            svg: heatmap::render(h),
            csv: String::from_utf8(out.into_inner().expect("in memory")).expect("UTF-8"),
        }
    }
}

/// Every figure's files, named by [`named`].
pub fn files(figures: &[Figure]) -> Vec<FigureFile> {
    named(figures)
        .into_iter()
        .map(|(stem, f)| FigureFile::of(&stem, f))
        .collect()
}

/// Writes every figure's three files into `report_dir/figures/`; returns the folder.
pub fn write(report_dir: &Path, figures: &[Figure]) -> Result<PathBuf, Error> {
    write_files(report_dir, &files(figures))
}

/// Writes each figure's three files into `report_dir/figures/`, then removes the figure files
/// this report did not write (`remove_stale`); returns the folder. Each file is written whole
/// and renamed into place, so a failure leaves no half-written figure.
pub fn write_files(report_dir: &Path, figures: &[FigureFile]) -> Result<PathBuf, Error> {
    let dir = report_dir.join(FIGURES_DIR);
    if figures.is_empty() && !dir.is_dir() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|source| Error::File {
        path: dir.clone(),
        source,
    })?;
    for f in figures {
        let png = raster::png(&f.svg, PNG_WIDTH).map_err(|why| {
            Error::Failed(format!(
                "{}: {why}",
                dir.join(format!("{}.png", f.stem)).display()
            ))
        })?;
        let path = |ext: &str| dir.join(format!("{}.{ext}", f.stem));
        super::folder::write_atomically(&path("svg"), f.svg.as_bytes())?;
        super::folder::write_atomically(&path("png"), &png)?;
        super::folder::write_atomically(&path("csv"), f.csv.as_bytes())?;
    }
    remove_stale(&dir, figures)?;
    Ok(dir)
}

/// Removes from `dir` (a report's figures/) every file with a figure's extension (.svg, .png,
/// .csv) that is not one of `written`: a figure an earlier report of this folder drew that
/// this one does not (a plot that no longer applies, a heatmap of a point no longer in the
/// folder) must not stay beside the report as if it still did. Only those extensions, only
/// plain files, only in figures/ itself: anything else a person put there stays.
fn remove_stale(dir: &Path, written: &[FigureFile]) -> Result<(), Error> {
    let error = |source| Error::File {
        path: dir.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(error)? {
        let entry = entry.map_err(error)?;
        let path = entry.path();
        let (Some(stem), Some(ext)) = (
            path.file_stem().and_then(|s| s.to_str()),
            path.extension().and_then(|e| e.to_str()),
        ) else {
            continue;
        };
        let figure_kind = KINDS.iter().any(|(kind, _)| *kind == ext);
        let ours = written.iter().any(|f| f.stem == stem);
        if figure_kind && !ours && entry.file_type().map_err(error)?.is_file() {
            std::fs::remove_file(&path).map_err(|source| Error::File { path, source })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load::parse;
    use crate::analysis::synthetic::{demo_sweep, jsonl, Shape};
    use crate::report::plots::figures;

    fn stems(pmu: bool) -> Vec<String> {
        let data = parse(&jsonl(&demo_sweep(pmu)), "r").unwrap();
        named(&figures(&data)).into_iter().map(|(s, _)| s).collect()
    }

    #[test]
    fn the_seeds_four_plots_are_named_as_the_seeds_name_them() {
        for pmu in [true, false] {
            let stems = stems(pmu);
            for seed in [
                "throughput_vs_size",
                "latency_vs_threads",
                "cache_misses_vs_size",
                "cycles_per_byte",
            ] {
                assert!(stems.contains(&seed.to_string()), "pmu {pmu}: {stems:?}");
            }
        }
        assert!(stems(false).contains(&"cpu_ns_per_byte".to_string()));
    }

    #[test]
    fn a_figure_no_name_knows_is_named_by_its_heading_and_never_twice() {
        let data = parse(&jsonl(&[Shape::stream("copy", 4096, 1, 10.0)]), "r").unwrap();
        let mut f = figures(&data).remove(0);
        f.plot.id = "cdf";
        f.heading = "Latency CDF: p50–p99.9 (µs)".into();
        assert_eq!(stem(&f), "latency_cdf_p50_p99_9_s");
        let twice = [f.clone(), f];
        let names: Vec<String> = named(&twice).into_iter().map(|(s, _)| s).collect();
        assert_eq!(
            names,
            ["latency_cdf_p50_p99_9_s", "latency_cdf_p50_p99_9_s_2"]
        );
    }

    #[test]
    fn the_csv_holds_exactly_the_numbers_drawn() {
        let data = parse(&jsonl(&demo_sweep(false)), "r").unwrap();
        let throughput = figures(&data).remove(0);
        let text = csv(&throughput.plot);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(
            reader.headers().unwrap().iter().collect::<Vec<_>>(),
            [
                "panel",
                "series",
                "message size (bytes)",
                "Gbit/s",
                "Gbit/s CI low",
                "Gbit/s CI high"
            ]
        );
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        let drawn: Vec<&Datum> = throughput
            .plot
            .panels
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| &s.data)
            .collect();
        assert_eq!(rows.len(), drawn.len());
        for d in drawn {
            let row = rows
                .iter()
                .find(|r| {
                    r[2].parse::<f64>().unwrap() == d.x && r[3].parse::<f64>().unwrap() == d.y
                })
                .unwrap_or_else(|| panic!("no row for {d:?}"));
            let (lo, hi) = d.ci.unwrap();
            assert_eq!(
                (
                    row[4].parse::<f64>().unwrap(),
                    row[5].parse::<f64>().unwrap()
                ),
                (lo, hi)
            );
        }
    }

    #[test]
    fn an_empty_figure_is_its_header_alone() {
        let data = parse(&jsonl(&demo_sweep(false)), "r").unwrap();
        let cache = figures(&data)
            .into_iter()
            .find(|f| f.plot.id == "cache")
            .unwrap();
        assert_eq!(
            csv(&cache.plot),
            "panel,series,message size (bytes),misses / KiB\n"
        );
    }

    #[test]
    fn each_figure_is_written_as_svg_png_and_csv_and_linked() {
        let dir = std::env::temp_dir().join(format!("bytepath-figures-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let data = parse(&jsonl(&demo_sweep(false)), "r").unwrap();
        let all = figures(&data);
        let folder = write(&dir, &all).unwrap();
        for (stem, f) in named(&all) {
            let svg = std::fs::read_to_string(folder.join(format!("{stem}.svg"))).unwrap();
            assert_eq!(svg, render(&f.plot), "the SVG is the page's");
            let png = std::fs::read(folder.join(format!("{stem}.png"))).unwrap();
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
            let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
            assert_eq!(width, PNG_WIDTH);
            assert!(folder.join(format!("{stem}.csv")).is_file());
            assert!(links_html(&stem).contains(&format!("href=\"figures/{stem}.csv\"")));
        }
        let md = markdown_section(&all);
        assert!(md.contains("[SVG](figures/throughput_vs_size.svg) · [PNG](figures/throughput_vs_size.png) · [CSV](figures/throughput_vs_size.csv)"), "{md}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_stale_figure_file_goes_and_anything_else_stays() {
        let dir = std::env::temp_dir().join(format!("bytepath-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let figures_dir = dir.join(FIGURES_DIR);
        std::fs::create_dir_all(figures_dir.join("sub.svg")).unwrap();
        let left = ["old.svg", "old.png", "old.csv"];
        let kept = ["notes.txt", "old.svg.bak", "README"];
        for name in left.iter().chain(&kept) {
            std::fs::write(figures_dir.join(name), "a previous run's").unwrap();
        }
        let data = parse(&jsonl(&demo_sweep(false)), "r").unwrap();
        let all = figures(&data);
        write(&dir, &all).unwrap();
        for name in left {
            assert!(!figures_dir.join(name).exists(), "{name} is stale");
        }
        for name in kept.iter().chain(&["sub.svg"]) {
            assert!(
                figures_dir.join(name).exists(),
                "{name} is not a figure file"
            );
        }
        assert!(figures_dir.join("throughput_vs_size.svg").is_file());
        // A report with fewer figures takes the others' files away.
        write(&dir, &all[..1]).unwrap();
        assert!(figures_dir.join("throughput_vs_size.csv").is_file());
        assert!(!figures_dir.join("latency_vs_threads.csv").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_heatmap_csv_holds_each_coloured_cell() {
        use crate::report::plot::heatmap::HeatCell;
        let cell = |value: Option<f64>, text: &str| HeatCell {
            value,
            text: text.into(),
            ..HeatCell::default()
        };
        let h = Heatmap {
            id: "mesh-x".into(),
            row_label: "source".into(),
            column_label: "destination".into(),
            rows: vec!["a".into(), "b".into()],
            columns: vec!["a".into(), "b".into()],
            cells: vec![
                vec![cell(None, "—"), cell(Some(9.5), "9.50 ± 0.20 (3)")],
                vec![cell(Some(2.25), "2.25 (1 visit, no CI)"), cell(None, "—")],
            ],
            higher_is_better: true,
        };
        let f = FigureFile::heatmap("mesh_x", &h, "Gbit/s");
        assert_eq!(
            f.csv,
            "source,destination,Gbit/s,as shown\na,b,9.5,9.50 ± 0.20 (3)\n\
             b,a,2.25,\"2.25 (1 visit, no CI)\"\n"
        );
        assert_eq!(f.svg, heatmap::render(&h));
    }
}
