//! One timed transfer: a server thread sends the file with one mechanism, a client thread
//! receives it with recv(2) into a 256 KiB buffer (hashing it with xxh3 when --verify), over a
//! flow from the transport seam (`FlowConnector`: loopback TCP today; namespaces and remote
//! hosts plug in there). Time runs from just before the server's first system call of the
//! transfer to the moment the client holds the last byte; each side's RUSAGE_THREAD usage and
//! perf counters cover its own part of the transfer.
use super::mechanisms::FileMechanism;
use super::server::FileServer;
use super::test_files::ServedFile;
use crate::config::FlowPlacement;
use crate::error::Error;
use crate::measure::counters::{CounterSelection, ThreadCounters};
use crate::measure::profile::{self, Profile, RunningProfile, SamplerSettings};
use crate::record::wire::{FileRequest, Residency, SideUsage};
use crate::sys::{affinity, usage};
use crate::transport::{Endpoint, FlowConnector, SocketOptions};
use std::fs::File;
use std::io;
use std::sync::Barrier;
use std::time::{Duration, Instant};
use xxhash_rust::xxh3::Xxh3;

/// How long a remote file's data connection may stay silent before the transfer fails (a
/// server host gone without a reset would otherwise hold the receive forever); the remote
/// client sets it as the connection's read timeout.
pub const FILE_DATA_IDLE: Duration = Duration::from_secs(10);

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
    /// With --remote, what the server's mincore saw before the transfer (the cache is the
    /// server's there); `None` here, where the caller prepared and measured it.
    pub residency: Option<Residency>,
}

/// What the sending side measured (a local server thread, or `bytepath server`'s session).
pub(crate) struct ServerSide {
    first_byte: Instant,
    pub(crate) syscalls: u64,
    pub(crate) usage: SideUsage,
}

struct ClientSide {
    last_byte: Instant,
    received: u64,
    syscalls: u64,
    hash: Option<u64>,
    usage: SideUsage,
}

/// How one transfer is set up: where its two sides run and what they count.
#[derive(Clone, Copy)]
pub struct Setup<'a> {
    pub connector: &'a dyn FlowConnector,
    pub placement: FlowPlacement,
    pub chunk: usize,
    pub counters: CounterSelection,
    /// `--profile`'s transfer: the file sent this many times over the one connection, both
    /// threads sampled (`None`: a measured transfer, sent once, nothing sampled).
    pub profiled: Option<u32>,
}

/// Measures one transfer of `served` with `mechanism`: the flow's sending end is the server.
pub fn transfer(
    served: &ServedFile,
    mechanism: FileMechanism,
    setup: Setup<'_>,
) -> io::Result<Measured> {
    let flow = one_flow(setup.connector)?;
    let file = File::open(&served.path)?;
    let sender = mechanism.sender(setup.chunk)?;
    let start = Barrier::new(2);
    let (len, verify) = (served.len, served.hash.is_some());
    let (placement, counters) = (setup.placement, setup.counters);
    let plan = Plan {
        repeats: setup.profiled.unwrap_or(1),
        sampled: setup.profiled.is_some(),
    };
    let (server, client) = std::thread::scope(|scope| {
        let server = scope.spawn(|| {
            let pinned = pin(placement.sender_cpu);
            serve(flow.sender, sender, (&file, len), counters, &start, plan)
                .and_then(|s| pinned.map(|()| s))
        });
        let client = scope.spawn(|| {
            // Both threads reach the barrier whatever happens, or the other would wait forever.
            let pinned = pin(placement.receiver_cpu);
            let total = len * u64::from(plan.repeats);
            let received = receive(
                &flow.receiver,
                total,
                verify,
                counters,
                &start,
                plan.sampled,
            );
            pinned.and(received)
        });
        let joined = |what| move |_| io::Error::other(format!("the {what} thread panicked"));
        (
            server.join().map_err(joined("server")),
            client.join().map_err(joined("client")),
        )
    });
    let (server, client) = (server??, client??);
    if client.received != len * u64::from(plan.repeats) {
        return Err(io::Error::other(format!(
            "the client received {} of {len} B",
            client.received
        )));
    }
    Ok(measured(served, server, client))
}

/// The one flow a transfer runs on.
fn one_flow(connector: &dyn FlowConnector) -> io::Result<crate::transport::FlowEnds> {
    connector
        .connect(1, SocketOptions::default())?
        .pop()
        .ok_or_else(|| io::Error::other("the transport opened no flow"))
}

/// A transfer's figures: from the server's first system call to the client's last byte.
fn measured(served: &ServedFile, server: ServerSide, client: ClientSide) -> Measured {
    Measured {
        elapsed: client
            .last_byte
            .saturating_duration_since(server.first_byte),
        bytes_received: client.received,
        server_syscalls: server.syscalls,
        client_syscalls: client.syscalls,
        server: server.usage,
        client: client.usage,
        verified: served.hash.map(|h| client.hash == Some(h)),
        residency: None,
    }
}

