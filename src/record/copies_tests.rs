//! The block from counts made up to the byte: which figure each case gives, and why the
//! others are null.
use super::*;
use crate::engine::RunOutcome;
use crate::measure::copies::ProcessCopies;
use crate::mechanism::receive::path::ReceivePathStats;
use std::time::Duration;

fn spec(transport: Transport, recv_path: RecvPath) -> RunSpec {
    RunSpec {
        transport,
        recv_path,
        ..RunSpec::plain(4096, Duration::from_secs(1))
    }
}

/// A completed run's record: sides in processes 10 (sender) and 10 (receiver), `delivered`
/// bytes received.
fn counted(spec: &RunSpec, delivered: u64) -> RunRecord {
    let env = crate::environment::Environment::detect(&[0]);
    let mut r = crate::record::build(spec, &RunOutcome::not_run(spec, String::new()), env);
    (r.status, r.errors, r.interrupted) = ("completed".into(), Vec::new(), false);
    r.transfer.receiver_received_bytes = delivered;
    r.measured_s = 1.0;
    for side in &mut r.sides {
        side.pid = Some(10);
    }
    r
}

fn counts(copies: &[(u32, u64)]) -> CopyCounts {
    CopyCounts {
        copies: copies
            .iter()
            .map(|&(pid, bytes)| ProcessCopies {
                pid,
                bytes,
                calls: bytes / 1000,
            })
            .collect(),
        drops: vec![DropCount {
            reason: "NO_SOCKET".into(),
            code: 3,
            packets: 2,
        }],
        transmit: Vec::new(),
        lost: 0,
        cpus: vec![0, 1],
        tracefs: "tracefs found mounted".into(),
    }
}

fn block(spec: &RunSpec, run: &RunRecord, c: Result<CopyCounts, String>) -> CopiesReport {
    report(spec, run, c, "a run of its own".into())
}

#[test]
fn recv_copies_are_the_run_processes_own_per_byte_delivered() {
    let s = spec(Transport::Tcp, RecvPath::Recv);
    let b = block(&s, &counted(&s, 8000), Ok(counts(&[(10, 8000), (11, 500)])));
    assert_eq!(b.copied_to_user_bytes, Some(8000));
    assert_eq!(b.copied_per_byte_delivered, Some(1.0));
    assert_eq!(b.copy_calls, Some(8));
    assert_eq!(b.copied_by_other_processes_bytes, Some(500));
    assert_eq!(b.drops.as_ref().unwrap()[0].reason, "NO_SOCKET");
    assert_eq!(b.transmit, Some(Vec::new()));
    assert_eq!(b.mapped_share, None);
    assert_eq!(b.lost_samples, Some(0));
}

#[test]
fn zc_recv_carries_the_share_its_receive_path_mapped_in_the_same_run() {
    let s = spec(Transport::Tcp, RecvPath::ZcRecv);
    let mut run = counted(&s, 10_000);
    let mut stats = ReceivePathStats::new(RecvPath::ZcRecv);
    (stats.mapped_bytes, stats.copied_bytes) = (6000, 4000);
    run.receive = Some(super::super::receive::from_stats(&s, stats));
    let b = block(&s, &run, Ok(counts(&[(10, 4000)])));
    assert_eq!(b.mapped_share, Some(0.6));
    assert_eq!(b.copied_per_byte_delivered, Some(0.4));
}

#[test]
fn trunc_gives_the_bytes_copied_and_no_ratio_since_it_delivers_nothing() {
    let s = spec(Transport::Tcp, RecvPath::Trunc);
    let b = block(&s, &counted(&s, 9000), Ok(counts(&[])));
    assert_eq!(b.copied_to_user_bytes, Some(0));
    assert_eq!(b.copied_per_byte_delivered, None);
    let why = b.copied_per_byte_delivered_unavailable_reason.unwrap();
    assert!(
        why.contains("delivers nothing") && why.contains("9000 B"),
        "{why}"
    );
}

#[test]
fn no_count_leaves_every_figure_null_with_the_reason_never_zero() {
    let s = spec(Transport::Tcp, RecvPath::Recv);
    let b = block(&s, &counted(&s, 8000), Err("needs root".into()));
    assert_eq!(
        (b.copied_to_user_bytes, b.copied_per_byte_delivered),
        (None, None)
    );
    assert_eq!((b.drops.as_ref(), b.transmit.as_ref()), (None, None));
    for why in [
        &b.copied_to_user_bytes_unavailable_reason,
        &b.copied_per_byte_delivered_unavailable_reason,
        &b.drops_unavailable_reason,
        &b.transmit_unavailable_reason,
    ] {
        assert_eq!(why.as_deref(), Some("no count: needs root"));
    }
    let json = serde_json::to_value(&b).unwrap();
    assert!(json["copied_per_byte_delivered"].is_null());
}

#[test]
fn lost_hits_or_a_failed_run_give_no_figure() {
    let s = spec(Transport::Tcp, RecvPath::Recv);
    let mut lossy = counts(&[(10, 8000)]);
    lossy.lost = 3;
    let b = block(&s, &counted(&s, 8000), Ok(lossy));
    assert_eq!(b.copied_per_byte_delivered, None);
    assert!(b
        .drops_unavailable_reason
        .unwrap()
        .starts_with("3 tracepoint hits were lost"));
    let mut failed = counted(&s, 8000);
    failed.errors.push("receiver: reset".into());
    let b = block(&s, &failed, Ok(counts(&[(10, 8000)])));
    assert!(b
        .copied_to_user_bytes_unavailable_reason
        .unwrap()
        .contains("receiver: reset"));
}

#[test]
fn a_pipe_copies_where_the_socket_tracepoint_never_fires() {
    let s = spec(Transport::Pipe, RecvPath::Recv);
    let b = block(&s, &counted(&s, 8000), Ok(counts(&[])));
    assert_eq!(b.copied_to_user_bytes, None);
    assert!(b
        .copied_per_byte_delivered_unavailable_reason
        .unwrap()
        .contains("pipe_read"));
    assert!(b.drops.is_some(), "drops and transmits still stand");
}

#[test]
fn a_block_reads_back_as_written() {
    let s = spec(Transport::Tcp, RecvPath::Recv);
    let b = block(&s, &counted(&s, 8000), Ok(counts(&[(10, 8000)])));
    let back: CopiesReport = serde_json::from_value(serde_json::to_value(&b).unwrap()).unwrap();
    assert_eq!(back, b);
    let never = not_counted("the copies visit".into(), "interrupted");
    assert_eq!(
        never.drops_unavailable_reason.as_deref(),
        Some("interrupted")
    );
}

#[test]
fn udp_copies_the_tracepoint_misses_give_no_ratio_and_say_so() {
    let s = spec(Transport::Udp, RecvPath::Recv);
    let short = block(&s, &counted(&s, 8000), Ok(counts(&[(10, 0)])));
    assert_eq!(short.copied_to_user_bytes, Some(0));
    assert_eq!(short.copied_per_byte_delivered, None);
    let why = short
        .copied_per_byte_delivered_unavailable_reason
        .as_deref()
        .unwrap();
    assert!(
        why.starts_with("the tracepoint saw 0 of the 8000 B delivered"),
        "{why}"
    );
    assert!(why.contains("copy_linear_skb()"), "{why}");
    // Large datagrams, every copy seen: the ratio is given.
    let seen = block(&s, &counted(&s, 8000), Ok(counts(&[(10, 8000)])));
    assert_eq!(seen.copied_per_byte_delivered, Some(1.0));
}
