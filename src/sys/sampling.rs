//! What perf sampling needs beyond the perf-event2 crate: sending one event's samples into
//! another event's ring buffer (PERF_EVENT_IOC_SET_OUTPUT, perf_event_open(2) "ioctls") so
//! every sampled thread on a CPU shares that CPU's ring, and the calling thread's id
//! (gettid(2)) that a caller hands to the profiler.
use super::cvt;
use std::io;
use std::os::fd::AsRawFd;

/// `_IO('$', 5)` from include/uapi/linux/perf_event.h; the libc crate does not define it.
const PERF_EVENT_IOC_SET_OUTPUT: libc::c_ulong = 0x2405;

/// Makes the kernel write `event`'s records into `ring_owner`'s ring buffer. Both must be
/// perf events on the same CPU (or the same task when neither is bound to a CPU). Taking the
/// owners by reference keeps both descriptors open for the call.
pub fn redirect_output(event: &impl AsRawFd, ring_owner: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: both descriptors are open (their owners are borrowed for the call); SET_OUTPUT
    // reads only the integer argument and touches no user memory.
    cvt(unsafe {
        libc::ioctl(
            event.as_raw_fd(),
            PERF_EVENT_IOC_SET_OUTPUT as _,
            ring_owner.as_raw_fd(),
        )
    })?;
    Ok(())
}

/// The kernel's id of the calling thread (what /proc/self/task lists and perf samples carry).
pub fn current_thread_id() -> i32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_id_is_listed_under_proc_self_task() {
        let tid = std::thread::spawn(current_thread_id).join().unwrap();
        let main = current_thread_id();
        assert_ne!(tid, main);
        assert!(std::path::Path::new(&format!("/proc/self/task/{main}")).exists());
    }

    #[test]
    fn redirecting_a_plain_file_is_refused_not_ignored() {
        let a = std::fs::File::open("/proc/self/stat").unwrap();
        let b = std::fs::File::open("/proc/self/stat").unwrap();
        assert!(redirect_output(&a, &b).is_err());
    }
}
