//! `bytepath mesh` flags -> a validated `MeshSpec`: the hosts (listed, from a file, or every
//! address a DNS name resolves to), which ordered pairs, the points measured per pair in the
//! `run` vocabulary, how many visits, how many pairs at once, and how the servers are started.
//! Single values go through `spec`'s parsers, so every refusal reads as it does elsewhere.
use crate::cli::MeshArgs;
use crate::config::remote::parse_target;
use crate::config::{
    check_transport, parse_duration, parse_list, parse_message_size, parse_threads, Pattern,
    Target, LIST_ENTRY,
};
use crate::error::{bad, ConfigError, Error, Status};
use crate::mechanism::MechanismKind;
use crate::mesh::spec::{Launch, MeshPoint, MeshSpec, PairSet, DEFAULT_SSH, MAX_VISITS};
use crate::remote::client::MeshClient;
use crate::report::folder::StudyOutput;
use crate::transport::Transport;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::atomic::AtomicBool;

/// `bytepath mesh`: parses the flags and measures the mesh through the hosts' servers.
pub fn command(args: &MeshArgs, interrupt: &AtomicBool) -> Result<Status, Error> {
    let spec = mesh_spec(args)?;
    args.percentiles.choose()?;
    let stream = super::stream(&args.stream, false)?;
    let output = StudyOutput {
        out: args.folder.folder.out.clone(),
        resume: args.folder.resume,
        arguments: super::as_given(args),
        json: false,
        stream: stream.clone(),
    };
    let mut study = crate::mesh::Mesh::new(spec, &MeshClient);
    super::streamed(&stream, crate::study::drive(&mut study, &output, interrupt))
}

/// `bytepath mesh`'s flags -> the mesh's spec, every input checked.
pub fn mesh_spec(args: &MeshArgs) -> Result<MeshSpec, ConfigError> {
    let (hosts, hosts_from) = hosts(args)?;
    let pairs = parse_pairs(&args.pairs, &hosts)?;
    let visits = args.visits.count((1, MAX_VISITS))?;
    let concurrent = parse_count("--concurrent", &args.concurrent, (hosts.len() / 2).max(1))?;
    let token = args.token.token()?;
    Ok(MeshSpec {
        points: points(args)?,
        duration: parse_duration("--duration", &args.duration, false)?,
        warmup: args.warmup.or(crate::cli::WarmupArgs::STUDY)?,
        launch: launch(args)?,
        hosts,
        hosts_from,
        pairs,
        visits,
        concurrent,
        token,
        margin: args.margin.share()?,
    })
}

/// The hosts from exactly one of --hosts, --hosts-file, --hosts-from-dns (clap checks that
/// one is given), and which it was; at least two, none twice.
fn hosts(args: &MeshArgs) -> Result<(Vec<Target>, String), ConfigError> {
    let (list, from) = if let Some(text) = &args.hosts {
        (parse_list("--hosts", text, parse_host)?, "hosts")
    } else if let Some(path) = &args.hosts_file {
        (hosts_file(path)?, "hosts-file")
    } else if let Some(name) = &args.hosts_from_dns {
        (hosts_from_dns(name)?, "hosts-from-dns")
    } else {
        return Err(bad(
            "mesh: no hosts; allowed: --hosts A,B,…, --hosts-file FILE or --hosts-from-dns NAME",
        ));
    };
    if list.len() < 2 {
        return Err(bad(format!(
            "--{from}: {} host; a mesh needs at least two",
            list.len()
        )));
    }
    Ok((list, format!("{from} {}", source_text(args))))
}

fn source_text(args: &MeshArgs) -> String {
    match (&args.hosts, &args.hosts_file, &args.hosts_from_dns) {
        (Some(t), _, _) => t.clone(),
        (_, Some(p), _) => p.display().to_string(),
        (_, _, Some(n)) => n.clone(),
        _ => String::new(),
    }
}

/// `HOST[:PORT]` as `--remote` takes it, named `host` in a refusal (which `--hosts` or
/// `--hosts-file FILE:LINE` precedes).
fn parse_host(text: &str) -> Result<Target, ConfigError> {
    parse_target("host", text)
}

/// One `HOST[:PORT]` per line; blank lines and `#` comments are skipped; a host given twice is
/// refused with its line.
fn hosts_file(path: &std::path::Path) -> Result<Vec<Target>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        bad(format!(
            "--hosts-file {}: cannot be read: {e}",
            path.display()
        ))
    })?;
    let mut hosts: Vec<Target> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("--hosts-file {}:{}", path.display(), i + 1);
        let host = parse_host(line).map_err(|e| bad(format!("{}: {e}", at())))?;
        if hosts.contains(&host) {
            return Err(bad(format!(
                "{}: {host} is listed twice; allowed: each host once",
                at()
            )));
        }
        hosts.push(host);
    }
    Ok(hosts)
}

