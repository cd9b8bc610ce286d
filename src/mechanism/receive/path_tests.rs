//! The receive paths (`--recv`) over real sockets: a sender thread writes the pattern with a
//! real mechanism, the receiver counts message boundaries and verifies every byte.
use super::super::{FlowContext, MechanismKind};
use super::path::{ReceivePathStats, RecvPath};
use super::{Receiver, RecvMode};
use crate::transport::{connector, Endpoint, SocketOptions, Transport};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One flow of `transport` with `options`: (sending end, receiving end, send buffer).
fn flow(transport: Transport, options: SocketOptions) -> (Endpoint, Endpoint, usize) {
    let f = connector(transport).connect(1, options).unwrap().remove(0);
    (f.sender, f.receiver, f.send_buffer)
}

/// Sends `count` messages of `size` bytes carrying the pattern, with `kind`, then ends the
/// flow.
fn send(
    kind: MechanismKind,
    ep: Endpoint,
    send_buffer: usize,
    size: usize,
    count: u64,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let ctx = FlowContext {
            flow: 0,
            message_size: size,
            fill_pattern: true,
            send_buffer,
            queue_depth: 16,
            flush_each: false,
            framing: None,
        };
        let mut mech = super::super::build(kind, ctx).unwrap();
        for seq in 0..count {
            mech.send_message(&ep, seq).unwrap();
        }
        mech.finish(&ep, Instant::now() + Duration::from_secs(5))
            .unwrap();
        ep.finish_writing().unwrap();
    })
}

/// Receives until EOF; returns the messages completed and the path's figures.
fn receive_all(r: &mut Receiver, ep: &Endpoint) -> (u64, ReceivePathStats) {
    let mut messages = 0;
    loop {
        let got = r.receive(ep).unwrap();
        if got.eof {
            return (messages, r.path_stats());
        }
        messages += got.messages;
    }
}

/// Every message boundary counted exactly and every byte verified.
fn assert_exact(r: &Receiver, messages: u64, size: usize, count: u64, what: &str) {
    assert_eq!(messages, count, "{what}: message boundaries");
    assert_eq!(r.bytes_total, size as u64 * count, "{what}: bytes");
    let v = r.verifier.as_ref().expect("verifying");
    assert_eq!(v.checked_bytes, r.bytes_total, "{what}: every byte checked");
    assert_eq!(v.wrong_bytes, 0, "{what}: {:?}", v.first);
}

/// Whole messages, calls that cut messages (`call` bytes at most), and chunks across them.
fn modes(size: usize, call: usize) -> [RecvMode; 3] {
    [
        RecvMode::WholeMessage { max_call: size },
        RecvMode::WholeMessage { max_call: call },
        RecvMode::Chunks { chunk: 10_000 },
    ]
}

#[test]
fn uring_recv_counts_every_boundary_and_verifies_every_byte_over_tcp_and_unix() {
    let (size, count) = (24_000, 300);
    for transport in [Transport::Tcp, Transport::Unix] {
        for mode in modes(size, 3000) {
            for spin in [false, true] {
                let what = format!("{transport:?} {mode:?} spin {spin}");
                let (tx, rx, buffer) = flow(transport, SocketOptions::default());
                let sender = send(MechanismKind::GATHER, tx, buffer, size, count);
                let mut r = Receiver::new(0, size, mode, spin, true, RecvPath::UringRecv);
                let (messages, stats) = receive_all(&mut r, &rx);
                sender.join().unwrap();
                assert_exact(&r, messages, size, count, &what);
                assert_eq!(stats.path, RecvPath::UringRecv);
                assert_eq!(
                    stats.multishot,
                    Some(true),
                    "{what}: Linux 6.0+ has multishot"
                );
                assert!(stats.calls > 0, "{what}: completions counted");
                assert_eq!(stats.delivered_bytes, r.bytes_total, "{what}");
            }
        }
    }
}

#[test]
fn uring_recv_rearms_and_recycles_buffers_over_far_more_messages_than_buffers() {
    // Two 4 KiB buffers for 16 MiB: each buffer comes back thousands of times, and a fast
    // sender empties the buffer ring, which ends the multishot receive (ENOBUFS).
    let (size, count) = (16 << 10, 1024);
    let (tx, rx, buffer) = flow(Transport::Tcp, SocketOptions::default());
    let sender = send(MechanismKind::SEND, tx, buffer, size, count);
    let mode = RecvMode::WholeMessage { max_call: size };
    let mut r =
        Receiver::new(0, size, mode, false, true, RecvPath::UringRecv).with_uring_buffers(2, 4096);
    let (messages, stats) = receive_all(&mut r, &rx);
    sender.join().unwrap();
    assert_exact(&r, messages, size, count, "2 buffers");
    assert_eq!((stats.buffers, stats.buffer_bytes), (Some(2), Some(4096)));
    assert!(stats.calls >= (size as u64 * count) / 4096, "{stats:?}");
    assert!(
        stats.enobufs > 0,
        "the ring ran dry at least once: {stats:?}"
    );
    assert!(
        stats.rearms >= stats.enobufs,
        "every ENOBUFS re-armed: {stats:?}"
    );
}

