//! The bytepath binary: parse, run, print, exit code. Exit codes: 0 success, 1 a failed run or
//! a verify mismatch, 2 bad input, 130 interrupted (figures so far are still printed).
use anyhow::Context;
use bytepath::cli::{Cli, Command, RunArgs};
use bytepath::config::{ConfigError, RunSpec};
use bytepath::environment::{mem_available, Environment};
use bytepath::error::Error;
use bytepath::report::{json::Json, table::Table, Exporter};
use bytepath::transport::tcp::Loopback;
use bytepath::{engine, record, sys};
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
    match cli.command {
        Command::Run(args) => run_command(&args),
    }
}

fn run_command(args: &RunArgs) -> ExitCode {
    match run(args) {
        Ok(code) => code,
        Err(e) => match e.downcast_ref::<Error>() {
            Some(Error::Config(c)) => bad_input(c),
            _ => match e.downcast_ref::<ConfigError>() {
                Some(c) => bad_input(c),
                None => {
                    eprintln!("bytepath: {e:#}");
                    ExitCode::from(1)
                }
            },
        },
    }
}

fn bad_input(e: &ConfigError) -> ExitCode {
    eprintln!("bytepath: {e}");
    ExitCode::from(2)
}

fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let cpus = sys::affinity::allowed_cpus().context("reading this process's CPU affinity")?;
    let spec = RunSpec::from_args(args, &cpus)?;
    // Best effort: if it fails, counters that cannot open say so with EMFILE as their reason.
    let _ = sys::raise_open_file_limit();
    if let Some(available) = mem_available() {
        spec.check_memory(available)?;
    }
    ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130); // a second Ctrl-C: the user wants out now
        }
    })
    .context("installing the Ctrl-C handler")?;
    let outcome = engine::run(&spec, &Loopback, &INTERRUPTED)?;
    let record = record::build(&spec, &outcome, Environment::detect(&cpus));
    let text = if args.json {
        Json.export(&record)
    } else {
        Table.export(&record)
    };
    print!("{text}");
    Ok(if record.interrupted {
        ExitCode::from(130)
    } else if record.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
