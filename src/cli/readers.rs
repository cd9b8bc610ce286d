//! The flags of the commands that read results folders rather than measure: `report`,
//! `compare` and `export`.
use clap::Args;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results folder written by `bytepath sweep`.
    pub dir: std::path::PathBuf,
    /// Where to write the HTML report (default DIR/report.html; report.md goes beside it).
    #[arg(long, short = 'o')]
    pub output: Option<std::path::PathBuf>,
    /// Judge the verdicts again at this equivalence margin (default: the margin the study
    /// recorded, else 5 %): a sweep's, ipc's or file's folder. A margin other than the study's
    /// was chosen after the data: the report says so and the folder records it
    /// (margin_changes.json). Servers and mesh folders refuse it. The same margin as every
    /// command's `--margin`; only its default differs.
    #[arg(long, value_name = "PCT")]
    pub margin: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline results folder.
    pub old: std::path::PathBuf,
    /// The results folder to judge against it.
    pub new: std::path::PathBuf,
    /// Exit 1 when any point got slower by more than this share (e.g. 5%): its interval,
    /// corrected across all points, lies wholly below 1 − PCT.
    #[arg(long)]
    pub fail_on_regression: Option<String>,
    #[command(flatten)]
    pub margin: super::MarginArgs,
    #[command(flatten)]
    pub normalize: super::normalize::NormalizeArgs,
    /// The between-sweep spread τ of two sweeps of one build on this machine (e.g. 4.8%), the
    /// A/A figure bench/noise.sh (between_sweeps.tau_robust_mad) or bench/repeatability.sh
    /// measures: every point's interval takes it, instead of a τ estimated from the judged
    /// points themselves (trimmed, from 10 points or more; with fewer, none).
    #[arg(long, value_name = "PCT")]
    pub between_spread: Option<String>,
    /// compare's document: every point, the family's control, the between-sweep block (τ, its
    /// source, Q, df, the DerSimonian–Laird τ, the warning), the canary's machine change and
    /// the interference counts.
    #[command(flatten)]
    pub json: super::shared::JsonArgs,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A results folder written by sweep, ipc, file, servers or mesh.
    pub dir: std::path::PathBuf,
    /// openmetrics (one sample per point and side, `# EOF` at the end), csv or json (one
    /// record per line).
    #[arg(long, default_value = "openmetrics")]
    pub format: String,
    /// Instead of --format: write each point's latency histogram (sweep and ipc folders) as
    /// files under DIR/histograms/, named by the point: KEY.hlog, HdrHistogram's interval log
    /// (one histogram per side, tagged sender or receiver), and KEY.csv, its buckets
    /// (side, value_ns_low, value_ns_high, count, cumulative_fraction). Prints each file written.
    #[arg(long)]
    pub histogram: bool,
}