#[test]
fn zc_recv_counts_mapped_plus_copied_as_every_byte_received() {
    let (size, count) = (64 << 10, 200);
    // 12000 B calls: two pages to map and a 3808 B tail for the copy buffer.
    for mode in modes(size, 12_000) {
        for spin in [false, true] {
            let what = format!("{mode:?} spin {spin}");
            let options = SocketOptions {
                tcp_maxseg: Some(crate::transport::tcp::page_multiple_maxseg(7)),
                ..SocketOptions::default()
            };
            let (tx, rx, buffer) = flow(Transport::Tcp, options);
            let sender = send(MechanismKind::SEND, tx, buffer, size, count);
            let mut r = Receiver::new(0, size, mode, spin, true, RecvPath::ZcRecv);
            let (messages, stats) = receive_all(&mut r, &rx);
            sender.join().unwrap();
            assert_exact(&r, messages, size, count, &what);
            assert_eq!(
                stats.mapped_bytes + stats.copied_bytes,
                r.bytes_total,
                "{what}: {stats:?}"
            );
            assert_eq!(
                stats.segment_bytes,
                Some(7 * 4096),
                "{what}: TCP_MAXSEG took"
            );
            assert_eq!(stats.copybuf, Some(true), "{what}");
            // send(2) data sits in page-frag compound pages: measured here, none maps.
            assert_eq!(stats.mapped_bytes, 0, "{what}");
            let reason = stats.reason.expect("nothing mapped says why");
            assert!(reason.contains("declined every page"), "{what}: {reason}");
        }
    }
}

#[test]
fn zc_recv_maps_pages_from_a_zerocopy_sender_and_verifies_them_in_the_mapping() {
    // MSG_ZEROCOPY on loopback: the kernel copies the data into fresh order-0 pages at
    // delivery, whole pages at offset 0 when segments carry whole pages, and those it maps.
    let (size, count) = (64 << 10, 400);
    let options = SocketOptions {
        tcp_maxseg: Some(crate::transport::tcp::page_multiple_maxseg(7)),
        zerocopy_sender: true,
        ..SocketOptions::default()
    };
    // Calls of whole pages keep the stream page-aligned; 12000 B calls copy a 3808 B tail each
    // time, so the stream drifts off the page grid and maps only now and then.
    let modes = [
        (RecvMode::WholeMessage { max_call: size }, 50.0),
        (RecvMode::Chunks { chunk: 32 << 10 }, 50.0),
        (RecvMode::WholeMessage { max_call: 12_000 }, 0.0),
    ];
    for (mode, at_least) in modes {
        let (tx, rx, buffer) = flow(Transport::Tcp, options);
        let sender = send(MechanismKind::ZEROCOPY, tx, buffer, size, count);
        let mut r = Receiver::new(0, size, mode, false, true, RecvPath::ZcRecv);
        let (messages, stats) = receive_all(&mut r, &rx);
        sender.join().unwrap();
        let what = format!("zerocopy sender, {mode:?}");
        assert_exact(&r, messages, size, count, &what);
        assert_eq!(stats.mapped_bytes + stats.copied_bytes, r.bytes_total);
        assert!(
            stats.mapped_bytes > 0 && stats.mapped_percent().unwrap() > at_least,
            "{what}: over {at_least} % mapped: {stats:?}"
        );
        assert_eq!(stats.reason, None);
    }
}

#[test]
fn zc_recv_of_less_than_a_page_copies_and_says_why_nothing_mapped() {
    let (size, count) = (100, 500);
    let (tx, rx, buffer) = flow(Transport::Tcp, SocketOptions::default());
    let sender = send(MechanismKind::SEND, tx, buffer, size, count);
    let mode = RecvMode::WholeMessage { max_call: size };
    let mut r = Receiver::new(0, size, mode, false, true, RecvPath::ZcRecv);
    let (messages, stats) = receive_all(&mut r, &rx);
    sender.join().unwrap();
    assert_exact(&r, messages, size, count, "100 B");
    assert_eq!((stats.mapped_bytes, stats.copied_bytes), (0, r.bytes_total));
    assert!(stats.reason.unwrap().contains("less than one"));
}

#[test]
fn trunc_counts_every_boundary_and_byte_and_delivers_none() {
    let (size, count) = (24_000, 300);
    for mode in modes(size, 3000) {
        for spin in [false, true] {
            let what = format!("{mode:?} spin {spin}");
            let (tx, rx, buffer) = flow(Transport::Tcp, SocketOptions::default());
            let sender = send(MechanismKind::SEND, tx, buffer, size, count);
            let mut r = Receiver::new(0, size, mode, spin, false, RecvPath::Trunc);
            let (messages, stats) = receive_all(&mut r, &rx);
            sender.join().unwrap();
            assert_eq!(messages, count, "{what}");
            assert_eq!(r.bytes_total, size as u64 * count, "{what}");
            assert_eq!(stats.discarded_bytes, r.bytes_total, "{what}");
            assert_eq!(stats.delivered_bytes, 0, "{what}");
            assert!(
                r.buffer().iter().all(|&b| b == 0),
                "{what}: no byte reached the buffer"
            );
        }
    }
}

#[test]
fn recv_path_is_unchanged_and_reports_its_calls() {
    let (size, count) = (24_000, 100);
    let (tx, rx, buffer) = flow(Transport::Unix, SocketOptions::default());
    let sender = send(MechanismKind::COPY, tx, buffer, size, count);
    let mode = RecvMode::WholeMessage { max_call: size };
    let mut r = Receiver::new(0, size, mode, false, true, RecvPath::Recv);
    let (messages, stats) = receive_all(&mut r, &rx);
    sender.join().unwrap();
    assert_exact(&r, messages, size, count, "recv");
    assert!(stats.calls >= count);
    assert_eq!(stats.delivered_bytes, r.bytes_total);
}
