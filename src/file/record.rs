//! The file study's records: one `TransferRecord` per measured transfer (a line of
//! results.jsonl, written as it finishes), one `FileSummary` per (size, mechanism) with the mean
//! and 95 % CI over the repetitions, and the `FileStudy` document holding them with the
//! effective configuration and the environment (what `--json` prints).
use super::mechanisms::FileMechanism;
use crate::environment::Environment;
use crate::record::wire::{Residency, SideUsage};
use crate::report::csv::Cell::{self, Scalar};
use crate::stats::{summarize, Summary};

pub const SCHEMA_VERSION: u32 = 1;

/// results.csv for a file study: one row per transfer (perf counters are in results.jsonl).
const CSV_COLUMNS: &[(&str, &str, Cell)] = &[
    ("schema_version", "/schema_version", Scalar),
    ("size_bytes", "/size_bytes", Scalar),
    ("mechanism", "/mechanism", Scalar),
    ("rep", "/rep", Scalar),
    (
        "resident_pages_before",
        "/residency_before/resident_pages",
        Scalar,
    ),
    ("total_pages", "/residency_before/total_pages", Scalar),
    ("elapsed_ms", "/elapsed_ms", Scalar),
    ("throughput_gbps", "/throughput_gbps", Scalar),
    ("server_syscalls", "/server_syscalls", Scalar),
    ("client_recv_calls", "/client_recv_calls", Scalar),
    ("server_user_ns", "/server/user_ns", Scalar),
    ("server_system_ns", "/server/system_ns", Scalar),
    (
        "server_voluntary_switches",
        "/server/voluntary_switches",
        Scalar,
    ),
    (
        "server_involuntary_switches",
        "/server/involuntary_switches",
        Scalar,
    ),
    ("server_minor_faults", "/server/minor_faults", Scalar),
    ("server_major_faults", "/server/major_faults", Scalar),
    ("client_user_ns", "/client/user_ns", Scalar),
    ("client_system_ns", "/client/system_ns", Scalar),
    (
        "client_voluntary_switches",
        "/client/voluntary_switches",
        Scalar,
    ),
    (
        "client_involuntary_switches",
        "/client/involuntary_switches",
        Scalar,
    ),
    ("client_minor_faults", "/client/minor_faults", Scalar),
    ("client_major_faults", "/client/major_faults", Scalar),
    ("verified", "/verified", Scalar),
    ("error", "/error", Scalar),
];

pub fn csv_columns() -> Vec<crate::report::csv::Column> {
    let mut columns = crate::report::csv::fixed(CSV_COLUMNS);
    // `--profile` columns last, so every earlier column keeps its place.
    columns.extend(crate::report::csv::fixed(&[(
        "profiled_repeats",
        "/profiled/repeats",
        crate::report::csv::Cell::Scalar,
    )]));
    for side in ["server", "client"] {
        let base = format!("/{side}/profile");
        columns.extend(crate::report::csv::profile_columns(side, &base));
    }
    // `--cache warm,cold`: which cache each transfer had; last, so no earlier column moves.
    columns.extend(crate::report::csv::fixed(&[(
        "cache",
        "/cache",
        crate::report::csv::Cell::Scalar,
    )]));
    // `--counters`: the transfer with counters open (its time is in no figure); last too.
    columns.extend(crate::report::csv::fixed(&[(
        "counter_transfer",
        "/counter_transfer",
        crate::report::csv::Cell::Scalar,
    )]));
    columns
}

/// One transfer, or why it could not be measured.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TransferRecord {
    pub schema_version: u32,
    pub size_bytes: u64,
    pub mechanism: FileMechanism,
    pub rep: u32,
    pub residency_before: Option<Residency>,
    pub elapsed_ms: Option<f64>,
    pub throughput_gbps: Option<f64>,
    pub server_syscalls: Option<u64>,
    pub client_recv_calls: Option<u64>,
    pub server: Option<SideUsage>,
    pub client: Option<SideUsage>,
    /// With --verify: the client's xxh3-64 of what it received equals the file's.
    pub verified: Option<bool>,
    pub error: Option<String>,
    /// `--profile`: this is the profiled transfer of its size and mechanism (the file sent
    /// `repeats` times over one connection, both threads sampled), kept out of every figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiled: Option<ProfiledTransfer>,
    /// This transfer opened the study's perf counters (`--counters`), after the measured ones:
    /// its counts are its size and mechanism's counter figures, its time is in no figure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counter_transfer: bool,
    /// The page cache this transfer was measured with, `warm` or `cold` (absent in folders
    /// from before `--cache` took a list: the study's one cache, `FileConfig::cache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
}

