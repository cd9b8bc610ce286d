//! The profiling core on real sampling: a workload of known proportions in this process, and
//! the refusal an unprivileged user gets. Sampling kernel code needs root here
//! (perf_event_paranoid=2); without it the tests skip with the reason.
mod common;

use bytepath::measure::profile::{self, Category, Profile, ProfileBlock, SamplerSettings};
use bytepath::sys::usage::thread_usage;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Barrier};
use std::time::Duration;

const CHILD_ENV: &str = "BYTEPATH_PROFILE_UNPRIVILEGED_CHILD";

fn cpu_time() -> Duration {
    let u = thread_usage().expect("getrusage(RUSAGE_THREAD)");
    u.user + u.system
}

/// Runs `step` until this thread has used `budget` of CPU: samples follow CPU time, so the
/// threads' shares of the profile are their budgets' shares whatever else the machine runs.
fn burn(budget: Duration, mut step: impl FnMut()) {
    let start = cpu_time();
    while cpu_time() - start < budget {
        step();
    }
}

fn memcpy_work() -> impl FnMut() {
    let src = vec![7u8; 8 << 20];
    let mut dst = vec![0u8; 8 << 20];
    move || {
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&mut dst);
    }
}

fn pread_work() -> impl FnMut() {
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        "/dev/shm"
    } else {
        "/tmp"
    };
    let mut file = tempfile::tempfile_in(dir).expect("temporary file");
    file.write_all(&vec![3u8; 1 << 20]).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    move || {
        file.read_exact_at(&mut buf, 0).unwrap();
        std::hint::black_box(&mut buf);
    }
}

