//! The names the command line and the records use for transports, mechanisms and receive
//! paths, parsed back into their values. The types live below (`transport`, `mechanism`),
//! which know nothing of input errors; the parsing, which refuses with one line, lives here.
use crate::error::ConfigError;
use crate::mechanism::recv_path::RecvPath;
use crate::mechanism::MechanismKind;
use crate::transport::Transport;

impl std::str::FromStr for Transport {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Transport::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                ConfigError(format!(
                    "--transport {s:?}: unknown transport; allowed: tcp, unix, pipe, shm, udp, unix-dgram"
                ))
            })
    }
}

impl std::str::FromStr for MechanismKind {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        MechanismKind::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                ConfigError(format!(
                    "--mechanism {s:?}: unknown mechanism; allowed: {}",
                    MechanismKind::NAMES
                ))
            })
    }
}

impl std::str::FromStr for RecvPath {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        RecvPath::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                ConfigError(format!(
                    "--recv {s:?}: unknown receive path; allowed: recv, uring-recv, zc-recv, trunc"
                ))
            })
    }
}
