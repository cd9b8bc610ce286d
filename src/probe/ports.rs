//! Whether a long `--pattern crr` run can keep finding client ports: IP_BIND_ADDRESS_NO_PORT
//! (ip(7)), the ephemeral port range and tcp_tw_reuse (Documentation/networking/ip-sysctl.rst),
//! and what they allow against TIME_WAIT's fixed 60 s (TCP_TIMEWAIT_LEN).
use crate::sys::socket;
use serde::Serialize;
use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::AsFd;

/// TCP_TIMEWAIT_LEN in include/net/tcp.h: how long a closed client port stays in TIME_WAIT.
pub const TIME_WAIT_S: u64 = 60;

#[derive(Debug, Clone, Serialize)]
pub struct CrrPorts {
    pub ip_bind_address_no_port: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_bind_address_no_port_unavailable_reason: Option<String>,
    pub ephemeral_port_range: Option<[u32; 2]>,
    /// Ports in the range, each usable once per TIME_WAIT towards one destination.
    pub ephemeral_ports: Option<u64>,
    pub tcp_tw_reuse: Option<u32>,
    pub time_wait_s: u64,
    /// The most transactions per second one destination can sustain past TIME_WAIT_S without
    /// reusing a TIME_WAIT port (ports / 60 s).
    pub transactions_per_s_without_reuse: Option<f64>,
    /// Whether a long crr run here can keep connecting, and why.
    pub long_crr_run: String,
}

pub fn measure() -> CrrPorts {
    let tried = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).and_then(|l| {
        socket::set_int_option(
            l.as_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            1,
        )
    });
    let range = crate::engine::crr::port_range();
    let ports = range.map(|[lo, hi]| u64::from(hi.saturating_sub(lo)) + 1);
    let reuse = crate::engine::crr::tw_reuse();
    let rate = ports.map(|p| p as f64 / TIME_WAIT_S as f64);
    CrrPorts {
        ip_bind_address_no_port: tried.is_ok(),
        ip_bind_address_no_port_unavailable_reason: tried.err().map(|e| e.to_string()),
        ephemeral_port_range: range,
        ephemeral_ports: ports,
        tcp_tw_reuse: reuse,
        time_wait_s: TIME_WAIT_S,
        transactions_per_s_without_reuse: rate,
        long_crr_run: verdict(reuse, rate),
    }
}

fn verdict(reuse: Option<u32>, rate: Option<f64>) -> String {
    let limit = rate.map_or_else(
        || "an unknown rate (the port range could not be read)".to_string(),
        |r| format!("{r:.0} transactions/s"),
    );
    match reuse {
        Some(1) => format!(
            "yes: tcp_tw_reuse = 1 lets connect(2) reuse a TIME_WAIT port older than 1 s towards any \
             destination; without it one destination would sustain {limit}"
        ),
        Some(2) => format!(
            "yes over loopback (crr's placement): tcp_tw_reuse = 2 reuses TIME_WAIT ports on loopback \
             only; towards another host a run longer than 60 s would sustain {limit} before connect \
             fails with EADDRNOTAVAIL, unless --linger-zero"
        ),
        Some(_) => format!(
            "only below {limit}: tcp_tw_reuse = 0, so past 60 s a faster crr run runs out of ports \
             unless --linger-zero (close by reset, no TIME_WAIT)"
        ),
        None => format!("unknown (tcp_tw_reuse could not be read); without reuse: {limit}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_follows_tw_reuse_and_names_the_rate_without_it() {
        assert!(verdict(Some(2), Some(470.0)).starts_with("yes over loopback"));
        let no = verdict(Some(0), Some(470.0));
        assert!(
            no.contains("only below 470 transactions/s") && no.contains("--linger-zero"),
            "{no}"
        );
        assert!(verdict(None, None).contains("unknown"));
    }

    #[test]
    fn the_probe_reads_this_kernels_range() {
        let p = measure();
        let [lo, hi] = p
            .ephemeral_port_range
            .expect("Linux has ip_local_port_range");
        assert_eq!(p.ephemeral_ports, Some(u64::from(hi - lo) + 1));
    }
}
