//! A tenth send mechanism, defined in this test module only (its descriptor and a trivial
//! sender), given to the same code production gives `MechanismKind::ALL`: it appears in the
//! help of `run --mechanism` and `sweep --mechanisms`, in `probe`'s rows and in a sweep's
//! refusals. Adding a mechanism to bytepath is its own file and a line in that list; this
//! shows nothing else has to learn its name.
use super::*;
use crate::cli::mechanisms::{queue_depth_help, run_help, sweep_help};
use crate::mechanism::descriptor::{two_messages, Patterns, Reuse, Transports};
use crate::mechanism::{send_all, FlowContext, MechanismDescriptor, SendMechanism};
use crate::probe::features::paths;
use crate::probe::text::path_lines;
use crate::transport::Endpoint;
use clap::{CommandFactory, Parser};

/// The test's sender: one buffer of the message's size, written whole through the endpoint.
struct WholeBuffer(Vec<u8>);

impl SendMechanism for WholeBuffer {
    fn send_message(&mut self, ep: &Endpoint, _seq: u64) -> std::io::Result<()> {
        send_all(ep, &self.0)
    }
}

const WHY_UNIX: &str = "the tenth writes to unix stream sockets only";
const NOT_HERE: &str = "the tenth is a test's and runs nowhere";

static TENTH_DESCRIPTOR: MechanismDescriptor = MechanismDescriptor {
    name: "tenth",
    help: "a test's own sender, one buffer written whole",
    transports: Transports::Only {
        transports: &[Transport::Unix],
        because: WHY_UNIX,
    },
    patterns: Patterns {
        crr: Ok(()),
        bidir: true,
    },
    probe: || Err(NOT_HERE.into()),
    build: |ctx: FlowContext| Ok(Box::new(WholeBuffer(vec![0; ctx.message_size]))),
    reuse: Reuse::OnReturn,
    buffers: two_messages,
    zerocopy_socket: false,
    nodelay: false,
    uses_queue_depth: true,
    zero_copy: None,
    datagram_sends: crate::mechanism::descriptor::any_send,
    crossover: None,
};

const TENTH: MechanismKind = MechanismKind::new(&TENTH_DESCRIPTOR);

/// bytepath's mechanisms and the tenth, last.
fn with_tenth() -> Vec<MechanismKind> {
    let mut list = MechanismKind::ALL.to_vec();
    list.push(TENTH);
    list
}

/// The help clap shows for `flag` of `command` in the binary's own command line.
fn production_help(command: &str, flag: &str) -> String {
    let cli = crate::cli::Cli::command();
    let sub = cli.find_subcommand(command).unwrap();
    let arg = sub.get_arguments().find(|a| a.get_id() == flag).unwrap();
    arg.get_help().unwrap().to_string()
}

#[test]
fn the_help_lists_a_mechanism_by_its_descriptor() {
    assert_eq!(
        production_help("run", "mechanism"),
        run_help(MechanismKind::ALL)
    );
    assert_eq!(
        production_help("sweep", "mechanisms"),
        sweep_help(MechanismKind::ALL)
    );
    assert!(!run_help(MechanismKind::ALL).contains("tenth"));
    let run = run_help(&with_tenth());
    assert!(
        run.ends_with(
            ", sendfile (from a memfd), tenth (a test's own sender, one buffer written whole)"
        ),
        "{run}"
    );
    assert_eq!(
        production_help("sweep", "queue_depth"),
        queue_depth_help(MechanismKind::ALL)
    );
    let queue = queue_depth_help(&with_tenth());
    assert!(
        queue.starts_with("Batching mechanisms (sendmmsg, uring, uring-gather, uring-zc, tenth): "),
        "{queue}"
    );
    let sweep = sweep_help(&with_tenth());
    assert!(
        sweep.contains("uring-zc, splice, sendfile, tenth), or all"),
        "{sweep}"
    );
}

#[test]
fn the_probe_rows_try_a_mechanism_by_its_descriptor_and_say_why_not() {
    let rows = paths(&with_tenth());
    let tenth = rows.iter().find(|r| r.name == "tenth").unwrap();
    assert_eq!(tenth.flag, "--mechanism");
    assert!(!tenth.feature.available);
    assert_eq!(tenth.feature.unavailable_reason.as_deref(), Some(NOT_HERE));
    let mut text = String::new();
    path_lines(&mut text, &rows);
    let line = format!("    {:<20}no ({NOT_HERE})", "tenth");
    assert!(text.lines().any(|l| l == line), "{text}");
    let production = paths(MechanismKind::ALL);
    assert!(production.iter().all(|r| r.name != "tenth"));
}

fn sweep_args(extra: &[&str]) -> SweepArgs {
    let cli = crate::cli::Cli::parse_from(["bytepath", "sweep"].iter().chain(extra));
    let crate::cli::Command::Sweep(args) = cli.command else {
        unreachable!("a sweep command line")
    };
    args
}

/// The refusal of a sweep of `extra` among bytepath's mechanisms and the tenth.
fn refusal(extra: &[&str]) -> String {
    sweep_spec_among(&sweep_args(extra), &[0, 1], &with_tenth())
        .unwrap_err()
        .0
}

#[test]
fn a_sweeps_refusals_name_a_mechanism_by_its_descriptor() {
    let unknown = refusal(&["--mechanisms", "send,teleport"]);
    assert!(
        unknown.ends_with("uring-zc, splice, sendfile, tenth"),
        "{unknown}"
    );
    let over_tcp = refusal(&["--mechanisms", "send,tenth"]);
    assert_eq!(
        over_tcp,
        format!("--mechanism tenth with --transport tcp: {WHY_UNIX}; allowed only with unix; use another transport or mechanism")
    );
    let queue = refusal(&["--mechanisms", "send", "--queue-depth", "8"]);
    assert!(
        queue.ends_with("applies to sendmmsg, uring, uring-gather, uring-zc and tenth only"),
        "{queue}"
    );
    let crr = refusal(&["--mechanisms", "splice", "--patterns", "crr"]);
    assert!(
        crr.ends_with("allowed: send, copy, gather, uring, uring-gather, tenth"),
        "{crr}"
    );
    let bidir = refusal(&["--mechanisms", "uring", "--bidir"]);
    assert!(
        bidir.ends_with("allowed: send, copy, gather, tenth"),
        "{bidir}"
    );
    // The production list leaves it out of the same refusals.
    let err = sweep_spec(&sweep_args(&["--mechanisms", "tenth"]), &[0, 1])
        .unwrap_err()
        .0;
    assert!(
        err.contains("unknown mechanism") && !err.contains("tenth,"),
        "{err}"
    );
}

#[test]
fn the_tenth_sends_through_the_same_build_as_every_mechanism() {
    let flows = crate::transport::connector(Transport::Unix)
        .connect(1, Default::default())
        .unwrap();
    let ctx = FlowContext {
        flow: 0,
        message_size: 64,
        fill_pattern: false,
        send_buffer: 1 << 16,
        queue_depth: 1,
        flush_each: true,
        framing: None,
    };
    let mut sender = crate::mechanism::build(TENTH, ctx).unwrap();
    sender.send_message(&flows[0].sender, 0).unwrap();
    let mut got = [1u8; 64];
    let mut read = 0;
    while read < 64 {
        read += flows[0].receiver.read(&mut got[read..], false).unwrap();
    }
    assert_eq!(got, [0u8; 64]);
}
