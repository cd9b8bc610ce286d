//! glibc's allocator with one arena, for every command: mallopt(3) `M_ARENA_MAX`. A study
//! starts threads for every flow of every visit, and each may get an arena of its own whose
//! freed memory glibc keeps: bench/repeatability.sh's 48-point sweeps peaked at 305–335 MiB
//! resident; one 8-flow copy point alone at 110 MiB, 59 MiB with one arena. For a server, by default
//! glibc gives threads arenas of their own (up to 8 per CPU) and keeps each arena's freed
//! memory for reuse, so a server whose sessions once ran on many threads at the same time (a
//! flood of hostile connections) keeps about 200 KiB per such arena resident for good
//! (bench/hostile.sh measured +1.3 MiB after 1,000 connections of each kind; malloc_trim gave
//! back a tenth of it; the same flood again added nothing). With one arena, what the sessions
//! freed is one heap the next session reuses and trimming can return. Nothing measured
//! allocates per message, so the one lock costs the figures nothing.

/// Has every thread allocate from the main arena; whether the allocator took the setting
/// (false where the C library is not glibc).
#[cfg(target_env = "gnu")]
pub fn one_arena() -> bool {
    // SAFETY: mallopt only sets one of the allocator's tunables; M_ARENA_MAX with a positive
    // value is valid at any time, and arenas already made stay usable.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) == 1 }
}

#[cfg(not(target_env = "gnu"))]
pub fn one_arena() -> bool {
    false
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(target_env = "gnu")]
    fn glibc_takes_one_arena() {
        assert!(super::one_arena());
    }
}