/// What the profiled transfer was.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProfiledTransfer {
    pub repeats: u32,
    pub description: String,
}

impl TransferRecord {
    /// CPU time of both sides per byte moved.
    pub fn cpu_ns_per_byte(&self) -> Option<f64> {
        let (s, c) = (self.server.as_ref()?, self.client.as_ref()?);
        Some((s.cpu_ns() + c.cpu_ns()) as f64 / self.size_bytes as f64)
    }

    /// The server's own CPU time per byte: where the mechanisms differ.
    pub fn server_cpu_ns_per_byte(&self) -> Option<f64> {
        Some(self.server.as_ref()?.cpu_ns() as f64 / self.size_bytes as f64)
    }

    /// A per-side count summed over both sides.
    fn both(&self, f: fn(&SideUsage) -> u64) -> Option<f64> {
        Some((f(self.server.as_ref()?) + f(self.client.as_ref()?)) as f64)
    }

    /// A measured repetition: neither the counted nor the profiled transfer.
    pub fn is_measured(&self) -> bool {
        self.profiled.is_none() && !self.counter_transfer
    }

    pub fn ok(&self) -> bool {
        self.error.is_none() && self.verified != Some(false)
    }

    /// The cache this transfer was measured with; `study` (the study's first cache) for a
    /// record from before records named it.
    pub fn cache_or<'a>(&'a self, study: &'a str) -> &'a str {
        self.cache.as_deref().unwrap_or(study)
    }
}

/// Mean and CI of a figure over the repetitions; a single repetition has a mean but no interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Figure {
    pub mean: f64,
    pub ci95: Option<Summary>,
}

impl Figure {
    fn of(values: &[f64]) -> Option<Figure> {
        if values.is_empty() {
            return None;
        }
        Some(Figure {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            ci95: summarize(values),
        })
    }

    /// `12.34 ± 0.56` or just `12.34` with one repetition.
    pub fn text(&self, decimals: usize) -> String {
        match &self.ci95 {
            Some(s) => format!(
                "{:.*} ± {:.*}",
                decimals, self.mean, decimals, s.ci95_half_width
            ),
            None => format!("{:.*}", decimals, self.mean),
        }
    }
}

/// One (size, mechanism) over its repetitions; (size, mechanism, cache) when the study
/// measured more than one cache.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileSummary {
    pub size_bytes: u64,
    pub mechanism: FileMechanism,
    /// Set only when the study measured both caches (one cache: the config's `cache`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    pub reps_measured: usize,
    pub reps_failed: usize,
    pub time_ms: Option<Figure>,
    pub throughput_gbps: Option<Figure>,
    pub cpu_ns_per_byte: Option<Figure>,
    pub server_cpu_ns_per_byte: Option<Figure>,
    pub server_syscalls: Option<Figure>,
    /// Voluntary and involuntary, both sides, per transfer.
    pub context_switches: Option<Figure>,
    /// Minor and major, both sides, per transfer.
    pub page_faults: Option<Figure>,
    /// Mean time over readsend's mean time at the same size (the seeds' comparison).
    pub fraction_of_readsend: Option<f64>,
    /// Mean resident fraction before the transfers (1.0 warm; what dropping achieved, cold).
    pub residency_before: Option<f64>,
}

