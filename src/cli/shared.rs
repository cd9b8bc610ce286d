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
    /// With --netns (or run's and sweep's --sink): the veth MTU in bytes, 68 to 65535 (default
    /// 1500, like Ethernet; with --sink 65535, so every datagram leaves whole).
    #[arg(long)]
    pub mtu: Option<String>,
    /// With --netns: tc netem parameters for both veth ends, such as
    /// "delay 1ms rate 10gbit loss 0.1%" (needs the sch_netem kernel module).
    #[arg(long)]
    pub netem: Option<String>,
}

/// `--sink`: the sending side alone, its datagrams dropped past a veth pair; run and sweep.
#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct SinkArgs {
    /// Send with no receiver (udp, stream only): the sending side runs in a network namespace
    /// of its own whose datagrams cross a veth pair into a peer namespace where no socket
    /// listens and are dropped there, so the kernel copies no zero-copy send for a receiver.
    /// No route leads off the machine. Needs root and the ip command; see docs/sink.md.
    #[arg(long)]
    pub sink: bool,
}

/// Whether the other side runs on `bytepath server` on another host; shared by run, sweep and
/// ipc.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct RemoteArgs {
    /// Run the other side on `bytepath server` at HOST or HOST:PORT (default port 5301): it sends
    /// (stream) or answers (rr); this host receives or asks, and measures. tcp and udp.
    #[arg(long)]
    pub remote: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub token: TokenArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub identity: super::DriverIdentityArgs,
    /// With --remote, `run` with stream only: this host sends and the server receives and
    /// measures (like iperf3 without -R).
    #[arg(long)]
    pub reverse: bool,
}

/// `--token-file`: `server`, `mesh`, and with `--remote` run, sweep, ipc, file and servers.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct TokenArgs {
    /// A file holding the shared token (`bytepath keygen` writes one; at least 128 bits of
    /// random material; `-` reads it from standard input): the control channel is a Noise
    /// handshake keyed by it, then encrypted and authenticated, and the token never crosses
    /// the wire. server: required unless --insecure; mesh: the token every server was started
    /// with; run, sweep, ipc, file and servers: with --remote, the token its server was
    /// started with.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
}

impl TokenArgs {
    /// The token read from `--token-file`, or `None` when it was not given.
    pub fn token(&self) -> Result<Option<Vec<u8>>, ConfigError> {
        self.token_file
            .as_deref()
            .map(|path| crate::remote::protocol::read_token(path).map_err(bad))
            .transpose()
    }
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
    /// Results folder; default ./bytepath-results/YYYYmmdd-HHMMSS/ (UTC).
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

/// `--pin`: run, sweep, ipc and file. (servers places two processes, split or none, with
/// its own `--placement`.)
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
    /// Default: run 1s (200ms before each of its 16 visits with --under-load); sweep 25ms (its visits are many and short); ipc, servers and mesh
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

/// `--json`: run, file, servers, probe and compare.
#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct JsonArgs {
    /// Print JSON on stdout instead of the text: one document (servers: one array of its
    /// records).
    #[arg(long)]
    pub json: bool,
}

/// `--percentiles`: run, sweep, ipc, servers and mesh, the commands whose records carry a latency.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct PercentilesArgs {
    /// The latency percentiles to report, comma-separated, each above 0 and at most 100, at
    /// most 16 (such as 50,90,99,99.9,99.99) [default: 50,90,99,99.9]. Each is read from the
    /// side's whole histogram; the record keeps them and the histogram beside its fixed
    /// p50 … p99.9.
    #[arg(long)]
    #[serde(default)]
    pub percentiles: Option<String>,
}

impl PercentilesArgs {
    /// The list given, checked, or today's set.
    pub fn list(&self) -> Result<crate::measure::percentiles::Percentiles, ConfigError> {
        match self.percentiles.as_deref() {
            None => Ok(Default::default()),
            Some(text) => crate::measure::percentiles::Percentiles::parse(text)
                .map_err(|why| bad(format!("--percentiles {text:?}: {why}"))),
        }
    }

