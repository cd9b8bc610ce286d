//! The only `unsafe` code in bytepath: thin wrappers over the Linux system calls that std does
//! not expose (sendmsg with flags, the MSG_ZEROCOPY error queue, affinity, per-thread rusage,
//! fork and shared memory for `--processes`, readiness (select, poll, epoll) and io_uring for
//! `servers`, io_uring sends for the uring mechanisms, sendmmsg(2) and UDP_SEGMENT for the
//! datagram senders, setns(2) for `--netns`, and the page-referencing calls of the `splice` and
//! `sendfile` senders: vmsplice(2), madvise(2), memfd_create(2), fallocate(2)), the perf
//! sampling ioctl the perf-event2 crate lacks, mallopt(3) for the server, and tracefs
//! (mount(2) where it is not mounted; its event ids and format files) with the kernel
//! tracepoints it lists, read through perf rings.
//! Each wrapper turns `-1` into `io::Error::last_os_error()` in one place (`cvt`).
#![allow(unsafe_code)]

pub mod affinity;
pub(crate) mod clock;
pub(crate) mod echo_ring;
pub(crate) mod events;
pub(crate) mod fdio;
pub(crate) mod file;
pub mod malloc;
pub(crate) mod mmsg;
pub(crate) mod netns;
pub(crate) mod pages;
pub(crate) mod process;
pub(crate) mod ring;
pub(crate) mod sampling;
pub(crate) mod shared;
pub(crate) mod signals;
pub(crate) mod socket;
pub mod source;
pub(crate) mod stdio;
pub(crate) mod support;
pub(crate) mod tcp_info;
pub(crate) mod tracefs;
pub(crate) mod tracepoint;
pub(crate) mod uring_recv;
pub(crate) mod uring_send;
pub mod usage;
pub(crate) mod zc_receive;
pub(crate) mod zerocopy;

use std::io;

/// Turns the C convention (`-1` and errno) into an `io::Result`.
pub(crate) fn cvt<T: PartialOrd + Default>(ret: T) -> io::Result<T> {
    if ret < T::default() {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Kernel release, as `uname -r` prints it.
pub fn kernel_release() -> String {
    // SAFETY: utsname is plain old data; uname fills it and we read NUL-terminated fields.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uts is a valid, writable utsname.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return "unknown".into();
    }
    let bytes: Vec<u8> = uts
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Clock ticks per second used by /proc/stat (USER_HZ).
pub fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as u64
    } else {
        100
    }
}

/// Whether the process runs with effective uid 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Gives memory that `free` kept back to the kernel (malloc_trim(3)). glibc keeps what a thread
/// frees in that thread's arena; a study that starts fresh worker threads for every visit would
/// otherwise hold the largest buffers any visit ever had, in every arena (80 MiB of a 48-point
/// sweep, against 54 MiB at its largest moment). A no-op where the C library is not glibc.
pub fn release_free_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only walks the allocator's own free lists; no pointer is passed.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Raises the soft RLIMIT_NOFILE to the hard limit (each flow holds sockets and up to ten perf
/// counter descriptors per thread); returns the soft limit now in force.
pub fn raise_open_file_limit() -> std::io::Result<u64> {
    // SAFETY: rlimit is plain old data.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `lim` is a valid, writable rlimit.
    cvt(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) })?;
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: `lim` is a valid rlimit with cur <= max.
        cvt(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) })?;
    }
    Ok(lim.rlim_cur)
}
