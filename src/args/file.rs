//! `bytepath file`'s flags -> a validated `FileSpec`, the placement of its server side (a
//! link here, or `bytepath server` on another host), and the study.
use super::network::network;
use super::remote::remote_run;
use crate::cli::FileArgs;
use crate::config::{parse_bytes, parse_list, Pattern, RemoteRun};
use crate::error::{bad, ConfigError, Error, Status};
use crate::file::mechanisms::FileMechanism;
use crate::file::{self, check_pipe_size, Cache, FileSpec, Server, MAX_CHUNK};
use crate::remote::client::RemoteFiles;
use crate::report::folder::StudyOutput;
use crate::transport::{Link, Transport};
use std::sync::atomic::AtomicBool;

/// The seeds' file sizes, the default of `--sizes`.
const SEED_SIZES: &str = "7M,21M,63M,98M,200M,350M,700M,1G";

/// `bytepath file`: parses the flags, sets up where the server side runs (held for the whole
/// command: a --netns link's namespaces go when it drops; a remote server is asked now
/// whether it is there, takes this client and serves files, so a wrong address or an older
/// server is one error before any transfer) and measures the study.
pub fn command(args: &FileArgs, interrupt: &AtomicBool) -> Result<Status, Error> {
    let cpus = super::allowed_cpus()?;
    let spec = file_spec(args, &cpus)?;
    let stream = super::stream(&args.stream, args.json.json)?;
    let (link, connector, files);
    let server = match &spec.remote {
        Some(remote) => {
            files = RemoteFiles::connect(remote)?;
            Server::Remote(&files)
        }
        None => {
            link = Link::open(&spec.network)?;
            connector = link.connector(Transport::Tcp)?;
            Server::Here(&*connector)
        }
    };
    let output = StudyOutput {
        out: args.folder.out.clone(),
        arguments: super::as_given(args),
        json: args.json.json,
        stream: stream.clone(),
        ..StudyOutput::default()
    };
    let measured = file::Transfers::new(&spec, server)
        .and_then(|mut study| crate::study::drive(&mut study, &output, interrupt));
    super::streamed(&stream, measured)
}

/// `bytepath file`'s flags -> the study's spec, every input checked.
pub fn file_spec(args: &FileArgs, cpus: &[usize]) -> Result<FileSpec, ConfigError> {
    let sizes = test_file_sizes(args)?;
    let mechanisms = parse_list("--mechanisms", &args.mechanisms, FileMechanism::parse)?;
    let chunk = chunk(&args.chunk)?;
    if mechanisms.contains(&FileMechanism::Splice) {
        check_pipe_size(chunk, &args.chunk)?;
    }
    let caches = parse_list("--cache", &args.cache, Cache::parse)?;
    let reps = reps(&args.reps)?;
    let network = network(&args.network)?;
    let remote = remote_run(&args.remote, &network)?;
    if let Some(r) = &remote {
        check_remote(args, r)?;
    }
    Ok(FileSpec {
        sizes,
        mechanisms,
        chunk,
        caches,
        user_file: args.file.clone(),
        reps,
        seed: args.seed.seed()?,
        verify: args.verify.verify,
        counters: args.counters.selection(Pattern::Stream)?,
        pinning: args.pin.or_cross(cpus)?,
        cpus: cpus.to_vec(),
        network,
        remote,
        profile: args.profile.profile,
        margin: args.margin.share()?,
    })
}

/// `--sizes` (the seeds' sizes when not given), or none with `--file`.
fn test_file_sizes(args: &FileArgs) -> Result<Vec<u64>, ConfigError> {
    if args.file.is_some() {
        return Ok(Vec::new());
    }
    let sizes = args.sizes.as_deref().unwrap_or(SEED_SIZES);
    parse_list("--sizes", sizes, |t| match parse_bytes(t) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(bad(format!(
            "{t:?}: allowed: a size above 0 with an optional K, M or G suffix"
        ))),
    })
}

/// `--chunk`: bytes per call, 1 B to `MAX_CHUNK`.
fn chunk(text: &str) -> Result<usize, ConfigError> {
    match parse_bytes(text) {
        Some(n) if n > 0 && n <= MAX_CHUNK => Ok(n as usize),
        _ => Err(bad(format!(
            "--chunk {text:?}: allowed: 1 B to 64 MiB, with an optional K or M suffix"
        ))),
    }
}

