//! The network every flow crosses. The type lives with the `Link` opened from it
//! (`transport::network`); what refuses a transport it cannot carry, and what a sink cannot
//! carry, as input errors, lives here.
use super::{Pattern, RunSpec};
use crate::error::ConfigError;
use crate::mechanism::receive::path::RecvPath;
pub use crate::transport::network::{
    Network, Placement, DEFAULT_MTU, MTU_RANGE, SINK_MTU, SINK_MTU_WITH_GSO,
};
use crate::transport::Transport;

impl Network {
    /// Refuses a transport that cannot cross a veth pair (only IP sockets can), or that a
    /// sink cannot carry (udp only).
    pub fn check_transport(&self, transport: Transport) -> Result<(), ConfigError> {
        match self.refusal(transport) {
            None => Ok(()),
            Some(why) => Err(ConfigError(why)),
        }
    }
}

/// Refuses a run a sink cannot carry, one line naming the value and why: a sink has a
/// sending side only, so whatever needs a receiver, an answer or a second side is refused.
pub fn check_sink(spec: &RunSpec) -> Result<(), ConfigError> {
    if !spec.network.is_sink() {
        return Ok(());
    }
    spec.network.check_transport(spec.transport)?;
    if spec.pattern != Pattern::Stream {
        return Err(ConfigError(format!(
            "--pattern {} with --sink: nothing answers on a sink, and {} needs an answer to every request; allowed with --sink: stream",
            spec.pattern.name(),
            spec.pattern.name()
        )));
    }
    let recv = format!("--recv {}", spec.recv_path.name());
    let no_receiver = "a sink has no receiving side, so there is no receive path to choose";
    let refused: [(bool, &str, &str); 6] = [
        (spec.bidir, "--bidir", "nothing sends back from a sink"),
        (spec.recv_path != RecvPath::Recv, &recv, no_receiver),
        (spec.recv_size.is_some(), "--recv-size", no_receiver),
        (
            spec.verify,
            "--verify",
            "no receiver reads the bytes on a sink, so none can be checked",
        ),
        (
            spec.spin,
            "--spin",
            "only receiving sides spin, and a sink has none",
        ),
        (
            spec.processes,
            "--processes",
            "a sink has one side only, so there is no other side to fork",
        ),
    ];
    match refused.iter().find(|(on, _, _)| *on) {
        Some((_, flag, why)) => Err(ConfigError(format!(
            "{flag} with --sink: {why}; leave it out"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sink_spec() -> RunSpec {
        RunSpec {
            transport: Transport::Udp,
            network: Network {
                placement: Placement::Sink,
                mtu: Some(SINK_MTU),
                netem: None,
            },
            ..RunSpec::plain(1024, Duration::from_secs(1))
        }
    }

    #[test]
    fn a_sink_carries_udp_stream_alone_and_every_refusal_says_why() {
        assert_eq!(check_sink(&sink_spec()), Ok(()));
        let refused = |spec: RunSpec| check_sink(&spec).unwrap_err().0;
        let e = refused(RunSpec {
            transport: Transport::Tcp,
            ..sink_spec()
        });
        assert!(
            e.starts_with("--transport tcp with --sink: TCP needs a receiver")
                && e.ends_with("allowed with --sink: udp"),
            "{e}"
        );
        let e = refused(RunSpec {
            transport: Transport::Unix,
            ..sink_spec()
        });
        assert!(e.starts_with("--transport unix with --sink"), "{e}");
        let e = refused(RunSpec {
            pattern: Pattern::Rr,
            ..sink_spec()
        });
        assert!(
            e.starts_with("--pattern rr with --sink: nothing answers"),
            "{e}"
        );
        for (spec, flag) in [
            (
                RunSpec {
                    bidir: true,
                    ..sink_spec()
                },
                "--bidir",
            ),
            (
                RunSpec {
                    recv_path: RecvPath::Trunc,
                    ..sink_spec()
                },
                "--recv trunc",
            ),
            (
                RunSpec {
                    recv_size: Some(64),
                    ..sink_spec()
                },
                "--recv-size",
            ),
            (
                RunSpec {
                    verify: true,
                    ..sink_spec()
                },
                "--verify",
            ),
            (
                RunSpec {
                    spin: true,
                    ..sink_spec()
                },
                "--spin",
            ),
            (
                RunSpec {
                    processes: true,
                    ..sink_spec()
                },
                "--processes",
            ),
        ] {
            let e = refused(spec);
            assert!(e.starts_with(&format!("{flag} with --sink: ")), "{e}");
            assert!(!e.contains('\n') && e.ends_with("leave it out"), "{e}");
        }
    }

    #[test]
    fn loopback_and_netns_runs_are_not_the_sinks_to_refuse() {
        let spec = RunSpec {
            verify: true,
            pattern: Pattern::Rr,
            ..RunSpec::plain(64, Duration::from_secs(1))
        };
        assert_eq!(check_sink(&spec), Ok(()));
    }
}
