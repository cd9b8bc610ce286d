//! The report in a real browser: headless Chromium renders report.html to a PNG, which must
//! not be blank, and the page must log nothing to the console (it has no scripts, so any
//! console line is a problem such as a blocked resource); the same for each study's report
//! (ipc, file, servers, from small real runs), and each figure file the reports wrote (the
//! sweep's, file's and servers' figures/*.svg and *.png) opened on its own. Skips, saying
//! why, without Chromium.
mod common;

use assert_cmd::Command;
use bytepath::analysis::synthetic::{demo_sweep, jsonl};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// Renders `page` to `png`; returns Chromium's stderr.
fn screenshot(browser: &Path, page: &Path, png: &Path) -> String {
    let profile = png.with_extension("profile");
    let _ = std::fs::remove_dir_all(&profile);
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .timeout(Duration::from_secs(120))
        .output()
        .expect("chromium ran");
    let _ = std::fs::remove_dir_all(&profile);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "chromium failed: {stderr}");
    stderr
}

/// Console messages Chromium logged for the page ("INFO:CONSOLE:1] ..." lines).
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// Mean and variance of the luminance of every pixel.
fn luminance_stats(png_path: &Path) -> (f64, f64) {
    let lum = luminance(png_path);
    let mean = lum.iter().sum::<f64>() / lum.len() as f64;
    let var = lum.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / lum.len() as f64;
    (mean, var)
}

#[test]
fn chromium_renders_the_report_without_console_errors() {
    let Some(browser) = chromium() else {
        common::skip("no chromium on PATH (apt-get install chromium)");
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    common::folders::report_of(&dir, &jsonl(&demo_sweep(false)));

    // The console check must be able to fail: a page with a script error is caught.
    let broken = dir.join("broken.html");
    std::fs::write(
        &broken,
        "<!DOCTYPE html><html><body><script>nosuchfn();</script></body></html>",
    )
    .unwrap();
    let stderr = screenshot(&browser, &broken, &dir.join("broken.png"));
    assert!(
        !console_lines(&stderr).is_empty(),
        "console errors are not visible in: {stderr}"
    );

    let png = dir.join("report.png");
    let stderr = screenshot(&browser, &dir.join("report.html"), &png);
    assert!(
        console_lines(&stderr).is_empty(),
        "{:?}",
        console_lines(&stderr)
    );
    let (mean, variance) = luminance_stats(&png);
    println!(
        "screenshot: {} (mean luminance {mean:.0}, variance {variance:.0})",
        png.display()
    );
    assert!(
        variance > 100.0,
        "the page looks blank: variance {variance}"
    );
    assert!(
        mean > 128.0,
        "the page should be dark text on a light background: mean {mean}"
    );
    figure_files_open(&browser, &dir);
    for (study, args) in STUDIES {
        let folder = dir.join(study);
        common::bytepath()
            .args(*args)
            .arg("--out")
            .arg(&folder)
            .timeout(Duration::from_secs(120))
            .assert()
            .success();
        let stderr = screenshot(
            &browser,
            &folder.join("report.html"),
            &dir.join(format!("{study}.png")),
        );
        assert!(
            console_lines(&stderr).is_empty(),
            "{study}: {:?}",
            console_lines(&stderr)
        );
        let (_, variance) = luminance_stats(&dir.join(format!("{study}.png")));
        assert!(
            variance > 100.0,
            "{study}'s page looks blank: variance {variance}"
        );
        if *study != "ipc" {
            // file and servers draw their own figures, each also a file (ipc's are the sweep's).
            each_figure_file_opens(&browser, &folder);
        }
    }
}

/// Each figure file the report wrote (figures/*.svg, *.png), opened on its own: no console
/// line, and ink on the page (a figure, even one whose panel only says why it is empty, draws
/// its frame and text; a file the browser cannot show leaves none).
fn figure_files_open(browser: &Path, dir: &Path) {
    let files = figure_images(dir);
    for seed in [
        "throughput_vs_size",
        "latency_vs_threads",
        "cache_misses_vs_size",
        "cycles_per_byte",
    ] {
        for ext in ["svg", "png"] {
            let file = dir.join("figures").join(format!("{seed}.{ext}"));
            assert!(files.contains(&file), "{} is missing", file.display());
        }
    }
    each_figure_file_opens(browser, dir);
    // The check can fail: a figure that draws nothing shows no ink.
    let shots = dir.join("figure-shots");
    let broken = shots.join("broken.svg");
    let blank = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1080\" height=\"300\"/>";
    std::fs::write(&broken, blank).unwrap();
    screenshot(browser, &broken, &shots.join("broken.svg.png"));
    assert!(ink_pixels(&shots.join("broken.svg.png")) < 500);
}

/// The SVG and PNG files in `dir/figures`, sorted.
fn figure_images(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("figures"))
        .expect("the report wrote figures/")
        .map(|e| e.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("svg" | "png")))
        .collect();
    files.sort();
    files
}

/// Each figure file in `dir/figures` (its SVGs and PNGs), opened on its own: no console line,
/// and ink on the page.
fn each_figure_file_opens(browser: &Path, dir: &Path) {
    let files = figure_images(dir);
    assert!(!files.is_empty(), "{}: no figure files", dir.display());
    let shots = dir.join("figure-shots");
    std::fs::create_dir_all(&shots).unwrap();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let png = shots.join(format!("{name}.png"));
        let stderr = screenshot(browser, file, &png);
        assert!(
            console_lines(&stderr).is_empty(),
            "{name}: {:?}",
            console_lines(&stderr)
        );
        let ink = ink_pixels(&png);
        println!("{name}: {ink} pixels of ink in {}", png.display());
        assert!(
            ink > 500,
            "{name} shows (almost) nothing: {ink} pixels of ink"
        );
    }
}

/// Ink in a screenshot: pixels of a middle grey or a colour, neither near white (a figure's
/// ground, the page) nor near black (the ground Chromium shows an image on), which a figure's
/// text, frame, lines and markers draw and an empty canvas does not.
fn ink_pixels(png_path: &Path) -> usize {
    luminance(png_path)
        .into_iter()
        .filter(|lum| (40.0..=220.0).contains(lum))
        .count()
}

/// The luminance of every pixel of a screenshot.
fn luminance(png_path: &Path) -> Vec<f64> {
    let (.., samples, pixels) = common::folders::png_pixels(png_path);
    pixels
        .chunks_exact(samples)
        .map(|px| match samples {
            1 | 2 => f64::from(px[0]),
            _ => 0.299 * f64::from(px[0]) + 0.587 * f64::from(px[1]) + 0.114 * f64::from(px[2]),
        })
        .collect()
}

/// Each study's report, from a small real run.
const STUDIES: &[(&str, &[&str])] = &[
    (
        "ipc",
        &[
            "ipc",
            "--transports",
            "pipe,shm",
            "--sizes",
            "64,4K",
            "--trials",
            "200",
            "--bytes",
            "256K",
            "--visits",
            "2",
        ],
    ),
    ("file", &common::folders::SHORT_FILE),
    ("servers", &common::folders::SHORT_SERVERS),
];
