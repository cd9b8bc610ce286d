//! The bytepath binary: parse, dispatch, print errors, exit code. Exit codes: 0 success, 1 a
//! failed run, a verify mismatch or a regression, 2 bad input, 130 interrupted (what was
//! measured so far is still printed and saved).
use anyhow::Context;
use bytepath::args;
use bytepath::cli::{Cli, Command, RunArgs};
use bytepath::engine::PointRunner;
use bytepath::environment::{mem_available, Environment};
use bytepath::error::{Error, Status};
use bytepath::report::{json::Json, table::Table, Exporter};
use bytepath::sides::Sides;
use bytepath::{record, sys};
use clap::Parser;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // clap's message up to its first blank line (the tip and usage follow), as one line.
            let text = e.to_string();
            let first: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty())
                .collect();
            let line = first.join(" ");
            eprintln!(
                "bytepath: {} (see bytepath --help)",
                line.trim_start_matches("error: ")
            );
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Run(args) => run(&args),
        Command::Sweep(a) => {
            catch_ctrl_c().and_then(|()| Ok(args::sweep::command(&a, &INTERRUPTED)?))
        }
        Command::Report(a) => args::report::command(&a).map_err(Into::into),
        Command::Compare(a) => args::compare::command(&a).map_err(Into::into),
        Command::Ipc(a) => catch_ctrl_c().and_then(|()| Ok(args::ipc::command(&a, &INTERRUPTED)?)),
        Command::File(a) => {
            catch_ctrl_c().and_then(|()| Ok(args::file::command(&a, &INTERRUPTED)?))
        }
        Command::Servers(a) => {
            catch_ctrl_c().and_then(|()| Ok(args::servers::command(&a, &INTERRUPTED)?))
        }
        Command::Server(a) => server(&a),
        Command::Mesh(a) => {
            catch_ctrl_c().and_then(|()| Ok(args::mesh::command(&a, &INTERRUPTED)?))
        }
        Command::Probe(a) => args::probe::command(&a).map_err(Into::into),
    };
    match result {
        Ok(Status::Success) => ExitCode::SUCCESS,
        Ok(Status::Failed) => ExitCode::from(1),
        Ok(Status::Interrupted) => ExitCode::from(130),
        Err(e) => match e.downcast_ref::<Error>() {
            Some(Error::Config(c)) => {
                eprintln!("bytepath: {c}");
                ExitCode::from(2)
            }
            _ => {
                eprintln!("bytepath: {e:#}");
                ExitCode::from(1)
            }
        },
    }
}

/// The first Ctrl-C asks the run to stop and keep what it measured; a second one exits now
/// (no destructors run then: `--netns` namespaces stay behind until the next run removes them).
fn catch_ctrl_c() -> anyhow::Result<()> {
    ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    })
    .context("installing the Ctrl-C handler")
}

fn run(args: &RunArgs) -> anyhow::Result<Status> {
    let cpus = sys::affinity::allowed_cpus().context("reading this process's CPU affinity")?;
    let spec = args::run::run_spec(args, &cpus).map_err(Error::from)?;
    let remote = args::run::remote(args, &spec).map_err(Error::from)?;
    if let Some(available) = mem_available() {
        spec.check_memory(available).map_err(Error::from)?;
    }
    // Best effort: if it fails, counters that cannot open say so with EMFILE as their reason.
    let _ = sys::raise_open_file_limit();
    catch_ctrl_c()?;
    // Dropped at the end of this function, whatever happened: `--netns` namespaces go with it.
    let sides = Sides::open(&spec.network, remote.as_ref())?;
    let spec = sides.place(spec);
    let outcome = sides.run(&spec, &INTERRUPTED)?;
    let env = Environment::detect(&cpus);
    let mut record = record::build(&spec, &outcome, env.clone());
    let headline_ran = record.skipped_reason.is_none() && !record.interrupted;
    if args.profile && headline_ran {
        profiled_run(&sides, &spec, remote.as_ref(), &mut record, env)?;
    }
    let text = if args.json {
        Json.export(&record)
    } else {
        Table.export(&record)
    };
    print!("{text}");
    Ok(record.status_for_exit())
}

/// `--profile`: the same point once more with every side sampled, after the headline run so
/// that no headline figure carries the sampling; its blocks go on the headline record.
fn profiled_run(
    sides: &Sides,
    spec: &bytepath::spec::RunSpec,
    remote: Option<&bytepath::spec::RemoteRun>,
    record: &mut record::RunRecord,
    env: Environment,
) -> anyhow::Result<()> {
    use bytepath::record::profile;
    let spec = bytepath::spec::RunSpec {
        profile: true,
        ..spec.clone()
    };
    let outcome = sides.run(&spec, &INTERRUPTED)?;
    let profiled = record::build(&spec, &outcome, env);
    let about = format!(
        "a second run of the same point right after the headline run ({:.1} s measured), every \
         side's threads sampled over its measured phase; no headline figure comes from it",
        profiled.measured_s
    );
    profile::attach(record, &profiled, about);
    // A quick probe of this host's memcpy: the unit of "copies' worth".
    let roofline = bytepath::calibrate::roofline::measure(&bytepath::calibrate::Effort::quick());
    let probe = serde_json::json!({ "memcpy_roofline": roofline });
    let memcpy = profile::memcpy_from_probe(&probe)
        .map(|(ns, source)| (ns, source.replace("probe's", "a quick probe's")));
    let theirs = remote.map(|r| bytepath::remote::remote_role(spec.pattern, r.reverse));
    profile::apply_memcpy(record, memcpy, theirs);
    Ok(())
}

/// `bytepath server`: serves remote runs until the process is ended (Ctrl-C).
fn server(args: &bytepath::cli::ServerArgs) -> anyhow::Result<Status> {
    // Reads the token first when it comes on standard input (`--token-file -`).
    let config = args::server::server_config(args).map_err(Error::from)?;
    if args.until_stdin_closes {
        exit_when_stdin_closes().context("watching standard input")?;
    }
    // Best effort, as for `run`: many flows need many descriptors.
    let _ = sys::raise_open_file_limit();
    bytepath::remote::server::serve(config)?;
    Ok(Status::Success)
}

/// `--until-stdin-closes`: a thread reads standard input to its end and ends the process there.
/// Whatever runs is cut off: the one who started the server is gone.
fn exit_when_stdin_closes() -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("bytepath-stdin-watch".into())
        .spawn(|| {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            eprintln!("bytepath server: standard input closed; exiting");
            std::process::exit(0);
        })
        .map(drop)
}
