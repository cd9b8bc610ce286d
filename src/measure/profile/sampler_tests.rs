//! Sampler plumbing; the sampling itself needs root (see tests/profile.rs for workloads).
use super::*;

#[test]
fn cpu_lists_parse_ranges_and_singles() {
    assert_eq!(parse_cpu_list("0-1"), Some(vec![0, 1]));
    assert_eq!(parse_cpu_list("0,2-4,7"), Some(vec![0, 2, 3, 4, 7]));
    assert_eq!(parse_cpu_list("x"), None);
    assert!(!online_cpus().is_empty());
}

#[test]
fn kernel_callers_keep_kernel_frames_after_the_leaf() {
    let chain = [
        PERF_CONTEXT_KERNEL,
        0x10,
        0x20,
        0x30,
        -512i64 as u64,
        0x7f00,
    ];
    assert_eq!(&*kernel_callers(&chain, 0x10), &[0x20, 0x30]);
    assert!(kernel_callers(&[], 0x10).is_empty());
    assert!(kernel_callers(&[-512i64 as u64, 0x7f00], 0x7f00).is_empty());
}

#[test]
fn a_user_sample_with_an_empty_chain_parses() {
    let mut body = Vec::new();
    for w in [0x7f1a_775f_e439u64, (0x6995u64 << 32) | 0x6994, 0] {
        body.extend_from_slice(&w.to_ne_bytes());
    }
    let s = parse_sample(&body, false).unwrap();
    assert_eq!(
        (s.ip, s.tid, s.space),
        (0x7f1a_775f_e439, 0x6995, Space::User)
    );
    assert!(s.callers.is_empty());
    body.truncate(12);
    assert!(parse_sample(&body, false).is_none());
}

#[test]
fn rings_hold_the_window_within_the_budget() {
    let s = SamplerSettings::default();
    let bytes = ring_size(s.frequency_hz, &s, 2);
    let per_second = s.frequency_hz as usize * record_bytes(s.max_stack);
    assert!(bytes.is_power_of_two());
    assert!(bytes >= per_second * 5, "{bytes} holds 5 s at full rate");
    assert!(ring_size(s.frequency_hz, &s, 1024) >= MIN_RING);
    assert!(ring_size(s.frequency_hz, &s, 64) * 64 <= RING_BUDGET);
}

#[test]
fn permission_errors_name_perf_event_paranoid() {
    let e = io::Error::from_raw_os_error(libc::EACCES);
    let reason = open_error(EventKind::CpuClock, &e);
    assert!(reason.starts_with("permission:"), "{reason}");
    assert!(reason.contains("perf_event_paranoid"), "{reason}");
}

fn spin_for(d: Duration) {
    let end = std::time::Instant::now() + d;
    let mut x = 0u64;
    while std::time::Instant::now() < end {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
    }
}

#[test]
fn a_busy_thread_is_sampled_with_its_own_tid() {
    let tid = crate::sys::sampling::current_thread_id();
    let mut sampler = match ThreadSampler::open(&[tid], &SamplerSettings::default()) {
        Ok(s) => s,
        Err(reason) => {
            crate::skip_test(None, format!("sampling unavailable here: {reason}"));
            return;
        }
    };
    assert_eq!(event_fds(&sampler).len(), online_cpus().len());
    sampler.enable().unwrap();
    spin_for(Duration::from_millis(200));
    let w = sampler.stop();
    assert!(
        w.samples.len() > 50,
        "{} samples in 200 ms",
        w.samples.len()
    );
    assert!(w.samples.iter().all(|s| s.tid == tid as u32));
    assert!(w.samples.iter().any(|s| s.space == Space::User));
    assert_eq!(w.lost, 0);
    assert_eq!(w.threads, 1);
}

#[test]
fn a_thread_that_is_gone_is_counted_missing() {
    let gone = std::thread::spawn(crate::sys::sampling::current_thread_id)
        .join()
        .unwrap();
    let me = crate::sys::sampling::current_thread_id();
    match ThreadSampler::open(&[gone, me], &SamplerSettings::default()) {
        Ok(s) => {
            assert_eq!(s.missing_threads, vec![gone]);
            assert_eq!(s.threads, 1);
        }
        Err(reason) => crate::skip_test(
            Some("two threads, one gone"),
            format!("sampling unavailable here: {reason}"),
        ),
    }
    let err = ThreadSampler::open(&[gone], &SamplerSettings::default()).err();
    assert!(err.is_some_and(|e| e.contains("exists") || e.contains("permission")));
}
