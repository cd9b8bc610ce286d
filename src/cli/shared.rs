//! The flags more than one command takes, each declared once with its help, its parse and its
//! bounds, and flattened into every command that takes it: a flag's meaning cannot drift
//! between commands, and one that means something else gets a name of its own (sweep's
//! `--min-visits`, a floor, against the exact `--visits` of ipc, servers and mesh).
use crate::config::{parse_duration, parse_pinning, Pinning};
use crate::error::{bad, ConfigError};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// `--json-stream`, shared by run and every study.
#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct StreamArgs {
    /// Print one JSON object per line to stdout as the work goes (start, slice or visit,
    /// point, end), each flushed at once; text that went to stdout goes to stderr instead.
    #[arg(long)]
    pub json_stream: bool,
}

/// Where the two sides run; shared by run, sweep, ipc, file and servers.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct NetworkArgs {
    /// Run each side in its own network namespace, the two joined by a veth pair with private
    /// addresses (needs root and the ip command); tcp and udp only.
    #[arg(long)]
    pub netns: bool,
    /// With --netns: the veth MTU in bytes, 68 to 65535 (default 1500, like Ethernet).
    #[arg(long)]
    pub mtu: Option<String>,
    /// With --netns: tc netem parameters for both veth ends, such as
    /// "delay 1ms rate 10gbit loss 0.1%" (needs the sch_netem kernel module).
    #[arg(long)]
    pub netem: Option<String>,
}

/// Whether the other side runs on `bytepath server` on another host; shared by run, sweep and
/// ipc.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct RemoteArgs {
    /// Run the other side on `bytepath server` at HOST[:PORT] (default port 5301): it sends
    /// (stream) or answers (rr); this host receives or asks, and measures. tcp and udp.
    #[arg(long)]
    pub remote: Option<String>,
    /// With --remote: a file holding the token the server was started with.
    #[arg(long)]
    pub token_file: Option<std::path::PathBuf>,
    /// With --remote, `run` with stream only: this host sends and the server receives and
    /// measures (like iperf3 without -R).
    #[arg(long)]
    pub reverse: bool,
}

/// `--seed`: sweep, ipc, file and servers.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct SeedArgs {
    /// Seed of the shuffled order the points are measured in (default: a fresh one from the
    /// OS, printed and recorded, so any run can be replayed).
    #[arg(long)]
    pub seed: Option<String>,
}

impl SeedArgs {
    /// The seed given (a whole number up to 2^64 - 1), or a fresh one from the OS.
    pub fn seed(&self) -> Result<u64, ConfigError> {
        match self.seed.as_deref() {
            Some(t) => t.trim().parse::<u64>().map_err(|_| {
                bad(format!(
                    "--seed {t:?}: allowed: a whole number from 0 to {}",
                    u64::MAX
                ))
            }),
            None => {
                let mut bytes = [0u8; 8];
                getrandom::fill(&mut bytes).map_err(|e| {
                    bad::<ConfigError>(format!("--seed: no seed given and none from the OS ({e})"))
                })?;
                Ok(u64::from_le_bytes(bytes))
            }
        }
    }

    /// Whether `--seed` was given (a resumed study otherwise replays its recorded seed).
    pub fn given(&self) -> bool {
        self.seed.is_some()
    }
}

/// `--visits`, an exact count of visits per point: ipc, servers and mesh. (sweep's floor is
/// `--min-visits`.)
#[derive(Debug, Clone, Args, serde::Serialize, serde::Deserialize)]
pub struct VisitsArgs {
    /// Visits per point, exactly: the points are visited round after round in a shuffled
    /// order, the work of a point is split over its visits, and its interval comes from the
    /// visit means (ipc: 2 to 1000; servers: 1 to 1000; mesh: 1 to 100, one visit giving no
    /// interval). The default, 4, is even so that each group's seeded order and its reversal
    /// pair up.
    #[arg(long, default_value = "4")]
    pub visits: String,
}

impl VisitsArgs {
    /// The count, refused outside `lo..=hi`: each study's bounds say what its statistics need.
    pub fn count(&self, (lo, hi): (usize, usize)) -> Result<usize, ConfigError> {
        let text = &self.visits;
        match text.trim().parse::<usize>() {
            Ok(n) if (lo..=hi).contains(&n) => Ok(n),
            _ => Err(bad(format!(
                "--visits {text:?}: allowed: a whole number from {lo} to {hi}"
            ))),
        }
    }
}

/// `--out`: every study that writes a results folder.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct FolderArgs {
    /// Results folder; default ./bytepath-results/<timestamp>/.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `--out` and `--resume`: the studies that can continue an interrupted folder (sweep, mesh).
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct ResumableFolderArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub folder: FolderArgs,
    /// Continue the study in --out: keep the visits it finished and make only the missing
    /// ones (the study's settings must be the same).
    #[arg(long)]
    pub resume: bool,
}

/// `--verify`: run, sweep and file.
#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct VerifyArgs {
    /// Check every byte received: run and sweep write a (flow, sequence) pattern into every
    /// message and the receiver checks it; file hashes what arrives (xxh3-64) against the
    /// file's hash. A mismatch is reported and the command exits non-zero.
    #[arg(long)]
    pub verify: bool,
}

/// `--profile`: run, sweep, file and servers.
#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct ProfileArgs {
    /// Where each side's CPU goes: after the measured work, one more run of every point with
    /// its threads sampled (perf_event_open; cycles with a PMU, cpu-clock without), broken
    /// down into copies, protocol, memory, locks, scheduling … (needs root or
    /// perf_event_paranoid ≤ 1; otherwise the profile says why it is unavailable). file
    /// samples the server's sending and the client's receiving thread; servers, the server
    /// process.
    #[arg(long)]
    pub profile: bool,
}

