//! The names the command line and the records use for transports, mechanisms and receive
//! paths, parsed back into their values. The types live below (`transport`, `mechanism`),
//! which know nothing of input errors; the parsing, which refuses with one line, lives here.
use crate::error::ConfigError;
use crate::mechanism::descriptor::names;
use crate::mechanism::receive::path::RecvPath;
use crate::mechanism::MechanismKind;
use crate::transport::Transport;

/// The value among `all` whose name is `s`, or the refusal `refused` words.
fn by_name<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    s: &str,
    refused: impl FnOnce() -> String,
) -> Result<T, ConfigError> {
    all.iter()
        .copied()
        .find(|v| name(*v) == s)
        .ok_or_else(|| ConfigError(refused()))
}

impl std::str::FromStr for Transport {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        by_name(&Transport::ALL, Transport::name, s, || {
            format!("--transport {s:?}: unknown transport; allowed: tcp, unix, pipe, shm, udp, unix-dgram")
        })
    }
}

impl std::str::FromStr for MechanismKind {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        mechanism_among(MechanismKind::ALL, s)
    }
}

/// The mechanism among `known` called `s`, or the refusal that lists them (production passes
/// `MechanismKind::ALL`).
pub fn mechanism_among(known: &[MechanismKind], s: &str) -> Result<MechanismKind, ConfigError> {
    MechanismKind::among(known, s).ok_or_else(|| {
        ConfigError(format!(
            "--mechanism {s:?}: unknown mechanism; allowed: {}",
            names(known, |_| true).join(", ")
        ))
    })
}

impl std::str::FromStr for RecvPath {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        by_name(&RecvPath::ALL, RecvPath::name, s, || {
            let allowed = RecvPath::ALL.map(RecvPath::name).join(", ");
            format!("--recv {s:?}: unknown receive path; allowed: {allowed}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_refused_with_every_allowed_one() {
        for &m in MechanismKind::ALL {
            assert_eq!(m.name().parse::<MechanismKind>().unwrap(), m);
        }
        for p in RecvPath::ALL {
            assert_eq!(p.name().parse::<RecvPath>().unwrap(), p);
        }
        let err = "zero".parse::<MechanismKind>().unwrap_err().0;
        assert_eq!(
            err,
            "--mechanism \"zero\": unknown mechanism; allowed: send, copy, gather, sendmmsg, \
             zerocopy, uring, uring-gather, uring-zc, splice, sendfile"
        );
        let err = "mmap".parse::<RecvPath>().unwrap_err().0;
        assert_eq!(
            err,
            "--recv \"mmap\": unknown receive path; allowed: recv, uring-recv, zc-recv, trunc"
        );
    }
}
