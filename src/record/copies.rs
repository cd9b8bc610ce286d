//! The record's `copies` block (`--count-copies`): what the kernel's tracepoints counted in a
//! run or visit of their own (`measure::copies`), beside the figures the run already had. The
//! bytes copied to user space per byte delivered are the receive copies of the run's own
//! processes over the whole run (connect to close) against every byte its receiving sides
//! took in that run (`transfer`); with `--recv zc-recv` the block carries the share that same
//! run's receive path reported mapped, so a reader sets the count against 1 − it. Drops (with
//! the kernel's reason) and per-device transmit bytes cover every task on the run's CPUs.
use super::RunRecord;
use crate::config::RunSpec;
use crate::measure::copies::{CopyCounts, DeviceTransmit, DropCount};
use crate::mechanism::receive::path::RecvPath;
use crate::transport::network::Placement;
use crate::transport::Transport;
use serde::{Deserialize, Serialize};

/// What the tracepoints counted, or why each figure is not given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopiesReport {
    /// The run or visit the tracepoints were open in: never one the headline figures come from.
    pub counted_in: String,
    /// That run's measured seconds and its own headline figure (Gbit/s, or round trips/s):
    /// set beside the headline, what the open tracepoints cost.
    pub measured_s: f64,
    pub headline_value: Option<f64>,
    /// What the counts cover.
    pub scope: String,
    /// Whether bytepath mounted tracefs to read the events (and unmounted it).
    pub tracefs: Option<String>,
    pub cpus: Vec<usize>,
    /// Bytes the receiving sides took over the whole counted run (both directions' receivers:
    /// the rr server and client alike).
    pub delivered_bytes: u64,
    pub copied_to_user_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied_to_user_bytes_unavailable_reason: Option<String>,
    /// Times a receive copy fired in the run's processes.
    pub copy_calls: Option<u64>,
    pub copied_per_byte_delivered: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied_per_byte_delivered_unavailable_reason: Option<String>,
    /// `--recv zc-recv`: the share of bytes the receive path reported mapped in the same run;
    /// the count reads 1 − it when every byte not mapped was copied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapped_share: Option<f64>,
    /// Receive copies of other processes on the same CPUs, kept out of the figures above.
    pub copied_by_other_processes_bytes: Option<u64>,
    pub drops: Option<Vec<DropCount>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drops_unavailable_reason: Option<String>,
    pub transmit: Option<Vec<DeviceTransmit>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transmit_unavailable_reason: Option<String>,
    /// Tracepoint hits a full ring dropped (a count with any would be short, so none is given).
    pub lost_samples: Option<u64>,
}

const SCOPE: &str = "the whole counted run, connection to close: receive copies \
     (skb:skb_copy_datagram_iovec) made in the run's own processes; drops (skb:kfree_skb) and \
     transmits (net:net_dev_xmit) of every task on the run's CPUs, since softirq work runs on \
     whichever task the CPU is running";

/// The block of `counted`, the record of the run the tracepoints were open in (`spec` its
/// spec), from what they counted or why they could not count.
pub fn report(
    spec: &RunSpec,
    counted: &RunRecord,
    counts: Result<CopyCounts, String>,
    counted_in: String,
) -> CopiesReport {
    let t = &counted.transfer;
    let mut block = CopiesReport {
        measured_s: counted.measured_s,
        headline_value: counted.passed().then(|| counted.headline_value()),
        delivered_bytes: t.receiver_received_bytes + t.sender_received_bytes,
        mapped_share: mapped_share(spec, counted),
        ..blank(counted_in)
    };
    let counts = match counts {
        Ok(counts) => counts,
        Err(why) => return unavailable(block, &format!("no count: {why}")),
    };
    (block.tracefs, block.cpus) = (Some(counts.tracefs.clone()), counts.cpus.clone());
    block.lost_samples = Some(counts.lost);
    if let Some(why) = run_failed(counted) {
        return unavailable(block, &why);
    }
    if counts.lost > 0 {
        let why = format!(
            "{} tracepoint hits were lost (a ring filled before it was read): every count \
             would be short",
            counts.lost
        );
        return unavailable(block, &why);
    }
    block.drops = Some(counts.drops.clone());
    block.transmit = Some(counts.transmit.clone());
    copied(&mut block, spec, counted, &counts);
    block
}

/// Puts the receive copies on `block`, or why they are not given.
fn copied(block: &mut CopiesReport, spec: &RunSpec, counted: &RunRecord, counts: &CopyCounts) {
    if let Some(why) = copies_unseen(spec) {
        block.copied_to_user_bytes_unavailable_reason = Some(why.clone());
        block.copied_per_byte_delivered_unavailable_reason = Some(why);
        return;
    }
    let mut pids: Vec<u32> = counted.sides.iter().filter_map(|s| s.pid).collect();
    pids.sort_unstable();
    pids.dedup();
    let (bytes, calls) = counts.copied_by(&pids);
    block.copied_to_user_bytes = Some(bytes);
    block.copy_calls = Some(calls);
    block.copied_by_other_processes_bytes = Some(counts.copied_by_others(&pids));
    if !spec.recv_path.delivers_data() {
        block.copied_per_byte_delivered_unavailable_reason = Some(format!(
            "--recv {} delivers nothing: the kernel discarded the {} B the receiving sides \
             took, and {bytes} B were copied to user space",
            spec.recv_path.name(),
            block.delivered_bytes
        ));
    } else if let Some(why) = udp_unseen(spec, bytes, block.delivered_bytes) {
        block.copied_per_byte_delivered_unavailable_reason = Some(why);
    } else if block.delivered_bytes == 0 {
        block.copied_per_byte_delivered_unavailable_reason =
            Some("no byte was delivered in the counted run".into());
    } else {
        block.copied_per_byte_delivered = Some(bytes as f64 / block.delivered_bytes as f64);
    }
}