/// `--pin`: run, sweep, ipc and file. (servers' `--pin` places two processes, split or none,
/// and stays its own.)
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct PinArgs {
    /// CPU placement: cross (sender and receiver of a flow on different CPUs), same, none, or
    /// a CPU list such as 0,1 or 0-3 handed out in order flow0-sender, flow0-receiver,
    /// flow1-sender… (file: server first). Default: run leaves its threads unpinned; sweep,
    /// ipc and file use cross where two CPUs exist, else same.
    #[arg(long)]
    pub pin: Option<String>,
}

impl PinArgs {
    /// `run`'s placement: unpinned unless `--pin` says otherwise.
    pub fn or_unpinned(&self, cpus: &[usize]) -> Result<Pinning, ConfigError> {
        parse_pinning(self.pin.as_deref(), cpus)
    }

    /// A study's placement: cross where two CPUs exist, else same, unless `--pin` says
    /// otherwise (the studies compare mechanisms, which one CPU's contention would blur).
    pub fn or_cross(&self, cpus: &[usize]) -> Result<Pinning, ConfigError> {
        let default = if cpus.len() >= 2 { "cross" } else { "same" };
        parse_pinning(Some(self.pin.as_deref().unwrap_or(default)), cpus)
    }

    /// Whether `--pin` was left out (the report says the placement was chosen for it).
    pub fn defaulted(&self) -> bool {
        self.pin.is_none()
    }
}

/// `--warmup`: run, sweep, ipc, servers and mesh.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct WarmupArgs {
    /// Warm-up before each measured run, visit or point, excluded from every figure (0s: none).
    /// Default: run 1s; sweep 25ms (its visits are many and short); ipc, servers and mesh
    /// 200ms.
    #[arg(long)]
    pub warmup: Option<String>,
}

impl WarmupArgs {
    pub const RUN: Duration = Duration::from_secs(1);
    pub const SWEEP: Duration = Duration::from_millis(25);
    /// ipc, servers and mesh.
    pub const STUDY: Duration = Duration::from_millis(200);

    /// The warm-up given, or the command's `default` (one of the constants above).
    pub fn or(&self, default: Duration) -> Result<Duration, ConfigError> {
        match &self.warmup {
            Some(text) => parse_duration("--warmup", text, true),
            None => Ok(default),
        }
    }
}

/// `--json`: run, file, servers and probe.
#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct JsonArgs {
    /// Print JSON on stdout instead of the text: one document (servers: one array of its
    /// records).
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::collections::BTreeMap;

    /// The flags more than one command takes (servers' own --pin aside).
    const SHARED: [&str; 14] = [
        "seed",
        "visits",
        "out",
        "resume",
        "verify",
        "profile",
        "json",
        "json-stream",
        "pin",
        "netns",
        "mtu",
        "netem",
        "remote",
        "reverse",
    ];

    /// Every flag more than one command takes, with each command's help for it: one text each.
    #[test]
    fn a_shared_flag_has_one_help_text_in_every_command() {
        let cli = crate::cli::Cli::command();
        let mut helps: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        // servers' --pin places two processes (split or none): another meaning, its own help.
        let apart = [("servers", "pin")];
        for sub in cli.get_subcommands() {
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                if apart.contains(&(sub.get_name(), long)) {
                    continue;
                }
                let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                let default: Vec<_> = arg
                    .get_default_values()
                    .iter()
                    .map(|d| d.to_string_lossy().into_owned())
                    .collect();
                helps
                    .entry(long.to_string())
                    .or_default()
                    .entry(format!("{help} [default: {default:?}]"))
                    .or_default()
                    .push(sub.get_name().to_string());
            }
        }
        for flag in SHARED {
            let texts = &helps[flag];
            assert_eq!(
                texts.len(),
                1,
                "--{flag} has {} help texts: {texts:#?}",
                texts.len()
            );
            let commands: usize = texts.values().map(Vec::len).sum();
            assert!(commands >= 2, "--{flag} is taken by one command only");
        }
    }

    /// A shared flag's field is declared in one struct of `src/cli`, this file's or the
    /// network and remote groups.
    #[test]
    fn a_shared_flag_is_declared_in_one_place() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cli");
        let mut sources = String::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            sources += &std::fs::read_to_string(entry.unwrap().path()).unwrap();
        }
        // servers declares its own --pin (split or none), another meaning.
        for flag in SHARED.into_iter().filter(|f| *f != "pin") {
            let field = flag.replace('-', "_");
            let needle = format!("    pub {field}: ");
            let declared = sources
                .lines()
                .filter(|l| l.starts_with(&needle) && !l.ends_with("Args,"))
                .count();
            assert_eq!(
                declared, 1,
                "`pub {field}:` is declared {declared} times in src/cli"
            );
        }
    }

    #[test]
    fn visits_and_seed_name_the_value_and_what_is_allowed() {
        let visits = |t: &str| VisitsArgs { visits: t.into() }.count((2, 1000));
        assert_eq!(visits(" 7 "), Ok(7));
        assert_eq!(
            visits("1").unwrap_err().0,
            "--visits \"1\": allowed: a whole number from 2 to 1000"
        );
        let seed = |t: &str| {
            SeedArgs {
                seed: Some(t.into()),
            }
            .seed()
        };
        assert_eq!(seed("42"), Ok(42));
        assert!(seed("-1")
            .unwrap_err()
            .0
            .starts_with("--seed \"-1\": allowed: a whole number"));
        assert_ne!(SeedArgs::default().seed(), SeedArgs::default().seed());
    }
}
