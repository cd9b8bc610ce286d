//! udp flows across hosts. The server binds one UDP socket per flow and names their ports in
//! `Accepted`; the client's socket for each flow sends its tag (cookie + flow index) as one
//! "hello" datagram to that port and repeats it every `HELLO_REPEAT` until the server echoes it
//! (UDP may lose either). The server connects each socket to the address its hello came from, so
//! no stray can join or feed a flow afterwards. The client then says `Joined`, and the server
//! clears the repeated hellos from its sockets, so the engine's datagram numbering and
//! accounting run exactly as over loopback. Only a repeat that the network delays by more than a
//! whole control round trip (it must arrive after `Joined`) could still be read as one datagram.
use super::protocol::{self, ErrorCode, FrameError, Message, DATA_TAG_BYTES};
use super::session::{out_of_order, refuse, Refusal};
use super::{data_tag, tag_flow};
use crate::remote::channel::ControlStream;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// How long the client waits for a hello's echo before sending it again.
pub const HELLO_REPEAT: Duration = Duration::from_millis(50);
/// How often either side looks at its sockets while flows are joining.
const JOIN_POLL: Duration = Duration::from_millis(1);

/// A datagram that can only be a stray: every hello and its echo is exactly a tag long.
fn is_tag(n: usize) -> bool {
    n == DATA_TAG_BYTES
}

/// Client: one connected UDP socket per flow, each joined to the server's port for that flow.
/// Fails when some flow's hello is not echoed within `patience`.
pub fn join_at_client(
    server: SocketAddr,
    ports: &[u16],
    cookie: &[u8],
    patience: Duration,
) -> io::Result<Vec<UdpSocket>> {
    let unspecified: SocketAddr = match server {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let sockets = ports
        .iter()
        .map(|&port| {
            let s = UdpSocket::bind(unspecified)?;
            s.connect(SocketAddr::new(server.ip(), port))?;
            s.set_nonblocking(true)?;
            Ok(s)
        })
        .collect::<io::Result<Vec<_>>>()?;
    let mut echoed = vec![false; sockets.len()];
    let deadline = Instant::now() + patience;
    let mut buf = [0u8; 64];
    while echoed.iter().any(|e| !e) {
        if Instant::now() > deadline {
            let missing = echoed.iter().filter(|e| !**e).count();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{missing} of {} udp flows got no answer to their hello within {} ms",
                    sockets.len(),
                    patience.as_millis()
                ),
            ));
        }
        for (flow, s) in sockets.iter().enumerate().filter(|(f, _)| !echoed[*f]) {
            // A refused or lost hello is sent again at the next round; nothing to report yet.
            let _ = s.send(&data_tag(cookie, flow));
        }
        let resend_at = Instant::now() + HELLO_REPEAT;
        while Instant::now() < resend_at && echoed.iter().any(|e| !e) {
            for (flow, s) in sockets.iter().enumerate() {
                while let Ok(n) = s.recv(&mut buf) {
                    if is_tag(n) && tag_flow(&buf[..n], cookie, sockets.len()) == Some(flow) {
                        echoed[flow] = true;
                    }
                }
            }
            std::thread::sleep(JOIN_POLL);
        }
    }
    for s in &sockets {
        s.set_nonblocking(false)?;
    }
    Ok(sockets)
}

/// Server: waits until every flow's socket has a hello with the session's cookie and its own
/// flow index, connects it to the hello's sender and echoes every such hello (repeats too, as
/// an echo may be lost), until the client says `Joined`; then clears what is queued, so the
/// repeats are never read as data. Datagrams without the cookie, or from any address but the
/// control connection's peer, are dropped: a stray (or a spoofed source) cannot join, so no
/// flow can be aimed at a third address. The first stray is logged, the rest counted.
pub(super) fn join_at_server(
    control: &mut ControlStream,
    sockets: Vec<UdpSocket>,
    cookie: &[u8],
    timeout: Duration,
) -> Result<Vec<UdpSocket>, Refusal> {
    let failed = |e: io::Error| refuse(ErrorCode::Failed, format!("udp data port: {e}"));
    let peer = control.peer_addr().map_err(failed)?.ip().to_canonical();
    let mut strays = 0u64;
    for s in &sockets {
        s.set_nonblocking(true).map_err(failed)?;
    }
    let threads = sockets.len();
    let mut joined = vec![false; threads];
    let deadline = Instant::now() + timeout;
    control.set_read_timeout(Some(JOIN_POLL)).map_err(failed)?;
    loop {
        answer_hellos(&sockets, &mut joined, (peer, cookie), &mut strays).map_err(failed)?;
        let count = joined.iter().filter(|j| **j).count();
        if count == threads {
            match protocol::read_message(control) {
                Ok(Message::Joined) => break,
                Ok(other) => return Err(out_of_order("joined", &other)),
                Err(FrameError::Idle) => {}
                Err(e) => return Err(e.into()),
            }
        } else {
            std::thread::sleep(JOIN_POLL);
        }
        if Instant::now() > deadline {
            return Err(refuse(
                ErrorCode::Timeout,
                format!(
                    "{count} of {threads} udp flows joined within {} ms",
                    timeout.as_millis()
                ),
            ));
        }
    }
    if strays > 1 {
        eprintln!("bytepath server: dropped {strays} stray udp datagrams in all");
    }
    control.set_read_timeout(Some(timeout)).map_err(failed)?;
    let mut buf = [0u8; 64];
    for s in &sockets {
        // Connected now: only the client's repeated hellos can be queued.
        while s.recv(&mut buf).is_ok() {}
        s.set_nonblocking(false).map_err(failed)?;
    }
    Ok(sockets)
}

