//! For bench/hostile.sh: an authenticated client that asks a server for peer runs toward an
//! address that is no bytepath server (a closed port), N times over T threads, and counts how
//! the server answered: a record whose error is the fixed sentence (no detail: no oracle of
//! the port), `busy` (another run held the server), or anything else (the first printed).
//! Usage: hostile_peer SERVER TOKEN_FILE PEER N THREADS
use bytepath::remote::client::raw::token_session;
use bytepath::remote::protocol::{self, Message, RunRequest};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

fn request() -> RunRequest {
    RunRequest::plain(("tcp", "send", "stream"), 4096, 100)
}

/// One peer run: "fixed", "busy", or what else came back.
fn one(server: &str, token: &[u8], peer: &str) -> Result<&'static str, String> {
    let (mut s, _) = token_session(server, token, Duration::from_secs(30))?;
    let run = Message::PeerRun {
        peer: peer.into(),
        src: "hostile".into(),
        dst: "closed".into(),
        request: request(),
    };
    protocol::write_message(&mut s, &run).map_err(|e| e.to_string())?;
    match protocol::read_message(&mut s).map_err(|e| e.to_string())? {
        Message::Busy { .. } => Ok("busy"),
        Message::PeerRecord { record } => {
            let errors = record["errors"].to_string();
            match errors.contains("did not answer a bytepath hello") && !errors.contains("os error")
            {
                true => Ok("fixed"),
                false => Err(format!("a record with {errors}")),
            }
        }
        other => Err(format!("a {} message", other.kind())),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, server, token_file, peer, n, threads] = &args[..] else {
        eprintln!("usage: hostile_peer SERVER TOKEN_FILE PEER N THREADS");
        std::process::exit(2);
    };
    let token = bytepath::remote::auth::read_token(token_file.as_ref()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let n: u64 = n.parse().expect("N is a count");
    let threads: u64 = threads.parse().expect("THREADS is a count");
    let counts: [AtomicU64; 3] = Default::default();
    let first_other = std::sync::Mutex::new(None);
    let next = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while next.fetch_add(1, Ordering::Relaxed) < n {
                    let slot = match one(server, &token, peer) {
                        Ok("fixed") => 0,
                        Ok(_) => 1,
                        Err(e) => {
                            first_other.lock().unwrap().get_or_insert(e);
                            2
                        }
                    };
                    counts[slot].fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let [fixed, busy, other] = counts.map(|c| c.into_inner());
    let first = first_other.into_inner().unwrap().unwrap_or_default();
    println!("{fixed} refused without detail, {busy} busy, {other} other {first}");
}
