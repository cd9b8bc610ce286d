//! Clocks below std's `Instant`: clock_getres(2) and clock_gettime(2) for any clock id, and the
//! time-stamp counter through `rdtscp` (x86_64 only; see the Intel SDM, "RDTSCP").
use super::cvt;
use std::io;

pub use libc::{
    clockid_t, CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE, CLOCK_MONOTONIC_RAW, CLOCK_REALTIME,
};

/// clock_getres(2): the clock's resolution in nanoseconds.
pub fn resolution_ns(clock: clockid_t) -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec for the duration of the call.
    cvt(unsafe { libc::clock_getres(clock, &mut ts) })?;
    Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// clock_gettime(2) (the vDSO where the clock has one), in nanoseconds; 0 if the clock id is
/// invalid, which `resolution_ns` reports first.
#[inline]
pub fn now_ns(clock: clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec for the duration of the call.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Proof that this CPU executes `rdtscp`: only `detect` makes one, so `read` is safe.
#[derive(Debug, Clone, Copy)]
pub struct Rdtscp {
    _private: (),
}

impl Rdtscp {
    /// The counter, if CPUID says this CPU has `rdtscp` (leaf 0x8000_0001, EDX bit 27); the
    /// reason otherwise.
    pub fn detect() -> Result<Rdtscp, String> {
        if cpuid_has_rdtscp() {
            Ok(Rdtscp { _private: () })
        } else if cfg!(target_arch = "x86_64") {
            Err("CPUID does not list rdtscp on this CPU".into())
        } else {
            Err("rdtscp is an x86_64 instruction".into())
        }
    }

    /// One `rdtscp`: waits for earlier instructions to finish, then reads the TSC.
    #[inline]
    pub fn read(&self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            let mut aux = 0u32;
            // SAFETY: `self` exists only when the CPU advertises rdtscp, so the instruction is
            // defined here; aux is a valid, writable u32.
            unsafe { std::arch::x86_64::__rdtscp(&mut aux) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            unreachable!("Rdtscp::detect fails off x86_64")
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn cpuid_has_rdtscp() -> bool {
    use std::arch::x86_64::__cpuid;
    // `__cpuid` became a safe function in Rust 1.87; the block keeps the 1.85 MSRV building.
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86_64 CPU and only reads identification registers.
    let max_extended = unsafe { __cpuid(0x8000_0000) }.eax;
    if max_extended < 0x8000_0001 {
        return false;
    }
    #[allow(unused_unsafe)]
    // SAFETY: as above; the leaf is within the range the CPU reported.
    let edx = unsafe { __cpuid(0x8000_0001) }.edx;
    edx & (1 << 27) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_has_rdtscp() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_resolution_is_positive() {
        assert!(resolution_ns(CLOCK_MONOTONIC).unwrap() > 0);
    }

    #[test]
    fn an_invalid_clock_is_an_error() {
        assert!(resolution_ns(-1000).is_err());
    }

    #[test]
    fn monotonic_never_goes_back() {
        let a = now_ns(CLOCK_MONOTONIC);
        let b = now_ns(CLOCK_MONOTONIC);
        assert!(a > 0 && b >= a);
    }

    #[test]
    fn rdtscp_counts_forward_where_the_cpu_has_it() {
        if let Ok(tsc) = Rdtscp::detect() {
            let a = tsc.read();
            assert!(tsc.read() >= a);
        }
    }
}
