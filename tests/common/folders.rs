//! A study's results folder in the integration tests: one short real sweep into a folder,
//! a folder's records, a report rendered from records written by hand, and what the report's
//! figure files hold (a PNG's pixels, a CSV's rows). Shared so each test file states only its
//! own flags and checks.
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// The short timings every test sweep runs with (a visit of 200 ms in 20 ms slices).
pub const SHORT: [&str; 8] = [
    "--slice", "20ms", "--visit", "200ms", "--budget", "300ms", "--warmup", "50ms",
];

/// A short file study: two sizes, two repetitions, two mechanisms.
pub const SHORT_FILE: [&str; 7] = [
    "file",
    "--sizes",
    "4K,64K",
    "--reps",
    "2",
    "--mechanisms",
    "readsend,sendfile",
];

/// A short servers study: two models at two client counts, two visits of 200 ms.
pub const SHORT_SERVERS: [&str; 11] = [
    "servers",
    "--models",
    "select,epoll",
    "--clients",
    "2,4",
    "--duration",
    "200ms",
    "--warmup",
    "0s",
    "--visits",
    "2",
];

/// `bytepath sweep ARGS` with the short timings into a fresh `dir` (`--out`); fails the test
/// unless it succeeded, and returns what it printed.
pub fn short_sweep(dir: &Path, args: &[&str]) -> Output {
    let _ = std::fs::remove_dir_all(dir);
    let out = super::bytepath()
        .arg("sweep")
        .args(args)
        .args(SHORT)
        .arg("--out")
        .arg(dir)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("bytepath ran");
    super::assert_success(&out);
    out
}

/// Every record of the folder's results.jsonl, in order.
pub fn records(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("each line is one JSON record"))
        .collect()
}

/// A fresh `dir` holding `results` as its results.jsonl, its report rendered by
/// `bytepath report DIR` (which must succeed).
pub fn report_of(dir: &Path, results: &str) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("results.jsonl"), results).unwrap();
    super::assert_success(&super::bytepath().arg("report").arg(dir).output().unwrap());
}

/// A PNG decoded whole, in 8-bit samples: width, height, samples per pixel and the pixels.
pub fn png_pixels(path: &Path) -> (u32, u32, usize, Vec<u8>) {
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("png written"));
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame that decodes");
    buf.truncate(info.buffer_size());
    (info.width, info.height, info.color_type.samples(), buf)
}

/// A PNG's width and height, from a real decode of the whole image.
pub fn png_size(path: &Path) -> (u32, u32) {
    let (w, h, ..) = png_pixels(path);
    (w, h)
}

/// A CSV's header and rows.
pub fn csv_rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).expect("a CSV");
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// A record's `latency_histogram_hdr`: HdrHistogram's V2 encoding in base64, decoded by the
/// hdrhistogram crate (not by bytepath's own reader, so a test checks the format itself).
pub fn decode(base64_text: &str) -> hdrhistogram::Histogram<u64> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64_text)
        .expect("base64");
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .expect("an HdrHistogram V2 encoding")
}
