//! A second process for `--processes`: fork(2), _exit(2), waitpid(2) polled with WNOHANG up to
//! a deadline, kill(2), and the child's signal set-up (signal(2) SIGINT ignored,
//! prctl(2) PR_SET_PDEATHSIG).
//!
//! Forking a multi-threaded process: only the calling thread exists in the child, and any lock
//! another thread held at the fork stays held there. The child this crate makes only allocates
//! (glibc's malloc resets its locks at fork), spawns threads, makes system calls and writes to
//! a pipe; it never prints (std's stdout lock may be held by a parent thread) and leaves with
//! `exit_now`, so it neither flushes a copy of the parent's buffered output nor runs the
//! parent's destructors (temporary folders, files) a second time.
use super::cvt;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

/// How often `wait_until` looks at the child.
const POLL: Duration = Duration::from_millis(1);

/// Which side of the fork the caller is on.
pub enum Forked {
    Parent(ChildProcess),
    Child,
}

/// A forked child not yet reaped; dropping it kills and reaps it, so none is left behind.
#[derive(Debug)]
pub struct ChildProcess {
    pid: libc::pid_t,
    status: Option<ExitStatus>,
}

/// fork(2). In the child, only async-signal-safe work is guaranteed by POSIX; on Linux with
/// glibc, allocating and spawning threads work too (see the module text): call nothing that
/// takes a lock another thread may have held, and leave with `exit_now`.
pub fn fork() -> io::Result<Forked> {
    // SAFETY: fork has no memory-safety preconditions of its own; what the child may do
    // afterwards is the contract stated above.
    let pid = cvt(unsafe { libc::fork() })?;
    Ok(match pid {
        0 => Forked::Child,
        pid => Forked::Parent(ChildProcess { pid, status: None }),
    })
}

/// Ends the calling process now (_exit(2)): no destructors, no atexit handlers, no flush.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit has no preconditions and does not return.
    unsafe { libc::_exit(code) }
}

/// In a forked child: ignore Ctrl-C (the parent ends the run through shared memory) and die
/// with the parent. `parent` is the parent's pid read before the fork: if it already exited,
/// the death signal would never come, so the child exits at once.
pub fn prepare_child(parent: u32) -> io::Result<()> {
    // SAFETY: setting a signal to SIG_IGN installs no handler code.
    if unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) } == libc::SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: prctl with integer arguments only.
    cvt(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) })?;
    // SAFETY: getppid has no preconditions and cannot fail.
    if unsafe { libc::getppid() } as u32 != parent {
        exit_now(1);
    }
    Ok(())
}

/// In a forked child: closes every descriptor but standard input, output and error and
/// `keep`. fork(2) without exec copies the whole table, so CLOEXEC does nothing here: without
/// this a forked server would hold other sessions' sockets open (their clients would never
/// see them close) and the descriptors it was not meant to touch. close_range(2) over the
/// gaps between the kept ones; on a kernel without it (before 5.9), close(2) on each
/// descriptor /proc/self/fd lists.
pub fn close_other_descriptors(keep: &[RawFd]) -> io::Result<()> {
    let mut keep: Vec<RawFd> = keep.iter().copied().filter(|&fd| fd > 2).collect();
    keep.sort_unstable();
    keep.dedup();
    let mut from: RawFd = 3;
    let mut gaps = Vec::with_capacity(keep.len() + 1);
    for &fd in &keep {
        if fd > from {
            gaps.push((from as libc::c_uint, (fd - 1) as libc::c_uint));
        }
        from = fd + 1;
    }
    gaps.push((from as libc::c_uint, libc::c_uint::MAX));
    for (first, last) in gaps {
        // SAFETY: close_range with integer arguments; the caller owns the process's table
        // (a just-forked child with one thread), and no live object of its uses a closed fd.
        let closed = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0) };
        if closed != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ENOSYS) {
                return Err(e);
            }
            return close_listed(&keep);
        }
    }
    Ok(())
}

/// close_range's fallback: every descriptor /proc/self/fd lists, but the kept ones.
fn close_listed(keep: &[RawFd]) -> io::Result<()> {
    let open: Vec<RawFd> = std::fs::read_dir("/proc/self/fd")?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    for fd in open.into_iter().filter(|fd| *fd > 2 && !keep.contains(fd)) {
        // SAFETY: close with an integer argument; see close_other_descriptors. The directory
        // stream's own descriptor is closed by then (the listing was collected first).
        unsafe { libc::close(fd) };
    }
    Ok(())
}

impl ChildProcess {
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// The exit status if the child has ended (reaping it), without waiting.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            let mut raw: libc::c_int = 0;
            // SAFETY: raw is a valid, writable int; pid is our unreaped child.
            let got = cvt(unsafe { libc::waitpid(self.pid, &mut raw, libc::WNOHANG) })?;
            if got == self.pid {
                self.status = Some(ExitStatus::from_raw(raw));
            }
        }
        Ok(self.status)
    }

    /// Waits for the child to end until `deadline`; `None` if it is still running then.
    pub fn wait_until(&mut self, deadline: Instant) -> io::Result<Option<ExitStatus>> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(Some(status));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            std::thread::sleep(POLL.min(deadline - now));
        }
    }

    /// SIGKILL, unless already reaped.
    pub fn kill(&mut self) {
        if self.status.is_none() {
            // SAFETY: kill with integer arguments; pid is our child, not yet reaped, so the
            // number cannot have been reused.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.status.is_none() {
            self.kill();
            let _ = self.wait_until(Instant::now() + Duration::from_secs(5));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_sees_the_childs_exit_code() {
        match fork().unwrap() {
            Forked::Child => exit_now(3),
            Forked::Parent(mut child) => {
                let status = child
                    .wait_until(Instant::now() + Duration::from_secs(10))
                    .unwrap()
                    .expect("exited");
                assert_eq!(status.code(), Some(3));
                assert_eq!(child.try_wait().unwrap(), Some(status), "reaped once");
            }
        }
    }

    #[test]
    fn a_child_that_runs_on_is_reported_running_then_killed() {
        match fork().unwrap() {
            Forked::Child => {
                std::thread::sleep(Duration::from_secs(30));
                exit_now(0)
            }
            Forked::Parent(mut child) => {
                assert_eq!(child.wait_until(Instant::now()).unwrap(), None);
                child.kill();
                let status = child
                    .wait_until(Instant::now() + Duration::from_secs(10))
                    .unwrap()
                    .expect("killed");
                assert_eq!(status.signal(), Some(libc::SIGKILL));
            }
        }
    }
}
