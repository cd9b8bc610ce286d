//! `bytepath servers`' flags -> a validated `ServersSpec`, and the study, with the remote host
//! (`--remote`) opened by `remote::client` when the study is ready for it.
use super::network::network;
use super::remote::remote_run;
use crate::cli::ServersArgs;
use crate::config::{parse_bytes, parse_duration, parse_list, MAX_MESSAGE_SIZE};
use crate::error::{bad, ConfigError, Error, Status};
use crate::remote::client::RemoteServers;
use crate::report::folder::StudyOutput;
use crate::servers::client_threads::ClientThreads;
use crate::servers::model::ServerModel;
use crate::servers::{Placement, ServersSpec};
use std::sync::atomic::AtomicBool;

/// `bytepath servers`: parses the flags and measures the study.
pub fn command(args: &ServersArgs, interrupt: &AtomicBool) -> Result<Status, Error> {
    let cpus = super::allowed_cpus()?;
    let spec = servers_spec(args, &cpus)?;
    args.percentiles.choose()?;
    let stream = super::stream(&args.stream, args.json.json)?;
    let output = StudyOutput {
        out: args.folder.out.clone(),
        arguments: super::as_given(args),
        json: args.json.json,
        stream: stream.clone(),
        ..StudyOutput::default()
    };
    let mut study = crate::servers::Servers::new(&spec, &cpus, &RemoteServers::open);
    super::streamed(&stream, crate::study::drive(&mut study, &output, interrupt))
}

fn positive(flag: &str, text: &str) -> Result<u64, ConfigError> {
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(bad(format!(
            "{flag} {text:?}: allowed: a whole number above 0"
        ))),
    }
}

/// `bytepath servers`' flags -> the study's spec, every input checked.
pub fn servers_spec(args: &ServersArgs, cpus: &[usize]) -> Result<ServersSpec, ConfigError> {
    let models = parse_list("--models", &args.models, ServerModel::parse)?;
    let clients = parse_list("--clients", &args.clients, parse_clients)?;
    let size = request_size(&args.size)?;
    let rate = args.rate.as_deref().map(rate).transpose()?;
    let server_threads = positive("--server-threads", &args.server_threads)? as usize;
    if server_threads > 1 && models.iter().any(|&m| m != ServerModel::Epoll) {
        return Err(bad(format!(
            "--server-threads {server_threads}: only the epoll model has worker threads; allowed: 1, or --models epoll"
        )));
    }
    let network = network(&args.network)?;
    // Refuses --netns with --remote: two placements at once.
    let remote = remote_run(&args.remote, &network)?;
    let placement = match &remote {
        None => Placement::parse(args.placement.as_deref(), cpus)?,
        Some(_) => remote_placement(args, cpus)?,
    };
    if let (Some(r), true) = (&remote, args.profile.profile) {
        return Err(bad(format!(
            "--profile with --remote {}: the server host does not sample its server models yet; profile on one host (drop --remote) or drop --profile",
            r.target
        )));
    }
    Ok(ServersSpec {
        models,
        clients,
        size,
        duration: parse_duration("--duration", &args.duration, false)?,
        visits: args.visits.count((1, 1000))?,
        seed: args.seed.seed()?,
        warmup: args.warmup.or(crate::cli::WarmupArgs::STUDY)?,
        rate,
        server_threads,
        client_threads: client_threads(args, &placement, cpus, remote.is_some())?,
        requests_per_connection: args
            .requests_per_connection
            .as_deref()
            .map(|t| positive("--requests-per-connection", t))
            .transpose()?,
        stalled_clients: args.stalled_clients,
        connections: crate::cli::connection::modes(
            &args.connection,
            args.requests_per_connection.is_some(),
        )?,
        record_connections: args.record_connections,
        placement,
        network,
        remote,
        profile: args.profile.profile,
        watch: super::watch::watch(&args.watch)?,
        margin: args.margin.share()?,
    })
}

/// `--client-threads N`, or one per CPU of the load side of the placement.
fn client_threads(
    args: &ServersArgs,
    placement: &Placement,
    cpus: &[usize],
    remote: bool,
) -> Result<ClientThreads, ConfigError> {
    let given = args
        .client_threads
        .as_deref()
        .map(|t| positive("--client-threads", t))
        .transpose()?;
    let (load_cpus, side) = placement.load_side(cpus, remote);
    Ok(ClientThreads::new(
        given.map(|n| n as usize),
        &load_cpus,
        side,
    ))
}

