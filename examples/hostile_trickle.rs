//! For bench/hostile/trickle_go.sh: a token holder that asks a server for a counted tcp
//! stream of 1 MiB in 64 KiB messages over `DURATION_MS`, joins its one flow, and then
//! trickles a record one byte every 100 ms instead of its `Go` (`go`) or, after `Go`, instead
//! of its `Stop` (`stop`), reading everything the flow brings. Prints what the flow received
//! and when the server ended the session, both from the request:
//! `received N bytes, flow ended after N ms, session ended after N ms`.
//! Usage: hostile_trickle SERVER TOKEN_FILE go|stop DURATION_MS
use bytepath::remote::channel::ControlStream;
use bytepath::remote::client::raw::token_session;
use bytepath::remote::protocol::{self, Message, RunRequest};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn fail(what: &str) -> ! {
    eprintln!("hostile_trickle: {what}");
    std::process::exit(1)
}

/// The run asked, its flow joined; returns the flow once `Ready` came.
fn joined(s: &mut ControlStream, host: &str, duration_ms: u64) -> TcpStream {
    let request = RunRequest {
        total_bytes: Some(1 << 20),
        ..RunRequest::plain(("tcp", "send", "stream"), 64 << 10, duration_ms)
    };
    protocol::write_message(s, &Message::Run { request }).unwrap_or_else(|e| fail(&e.to_string()));
    let Ok(Message::Accepted {
        data_port, cookie, ..
    }) = protocol::read_message(s)
    else {
        fail("the run was not accepted")
    };
    let cookie = protocol::from_hex(&cookie).unwrap_or_else(|| fail("a cookie not in hex"));
    let mut flow = TcpStream::connect((host, data_port)).unwrap_or_else(|e| fail(&e.to_string()));
    flow.write_all(&bytepath::remote::data_tag(&cookie, 0))
        .unwrap_or_else(|e| fail(&e.to_string()));
    if !matches!(protocol::read_message(s), Ok(Message::Ready)) {
        fail("no ready");
    }
    flow
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, server, token_file, mode, duration_ms] = &args[..] else {
        eprintln!("usage: hostile_trickle SERVER TOKEN_FILE go|stop DURATION_MS");
        std::process::exit(2);
    };
    let token = bytepath::remote::auth::read_token(token_file.as_ref()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let duration_ms: u64 = duration_ms.parse().unwrap_or_else(|_| fail("DURATION_MS"));
    let host = server.rsplit_once(':').map_or("127.0.0.1", |(h, _)| h);
    let (mut s, _) =
        token_session(server, &token, Duration::from_secs(30)).unwrap_or_else(|e| fail(&e));
    let asked = Instant::now();
    let mut flow = joined(&mut s, host, duration_ms);
    if mode == "stop" {
        protocol::write_message(&mut s, &Message::Go).unwrap_or_else(|e| fail(&e.to_string()));
    }
    let raw = TcpStream::try_clone(&s).unwrap_or_else(|e| fail(&e.to_string()));
    let trickling = std::thread::spawn(move || {
        let _ = (&raw).write_all(&[0, 64]);
        for _ in 0..300 {
            std::thread::sleep(Duration::from_millis(100));
            if (&raw).write_all(&[0]).is_err() {
                return;
            }
        }
    });
    let draining = std::thread::spawn(move || {
        let _ = flow.set_read_timeout(Some(Duration::from_secs(30)));
        let mut buf = vec![0u8; 1 << 16];
        let mut received = 0u64;
        while let Ok(n @ 1..) = flow.read(&mut buf) {
            received += n as u64;
        }
        (received, asked.elapsed())
    });
    let mut raw = TcpStream::try_clone(&s).unwrap_or_else(|e| fail(&e.to_string()));
    let _ = raw.set_read_timeout(Some(Duration::from_secs(30)));
    let _ = raw.read_to_end(&mut Vec::new());
    let session = asked.elapsed();
    let (received, flow_ended) = draining.join().unwrap_or((0, Duration::ZERO));
    let _ = trickling.join();
    println!(
        "received {received} bytes, flow ended after {} ms, session ended after {} ms",
        flow_ended.as_millis(),
        session.as_millis()
    );
}