/// Summaries per (size, mechanism), in the order given; with more than one of `caches`, per
/// (size, cache, mechanism), each share of readsend's time taken under the same cache.
pub fn summarize_transfers(
    sizes: &[u64],
    mechanisms: &[FileMechanism],
    caches: &[String],
    transfers: &[TransferRecord],
) -> Vec<FileSummary> {
    let study_cache = caches.first().map_or("warm", String::as_str);
    // One cache: every transfer belongs to it, and the summaries name none (as before lists).
    let split: Vec<Option<&str>> = match caches.len() {
        0 | 1 => vec![None],
        _ => caches.iter().map(|c| Some(c.as_str())).collect(),
    };
    let mut out: Vec<FileSummary> = Vec::new();
    for &size in sizes {
        for &cache in &split {
            for &m in mechanisms {
                let all: Vec<&TransferRecord> = transfers
                    .iter()
                    .filter(|t| t.size_bytes == size && t.mechanism == m && t.is_measured())
                    .filter(|t| cache.is_none_or(|c| t.cache_or(study_cache) == c))
                    .collect();
                out.push(summary(size, m, cache, &all));
            }
        }
    }
    let readsend_mean = |row: &FileSummary, rows: &[FileSummary]| {
        rows.iter()
            .find(|r| {
                r.size_bytes == row.size_bytes
                    && r.cache == row.cache
                    && r.mechanism == FileMechanism::Readsend
            })
            .and_then(|r| r.time_ms)
            .map(|f| f.mean)
    };
    let bases: Vec<Option<f64>> = out.iter().map(|r| readsend_mean(r, &out)).collect();
    for (row, base) in out.iter_mut().zip(bases) {
        row.fraction_of_readsend = match (row.time_ms, base) {
            (Some(t), Some(b)) if b > 0.0 => Some(t.mean / b),
            _ => None,
        };
    }
    out
}

/// One point's figures over `all` its transfers (the failed ones counted, not averaged).
fn summary(
    size: u64,
    m: FileMechanism,
    cache: Option<&str>,
    all: &[&TransferRecord],
) -> FileSummary {
    let good: Vec<&TransferRecord> = all.iter().copied().filter(|t| t.ok()).collect();
    let fig = |f: &dyn Fn(&TransferRecord) -> Option<f64>| {
        Figure::of(&good.iter().filter_map(|t| f(t)).collect::<Vec<_>>())
    };
    FileSummary {
        size_bytes: size,
        mechanism: m,
        cache: cache.map(String::from),
        reps_measured: good.len(),
        reps_failed: all.len() - good.len(),
        time_ms: fig(&|t| t.elapsed_ms),
        throughput_gbps: fig(&|t| t.throughput_gbps),
        cpu_ns_per_byte: fig(&|t| t.cpu_ns_per_byte()),
        server_cpu_ns_per_byte: fig(&|t| t.server_cpu_ns_per_byte()),
        server_syscalls: fig(&|t| t.server_syscalls.map(|n| n as f64)),
        context_switches: fig(&|t| t.both(SideUsage::context_switches)),
        page_faults: fig(&|t| t.both(SideUsage::page_faults)),
        fraction_of_readsend: None,
        residency_before: fig(&|t| t.residency_before.map(|r| r.fraction())).map(|f| f.mean),
    }
}

/// The effective configuration, as validated.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FileConfig {
    pub sizes_bytes: Vec<u64>,
    pub mechanisms: Vec<FileMechanism>,
    pub chunk_bytes: usize,
    pub cache: String,
    pub user_file: Option<String>,
    pub reps: u32,
    /// The seed the mechanism order of each repetition was drawn from (absent in folders
    /// from before the order was seeded: mechanisms in list order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// How the transfers were ordered, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    pub verify: bool,
    pub counters: String,
    /// The transport's own words for where the two sides ran.
    pub where_sides_run: String,
    /// `--remote`: the server that wrote and sent the files (absent for a study on this host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// loopback, or netns with the veth MTU and netem (absent in folders from before --netns).
    #[serde(default)]
    pub network: crate::config::Network,
    pub pin: String,
    /// CPUs of the server (the flow's sending end) and the client; null = unpinned.
    pub placement: crate::config::FlowPlacement,
    pub recv_buffer_bytes: usize,
    pub timing: String,
    /// `--margin`: the equivalence margin the answers are judged with (a share); folders from
    /// before it read the default.
    #[serde(default = "default_margin")]
    pub margin: f64,
}

fn default_margin() -> f64 {
    crate::stats::verdict::DEFAULT_MARGIN
}

#[cfg(test)]
impl FileConfig {
    /// A warm-cache loopback configuration for tests of what reads a file study.
    pub fn for_tests(sizes: Vec<u64>, mechanisms: Vec<FileMechanism>, reps: u32) -> FileConfig {
        FileConfig {
            sizes_bytes: sizes,
            mechanisms,
            chunk_bytes: 65536,
            cache: "warm".into(),
            user_file: None,
            reps,
            seed: None,
            order: None,
            verify: false,
            counters: "none".into(),
            where_sides_run: "loopback TCP".into(),
            remote: None,
            network: Default::default(),
            pin: "cross".into(),
            placement: crate::config::FlowPlacement {
                sender_cpu: Some(0),
                receiver_cpu: Some(1),
            },
            recv_buffer_bytes: 1,
            timing: "test".into(),
            margin: crate::stats::verdict::DEFAULT_MARGIN,
        }
    }
}