/// One `--clients` value: 1 to a million.
fn parse_clients(text: &str) -> Result<usize, ConfigError> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "{text:?}: allowed: a client count from 1 to 1000000"
        ))),
    }
}

/// `--size`: a request of 1 B to `MAX_MESSAGE_SIZE`.
fn request_size(text: &str) -> Result<usize, ConfigError> {
    match parse_bytes(text) {
        Some(n) if n >= 1 && n <= MAX_MESSAGE_SIZE as u64 => Ok(n as usize),
        _ => Err(bad(format!(
            "--size {text:?}: allowed: a request size from 1 B to 64 MiB"
        ))),
    }
}

/// `--rate`: requests per second, above 0.
fn rate(text: &str) -> Result<f64, ConfigError> {
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(bad(format!(
            "--rate {text:?}: allowed: requests per second above 0, such as 10000"
        ))),
    }
}

/// With --remote the server process runs on the other host, where this host cannot place it,
/// and the load generator has this host to itself: nothing to split, so `--placement split` is
/// refused and the placement is none. The stalled clients of the robustness tests and
/// `--reverse` (a `run` flag) do not apply.
fn remote_placement(args: &ServersArgs, cpus: &[usize]) -> Result<Placement, ConfigError> {
    if args.remote.reverse {
        return Err(bad(
            "--reverse with servers: the server always runs on the --remote host and this host always runs the clients; --reverse is for `run` (stream) only",
        ));
    }
    if args.stalled_clients > 0 {
        return Err(bad(
            "--stalled-clients with --remote: the stalled clients are a test on one host; allowed: 0",
        ));
    }
    match args.placement.as_deref() {
        None | Some("none") => Placement::parse(Some("none"), cpus),
        Some("split") => Err(bad(
            "--placement split with --remote: the server process runs on the other host, where this host cannot place it, and the load generator has this host to itself; allowed: none",
        )),
        Some(other) => Err(bad(format!(
            "--placement {other:?}: allowed: none (with --remote)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn spec(extra: &[&str]) -> Result<ServersSpec, ConfigError> {
        spec_on(extra, &[0, 1])
    }

    fn spec_on(extra: &[&str], cpus: &[usize]) -> Result<ServersSpec, ConfigError> {
        let cli = crate::cli::Cli::parse_from([&["bytepath", "servers"][..], extra].concat());
        match cli.command {
            crate::cli::Command::Servers(args) => servers_spec(&args, cpus),
            _ => unreachable!("parsed a servers command"),
        }
    }

    /// One client thread per CPU of the load side, at most one per client; a given count
    /// wins; the marker says which.
    #[test]
    fn client_threads_default_to_one_per_load_cpu() {
        let sixteen: Vec<usize> = (0..16).collect();
        let split = spec_on(&[], &sixteen).unwrap().client_threads;
        assert_eq!(
            (split.count, split.default),
            (8, true),
            "split: CPUs 0-7 load"
        );
        assert_eq!(split.for_clients(15), 8);
        assert_eq!(split.for_clients(5), 5);
        assert_eq!(
            split.chosen(1000),
            "8: the default, one per CPU of the load side of --placement split (CPUs 0-7)"
        );
        let none = spec_on(&["--placement", "none"], &sixteen).unwrap();
        assert_eq!(none.client_threads.for_clients(15), 15, "every allowed CPU");
        // This VM's two CPUs: the clients' half is CPU 0, one thread.
        let two = spec(&[]).unwrap().client_threads;
        assert_eq!((two.count, two.load_cpus.as_slice()), (1, &[0][..]));
        let given = spec_on(&["--client-threads", "2"], &sixteen).unwrap();
        assert_eq!(
            (given.client_threads.count, given.client_threads.default),
            (2, false)
        );
        let json = serde_json::to_value(&given).unwrap();
        assert_eq!(
            (&json["client_threads"], &json["client_threads_default"]),
            (&2.into(), &false.into())
        );
        let e = spec(&["--client-threads", "0"]).unwrap_err().0;
        assert!(e.starts_with("--client-threads \"0\": allowed:"), "{e}");
    }

    #[test]
    fn the_margin_is_recorded_in_the_spec_and_a_bad_one_names_the_flag() {
        assert_eq!(spec(&[]).unwrap().margin, 0.05, "--margin's default");
        let json = serde_json::to_value(spec(&["--margin", "2%"]).unwrap()).unwrap();
        assert_eq!(json["margin"], 0.02);
        // The report reads it back from the marker the same way.
        let marker = serde_json::json!({ "spec": json });
        let head: crate::report::folder::MarkerHead = serde_json::from_value(marker).unwrap();
        assert_eq!(head.margin(), Some(0.02));
        let err = spec(&["--margin", "70%"]).unwrap_err().to_string();
        assert!(
            err.contains("--margin \"70%\"") && err.contains("at most 50"),
            "{err}"
        );
    }

    /// The marker's spec block is the whole configuration, `seed` and `visits` where they
    /// always were.
    #[test]
    fn the_marker_spec_holds_the_whole_configuration() {
        let s = spec(&[
            "--seed",
            "5",
            "--visits",
            "2",
            "--clients",
            "5,15",
            "--rate",
            "1000",
        ]);
        let json = serde_json::to_value(s.unwrap()).unwrap();
        assert_eq!((&json["seed"], &json["visits"]), (&5.into(), &2.into()));
        assert_eq!(json["clients"], serde_json::json!([5, 15]));
        assert_eq!(json["rate_per_s"], 1000.0);
        assert_eq!(
            (&json["duration_s"], &json["warmup_s"]),
            (&5.0.into(), &0.2.into())
        );
        assert_eq!(json["placement"]["pin"], "split");
        assert_eq!(json["models"].as_array().unwrap().len(), 6);
    }

    #[test]
    fn every_model_and_client_count_is_one_point() {
        let s = spec(&["--models", "epoll,uring", "--clients", "5,100"]).unwrap();
        assert_eq!(
            s.points(),
            vec![
                (ServerModel::Epoll, 5, false),
                (ServerModel::Uring, 5, false),
                (ServerModel::Epoll, 100, false),
                (ServerModel::Uring, 100, false)
            ]
        );
    }

    #[test]
    fn both_connection_modes_are_a_point_dimension_of_each_client_count() {
        let s = spec(&[
            "--models",
            "epoll,threaded",
            "--clients",
            "5",
            "--connection",
            "persistent,per-request",
        ])
        .unwrap();
        assert_eq!(
            s.points(),
            vec![
                (ServerModel::Epoll, 5, false),
                (ServerModel::Threaded, 5, false),
                (ServerModel::Epoll, 5, true),
                (ServerModel::Threaded, 5, true)
            ]
        );
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json["connections"],
            serde_json::json!(["persistent", "per-request"])
        );
    }

    /// `--placement` places the two processes; `--pin` (its old name, a hidden alias) is
    /// recorded under the marker's old key, and a thread placement is refused naming the flag.
    #[test]
    fn the_placement_is_split_or_none_and_keeps_its_marker_key() {
        let old = spec(&["--pin", "none"]).unwrap().placement;
        assert_eq!(old, spec(&["--placement", "none"]).unwrap().placement);
        assert_eq!(old.pin, "none");
        let e = spec(&["--placement", "cross"]).unwrap_err().0;
        assert!(
            e.starts_with("--placement \"cross\": allowed: split, none (cross, same and CPU lists are --pin's"),
            "{e}"
        );
        let cli = crate::cli::Cli::parse_from(["bytepath", "servers", "--placement", "none"]);
        let crate::cli::Command::Servers(args) = cli.command else {
            unreachable!("parsed a servers command")
        };
        assert_eq!(super::super::as_given(&args)["pin"], "none");
    }

    #[test]
    fn worker_threads_are_refused_for_models_without_them() {
        let e = spec(&["--models", "poll", "--server-threads", "4"]).unwrap_err();
        assert!(
            e.0.starts_with("--server-threads 4: only the epoll model"),
            "{e}"
        );
        assert!(spec(&["--models", "epoll", "--server-threads", "2"]).is_ok());
        let e = spec(&["--rate=-5"]).unwrap_err();
        assert!(e.0.contains("--rate \"-5\""), "{e}");
    }
}