/// `--reps`: transfers per size and mechanism, at least one.
fn reps(text: &str) -> Result<u32, ConfigError> {
    match text.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(bad(format!(
            "--reps {text:?}: allowed: a whole number above 0"
        ))),
    }
}

/// What `--remote` rules out: a file of this host's, `--reverse` and `--profile`.
fn check_remote(args: &FileArgs, r: &RemoteRun) -> Result<(), ConfigError> {
    if args.file.is_some() {
        return Err(bad(format!(
            "--file with --remote {}: the file would have to be on the server; with --remote the server writes test files of --sizes",
            r.target
        )));
    }
    if r.reverse {
        return Err(bad(
            "--reverse with file: the server always sends the file and this host receives; drop --reverse",
        ));
    }
    if args.profile.profile {
        return Err(bad(format!(
            "--profile with --remote {}: the file study's server does not sample its side yet; profile on one host (drop --remote) or drop --profile",
            r.target
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::Cache;
    use clap::Parser;

    fn spec(extra: &[&str]) -> Result<FileSpec, ConfigError> {
        let cli = crate::cli::Cli::parse_from([&["bytepath", "file"][..], extra].concat());
        match cli.command {
            crate::cli::Command::File(args) => file_spec(&args, &[0, 1]),
            _ => unreachable!("parsed a file command"),
        }
    }

    #[test]
    fn the_seeds_sizes_and_all_four_mechanisms_are_the_default() {
        let s = spec(&[]).unwrap();
        assert_eq!(s.sizes.len(), 8);
        assert_eq!(s.sizes[7], 1 << 30);
        assert_eq!(s.mechanisms, FileMechanism::ALL.to_vec());
        assert_eq!((s.chunk, s.reps), (64 << 10, 6));
        assert_eq!(s.caches, vec![Cache::Warm]);
    }

    #[test]
    fn counters_means_what_it_means_in_run_and_sweep_and_the_interim_name_still_works() {
        use crate::measure::counters::CounterSelection;
        let new = spec(&["--counters", "software"]).unwrap();
        let old = spec(&["--transfer-counters", "software"]).unwrap();
        assert_eq!(new.counters, CounterSelection::Software);
        assert_eq!(old.counters, CounterSelection::Software);
        let e = spec(&["--counters", "some"]).unwrap_err().0;
        assert!(e.starts_with("--counters \"some\""), "{e}");
    }

    #[test]
    fn zero_and_unknown_suffixes_are_refused_naming_the_value() {
        assert!(spec(&["--sizes", "0"]).unwrap_err().0.contains("\"0\""));
        assert!(spec(&["--sizes", "5X"]).unwrap_err().0.contains("\"5X\""));
        assert!(spec(&["--chunk", "0"]).unwrap_err().0.contains("--chunk"));
        assert!(spec(&["--cache", "hot"])
            .unwrap_err()
            .0
            .contains("warm, cold"));
        assert!(spec(&["--reps", "0"]).unwrap_err().0.contains("--reps"));
    }

    #[test]
    fn the_cache_is_a_list_of_one_or_both_each_once() {
        let both = spec(&["--cache", "warm,cold"]).unwrap();
        assert_eq!(both.caches, vec![Cache::Warm, Cache::Cold]);
        assert_eq!(
            spec(&["--cache", "cold"]).unwrap().caches,
            vec![Cache::Cold]
        );
        let repeated = spec(&["--cache", "warm,warm"]).unwrap_err();
        assert!(repeated.0.contains("repeats"), "{repeated}");
        let unknown = spec(&["--cache", "warm,hot"]).unwrap_err();
        assert!(unknown.0.contains("\"hot\"") && unknown.0.contains("warm, cold"));
    }

    #[test]
    fn splice_refuses_a_chunk_beyond_the_largest_pipe() {
        let e = spec(&["--chunk", "32M"]).unwrap_err();
        assert!(e.0.contains("pipe-max-size"), "{e}");
        assert!(spec(&["--chunk", "32M", "--mechanisms", "sendfile"]).is_ok());
    }
}
