//! Every bad input: one line on stderr naming the value and what is allowed, exit code 2,
//! no panic, no backtrace.
mod common;
use common::bytepath;

fn refuse(args: &[&str], must_contain: &[&str]) {
    refuse_in("run", args, must_contain);
}

/// `bytepath COMMAND ARGS` is refused: exit 2, one line holding every `must_contain`.
fn refuse_in(command: &str, args: &[&str], must_contain: &[&str]) {
    let out = bytepath()
        .arg(command)
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        out.stdout.is_empty(),
        "{args:?}: nothing measured, nothing printed"
    );
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line, got {err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
    for needle in must_contain {
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    }
}

#[test]
fn bad_sizes_are_refused() {
    refuse(
        &["-m", "copy", "-s", "0"],
        &["--size", "\"0\"", "multiple of 8"],
    );
    refuse(&["-m", "copy", "-s", "100"], &["\"100\"", "multiple of 8"]);
    refuse(&["-m", "copy", "-s", "65M"], &["\"65M\"", "64 MiB"]);
    refuse(&["-m", "copy", "-s", "lots"], &["\"lots\""]);
    refuse(
        &["-m", "copy", "--recv-size", "0"],
        &["--recv-size", "\"0\""],
    );
}

#[test]
fn bad_thread_counts_are_refused() {
    refuse(
        &["-m", "copy", "-t", "0"],
        &["--threads", "\"0\"", "1 to 1024"],
    );
    refuse(&["-m", "copy", "-t", "1025"], &["\"1025\"", "1 to 1024"]);
}

#[test]
fn unknown_mechanism_and_pattern_are_refused() {
    refuse(
        &["-m", "teleport"],
        &[
            "--mechanism",
            "\"teleport\"",
            "send, copy, gather, sendmmsg, zerocopy",
        ],
    );
    refuse(
        &["-m", "copy", "-p", "crq"],
        &["--pattern", "\"crq\"", "stream, rr, crr"],
    );
}

#[test]
fn zero_or_unparsable_durations_are_refused() {
    refuse(
        &["-m", "copy", "-d", "0s"],
        &["--duration", "\"0s\"", "above zero"],
    );
    refuse(&["-m", "copy", "-d", "soon"], &["--duration", "\"soon\""]);
    refuse(&["-m", "copy", "--warmup", "1x"], &["--warmup", "\"1x\""]);
}

#[test]
fn cpus_that_do_not_exist_are_refused() {
    refuse(
        &["-m", "copy", "--pin", "0,4095"],
        &["--pin", "CPU 4095 does not exist", "available CPUs"],
    );
    refuse(
        &["-m", "copy", "--pin", "fast"],
        &["--pin", "\"fast\"", "cross, same"],
    );
}

#[test]
fn missing_or_unknown_flags_are_one_line_too() {
    refuse(&["-s", "4K"], &["--mechanism"]);
    refuse(&["-m", "copy", "--bogus"], &["--bogus"]);
}

#[test]
fn buffers_that_cannot_fit_in_memory_are_refused_up_front() {
    refuse(
        &["-m", "zerocopy", "-s", "64M", "-t", "1024"],
        &["needs about", "MiB of buffers"],
    );
}

#[test]
fn unknown_counter_selection_is_refused() {
    refuse(
        &["-m", "copy", "--counters", "most"],
        &["--counters", "\"most\"", "auto, all"],
    );
}

#[test]
fn bad_queue_depths_and_receive_paths_are_refused() {
    refuse(
        &["-m", "uring", "--queue-depth", "0"],
        &["--queue-depth \"0\"", "1 to 4096"],
    );
    refuse(
        &["-m", "uring", "--queue-depth", "5000"],
        &["\"5000\"", "1 to 4096"],
    );
    refuse(&["-m", "uring-zc", "--queue-depth", "deep"], &["\"deep\""]);
    refuse(
        &["-m", "copy", "--queue-depth", "4"],
        &["--mechanism copy", "uring, uring-gather and uring-zc only"],
    );
    refuse(
        &["-m", "send", "--recv", "mmap"],
        &["--recv \"mmap\"", "recv, uring-recv, zc-recv, trunc"],
    );
    refuse(
        &["-m", "send", "--recv", "trunc", "--verify"],
        &["--recv trunc with --verify", "nothing to check"],
    );
    refuse(
        &["-m", "send", "--recv", "zc-recv", "--transport", "unix"],
        &["--recv zc-recv with --transport unix", "tcp"],
    );
    for mechanism in ["uring", "uring-gather", "splice", "sendfile"] {
        refuse(
            &["-m", mechanism, "--transport", "pipe"],
            &[mechanism, "--transport pipe", "tcp and unix"],
        );
    }
    refuse(
        &["-m", "uring-zc", "--transport", "unix"],
        &[
            "--mechanism uring-zc with --transport unix",
            "only with tcp",
        ],
    );
}

/// A flag several commands take is declared once, so it refuses alike in each; a parser that
/// several flags use words its refusal with the flag it was given.
#[test]
fn shared_flags_and_parsers_name_the_flag_that_was_given() {
    let counters = "--counters \"most\": allowed: auto, all, software, hardware, none";
    refuse_in("sweep", &["--counters", "most"], &[counters]);
    refuse_in("file", &["--counters", "most"], &[counters]);
    refuse_in("file", &["--transfer-counters", "most"], &[counters]);
    let pipe = "--pipe-size \"1\": allowed: 4 KiB to ";
    refuse_in("ipc", &["--pipe-size", "1"], &[pipe]);
    refuse(
        &["-m", "send", "--transport", "pipe", "--pipe-size", "1"],
        &[pipe],
    );
    refuse_in(
        "ipc",
        &["--pipe-sizes", "64K,1"],
        &["--pipe-sizes: \"1\": allowed: 4 KiB to "],
    );
    refuse_in(
        "sweep",
        &["--token-file", "/nonexistent"],
        &["--token-file: applies with --remote HOST[:PORT] only"],
    );
    refuse_in(
        "server",
        &["--insecure", "--max-threads", "0"],
        &["--max-threads \"0\": allowed: a whole number from 1 to 1024"],
    );
    refuse_in(
        "server",
        &["--insecure", "--max-message-size", "12"],
        &["--max-message-size \"12\" (12 B): allowed: a multiple of 8"],
    );
    let target = "allowed: HOST or HOST:PORT (IPv6 as [ADDR]:PORT), port 1-65535";
    refuse_in(
        "mesh",
        &["--hosts", "a,b:0"],
        &["--hosts: host \"b:0\": ", target],
    );
    refuse_in(
        "mesh",
        &["--hosts-from-dns", "a:0"],
        &["--hosts-from-dns \"a:0\": ", target],
    );
    refuse_in(
        "sweep",
        &["--sizes", "256,12"],
        &["--sizes: \"12\" (12 B): allowed: a multiple of 8"],
    );
    refuse_in(
        "sweep",
        &["--threads", "1,0"],
        &["--threads: \"0\": allowed: a whole number from 1 to 1024"],
    );
}

/// servers places its two processes with --placement (split or none); --pin, its old name,
/// still reaches it, and a thread placement (run's --pin values) is refused naming both.
#[test]
fn servers_placement_refuses_thread_placements_in_one_line() {
    for flag in ["--placement", "--pin"] {
        refuse_in(
            "servers",
            &[flag, "cross"],
            &["--placement \"cross\": allowed: split, none", "--pin's"],
        );
    }
}
