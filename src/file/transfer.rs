//! One timed transfer: a server thread sends the file with one mechanism, a client thread
//! receives it with recv(2) into a 256 KiB buffer (hashing it with xxh3 when --verify), over a
//! loopback TCP connection. Time runs from just before the server's first system call of the
//! transfer to the moment the client holds the last byte; each side's RUSAGE_THREAD usage and
//! perf counters cover its own part of the transfer.
use super::mechanisms::FileMechanism;
use super::record::SideUsage;
use super::test_files::ServedFile;
use crate::measure::counters::{CounterSelection, ThreadCounters};
use crate::sys::{socket, usage};
use std::fs::File;
use std::io;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use xxhash_rust::xxh3::Xxh3;

/// Bytes per recv(2) on the client.
pub const RECV_BUFFER: usize = 256 << 10;

/// What one transfer measured.
#[derive(Debug, Clone)]
pub struct Measured {
    pub elapsed: Duration,
    pub bytes_received: u64,
    pub server_syscalls: u64,
    pub client_syscalls: u64,
    pub server: SideUsage,
    pub client: SideUsage,
    /// The received bytes' hash equals the file's (None without --verify).
    pub verified: Option<bool>,
}

struct ServerSide {
    first_byte: Instant,
    syscalls: u64,
    usage: SideUsage,
}

struct ClientSide {
    last_byte: Instant,
    received: u64,
    syscalls: u64,
    hash: Option<u64>,
    usage: SideUsage,
}

/// Measures one transfer of `served` with `mechanism` in chunks of `chunk` bytes.
pub fn transfer(
    served: &ServedFile,
    mechanism: FileMechanism,
    chunk: usize,
    counters: CounterSelection,
) -> io::Result<Measured> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let client_stream = TcpStream::connect(listener.local_addr()?)?;
    let (server_stream, _) = listener.accept()?;
    let file = File::open(&served.path)?;
    let mut sender = mechanism.sender(chunk)?;
    let start = Arc::new(Barrier::new(2));
    let (len, verify) = (served.len, served.hash.is_some());
    let client = {
        let start = Arc::clone(&start);
        std::thread::spawn(move || receive(&client_stream, len, verify, counters, &start))
    };
    let mut measure = Side::open(counters);
    start.wait();
    measure.begin();
    let first_byte = Instant::now();
    let sent = sender.send_file(&file, len, server_stream.as_fd());
    let usage = measure.end();
    // Closing our end lets a client that got too little see EOF instead of waiting forever.
    drop(server_stream);
    let client = client
        .join()
        .map_err(|_| io::Error::other("the receiving thread panicked"))??;
    let server = ServerSide {
        first_byte,
        syscalls: sent?,
        usage,
    };
    if client.received != len {
        return Err(io::Error::other(format!(
            "the client received {} of {len} B",
            client.received
        )));
    }
    Ok(Measured {
        elapsed: client
            .last_byte
            .saturating_duration_since(server.first_byte),
        bytes_received: client.received,
        server_syscalls: server.syscalls,
        client_syscalls: client.syscalls,
        server: server.usage,
        client: client.usage,
        verified: served.hash.map(|h| client.hash == Some(h)),
    })
}

/// A thread's usage and counters around its part of the transfer.
struct Side {
    counters: ThreadCounters,
    before: usage::ThreadUsage,
}

impl Side {
    fn open(selection: CounterSelection) -> Side {
        Side {
            counters: ThreadCounters::open(selection),
            before: usage::ThreadUsage::default(),
        }
    }

    fn begin(&mut self) {
        self.before = usage::thread_usage().unwrap_or_default();
        self.counters.start();
    }

    fn end(&mut self) -> SideUsage {
        let counters = self.counters.stop();
        let after = usage::thread_usage().unwrap_or_default();
        SideUsage::new(after.since(&self.before), counters)
    }
}

fn receive(
    stream: &TcpStream,
    len: u64,
    verify: bool,
    counters: CounterSelection,
    start: &Barrier,
) -> io::Result<ClientSide> {
    let mut buffer = vec![0u8; RECV_BUFFER];
    let mut hasher = Xxh3::new();
    let mut measure = Side::open(counters);
    let (mut received, mut syscalls) = (0u64, 0u64);
    start.wait();
    measure.begin();
    let mut last_byte = Instant::now();
    while received < len {
        let want = RECV_BUFFER.min((len - received) as usize);
        let n = socket::recv(stream.as_fd(), &mut buffer[..want], 0)?;
        syscalls += 1;
        if n == 0 {
            break; // the server stopped early; the caller reports the shortfall
        }
        if verify {
            hasher.update(&buffer[..n]);
        }
        received += n as u64;
        last_byte = Instant::now();
    }
    let usage = measure.end();
    Ok(ClientSide {
        last_byte,
        received,
        syscalls,
        hash: verify.then(|| hasher.digest()),
        usage,
    })
}
