//! How the receiving side takes bytes from the kernel (`--recv`): recv(2) into a buffer, an
//! io_uring receive into provided buffers, TCP_ZEROCOPY_RECEIVE (the receive queue mapped into
//! this process), or recv(MSG_TRUNC), which discards the bytes and so only bounds the cost.
use crate::config::ConfigError;
use crate::transport::Transport;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecvPath {
    #[default]
    Recv,
    UringRecv,
    ZcRecv,
    Trunc,
}

impl RecvPath {
    pub const ALL: [RecvPath; 4] = [
        RecvPath::Recv,
        RecvPath::UringRecv,
        RecvPath::ZcRecv,
        RecvPath::Trunc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RecvPath::Recv => "recv",
            RecvPath::UringRecv => "uring-recv",
            RecvPath::ZcRecv => "zc-recv",
            RecvPath::Trunc => "trunc",
        }
    }

    /// Whether the received bytes reach this process (trunc discards them in the kernel).
    pub fn delivers_data(self) -> bool {
        self != RecvPath::Trunc
    }

    /// The transports this path can receive from; `None`: any.
    pub fn transports(self) -> Option<&'static [Transport]> {
        match self {
            RecvPath::Recv => None,
            RecvPath::UringRecv => Some(&[Transport::Tcp, Transport::Unix]),
            RecvPath::ZcRecv | RecvPath::Trunc => Some(&[Transport::Tcp]),
        }
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

/// Whether this kernel offers what `path` needs, tried at run time; `Err` is the reason.
pub fn probe(path: RecvPath) -> Result<(), String> {
    match path {
        RecvPath::Recv => Ok(()),
        _ => Err(format!("--recv {} is not built yet", path.name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_refused() {
        for p in RecvPath::ALL {
            assert_eq!(p.name().parse::<RecvPath>().unwrap(), p);
        }
        let err = "mmap".parse::<RecvPath>().unwrap_err().0;
        assert!(err.contains("\"mmap\"") && err.contains("zc-recv"));
    }
}