    /// Checks the list and makes it the one this process reports (before anything is measured).
    pub fn choose(&self) -> Result<(), ConfigError> {
        crate::measure::percentiles::choose(self.list()?);
        Ok(())
    }
}

/// `--rcvbuf` / `--sndbuf`: a tcp flow's socket buffers; run and sweep.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct SocketBufferArgs {
    /// SO_RCVBUF for every tcp socket of the run, in bytes (such as 16K), set before the
    /// handshake so the announced window follows; the kernel doubles it and caps it at
    /// net.core.rmem_max, and the record keeps what was asked and what it read back.
    #[arg(long)]
    pub rcvbuf: Option<String>,
    /// SO_SNDBUF for every tcp socket of the run, in bytes (such as 64K), set before the
    /// handshake; the kernel doubles it and caps it at net.core.wmem_max.
    #[arg(long)]
    pub sndbuf: Option<String>,
}

impl SocketBufferArgs {
    /// The smallest and largest buffer a flag takes (the kernel raises a smaller one to its
    /// floor, so the flag would not mean what it says).
    pub const BOUNDS: (u64, u64) = (1 << 10, 1 << 30);

    /// The buffers asked for, each refused outside 1 KiB to 1 GiB.
    pub fn buffers(&self) -> Result<crate::transport::buffers::SocketBuffers, ConfigError> {
        let one = |flag: &str, text: &Option<String>| -> Result<Option<usize>, ConfigError> {
            let Some(text) = text else { return Ok(None) };
            let (lo, hi) = Self::BOUNDS;
            match crate::config::parse_bytes(text) {
                Some(n) if (lo..=hi).contains(&n) => Ok(Some(n as usize)),
                _ => Err(bad(format!(
                    "{flag} {text:?}: allowed: a size from 1 KiB to 1 GiB, such as 16K or 4M"
                ))),
            }
        };
        Ok(crate::transport::buffers::SocketBuffers {
            rcvbuf: one("--rcvbuf", &self.rcvbuf)?,
            sndbuf: one("--sndbuf", &self.sndbuf)?,
        })
    }
}

/// `--tcp-info on|off`: whether a run samples each tcp flow's TCP_INFO per slice; run and sweep.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct TcpInfoArgs {
    /// Sample every tcp socket's TCP_INFO at each slice boundary, from a thread that is not a
    /// worker (on, the default), or not at all (off: the record's tcp_info block says it was
    /// not sampled). bench/floor.sh's sampling case measures what it costs.
    #[arg(long = "tcp-info", value_name = "on|off")]
    pub tcp_info: Option<String>,
}