/// Every address NAME resolves to (as getaddrinfo(3) gives them: /etc/hosts, DNS), each a
/// host on PORT; sorted, so the same answer in another order is the same mesh on `--resume`.
pub fn hosts_from_dns(text: &str) -> Result<Vec<Target>, ConfigError> {
    let named = parse_target("--hosts-from-dns", text)?;
    let resolved = (named.host.as_str(), named.port)
        .to_socket_addrs()
        .map_err(|e| {
            bad(format!(
                "--hosts-from-dns {text:?}: does not resolve ({e}); allowed: a name with at least two addresses"
            ))
        })?;
    let mut addrs: Vec<IpAddr> = resolved.map(|a| a.ip()).collect();
    addrs.sort();
    addrs.dedup();
    Ok(addrs
        .into_iter()
        .map(|ip| Target {
            host: ip.to_string(),
            port: named.port,
        })
        .collect())
}

fn parse_pairs(text: &str, hosts: &[Target]) -> Result<PairSet, ConfigError> {
    match text.trim() {
        "all" => Ok(PairSet::All),
        "ring" => Ok(PairSet::Ring),
        other => {
            let Some(center) = other.strip_prefix("star:") else {
                return Err(bad(format!(
                    "--pairs {text:?}: allowed: all, ring, or star:HOST with HOST one of the hosts"
                )));
            };
            let wanted = parse_host(center)?;
            hosts
                .iter()
                .position(|h| *h == wanted)
                .map(PairSet::Star)
                .ok_or_else(|| {
                    let listed: Vec<String> = hosts.iter().map(Target::to_string).collect();
                    bad(format!(
                        "--pairs {text:?}: {wanted} is not one of the hosts; allowed: star: with one of {}",
                        listed.join(", ")
                    ))
                })
        }
    }
}

fn parse_count(flag: &str, text: &str, max: usize) -> Result<usize, ConfigError> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "{flag} {text:?}: allowed: a whole number from 1 to {max}"
        ))),
    }
}

/// mechanisms × patterns × sizes × threads, in list order.
fn points(args: &MeshArgs) -> Result<Vec<MeshPoint>, ConfigError> {
    let mechanisms: Vec<MechanismKind> = parse_list("--mechanisms", &args.mechanisms, |t| {
        let m: MechanismKind = t.parse()?;
        check_transport(Transport::Tcp, m)?;
        Ok(m)
    })?;
    let patterns = parse_list("--patterns", &args.patterns, |t| t.parse::<Pattern>())?;
    if patterns.contains(&Pattern::Crr) {
        return Err(ConfigError(crate::config::crr::MESH_REFUSAL.into()));
    }
    let sizes = parse_list("--sizes", &args.sizes, |t| {
        parse_message_size(LIST_ENTRY, t)
    })?;
    let threads = parse_list("--threads", &args.threads, |t| parse_threads(LIST_ENTRY, t))?;
    let mut out = Vec::new();
    for &mechanism in &mechanisms {
        for &pattern in &patterns {
            for &message_size in &sizes {
                for &threads in &threads {
                    out.push(MeshPoint {
                        mechanism,
                        pattern,
                        message_size,
                        threads,
                        bidir: false,
                        loopback_twin: false,
                        under_load: false,
                    });
                }
            }
        }
    }
    Ok(out)
}

