//! `--processes`: the two sides of every flow in two processes, as the seeds fork. After the
//! flows are connected and before any worker thread exists, the run forks once; the side the
//! statistics do not follow (stream sender, rr server) of every flow goes to the child, so the
//! controller, the slice board and the count stay in the parent. The schedule and the stop
//! flag are in shared memory (`Control`); the child raises the ready word once its workers are
//! set up, and sends its samples back as JSON through a pipe when they are done.
use super::control::Control;
use super::worker::{Job, Role, ThreadSample, Worker};
use crate::config::Pattern;
use crate::error::Error;
use crate::sys::fdio;
use crate::sys::process::{self, ChildProcess, Forked};
use crate::transport::Endpoint;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// How long the child may take to get its workers pinned and their counters open.
const READY_WAIT: Duration = Duration::from_secs(30);
/// How often the parent looks for the ready word.
const READY_POLL: Duration = Duration::from_micros(200);
/// After the flows were shut down, how long the child gets to report, and then to die.
const ABORT_GRACE: Duration = Duration::from_secs(3);

/// The side that runs in the child: the one the statistics do not follow.
pub fn child_role(pattern: Pattern) -> Role {
    match pattern {
        Pattern::Stream => Role::Sender,
        Pattern::Rr | Pattern::Crr => Role::Receiver,
    }
}

/// Where the sides ran: the transport's own words, with the process split.
pub fn describe(transport: &str, pattern: Pattern) -> String {
    let medium = transport
        .strip_suffix(", both sides in one process")
        .unwrap_or(transport);
    let side = match pattern {
        Pattern::Stream => "sender",
        Pattern::Rr | Pattern::Crr => "server",
    };
    format!("{medium}; sides in two processes (fork: the {side} in the child)")
}

/// What the child sends back through its pipe.
#[derive(serde::Serialize, serde::Deserialize)]
enum Report {
    Samples(Vec<ThreadSample>),
    /// The child could not start its workers.
    Failed(String),
}

/// The child as the parent sees it, before its results are watched.
pub struct Child {
    process: ChildProcess,
    results: File,
    /// (flow, role) of every worker the child runs.
    expected: Vec<(u32, Role)>,
}

/// Forks: the workers of `role` run in the child (which never returns from here); the parent
/// gets the others back once the child's workers are ready.
pub fn fork_side(
    workers: Vec<(Worker, Job)>,
    role: Role,
    control: &Arc<Control>,
) -> Result<(Vec<(Worker, Job)>, Child), Error> {
    let (theirs, mine): (Vec<_>, Vec<_>) = workers.into_iter().partition(|(w, _)| w.role == role);
    let expected = theirs.iter().map(|(w, _)| (w.flow, w.role)).collect();
    let (read, write) = fdio::pipe().map_err(Error::Setup)?;
    let parent = std::process::id();
    match process::fork().map_err(Error::Setup)? {
        Forked::Child => {
            // Every end this process does not use is closed: a pipe's reader sees EOF only
            // once no process holds its write end.
            drop((mine, read));
            child_main(parent, theirs, control, write)
        }
        Forked::Parent(process) => {
            drop((theirs, write));
            let mut child = Child {
                process,
                results: File::from(read),
                expected,
            };
            child.wait_ready(control)?;
            Ok((mine, child))
        }
    }
}

/// The child: start the workers at their own barrier, say ready, join them, report, `_exit`.
fn child_main(parent: u32, workers: Vec<(Worker, Job)>, control: &Control, results: OwnedFd) -> ! {
    // A panic must not unwind into the caller's code: the child would go on as a second copy
    // of the parent.
    let served = std::panic::catch_unwind(AssertUnwindSafe(|| serve(parent, workers, control)));
    let report = match served {
        Ok(Ok(samples)) => Report::Samples(samples),
        Ok(Err(e)) => Report::Failed(e),
        Err(_) => Report::Failed("the child panicked".into()),
    };
    let sent = serde_json::to_vec(&report)
        .map_err(io::Error::other)
        .and_then(|bytes| File::from(results).write_all(&bytes));
    process::exit_now(if sent.is_ok() { 0 } else { 1 })
}

fn serve(
    parent: u32,
    workers: Vec<(Worker, Job)>,
    control: &Control,
) -> Result<Vec<ThreadSample>, String> {
    process::prepare_child(parent).map_err(|e| format!("setting up the child: {e}"))?;
    let start = Arc::new(Barrier::new(workers.len() + 1));
    let workers = workers
        .into_iter()
        .map(|(mut w, job)| {
            w.start = start.clone();
            (w, job)
        })
        .collect();
    let (handles, _endpoints) =
        super::spawn(workers).map_err(|e| format!("starting a worker thread: {e}"))?;
    start.wait();
    control.mark_peer_ready();
    Ok(handles.into_iter().filter_map(|h| h.join().ok()).collect())
}