impl TcpInfoArgs {
    /// Whether to sample: on unless `--tcp-info off`.
    pub fn sampled(&self) -> Result<bool, ConfigError> {
        match self.tcp_info.as_deref() {
            None | Some("on") => Ok(true),
            Some("off") => Ok(false),
            Some(other) => Err(bad(format!("--tcp-info {other:?}: allowed: on or off"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::collections::BTreeMap;

    /// The flags more than one command takes, each declared once.
    const SHARED: [&str; 36] = [
        "seed",
        "visits",
        "out",
        "resume",
        "verify",
        "profile",
        "json",
        "json-stream",
        "pin",
        "warmup",
        "netns",
        "mtu",
        "netem",
        "sink",
        "remote",
        "token-file",
        "reverse",
        "counters",
        "queue-depth",
        "recv",
        "recv-size",
        "pipe-size",
        "udp-split",
        "gso",
        "count-copies",
        "processes",
        "settle",
        "settle-limit",
        "quiet-threshold",
        "bidir",
        "percentiles",
        "trusted-servers",
        "under-load",
        "rcvbuf",
        "sndbuf",
        "tcp-info",
    ];

    /// Names more than one command takes for different things, each declared by its command.
    const APART: [(&str, &str); 9] = [
        ("sizes", "message sizes with each study's bounds and default; file's are file sizes"),
        ("threads", "run's one flow count against sweep's and mesh's lists"),
        ("mechanisms", "sweep's and mesh's send mechanisms, with their own defaults; file's ways to send a file"),
        ("patterns", "sweep's stream, rr and crr; mesh's stream and rr"),
        ("duration", "run's measured time, servers' per point, mesh's per visit"),
        ("size", "run's message (eight fields) against servers' request"),
        ("bytes", "run's count that ends the run against ipc's bytes per bandwidth point"),
        ("margin", "report's default is the margin its study recorded, every other command's 5 %"),
        ("identity", "a driver's key with --remote, the server's own key, the file keygen writes"),
    ];

    /// Each command's long flags, by flag.
    fn commands_of_each_flag() -> BTreeMap<String, Vec<String>> {
        let cli = crate::cli::Cli::command();
        let mut taken: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for sub in cli.get_subcommands() {
            for long in sub.get_arguments().filter_map(|a| a.get_long()) {
                let commands = taken.entry(long.to_string()).or_default();
                commands.push(sub.get_name().to_string());
            }
        }
        taken
    }

    /// A flag two commands take is either one shared declaration or on the list of names that
    /// mean something else per command: a new duplicate has to choose.
    #[test]
    fn every_flag_two_commands_take_is_shared_or_named_apart() {
        let apart: Vec<&str> = APART.iter().map(|(flag, _)| *flag).collect();
        let taken = commands_of_each_flag();
        for flag in &apart {
            assert!(taken[*flag].len() > 1, "--{flag} is no longer taken twice");
        }
        for (flag, commands) in taken {
            let shared = SHARED.contains(&flag.as_str());
            if commands.len() > 1 {
                assert!(
                    shared || apart.contains(&flag.as_str()),
                    "--{flag} is taken by {commands:?}: declare it once in a shared group, or say in APART why it differs"
                );
            }
            assert!(!(shared && apart.contains(&flag.as_str())), "--{flag}");
        }
    }

    /// Every flag more than one command takes, with each command's help for it: one text each.
    #[test]
    fn a_shared_flag_has_one_help_text_in_every_command() {
        let cli = crate::cli::Cli::command();
        let mut helps: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        for sub in cli.get_subcommands() {
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
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

    /// A shared flag's field is declared in one struct of `src/cli`.
    #[test]
    fn a_shared_flag_is_declared_in_one_place() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cli");
        let mut sources = String::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            sources += &std::fs::read_to_string(entry.unwrap().path()).unwrap();
        }
        for flag in SHARED {
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

    /// servers places two processes with `--placement`; `--pin` there is its old name, kept
    /// as a hidden alias (no value means one thing there and another elsewhere: `split` is
    /// servers' only, `none` means unpinned in both). file's `--transfer-counters` is file's.
    #[test]
    fn old_names_are_hidden_aliases_of_their_own_command_only() {
        use clap::Parser;
        let parse = |line: &[&str]| crate::cli::Cli::try_parse_from(line).map(|c| c.command);
        let servers = |flag| match parse(&["bytepath", "servers", flag, "none"]) {
            Ok(crate::cli::Command::Servers(a)) => a.placement,
            other => panic!("{other:?}"),
        };
        assert_eq!(servers("--pin"), Some("none".into()));
        assert_eq!(servers("--placement"), Some("none".into()));
        let cli = crate::cli::Cli::command();
        let help = cli.find_subcommand("servers").unwrap();
        let placement = help.get_arguments().find(|a| a.get_id() == "placement");
        let placement = placement.unwrap();
        assert_eq!(placement.get_all_aliases(), Some(vec!["pin"]));
        let visible = placement.get_visible_aliases().unwrap_or_default();
        assert!(visible.is_empty(), "the alias is hidden: {visible:?}");
        assert!(parse(&["bytepath", "file", "--transfer-counters", "all"]).is_ok());
        assert!(parse(&[
            "bytepath",
            "run",
            "-m",
            "send",
            "--transfer-counters",
            "all"
        ])
        .is_err());
        assert!(parse(&["bytepath", "sweep", "--transfer-counters", "all"]).is_err());
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