impl FileConfig {
    /// The caches measured, in `--cache` order: `cache` is one name, or a comma-separated
    /// list when the study measured more than one.
    pub fn caches(&self) -> Vec<String> {
        self.cache
            .split(',')
            .map(|c| c.trim().to_string())
            .collect()
    }
}

/// Everything one `bytepath file` run measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileStudy {
    pub schema_version: u32,
    pub command: &'static str,
    pub config: FileConfig,
    /// The machine measured on (absent when a report is re-rendered from a results folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    pub status: &'static str,
    pub transfers: Vec<TransferRecord>,
    pub summaries: Vec<FileSummary>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transfer(size: u64, m: FileMechanism, ms: f64) -> TransferRecord {
        TransferRecord {
            schema_version: SCHEMA_VERSION,
            counter_transfer: false,
            size_bytes: size,
            mechanism: m,
            rep: 0,
            residency_before: Some(Residency {
                resident_pages: 1,
                total_pages: 2,
            }),
            elapsed_ms: Some(ms),
            throughput_gbps: None,
            server_syscalls: Some(10),
            client_recv_calls: Some(5),
            server: None,
            client: None,
            verified: Some(true),
            error: None,
            profiled: None,
            cache: None,
        }
    }

    #[test]
    fn each_mechanisms_time_is_a_fraction_of_readsends_at_the_same_size() {
        let t = vec![
            transfer(10, FileMechanism::Readsend, 4.0),
            transfer(10, FileMechanism::Readsend, 6.0),
            transfer(10, FileMechanism::Sendfile, 2.0),
            transfer(10, FileMechanism::Sendfile, 3.0),
        ];
        let rows = summarize_transfers(
            &[10],
            &[FileMechanism::Readsend, FileMechanism::Sendfile],
            &["warm".into()],
            &t,
        );
        assert_eq!(rows[0].fraction_of_readsend, Some(1.0));
        assert_eq!(rows[1].fraction_of_readsend, Some(0.5));
        assert_eq!(rows[1].residency_before, Some(0.5));
        assert!(
            rows[1].time_ms.unwrap().ci95.is_some(),
            "two reps have a CI"
        );
    }

    #[test]
    fn two_caches_are_summarized_apart_each_against_readsend_under_the_same_cache() {
        let cached = |m, ms, cache: &str| {
            let mut t = transfer(10, m, ms);
            t.cache = Some(cache.into());
            t
        };
        let t = vec![
            cached(FileMechanism::Readsend, 4.0, "warm"),
            cached(FileMechanism::Sendfile, 2.0, "warm"),
            cached(FileMechanism::Readsend, 10.0, "cold"),
            cached(FileMechanism::Sendfile, 8.0, "cold"),
        ];
        let both = ["warm".to_string(), "cold".to_string()];
        let m = [FileMechanism::Readsend, FileMechanism::Sendfile];
        let rows = summarize_transfers(&[10], &m, &both, &t);
        let got: Vec<(Option<&str>, f64, Option<f64>)> = rows
            .iter()
            .map(|r| {
                let time = r.time_ms.unwrap().mean;
                (r.cache.as_deref(), time, r.fraction_of_readsend)
            })
            .collect();
        assert_eq!(
            got,
            [
                (Some("warm"), 4.0, Some(1.0)),
                (Some("warm"), 2.0, Some(0.5)),
                (Some("cold"), 10.0, Some(1.0)),
                (Some("cold"), 8.0, Some(0.8)),
            ]
        );
        // One cache: one row per (size, mechanism), naming no cache, as before lists.
        let one = summarize_transfers(&[10], &m, &["warm".into()], &t[..2]);
        assert_eq!(one.len(), 2);
        assert!(one.iter().all(|r| r.cache.is_none()));
    }

    #[test]
    fn a_failed_verify_is_not_averaged_in() {
        let mut bad = transfer(10, FileMechanism::Mmap, 1.0);
        bad.verified = Some(false);
        let rows = summarize_transfers(&[10], &[FileMechanism::Mmap], &[], &[bad]);
        assert_eq!((rows[0].reps_measured, rows[0].reps_failed), (0, 1));
        assert!(rows[0].time_ms.is_none() && rows[0].fraction_of_readsend.is_none());
    }
}
