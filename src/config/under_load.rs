//! `--under-load N` (as flent's RRUL, iperf2's --bounceback-congest, sockperf's under-load):
//! N bulk stream flows of the run's own mechanism beside the measured rr flow, so the rr
//! latency says what that copy path costs the latency of others on the machine. Which runs can
//! carry it, the bound on N, and the spec the load flows run by.
use super::{bad, Pattern, RunSpec, Stopping};
use crate::error::ConfigError;
use crate::measure::counters::CounterSelection;
use crate::transport::Transport;

/// The most load flows: each is two busy threads, so 64 flows are 128 threads beside the rr
/// flow's two. Past that the load measures the scheduler's run queues rather than a copy path,
/// and the set-up (sockets, buffers) grows with nothing more to learn.
pub const MAX_LOAD_FLOWS: usize = 64;

/// Every load flow's message: 64 KiB, a bulk transfer's write (iperf3's default for TCP), the
/// size at which each mechanism copies (or lends) the most per call. It does not follow the
/// rr's size: a 64 B stream would load the system-call path, not the copy path, and a load that
/// changed with the rr's size would change two things along a sweep's sizes at once.
pub const LOAD_MESSAGE_SIZE: usize = 64 << 10;

/// Parses `--under-load N`: a whole number of load flows from 1 to `MAX_LOAD_FLOWS`.
pub fn parse_under_load(text: &str) -> Result<usize, ConfigError> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_LOAD_FLOWS).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "--under-load {text:?}: allowed: a whole number of load flows from 1 to {MAX_LOAD_FLOWS}"
        ))),
    }
}

/// Refuses what --under-load cannot do, one line naming the value and what is allowed.
pub fn check(spec: &RunSpec) -> Result<(), ConfigError> {
    if spec.under_load.is_none() {
        return Ok(());
    }
    if spec.pattern != Pattern::Rr {
        return Err(bad(format!(
            "--under-load with --pattern {}: allowed only with rr (the latency measured beside the load is the rr flow's round trip)",
            spec.pattern.name()
        )));
    }
    if spec.transport != Transport::Tcp {
        return Err(bad(format!(
            "--under-load with --transport {}: allowed only with tcp (the load flows are tcp streams beside the rr flow)",
            spec.transport.name()
        )));
    }
    let unsupported = [
        (spec.processes, "--processes"),
        (spec.network.is_netns(), "--netns"),
        (spec.network.is_sink(), "--sink"),
    ];
    if let Some((_, what)) = unsupported.iter().find(|(on, _)| *on) {
        return Err(bad(format!(
            "{what} with --under-load: not supported yet; run --under-load on loopback with the two sides as threads"
        )));
    }
    Ok(())
}

/// Why `--remote` cannot run --under-load yet.
pub const REMOTE_REFUSAL: &str = "--under-load with --remote: not supported yet (the server runs one side of the measured flow only); run --under-load on this host";

/// What the load flows run by: `flows` tcp streams of the run's mechanism and receive path,
/// `LOAD_MESSAGE_SIZE` each, unpinned here (the engine places them beside the rr flow's CPUs
/// under --pin), nothing counted, opened or verified: they make the load and are not measured.
pub fn load_spec(spec: &RunSpec, flows: usize) -> RunSpec {
    RunSpec {
        pattern: Pattern::Stream,
        message_size: LOAD_MESSAGE_SIZE,
        threads: flows,
        stopping: Stopping {
            messages_per_flow: None,
            ..spec.stopping
        },
        recv_size: None,
        spin: false,
        verify: false,
        counters: CounterSelection::None,
        profile: false,
        bidir: false,
        under_load: None,
        ..spec.clone()
    }
}

/// Where each load flow runs: with --pin on the CPUs of the rr flow it is beside (load flow
/// `i` beside rr flow `i` modulo the rr flows), since the question is what the copy path costs
/// the latency of others on those CPUs; unpinned otherwise (`None`, the scheduler's choice).
pub fn placement(spec: &RunSpec, load_flow: usize) -> super::FlowPlacement {
    spec.placement(load_flow % spec.threads.max(1))
}

/// "on the rr flow's CPUs (--pin cross)" or "unpinned": the placement in words, recorded.
pub fn placement_words(spec: &RunSpec) -> String {
    match spec.pinning {
        super::Pinning::Unpinned => "unpinned (the scheduler places them)".into(),
        ref pin => format!(
            "pinned to the CPUs of the rr flow each is beside (--pin {})",
            pin.name()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn rr() -> RunSpec {
        RunSpec {
            pattern: Pattern::Rr,
            under_load: Some(2),
            ..RunSpec::plain(64, Duration::from_millis(300))
        }
    }

    #[test]
    fn the_bound_is_stated_and_held() {
        assert_eq!(parse_under_load("1").unwrap(), 1);
        assert_eq!(parse_under_load("64").unwrap(), 64);
        for text in ["0", "65", "x", "-1"] {
            let e = parse_under_load(text).unwrap_err().to_string();
            assert!(e.contains("from 1 to 64"), "{e}");
            assert!(e.contains(text), "{e}");
        }
    }

    #[test]
    fn only_rr_over_tcp_on_this_host_carries_a_load() {
        assert!(check(&rr()).is_ok());
        let stream = RunSpec {
            pattern: Pattern::Stream,
            ..rr()
        };
        let e = check(&stream).unwrap_err().to_string();
        assert!(
            e.contains("--pattern stream") && e.contains("only with rr"),
            "{e}"
        );
        let unix = RunSpec {
            transport: Transport::Unix,
            ..rr()
        };
        assert!(check(&unix)
            .unwrap_err()
            .to_string()
            .contains("only with tcp"));
        let forked = RunSpec {
            processes: true,
            ..rr()
        };
        assert!(check(&forked)
            .unwrap_err()
            .to_string()
            .contains("--processes"));
        let without = RunSpec {
            pattern: Pattern::Stream,
            under_load: None,
            ..rr()
        };
        assert!(check(&without).is_ok());
    }

    #[test]
    fn the_load_streams_bulk_messages_of_the_same_mechanism_and_measures_nothing() {
        let spec = RunSpec {
            verify: true,
            counters: CounterSelection::All,
            ..rr()
        };
        let load = load_spec(&spec, 3);
        assert_eq!(
            (load.pattern, load.message_size, load.threads),
            (Pattern::Stream, LOAD_MESSAGE_SIZE, 3)
        );
        assert_eq!(load.mechanism, spec.mechanism);
        assert!(!load.verify && load.counters == CounterSelection::None);
        assert_eq!(load.under_load, None);
    }

    #[test]
    fn pinned_load_flows_share_the_rr_flows_cpus() {
        let spec = RunSpec {
            pinning: crate::config::Pinning::Cross,
            cpus: vec![0, 1, 2, 3],
            ..rr()
        };
        for i in 0..3 {
            assert_eq!(placement(&spec, i), spec.placement(0));
        }
        assert!(placement_words(&spec).contains("--pin cross"));
        assert_eq!(placement(&rr(), 1).sender_cpu, None);
    }
}