fn launch(args: &MeshArgs) -> Result<Option<Launch>, ConfigError> {
    let Some(how) = args.launch.as_deref() else {
        let given = [
            ("--ssh-command", &args.ssh_command),
            ("--launch-binary", &args.launch_binary),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, v)| v.is_some()) {
            return Err(bad(format!("{flag}: applies with --launch ssh only")));
        }
        return Ok(None);
    };
    if how != "ssh" {
        return Err(bad(format!("--launch {how:?}: allowed: ssh")));
    }
    let ssh_text = args.ssh_command.as_deref().unwrap_or(DEFAULT_SSH);
    let ssh: Vec<String> = ssh_text.split_whitespace().map(String::from).collect();
    if ssh.is_empty() {
        return Err(bad(format!(
            "--ssh-command {ssh_text:?}: empty; allowed: a command such as \"ssh -p 2222\""
        )));
    }
    let binary = args
        .launch_binary
        .clone()
        .unwrap_or_else(|| "bytepath".into());
    if binary.trim().is_empty() || binary.contains(char::is_whitespace) {
        return Err(bad(format!(
            "--launch-binary {binary:?}: allowed: a path without spaces"
        )));
    }
    Ok(Some(Launch { ssh, binary }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use crate::measure::counters::CounterSelection;
    use clap::Parser;

    fn args(extra: &[&str]) -> MeshArgs {
        let cli = crate::cli::Cli::try_parse_from(["bytepath", "mesh"].iter().chain(extra))
            .unwrap_or_else(|e| panic!("{e}"));
        match cli.command {
            crate::cli::Command::Mesh(a) => a,
            _ => unreachable!(),
        }
    }

    fn spec(extra: &[&str]) -> Result<MeshSpec, ConfigError> {
        mesh_spec(&args(extra))
    }

    #[test]
    fn hosts_take_ports_and_default_to_5301() {
        let s = spec(&["--hosts", "a,b:7000,[fd00::1]:7001"]).unwrap();
        let shown: Vec<String> = s.hosts.iter().map(Target::to_string).collect();
        assert_eq!(shown, ["a:5301", "b:7000", "[fd00::1]:7001"]);
        assert_eq!(s.points.len(), 2, "send × stream,rr × 64K × 1");
        assert_eq!((s.visits, s.concurrent), (4, 1), "an even default");
        assert_eq!(s.margin, 0.05, "--margin's default");
    }

    /// The marker's spec block, derived from the spec, keeps every mesh marker's keys so far
    /// (`--resume` compares it with an older folder's), and reads back to the same block.
    #[test]
    fn the_marker_spec_keeps_its_keys_and_reads_back() {
        use crate::mesh::spec::MarkerSpec;
        let s = spec(&[
            "--hosts",
            "a,b:7000,c",
            "--pairs",
            "star:b:7000",
            "--visits",
            "6",
        ]);
        let block = serde_json::json!(s.unwrap());
        let expected = serde_json::json!({
            "hosts": ["a:5301", "b:7000", "c:5301"], "hosts_from": "hosts a,b:7000,c",
            "pairs": "star:b:7000", "points": ["send/stream/65536/1", "send/rr/65536/1"],
            "duration_s": 1.0, "warmup_s": 0.2, "visits": 6, "concurrent": 1,
            "counters": "none", "margin": 0.05,
        });
        assert_eq!(block, expected);
        let read: MarkerSpec = serde_json::from_value(block.clone()).unwrap();
        assert_eq!(serde_json::json!(read), block);
        let mut older = block.as_object().unwrap().clone();
        older.remove("margin");
        let read: MarkerSpec = serde_json::from_value(older.into()).unwrap();
        assert_eq!(read.margin, 0.05, "a folder from before --margin");
    }

    #[test]
    fn the_margin_is_recorded_in_the_marker_and_judges_the_pairs() {
        let s = spec(&["--hosts", "a,b", "--margin", "2%"]).unwrap();
        assert_eq!(s.margin, 0.02);
        let read: crate::mesh::spec::MarkerSpec =
            serde_json::from_value(serde_json::json!(s)).unwrap();
        assert_eq!(read.margin, 0.02);
        let err = spec(&["--hosts", "a,b", "--margin", "80%"]).unwrap_err();
        assert!(err.to_string().contains("--margin \"80%\""), "{err}");
    }

    #[test]
    fn bad_input_names_the_value_and_what_is_allowed() {
        let cases: [(&[&str], &str); 7] = [
            (&["--hosts", "a"], "at least two"),
            (&["--hosts", "a,a"], "repeats an earlier value"),
            (
                &["--hosts", "a,b", "--pairs", "star:c"],
                "c:5301 is not one of the hosts",
            ),
            (&["--hosts", "a,b", "--pairs", "mesh"], "allowed: all, ring"),
            (
                &["--hosts", "a,b", "--visits", "0"],
                "--visits \"0\": allowed: a whole number from 1 to 100",
            ),
            (
                &["--hosts", "a,b,c,d", "--concurrent", "3"],
                "--concurrent \"3\": allowed: a whole number from 1 to 2",
            ),
            (
                &["--hosts", "a,b", "--ssh-command", "ssh"],
                "--ssh-command: applies with --launch ssh only",
            ),
        ];
        for (extra, expected) in cases {
            let e = spec(extra).unwrap_err();
            assert!(e.0.contains(expected), "{extra:?}: {e}");
        }
    }

    #[test]
    fn the_points_are_the_run_vocabulary_crossed() {
        let s = spec(&[
            "--hosts",
            "a,b",
            "--mechanisms",
            "send,copy",
            "--sizes",
            "4K,64K",
            "--patterns",
            "stream",
        ])
        .unwrap();
        let keys: Vec<String> = s.points.iter().map(MeshPoint::key).collect();
        assert_eq!(
            keys,
            [
                "send/stream/4096/1",
                "send/stream/65536/1",
                "copy/stream/4096/1",
                "copy/stream/65536/1"
            ]
        );
        let run = s.run_spec(&s.points[0]);
        assert_eq!(run.counters, CounterSelection::None);
        assert_eq!(run.network.placement, config::network::Placement::Remote);
    }

    #[test]
    fn a_hosts_file_skips_comments_and_refuses_a_host_twice_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hosts");
        std::fs::write(&path, "# fleet\na:7000\n\nb # rack 2\n").unwrap();
        let s = spec(&["--hosts-file", path.to_str().unwrap()]).unwrap();
        assert_eq!(s.hosts[1].to_string(), "b:5301");
        std::fs::write(&path, "a\nb\na:5301\n").unwrap();
        let e = spec(&["--hosts-file", path.to_str().unwrap()]).unwrap_err();
        assert!(
            e.0.ends_with(":3: a:5301 is listed twice; allowed: each host once"),
            "{e}"
        );
    }

    #[test]
    fn a_name_gives_every_address_it_resolves_to_sorted() {
        let hosts = hosts_from_dns("127.0.0.1:6000").unwrap();
        assert_eq!(
            hosts,
            [Target {
                host: "127.0.0.1".into(),
                port: 6000
            }]
        );
    }
}
