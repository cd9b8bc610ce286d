//! "What limited each flow?": from the `tcp_info` blocks, the share of a sending socket's busy
//! time (data in flight) that the kernel counted as limited by the receiver's window
//! (tcpi_rwnd_limited) or by the send buffer (tcpi_sndbuf_limited), the rest busy sending,
//! and how much of the measured phase it was busy at all. Stated only where the kernel gave
//! those fields (Linux 4.10+); otherwise the answer names the missing field.
use super::{Answer, Dataset};
use crate::record::tcp::{TcpInfoReport, TcpSide};
use std::collections::BTreeMap;

pub const QUESTION: &str = "What limited each flow?";

/// What a flow's sending socket added up to over one or more measured phases.
#[derive(Debug, Clone, Default, PartialEq)]
struct Limits {
    elapsed_us: f64,
    busy_us: u64,
    rwnd_us: u64,
    sndbuf_us: u64,
    retransmits: u64,
    /// A kernel field the shares need and this kernel's tcp_info lacks.
    missing: Option<String>,
}

impl Limits {
    fn add(&mut self, side: &TcpSide) {
        let m = &side.measured;
        self.elapsed_us += m.elapsed_ms * 1e3;
        self.retransmits += m.retransmits.unwrap_or(0);
        match (m.busy_us, m.rwnd_limited_us, m.sndbuf_limited_us) {
            (Some(b), Some(r), Some(s)) => {
                self.busy_us += b;
                self.rwnd_us += r;
                self.sndbuf_us += s;
            }
            _ => {
                let needed = ["tcpi_busy_time", "tcpi_rwnd_limited", "tcpi_sndbuf_limited"];
                let gone = needed
                    .iter()
                    .find(|f| side.missing_fields.iter().any(|m| m == *f));
                self.missing = Some(gone.unwrap_or(&needed[0]).to_string());
            }
        }
    }

    /// One line: the shares, and the limit they name.
    fn line(&self, who: &str) -> String {
        if let Some(field) = &self.missing {
            return format!(
                "{who}: not stated: this kernel's tcp_info has no {field} (Linux 4.10+)"
            );
        }
        if self.busy_us == 0 {
            return format!("{who}: never busy: the kernel counted no time with data in flight");
        }
        let busy = self.busy_us as f64;
        let (rwnd, sndbuf) = (self.rwnd_us as f64 / busy, self.sndbuf_us as f64 / busy);
        let sending = (1.0 - rwnd - sndbuf).max(0.0);
        let in_flight = (busy / self.elapsed_us.max(1.0)).min(1.0);
        let limit = if in_flight < 0.5 {
            "the application: the socket was idle most of the measured phase"
        } else if rwnd >= sndbuf && rwnd >= sending {
            "the receiver's window"
        } else if sndbuf >= sending {
            "the send buffer"
        } else {
            "neither window nor buffer: busy sending"
        };
        format!(
            "{who}: limited by {limit} (of its busy time: receiver's window {:.0} %, send buffer {:.0} %, busy sending {:.0} %; busy {:.0} % of the measured phase; {} retransmits)",
            rwnd * 100.0,
            sndbuf * 100.0,
            sending * 100.0,
            in_flight * 100.0,
            self.retransmits
        )
    }
}

/// The sides worth a line: those that sent data (the kernel counted busy time), or, where none
/// did, every side (so the line says it was never busy).
fn sending_sides(report: &TcpInfoReport) -> impl Iterator<Item = &TcpSide> {
    let any_busy = report
        .flows
        .iter()
        .any(|s| s.measured.busy_us.unwrap_or(0) > 0);
    report.flows.iter().filter(move |s| {
        !any_busy || s.measured.busy_us.unwrap_or(0) > 0 || s.measured.busy_us.is_none()
    })
}

/// One line per flow side of a run.
pub fn run_lines(report: &TcpInfoReport) -> Vec<String> {
    sending_sides(report)
        .map(|s| {
            let mut limits = Limits::default();
            limits.add(s);
            limits.line(&format!("flow {} ({})", s.flow, s.side))
        })
        .collect()
}

/// The answer for one run: its lines, or why there are none.
pub fn run_answer(report: Option<&TcpInfoReport>, unavailable: Option<&str>) -> Answer {
    let rests_on = "the kernel's tcp_info (tcpi_busy_time, tcpi_rwnd_limited, tcpi_sndbuf_limited, tcpi_total_retrans) of each sampled tcp socket, read at the start and at the end of the measured phase (with --remote, the server's sockets by the server)".to_string();
    match report {
        Some(r) => {
            let details = run_lines(r);
            Answer {
                question: QUESTION,
                finding: details
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "no tcp side was sampled".into()),
                details,
                rests_on,
                verdict: None,
            }
        }
        None => Answer::cannot(
            QUESTION,
            unavailable
                .unwrap_or("the record has no tcp_info block")
                .to_string(),
            rests_on,
        ),
    }
}

/// The sweep's answer: per point (over all its visits), each sending side's shares; `None`
/// when no record holds a `tcp_info` block.
pub fn answer(data: &Dataset) -> Option<Answer> {
    let mut by_point: BTreeMap<(String, String), Limits> = BTreeMap::new();
    for record in &data.records {
        let (Some(report), Some(key)) = (&record.tcp_info, record.key()) else {
            continue;
        };
        for side in sending_sides(report) {
            let entry = by_point
                .entry((key.to_string(), side.side.clone()))
                .or_default();
            entry.add(side);
        }
    }
    if by_point.is_empty() {
        return None;
    }
    let details: Vec<String> = by_point
        .iter()
        .map(|((key, side), limits)| limits.line(&format!("{key} ({side}, every flow and visit)")))
        .collect();
    Some(Answer {
        question: QUESTION,
        finding: format!("{} points' tcp flows, each by the share of its sending sockets' busy time the kernel counted as limited", by_point.len()),
        details,
        rests_on: "each visit's tcp_info block: the busy, receive-window-limited and send-buffer-limited times the kernel added over the measured phase, summed over flows and visits".into(),
        verdict: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(busy: u64, rwnd: u64, sndbuf: u64) -> Limits {
        Limits {
            elapsed_us: 1e6,
            busy_us: busy,
            rwnd_us: rwnd,
            sndbuf_us: sndbuf,
            retransmits: 3,
            missing: None,
        }
    }

    #[test]
    fn the_largest_share_of_busy_time_names_the_limit() {
        let l = limits(900_000, 800_000, 0).line("flow 0 (sender)");
        assert!(l.starts_with("flow 0 (sender): limited by the receiver's window (of its busy time: receiver's window 89 %, send buffer 0 %, busy sending 11 %; busy 90 %"), "{l}");
        assert!(limits(900_000, 0, 600_000)
            .line("f")
            .contains("limited by the send buffer"));
        assert!(limits(900_000, 10, 10).line("f").contains("busy sending"));
        assert!(limits(100_000, 90_000, 0)
            .line("f")
            .contains("the application"));
    }

    #[test]
    fn without_the_kernels_fields_the_line_names_the_missing_one() {
        let l = Limits {
            missing: Some("tcpi_busy_time".into()),
            ..limits(0, 0, 0)
        };
        assert_eq!(
            l.line("f"),
            "f: not stated: this kernel's tcp_info has no tcpi_busy_time (Linux 4.10+)"
        );
    }
}
