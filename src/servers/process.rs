//! The server in a process of its own (fork(2)), so that what it costs is measured on it
//! alone: CPU time and context switches from getrusage(2) RUSAGE_SELF and from perf counters
//! opened with `inherit` before its threads start (perf_event_open(2)), peak RSS from VmHWM in
//! /proc/self/status (proc(5)). A server that falls over is seen by its parent as a process
//! that ended, and reported for that point; the next point forks a fresh one.
//!
//! The parent drives it through a pipe: one byte to start the measured window, one to end it;
//! the child answers with one JSON line and exits.
use super::door::Door;
use super::model::ServerModel;
use super::ServerStats;
use crate::measure::counters::{CounterSelection, ThreadCounters};
use crate::record::wire::ServerReport;
use crate::sys::process::{self, ChildProcess, Forked};
use crate::sys::{fdio, usage};
use std::io;
use std::net::TcpListener;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

const START: u8 = b'S';
const END: u8 = b'E';

/// What a point needs of its server, wherever it runs: this host's forked `ServerProcess`, or
/// one forked by `bytepath server` on another host (`remote::client::RemoteServer`). One
/// point loop drives either.
pub trait ServerSide {
    /// Starts the measured window.
    fn start_window(&mut self) -> io::Result<()>;
    /// Ends the window and collects the report; the server keeps serving until `close`.
    fn end_window(&mut self, deadline: Duration) -> Result<ServerReport, String>;
    /// Why the server has ended before `close`, if it has.
    fn ended(&mut self) -> Option<String>;
    /// Ends the server (its clients are gone by now).
    fn close(self: Box<Self>);
    /// The server's process id when it runs on this host (`--profile` samples it there).
    fn local_pid(&self) -> Option<u32> {
        None
    }
}

impl ServerSide for ServerProcess {
    fn start_window(&mut self) -> io::Result<()> {
        ServerProcess::start_window(self)
    }
    fn end_window(&mut self, deadline: Duration) -> Result<ServerReport, String> {
        ServerProcess::end_window(self, deadline)
    }
    fn ended(&mut self) -> Option<String> {
        ServerProcess::ended(self)
    }
    fn close(self: Box<Self>) {
        ServerProcess::close(*self)
    }
    fn local_pid(&self) -> Option<u32> {
        Some(self.child.id())
    }
}

/// A running server process and its two pipe ends.
pub struct ServerProcess {
    child: ChildProcess,
    control: OwnedFd,
    answers: OwnedFd,
}

/// What server to start in the child, and where.
#[derive(Clone, Copy)]
pub struct ServerSetup<'a> {
    pub model: ServerModel,
    /// Request (and echo) size.
    pub size: usize,
    pub threads: usize,
    /// CPUs every server thread may use; `None`: any.
    pub cpus: Option<&'a [usize]>,
    /// Who the server lets in: anyone on one host; only the driver for a remote point.
    pub door: Door,
}

/// Forks the server: the child starts the model on `listener` and waits for the window.
pub fn spawn(setup: ServerSetup<'_>, listener: TcpListener) -> io::Result<ServerProcess> {
    let (control_read, control_write) = fdio::pipe()?;
    let (answer_read, answer_write) = fdio::pipe()?;
    let parent = std::process::id();
    match process::fork()? {
        Forked::Child => {
            drop(control_write);
            drop(answer_read);
            // Only what the server needs stays open: no other session's socket, no file.
            let keep = [
                listener.as_raw_fd(),
                control_read.as_raw_fd(),
                answer_write.as_raw_fd(),
            ];
            if process::close_other_descriptors(&keep).is_err() {
                process::exit_now(1);
            }
            let code = match child_main(parent, setup, listener, &control_read, &answer_write) {
                Ok(()) => 0,
                Err(_) => 1,
            };
            process::exit_now(code)
        }
        Forked::Parent(child) => Ok(ServerProcess {
            child,
            control: control_write,
            answers: answer_read,
        }),
    }
}