impl Child {
    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    fn wait_ready(&mut self, control: &Control) -> Result<(), Error> {
        let deadline = Instant::now() + READY_WAIT;
        let pid = self.pid();
        while !control.peer_ready() {
            if let Some(status) = self.process.try_wait().map_err(Error::Setup)? {
                let why = match read_report(&mut self.results) {
                    Ok(Report::Failed(e)) => e,
                    Ok(Report::Samples(_)) => "it reported before starting".into(),
                    Err(e) => e,
                };
                return Err(setup(format!(
                    "the child process (pid {pid}) ended ({status}) before its workers were ready: {why}"
                )));
            }
            if Instant::now() > deadline {
                self.process.kill();
                return Err(setup(format!(
                    "the child process (pid {pid}) did not get its workers ready within {} s; it was killed",
                    READY_WAIT.as_secs()
                )));
            }
            std::thread::sleep(READY_POLL);
        }
        Ok(())
    }

    /// Reads the child's report on a thread of its own as soon as it comes. A child that ends
    /// without a readable report (it crashed) stops the run and shuts the flows down, so this
    /// process's workers do not wait for the watchdog.
    pub fn watch(
        self,
        endpoints: &[Arc<Endpoint>],
        control: &Arc<Control>,
    ) -> Result<Watch, Error> {
        let (tx, rx) = mpsc::channel();
        let mut results = self.results;
        let endpoints = endpoints.to_vec();
        let control = control.clone();
        std::thread::Builder::new()
            .name("bytepath-child-report".into())
            .spawn(move || {
                let report = read_report(&mut results);
                if !matches!(report, Ok(Report::Samples(_))) {
                    control.stop();
                    endpoints.iter().for_each(|ep| ep.abort());
                }
                let _ = tx.send(report);
            })
            .map_err(Error::Setup)?;
        Ok(Watch {
            process: self.process,
            report: rx,
            expected: self.expected,
        })
    }
}

/// The child while its report is awaited.
pub struct Watch {
    process: ChildProcess,
    report: Receiver<Result<Report, String>>,
    expected: Vec<(u32, Role)>,
}

impl Watch {
    /// Adds the child's samples to `samples`, waiting for them until `deadline` (the watchdog's):
    /// then the flows are shut down and, after a grace, the child is killed. A worker the child
    /// did not report gets a sample whose error says why. Returns whether the watchdog fired.
    pub fn finish(
        mut self,
        deadline: Instant,
        endpoints: &[Arc<Endpoint>],
        samples: &mut Vec<ThreadSample>,
    ) -> bool {
        let wait = deadline.saturating_duration_since(Instant::now());
        let (report, fired) = match self.report.recv_timeout(wait) {
            Ok(report) => (report, false),
            Err(_) => {
                endpoints.iter().for_each(|ep| ep.abort());
                let report = self.report.recv_timeout(ABORT_GRACE).unwrap_or_else(|_| {
                    self.process.kill();
                    let late = self.report.recv_timeout(ABORT_GRACE);
                    late.unwrap_or_else(|_| Err("it sent no report".into()))
                });
                (report, true)
            }
        };
        let status = match self.process.wait_until(Instant::now() + ABORT_GRACE) {
            Ok(Some(status)) => status.to_string(),
            Ok(None) => {
                self.process.kill();
                "still running after its report; killed".into()
            }
            Err(e) => format!("waitpid failed: {e}"),
        };
        let why = match report {
            Ok(Report::Samples(theirs)) => {
                samples.extend(theirs);
                "its worker thread panicked".to_string()
            }
            Ok(Report::Failed(e)) => e,
            Err(e) => e,
        };
        let pid = self.process.id();
        let error = format!("no result from the child process (pid {pid}, {status}): {why}");
        super::worker::fill_missing(samples, &self.expected, pid, &error);
        fired
    }
}

fn read_report(results: &mut File) -> Result<Report, String> {
    let mut bytes = Vec::new();
    results
        .read_to_end(&mut bytes)
        .map_err(|e| format!("reading its report: {e}"))?;
    if bytes.is_empty() {
        return Err("it ended without a report (crashed or killed)".into());
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("its report could not be read: {e}"))
}

fn setup(message: String) -> Error {
    Error::Setup(io::Error::other(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unmeasured_side_goes_to_the_child() {
        assert_eq!(child_role(Pattern::Stream), Role::Sender);
        assert_eq!(child_role(Pattern::Rr), Role::Receiver);
    }

    #[test]
    fn the_placement_names_the_split_instead_of_one_process() {
        assert_eq!(
            describe(
                "loopback (127.0.0.1), both sides in one process",
                Pattern::Rr
            ),
            "loopback (127.0.0.1); sides in two processes (fork: the server in the child)"
        );
        assert_eq!(
            describe("a medium", Pattern::Stream),
            "a medium; sides in two processes (fork: the sender in the child)"
        );
    }
}
