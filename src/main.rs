//! The bytepath binary: parse, dispatch, print errors, exit code. Exit codes: 0 success, 1 a
//! failed run, a verify mismatch or a regression, 2 bad input, 130 interrupted (what was
//! measured so far is still printed and saved).
use anyhow::Context;
use bytepath::args;
use bytepath::cli::{Cli, Command};
use bytepath::error::{Error, Status};
use bytepath::sys;
use clap::Parser;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            eprintln!("bytepath: {} (see bytepath --help)", one_line(&e));
            return ExitCode::from(2);
        }
    };
    // Before any thread: every thread then allocates from one arena (sys::malloc).
    sys::malloc::one_arena();
    let result = dispatch(cli.command);
    exit_code(result)
}

/// clap's message up to its first blank line (the tip and usage follow), as one line.
fn one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    first.join(" ").trim_start_matches("error: ").to_string()
}

/// Hands each command to its module in `args`; the measuring ones catch Ctrl-C first.
fn dispatch(command: Command) -> anyhow::Result<Status> {
    match command {
        Command::Run(a) => catch_ctrl_c().and_then(|()| Ok(args::run::command(&a, &INTERRUPTED)?)),
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
        Command::Keygen(a) => args::keygen::command(&a).map_err(Into::into),
        Command::Mesh(a) => {
            catch_ctrl_c().and_then(|()| Ok(args::mesh::command(&a, &INTERRUPTED)?))
        }
        Command::Probe(a) => args::probe::command(&a).map_err(Into::into),
        Command::Export(a) => args::export::command(&a).map_err(Into::into),
        Command::Completions(a) => args::shell::completions(&a).map_err(Into::into),
        Command::Man => args::shell::man().map_err(Into::into),
    }
}

/// 0 success, 1 a failed run, 2 bad input, 130 interrupted; every error said in one line.
fn exit_code(result: anyhow::Result<Status>) -> ExitCode {
    match result {
        Ok(Status::Success) => ExitCode::SUCCESS,
        Ok(Status::Failed) => ExitCode::from(1),
        Ok(Status::Interrupted) => ExitCode::from(130),
        Err(e) => match e.downcast_ref::<Error>() {
            Some(Error::Config(c)) => {
                eprintln!("bytepath: {c}");
                ExitCode::from(2)
            }
            // The library's errors say their cause in their own text; `{:#}` would add it
            // again from the source chain ("…(os error 2): …(os error 2)").
            Some(err) => {
                eprintln!("bytepath: {err}");
                ExitCode::from(1)
            }
            None => {
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
