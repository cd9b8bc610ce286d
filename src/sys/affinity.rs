//! CPU placement of the calling thread: sched_setaffinity(2), sched_getaffinity(2).
use super::cvt;
use std::io;

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    pin_current_thread_to(&[cpu])
}

/// Lets the calling thread run on `cpus` only; threads it starts afterwards inherit that.
pub fn pin_current_thread_to(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() || cpus.iter().any(|&c| c >= libc::CPU_SETSIZE as usize) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: cpu_set_t is plain old data; CPU_SET writes inside it (indices checked above).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: cpu < CPU_SETSIZE, so the bit lies inside `set`.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the size passed.
    cvt(unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) })?;
    Ok(())
}

/// The CPUs the calling thread is currently allowed to run on.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain old data.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    cvt(unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) })?;
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: i < CPU_SETSIZE, inside `set`.
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_may_run_only_on_its_cpu() {
        let cpus = allowed_cpus().unwrap();
        let target = *cpus.last().unwrap();
        let after = std::thread::spawn(move || {
            pin_current_thread(target).unwrap();
            allowed_cpus().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(after, vec![target]);
        assert_eq!(
            allowed_cpus().unwrap(),
            cpus,
            "only the pinned thread changed"
        );
    }

    #[test]
    fn a_cpu_beyond_the_set_size_is_refused() {
        let err = pin_current_thread(libc::CPU_SETSIZE as usize).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    }
}
