//! The tally on records laid out by this kernel's format files, and the counter on real
//! loopback traffic where this process may open tracepoints for every task.
use super::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};

const COPY: &str = include_str!("../sys/tracefs_fixtures/skb_copy_datagram_iovec.format");
const KFREE: &str = include_str!("../sys/tracefs_fixtures/kfree_skb.format");
const XMIT: &str = include_str!("../sys/tracefs_fixtures/net_dev_xmit.format");

fn events() -> Events {
    let parse = |text| EventFormat::parse(text).unwrap();
    events_of(&parse(COPY), &parse(KFREE), &parse(XMIT)).unwrap()
}

/// A raw record of event `id` with `(offset, bytes)` written into it.
fn raw(id: u16, len: usize, fields: &[(usize, &[u8])]) -> Vec<u8> {
    let mut r = vec![0u8; len];
    r[0..2].copy_from_slice(&id.to_ne_bytes());
    for (at, bytes) in fields {
        r[*at..*at + bytes.len()].copy_from_slice(bytes);
    }
    r
}

fn hit(pid: u32, raw: &[u8]) -> RingRecord<'_> {
    RingRecord::Hit { pid, tid: pid, raw }
}

#[test]
fn each_record_is_told_apart_by_its_type_and_read_by_its_format() {
    let ev = events();
    let mut tally = Tally::default();
    let copy = |n: i32| raw(2308, 20, &[(16, &n.to_ne_bytes())]);
    tally.add(&ev, hit(10, &copy(1000)));
    tally.add(&ev, hit(10, &copy(24)));
    tally.add(&ev, hit(11, &copy(5)));
    let drop = |code: u32| raw(2310, 40, &[(36, &code.to_ne_bytes())]);
    for code in [3, 3, 13, 500] {
        tally.add(&ev, hit(1, &drop(code)));
    }
    let name_at = ((3u32 << 16) | 28).to_ne_bytes();
    let xmit = |len: u32, rc: i32| {
        let mut r = raw(
            2306,
            28,
            &[
                (16, &len.to_ne_bytes()),
                (20, &rc.to_ne_bytes()),
                (24, &name_at),
            ],
        );
        r.extend_from_slice(b"lo\0\0");
        r
    };
    tally.add(&ev, hit(1, &xmit(1500, 0)));
    tally.add(&ev, hit(1, &xmit(66, 0)));
    tally.add(&ev, hit(1, &xmit(9000, 0x10)));
    tally.add(&ev, RingRecord::Lost(7));
    // A record of another event is not counted anywhere.
    tally.add(&ev, hit(10, &raw(1, 20, &[(16, &99i32.to_ne_bytes())])));
    let counts = tally.into_counts(&ev.drop.2, vec![0, 1], "here".into());
    assert_eq!(counts.copied_by(&[10]), (1024, 2));
    assert_eq!(counts.copied_by(&[10, 11]), (1029, 3));
    assert_eq!(counts.copied_by_others(&[10]), 5);
    let drops: Vec<(&str, u64)> = counts
        .drops
        .iter()
        .map(|d| (d.reason.as_str(), d.packets))
        .collect();
    assert_eq!(drops, [("NO_SOCKET", 2), ("OTHERHOST", 1), ("500", 1)]);
    let lo = &counts.transmit[0];
    assert_eq!(
        (lo.device.as_str(), lo.bytes, lo.packets, lo.refused),
        ("lo", 1566, 2, 1)
    );
    assert_eq!(counts.lost, 7);
}

fn online_cpus() -> Vec<usize> {
    (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
}

/// Starts a counter, or says why this machine cannot run the test.
fn started() -> Option<CopyCounter> {
    match CopyCounter::start(&online_cpus()) {
        Ok(c) => Some(c),
        Err(reason) => {
            crate::skip_test(None, reason);
            None
        }
    }
}

#[test]
fn bytes_read_from_a_loopback_socket_are_counted_to_this_process_exactly() {
    let _turn = crate::sys::tracefs::TRACEFS_TURN
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let Some(counter) = started() else { return };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = listener.local_addr().unwrap();
    const SENT: usize = 3_000_000;
    let writer = std::thread::spawn(move || {
        let mut s = TcpStream::connect(at).unwrap();
        s.write_all(&vec![7u8; SENT]).unwrap();
    });
    let (mut conn, _) = listener.accept().unwrap();
    let mut got = Vec::new();
    conn.read_to_end(&mut got).unwrap();
    writer.join().unwrap();
    let counts = counter.stop().unwrap();
    assert_eq!(got.len(), SENT);
    let me = std::process::id();
    assert_eq!(counts.copied_by(&[me]).0, SENT as u64, "{counts:?}");
    let lo = counts.transmit.iter().find(|d| d.device == "lo").unwrap();
    assert!(
        lo.bytes > SENT as u64,
        "headers ride on every packet: {lo:?}"
    );
    assert_eq!(counts.lost, 0);
}

#[test]
fn datagrams_to_a_closed_port_are_dropped_for_want_of_a_socket() {
    let _turn = crate::sys::tracefs::TRACEFS_TURN
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    // A port bound and released at once: nothing listens there now.
    let closed = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let Some(counter) = started() else { return };
    let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
    for _ in 0..50 {
        // ECONNREFUSED from the previous datagram's ICMP error is expected; send again.
        let _ = sender.send_to(&[1u8; 100], closed);
    }
    let counts = counter.stop().unwrap();
    let no_socket = counts.drops.iter().find(|d| d.reason == "NO_SOCKET");
    assert!(
        no_socket.is_some_and(|d| d.packets >= 50),
        "{:?}",
        counts.drops
    );
    assert_eq!(counts.copied_by(&[std::process::id()]).0, 0);
}

#[test]
fn rings_share_their_memory_among_the_cpus_within_bounds() {
    assert_eq!(ring_bytes(2), 16 << 20, "a small machine: the largest ring");
    assert_eq!(ring_bytes(16), 4 << 20);
    assert_eq!(ring_bytes(24), 2 << 20, "rounded down to a power of two");
    assert_eq!(ring_bytes(4096), 256 << 10, "never below the least");
    assert_eq!(ring_bytes(0), 16 << 20);
}