/// Why the run's receive copies cannot be seen on this host, if they cannot.
fn copies_unseen(spec: &RunSpec) -> Option<String> {
    if spec.network.placement == Placement::Remote {
        return Some(
            "a side ran on another host (--remote): this host's tracepoints see its own side \
             only"
                .into(),
        );
    }
    match spec.transport {
        Transport::Pipe | Transport::Shm => Some(format!(
            "--transport {}: no socket receive, so skb:skb_copy_datagram_iovec never fires ({})",
            spec.transport.name(),
            if spec.transport == Transport::Pipe {
                "pipe_read() copies with copy_page_to_iter()"
            } else {
                "the shared ring is copied in user space"
            }
        )),
        _ => None,
    }
}

/// UDP copies some datagrams where the tracepoint does not fire (udp_recvmsg() in
/// net/ipv4/udp.c): one held in a single linear buffer with copy_linear_skb(), one whose
/// checksum is still to check with skb_copy_and_csum_datagram_msg(). On loopback that is every
/// datagram that fits in a page or so. Where fewer bytes were seen than delivered, the rest
/// were copied unseen, so no ratio is given; where all were seen, it is.
fn udp_unseen(spec: &RunSpec, seen: u64, delivered: u64) -> Option<String> {
    (spec.transport == Transport::Udp && seen < delivered).then(|| {
        format!(
            "the tracepoint saw {seen} of the {delivered} B delivered: UDP copies a datagram \
             held in one linear buffer with copy_linear_skb() (and one whose checksum it still \
             checks with skb_copy_and_csum_datagram_msg()), neither of which fires \
             skb:skb_copy_datagram_iovec, so those copies were made unseen"
        )
    })
}

/// The counted run's failure, which leaves its counts meaningless.
fn run_failed(counted: &RunRecord) -> Option<String> {
    if let Some(skipped) = &counted.skipped_reason {
        return Some(format!("the counted run was skipped: {skipped}"));
    }
    if counted.interrupted {
        return Some("the counted run was interrupted".into());
    }
    (!counted.errors.is_empty())
        .then(|| format!("the counted run failed: {}", counted.errors.join("; ")))
}

/// `--recv zc-recv`: the counted run's mapped share.
fn mapped_share(spec: &RunSpec, counted: &RunRecord) -> Option<f64> {
    if spec.recv_path != RecvPath::ZcRecv {
        return None;
    }
    counted
        .receive
        .as_ref()
        .and_then(|r| r.mapped_percent)
        .map(|p| p / 100.0)
}

impl CopiesReport {
    /// Why nothing at all was counted (no tracepoint opened, the counted run failed or lost
    /// hits), when that is so: the one reason every figure gives.
    pub fn nothing_counted(&self) -> Option<&str> {
        let counted =
            self.copied_to_user_bytes.is_some() || self.drops.is_some() || self.transmit.is_some();
        let why = self.drops_unavailable_reason.as_deref()?;
        let same = [
            &self.copied_to_user_bytes_unavailable_reason,
            &self.transmit_unavailable_reason,
        ]
        .iter()
        .all(|r| r.as_deref() == Some(why));
        (!counted && same).then_some(why)
    }
}

/// Every figure of `block` null for `why`.
fn unavailable(mut block: CopiesReport, why: &str) -> CopiesReport {
    let why = Some(why.to_string());
    block.copied_to_user_bytes_unavailable_reason = why.clone();
    block.copied_per_byte_delivered_unavailable_reason = why.clone();
    block.drops_unavailable_reason = why.clone();
    block.transmit_unavailable_reason = why;
    block
}

/// A block for a point whose counted run never ran: every figure null for `why`.
pub fn not_counted(counted_in: String, why: &str) -> CopiesReport {
    unavailable(blank(counted_in), why)
}

/// A block with nothing counted yet.
fn blank(counted_in: String) -> CopiesReport {
    CopiesReport {
        counted_in,
        measured_s: 0.0,
        headline_value: None,
        scope: SCOPE.into(),
        tracefs: None,
        cpus: Vec::new(),
        delivered_bytes: 0,
        copied_to_user_bytes: None,
        copied_to_user_bytes_unavailable_reason: None,
        copy_calls: None,
        copied_per_byte_delivered: None,
        copied_per_byte_delivered_unavailable_reason: None,
        mapped_share: None,
        copied_by_other_processes_bytes: None,
        drops: None,
        drops_unavailable_reason: None,
        transmit: None,
        transmit_unavailable_reason: None,
        lost_samples: None,
    }
}

#[cfg(test)]
#[path = "copies_tests.rs"]
mod tests;