fn status_field(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn read_byte(fd: &OwnedFd) -> io::Result<Option<u8>> {
    let mut b = [0u8; 1];
    loop {
        match fdio::read(fd.as_fd(), &mut b) {
            Ok(0) => return Ok(None),
            Ok(_) => return Ok(Some(b[0])),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn write_all(fd: &OwnedFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        let n = fdio::write(fd.as_fd(), bytes)?;
        bytes = &bytes[n..];
    }
    Ok(())
}

/// The child: never prints, leaves through `exit_now` (see `sys::process`).
fn child_main(
    parent: u32,
    setup: ServerSetup<'_>,
    listener: TcpListener,
    control: &OwnedFd,
    answers: &OwnedFd,
) -> io::Result<()> {
    let ServerSetup {
        model,
        size,
        threads,
        cpus,
        door,
    } = setup;
    process::prepare_child(parent)?;
    // Before any server thread exists: they all inherit the placement.
    if let Some(cpus) = cpus {
        crate::sys::affinity::pin_current_thread_to(cpus)?;
    }
    let rss_at_fork_bytes = status_field("VmRSS:");
    // Opened before any server thread exists, so `inherit` covers them all.
    let mut counters = ThreadCounters::open_inherited(CounterSelection::All);
    let stats = Arc::new(ServerStats::default());
    if let Err(e) = model.start(listener, (size, threads), door, &stats) {
        stats.error(format!("the {} server did not start: {e}", model.name()));
    }
    if read_byte(control)? != Some(START) {
        return Ok(());
    }
    let before = usage::process_usage()?;
    counters.start();
    let _ = read_byte(control)?;
    let sample = counters.stop();
    let used = usage::process_usage()?.since(&before);
    let report = ServerReport {
        counters: sample,
        cpu_time_ns: (used.user + used.system).as_nanos() as u64,
        voluntary_switches: used.voluntary_switches,
        involuntary_switches: used.involuntary_switches,
        threads: stats.peak_threads(),
        peak_rss_bytes: status_field("VmHWM:"),
        rss_at_fork_bytes,
        accepted: stats.accepted_count(),
        allowed_cpus: crate::sys::affinity::allowed_cpus()?,
        errors: stats.errors(),
    };
    let line = serde_json::to_string(&report).map_err(io::Error::other)? + "\n";
    write_all(answers, line.as_bytes())?;
    // Keep serving until the parent has stopped its clients and closes the pipe: a server
    // that vanished at the end of the window would reset connections still in use.
    while read_byte(control)?.is_some() {}
    Ok(())
}

impl ServerProcess {
    pub fn start_window(&mut self) -> io::Result<()> {
        write_all(&self.control, &[START])
    }

    /// Ends the window and collects the report; a server that died says how. The server
    /// keeps serving until `close`.
    pub fn end_window(&mut self, deadline: Duration) -> Result<ServerReport, String> {
        let _ = write_all(&self.control, &[END]);
        let until = Instant::now() + deadline;
        let mut text = Vec::new();
        let mut buf = [0u8; 4096];
        // The answer is one line; EOF before its end means the server died.
        let _ = fdio::set_nonblocking(self.answers.as_fd());
        loop {
            match fdio::read(self.answers.as_fd(), &mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    text.extend_from_slice(&buf[..n]);
                    if text.ends_with(b"\n") {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if Instant::now() >= until {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("reading the server's report: {e}")),
            }
        }
        let status = self
            .child
            .wait_until(Instant::now() + Duration::from_secs(2));
        if let Ok(report) = serde_json::from_slice::<ServerReport>(&text) {
            return Ok(report);
        }
        self.child.kill();
        Err(match status {
            Ok(Some(s)) => format!("the server process ended before reporting ({s})"),
            _ => "the server process did not report in time and was killed".to_string(),
        })
    }

    /// Closes the control pipe: the server process exits; waits for it.
    pub fn close(self) {
        let ServerProcess {
            mut child, control, ..
        } = self;
        drop(control);
        if child
            .wait_until(Instant::now() + Duration::from_secs(5))
            .ok()
            .flatten()
            .is_none()
        {
            child.kill();
        }
    }

    /// Whether the server process has ended (it should run until `finish`).
    pub fn ended(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(s)) => Some(format!("the server process ended during the run ({s})")),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// What /proc/PID/fd says each open descriptor of `pid` is.
    fn open_descriptors(pid: u32) -> Vec<(i32, String)> {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let fd = e.file_name().to_str()?.parse().ok()?;
                let to = std::fs::read_link(e.path()).ok()?;
                Some((fd, to.to_string_lossy().into_owned()))
            })
            .collect()
    }

    #[test]
    fn a_forked_server_holds_only_its_listener_and_pipes_of_what_was_open() {
        // Open here at the fork: another session's socket and a file the server must not hold.
        let other_session = TcpListener::bind("127.0.0.1:0").unwrap();
        let file = tempfile::NamedTempFile::new().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let parent_had = open_descriptors(std::process::id());
        let setup = ServerSetup {
            model: ServerModel::Iterative,
            size: 8,
            threads: 1,
            cpus: None,
            door: Door::ANYONE,
        };
        let server = spawn(setup, listener).unwrap();
        // One echo: the child is past its set-up (the closing comes first).
        let mut client = std::net::TcpStream::connect(address).unwrap();
        client.write_all(b"12345678").unwrap();
        let mut echo = [0u8; 8];
        client.read_exact(&mut echo).unwrap();
        assert_eq!(&echo, b"12345678");
        let child_has = open_descriptors(server.child.id());
        let named = |fd: i32| parent_had.iter().find(|(f, _)| *f == fd).map(|(_, to)| to);
        let other = named(other_session.as_raw_fd()).unwrap();
        let file_fd = named(file.as_file().as_raw_fd()).unwrap();
        assert!(
            !child_has.iter().any(|(_, to)| to == other || to == file_fd),
            "the child holds {other} or {file_fd}: {child_has:?}"
        );
        // Inherited and kept: stdio, the listener and the two pipe ends; the rest is the
        // server's own (its accepted connection, counters, epoll).
        let inherited = child_has
            .iter()
            .filter(|(fd, to)| named(*fd) == Some(to) && *fd > 2)
            .count();
        assert!(
            inherited <= 3,
            "inherited beyond the three kept: {child_has:?}"
        );
        server.close();
    }

    /// What a client of `address` gets back for one 8-byte request: the echo, or nothing
    /// (refused, reset or closed).
    fn one_request(address: std::net::SocketAddr) -> Option<[u8; 8]> {
        let mut client = std::net::TcpStream::connect(address).ok()?;
        client
            .set_read_timeout(Some(Duration::from_secs(3)))
            .unwrap();
        client.write_all(b"12345678").ok()?;
        let mut echo = [0u8; 8];
        client.read_exact(&mut echo).ok().map(|()| echo)
    }

    fn spawned(model: ServerModel, door: Door) -> (ServerProcess, std::net::SocketAddr) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let setup = ServerSetup {
            model,
            size: 8,
            threads: 1,
            cpus: None,
            door,
        };
        (spawn(setup, listener).unwrap(), address)
    }

    fn models() -> Vec<ServerModel> {
        let uring = crate::sys::echo_ring::supported().is_ok();
        if !uring {
            println!("uring skipped: io_uring is not available here");
        }
        ServerModel::ALL
            .into_iter()
            .filter(|m| *m != ServerModel::Uring || uring)
            .collect()
    }

    #[test]
    fn every_model_closes_a_connection_from_another_address_than_its_door_names() {
        for model in models() {
            // The driver is 127.0.0.2; this test connects from 127.0.0.1, a stranger.
            let door = Door::only("127.0.0.2".parse().unwrap(), None);
            let (server, address) = spawned(model, door);
            assert_eq!(one_request(address), None, "{}: echoed", model.name());
            server.close();
        }
    }

    #[test]
    fn every_model_stops_listening_once_its_door_count_is_in() {
        for model in models() {
            let door = Door {
                peer: None,
                most: Some(1),
            };
            let (mut server, address) = spawned(model, door);
            let first = std::net::TcpStream::connect(address).unwrap();
            (&first).write_all(b"12345678").unwrap();
            let mut echo = [0u8; 8];
            (&first).read_exact(&mut echo).unwrap();
            assert_eq!(&echo, b"12345678", "{}", model.name());
            assert_eq!(one_request(address), None, "{}: a second", model.name());
            server.start_window().unwrap();
            let report = server.end_window(Duration::from_secs(5)).unwrap();
            assert_eq!(report.accepted, 1, "{}", model.name());
            assert!(
                report.errors.is_empty(),
                "{}: {:?}",
                model.name(),
                report.errors
            );
            drop(first);
            server.close();
        }
    }
}