/// One round over the flows' sockets: each hello from `peer` with `cookie` and the socket's
/// own flow index joins that socket to its sender (the first time) and is echoed; anything
/// else is a stray, counted (the first logged).
fn answer_hellos(
    sockets: &[UdpSocket],
    joined: &mut [bool],
    (peer, cookie): (IpAddr, &[u8]),
    strays: &mut u64,
) -> io::Result<()> {
    let mut buf = [0u8; 64];
    for (flow, s) in sockets.iter().enumerate() {
        while let Ok((n, from)) = s.recv_from(&mut buf) {
            let tagged = is_tag(n) && tag_flow(&buf[..n], cookie, sockets.len()) == Some(flow);
            if !tagged || from.ip().to_canonical() != peer {
                *strays += 1;
                if *strays == 1 {
                    eprintln!("bytepath server: dropped a stray udp datagram from {from}");
                }
                continue;
            }
            if !joined[flow] {
                s.connect(from)?;
                joined[flow] = true;
            }
            let _ = s.send(&buf[..n]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn a_stray_cannot_join_and_no_hello_is_left_to_be_read_as_data() {
        let cookie = [7u8; 16];
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let mut client_control =
            std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let mut server_control = ControlStream::plain(listener.accept().unwrap().0);
        let sockets: Vec<UdpSocket> = (0..2)
            .map(|_| UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap())
            .collect();
        let ports: Vec<u16> = sockets
            .iter()
            .map(|s| s.local_addr().unwrap().port())
            .collect();
        // Before the client: a wrong cookie, and the right cookie claiming another flow.
        let stray = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let to = |p: u16| SocketAddr::from((Ipv4Addr::LOCALHOST, p));
        stray
            .send_to(&data_tag(&[9u8; 16], 0), to(ports[0]))
            .unwrap();
        stray.send_to(&data_tag(&cookie, 0), to(ports[1])).unwrap();
        let server = std::thread::spawn(move || {
            join_at_server(
                &mut server_control,
                sockets,
                &cookie,
                Duration::from_secs(5),
            )
            .map_err(|r| r.message)
        });
        let server_addr = to(0);
        let client = join_at_client(server_addr, &ports, &cookie, Duration::from_secs(5)).unwrap();
        // Hellos repeated after their echo are still in the server's queue until `Joined`.
        for (flow, s) in client.iter().enumerate() {
            s.send(&data_tag(&cookie, flow)).unwrap();
        }
        protocol::write_message(&mut client_control, &Message::Joined).unwrap();
        let joined = server.join().unwrap().unwrap();
        for (c, s) in client.iter().zip(&joined) {
            assert_eq!(s.peer_addr().unwrap(), c.local_addr().unwrap());
            c.send(b"data").unwrap();
            let mut buf = [0u8; 64];
            let n = s.recv(&mut buf).unwrap();
            assert_eq!(
                &buf[..n],
                b"data",
                "the first datagram read is data, not a hello"
            );
        }
        // The stray, never joined, reaches neither socket.
        stray.send_to(b"stray", to(ports[0])).unwrap();
        joined[0]
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        assert!(joined[0].recv(&mut [0u8; 64]).is_err());
    }

    #[test]
    fn a_valid_tag_from_another_address_than_the_control_peer_does_not_join() {
        let cookie = [7u8; 16];
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let _client_control = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let mut server_control = ControlStream::plain(listener.accept().unwrap().0);
        let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = socket.local_addr().unwrap().port();
        // The control peer is 127.0.0.1; this sender, with the right cookie, is 127.0.0.2 (a
        // spoofed source seen from the server): it is never connected to, so never echoed.
        // tests/remote_netns.rs sends the same from another network namespace's address.
        let spoofed = UdpSocket::bind((Ipv4Addr::new(127, 0, 0, 2), 0)).unwrap();
        let server = std::thread::spawn(move || {
            join_at_server(
                &mut server_control,
                vec![socket],
                &cookie,
                Duration::from_millis(600),
            )
            .map_err(|r| r.message)
        });
        spoofed
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        for _ in 0..5 {
            spoofed
                .send_to(&data_tag(&cookie, 0), (Ipv4Addr::LOCALHOST, port))
                .unwrap();
            assert!(
                spoofed.recv(&mut [0u8; 64]).is_err(),
                "echoed to a stranger"
            );
        }
        let refused = server.join().unwrap().unwrap_err();
        assert!(refused.contains("0 of 1 udp flows joined"), "{refused}");
    }
}