fn spin_work() -> impl FnMut() {
    let mut x = 1u64;
    move || {
        for _ in 0..100_000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

fn syscall_work() -> impl FnMut() {
    || {
        for _ in 0..200 {
            std::hint::black_box(std::os::unix::process::parent_id());
        }
    }
}

/// Four threads with CPU budgets 40/30/20/10 %, profiled as one side.
fn profile_known_mix(settings: &SamplerSettings) -> Result<ProfileBlock, String> {
    let budgets_ms = [400u64, 300, 200, 100];
    let ready = Arc::new(Barrier::new(budgets_ms.len() + 1));
    let go = Arc::new(Barrier::new(budgets_ms.len() + 1));
    let (tx, rx) = std::sync::mpsc::channel();
    let workers: Vec<_> = budgets_ms
        .iter()
        .enumerate()
        .map(|(i, &ms)| {
            let (ready, go, tx) = (ready.clone(), go.clone(), tx.clone());
            std::thread::spawn(move || {
                let mut step: Box<dyn FnMut()> = match i {
                    0 => Box::new(memcpy_work()),
                    1 => Box::new(pread_work()),
                    2 => Box::new(spin_work()),
                    _ => Box::new(syscall_work()),
                };
                step(); // page faults and first reads happen before the window
                tx.send(profile::current_thread_id()).unwrap();
                ready.wait();
                go.wait();
                burn(Duration::from_millis(ms), step);
            })
        })
        .collect();
    ready.wait();
    let tids: Vec<i32> = rx.iter().take(budgets_ms.len()).collect();
    let running = profile::start(&tids, settings);
    go.wait();
    for w in workers {
        w.join().unwrap();
    }
    match running.map_err(|u| u.reason)?.stop() {
        Profile::Measured(block) => Ok(*block),
        Profile::Unavailable { reason } => Err(reason),
    }
}

fn share(b: &ProfileBlock, c: Category) -> f64 {
    b.category(c).share
}

#[test]
fn a_known_mix_of_work_lands_in_the_right_categories() {
    if !common::is_root() {
        common::skip("sampling kernel code needs root here");
        return;
    }
    let block = match profile_known_mix(&SamplerSettings::default()) {
        Ok(b) => b,
        Err(reason) => {
            common::skip(format!("profile unavailable: {reason}"));
            return;
        }
    };
    for c in &block.categories {
        if c.samples > 0 {
            eprintln!(
                "{:>20} {:5.1} % [{:.1}, {:.1}]",
                c.name.name(),
                100.0 * c.share,
                100.0 * c.ci95_low,
                100.0 * c.ci95_high
            );
        }
    }
    eprintln!("top other: {:?}\n{}", block.top_other, block.method);
    assert_eq!(block.threads, 4);
    assert_eq!(block.lost, 0, "a 1 s window fits the rings");
    // ~1 s of CPU at 3999 Hz; the kernel keeps the rate within a few per cent, and getrusage
    // rounds to the tick, so anything above half the nominal count is a working sampler.
    assert!(block.samples > 2000, "{} samples", block.samples);
    let total: f64 = block.categories.iter().map(|c| c.share).sum();
    assert!((total - 1.0).abs() < 1e-9);

    // The budgets (40 % memcpy, 30 % pread, 20 % spin, 10 % getppid) are CPU time, which is
    // what cpu-clock samples, so each thread's categories add up to its budget whatever else
    // the machine runs. Tolerance: 8 points, five times the sampling noise at ~4000 samples,
    // for the small parts of each thread that land elsewhere (its own getrusage checks, the
    // timer interrupt).
    let file_read = share(&block, Category::CopyKernelToUser) + share(&block, Category::PageRefs);
    let spin = share(&block, Category::UserCode);
    let syscall = share(&block, Category::Syscall);
    assert!(
        (file_read - 0.30).abs() < 0.08,
        "pread: copy_kernel_to_user + page_refs {file_read:.3}"
    );
    assert!(
        share(&block, Category::CopyKernelToUser) > 0.10,
        "a file read copies to user"
    );
    assert!((spin - 0.20).abs() < 0.08, "user_code {spin:.3}");
    assert!((syscall - 0.10).abs() < 0.08, "syscall {syscall:.3}");
    assert!(file_read > spin && spin > syscall, "budget order");

    let user_copy = share(&block, Category::CopyInUser);
    if block.top_other.iter().any(|s| s.symbol.contains("libc")) {
        common::skip_part(
            "the copy-in-user share",
            "libc's memmove is unnamed here (no symbols for libc's internals)",
        );
    } else {
        assert!(
            (user_copy - 0.40).abs() < 0.08,
            "copy_in_user {user_copy:.3}"
        );
        assert!(user_copy > file_read, "budget order");
    }
}

#[test]
fn an_unprivileged_user_gets_a_reason_not_a_profile() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return unprivileged_child();
    }
    if !common::is_root() || !common::has_command("setpriv") {
        common::skip("needs root (to drop to nobody) and setpriv");
        return;
    }
    let paranoid = bytepath::measure::counters::perf_event_paranoid().unwrap_or(2);
    if paranoid < 2 {
        common::skip(format!(
            "perf_event_paranoid={paranoid} lets unprivileged users sample"
        ));
        return;
    }
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "an_unprivileged_user_gets_a_reason_not_a_profile",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    common::assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("unavailable: "))
        .unwrap_or_else(|| panic!("no reason printed: {stdout}"));
    assert!(line.starts_with("permission:"), "{line}");
    assert!(line.contains("perf_event_paranoid <= 1 (it is"), "{line}");
}

/// Runs as nobody: sampling must be refused with a reason, never measured as zeros.
fn unprivileged_child() {
    let tid = profile::current_thread_id();
    match profile::start(&[tid], &SamplerSettings::default()) {
        Ok(running) => panic!("sampling opened without privilege: {:?}", running.stop()),
        Err(u) => println!("unavailable: {}", u.reason),
    }
}

#[test]
fn a_window_where_the_threads_sleep_is_unavailable_not_zero() {
    if !common::is_root() {
        common::skip("sampling kernel code needs root here");
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let sleeper = std::thread::spawn(move || {
        tx.send(profile::current_thread_id()).unwrap();
        done_rx.recv().unwrap();
    });
    let tid = rx.recv().unwrap();
    let running = match profile::start(&[tid], &SamplerSettings::default()) {
        Ok(r) => r,
        Err(u) => return common::skip(u.reason),
    };
    std::thread::sleep(Duration::from_millis(100));
    let p = running.stop();
    done_tx.send(()).unwrap();
    sleeper.join().unwrap();
    let reason = p.unavailable_reason().expect("no samples, no block");
    assert!(reason.starts_with("no samples"), "{reason}");
}