/// Measures one transfer whose server side is `bytepath server` (`file --remote`): the server
/// writes the file and prepares its cache, this host receives on one data connection with the
/// same receive loop as a local client (on a thread pinned where that client would be). Time
/// runs on this host's clock from just before it sends `FileGo` to its last byte, so it
/// includes one network round trip (the go out, the first byte back). A refusal is `Err`
/// (`Error::Config`: the request cannot succeed); any other failure is `Err(Error::Failed)`.
pub fn transfer_remote(
    files: &dyn FileServer,
    request: &FileRequest,
    rep: u32,
    placement: FlowPlacement,
    counters: CounterSelection,
) -> Result<Measured, Error> {
    let (mut session, data) = files.open(request)?;
    let endpoint = Endpoint::socket(data);
    let (len, verify) = (request.size, request.verify);
    let received = std::thread::scope(|scope| {
        let client = scope.spawn(|| -> Result<(Instant, ClientSide), Error> {
            pin(placement.receiver_cpu).map_err(Error::Setup)?;
            let go = session.go(rep)?;
            let client = receive(&endpoint, len, verify, counters, &Barrier::new(1), false)
                .map_err(|e| match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Error::Failed(format!(
                        "receiving the file: nothing arrived for {} s",
                        FILE_DATA_IDLE.as_secs()
                    )),
                    _ => Error::Failed(format!("receiving the file: {e}")),
                })?;
            Ok((go, client))
        });
        client
            .join()
            .map_err(|_| Error::Failed("the client thread panicked".into()))
    });
    drop(endpoint);
    let (go, client) = received??;
    let expected = session.hash();
    let sent = session.sent()?;
    if let Some(e) = sent.error {
        return Err(Error::Failed(e));
    }
    if client.received != len {
        return Err(Error::Failed(format!(
            "the client received {} of {len} B",
            client.received
        )));
    }
    let missing = || Error::Failed("the server reported no usage for a sent file".into());
    Ok(Measured {
        elapsed: client.last_byte.saturating_duration_since(go),
        bytes_received: client.received,
        server_syscalls: sent.syscalls.ok_or_else(missing)?,
        client_syscalls: client.syscalls,
        server: sent.server.ok_or_else(missing)?,
        client: client.usage,
        verified: verify.then(|| expected.is_some() && client.hash == expected),
        residency: Some(sent.residency),
    })
}

fn pin(cpu: Option<usize>) -> io::Result<()> {
    cpu.map_or(Ok(()), affinity::pin_current_thread)
}

/// How many times the file goes over the connection, and whether the threads are sampled.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) repeats: u32,
    pub(crate) sampled: bool,
}

impl Plan {
    /// A measured transfer: the file once, nothing sampled.
    pub(crate) const ONCE: Plan = Plan {
        repeats: 1,
        sampled: false,
    };
}

/// The server thread: sends the file (`plan.repeats` times, from its start each time), then
/// closes its end, so a client that got too little sees EOF instead of waiting forever.
pub(crate) fn serve(
    endpoint: Endpoint,
    mut sender: Box<dyn super::mechanisms::FileSender + Send>,
    (file, len): (&File, u64),
    counters: CounterSelection,
    start: &Barrier,
    plan: Plan,
) -> io::Result<ServerSide> {
    let mut measure = Side::open(counters);
    start.wait();
    let socket = endpoint.socket_fd().ok_or_else(|| {
        io::Error::other("file mechanisms need a socket to send into (sendfile, splice)")
    })?;
    let sampling = plan.sampled.then(sample_this_thread);
    measure.begin();
    let first_byte = Instant::now();
    let mut syscalls = 0;
    for i in 0..plan.repeats {
        if i > 0 {
            io::Seek::seek(&mut &*file, io::SeekFrom::Start(0))?;
        }
        syscalls += sender.send_file(file, len, socket)?;
    }
    let mut usage = measure.end();
    usage.profile = sampling.map(finish_sampling);
    drop(endpoint);
    Ok(ServerSide {
        first_byte,
        syscalls,
        usage,
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

/// Starts sampling the calling thread (`--profile`'s transfer), or says why it cannot.
fn sample_this_thread() -> Result<RunningProfile, String> {
    let tid = profile::current_thread_id();
    profile::start(&[tid], &SamplerSettings::default()).map_err(|u| u.reason)
}

fn finish_sampling(sampling: Result<RunningProfile, String>) -> Profile {
    match sampling {
        Ok(running) => running.stop(),
        Err(reason) => Profile::Unavailable { reason },
    }
}

fn receive(
    endpoint: &Endpoint,
    len: u64,
    verify: bool,
    counters: CounterSelection,
    start: &Barrier,
    sampled: bool,
) -> io::Result<ClientSide> {
    let mut buffer = vec![0u8; RECV_BUFFER];
    let mut hasher = Xxh3::new();
    let mut measure = Side::open(counters);
    let (mut received, mut syscalls) = (0u64, 0u64);
    start.wait();
    let sampling = sampled.then(sample_this_thread);
    measure.begin();
    let mut last_byte = Instant::now();
    while received < len {
        let want = RECV_BUFFER.min((len - received) as usize);
        let n = endpoint.read(&mut buffer[..want], false)?;
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
    let mut usage = measure.end();
    usage.profile = sampling.map(finish_sampling);
    Ok(ClientSide {
        last_byte,
        received,
        syscalls,
        hash: verify.then(|| hasher.digest()),
        usage,
    })
}
