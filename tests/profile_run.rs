//! The profiling core on a real `bytepath run` in a child process: each side's worker
//! thread sampled on its own, the way a `--profile` visit will. Needs root (kernel sampling
//! with perf_event_paranoid=2); skips with the reason otherwise.
mod common;

use bytepath::measure::profile::{self, Category, Profile, ProfileBlock, SamplerSettings};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the child however the test ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The thread of `pid` whose name starts with `prefix` (names are cut at 15 bytes:
/// `bytepath-0-send`, `bytepath-0-rece`).
fn wait_for_thread(pid: u32, prefix: &str, deadline: Instant) -> Option<i32> {
    while Instant::now() < deadline {
        let found = profile::process_threads(pid)
            .ok()?
            .into_iter()
            .find(|&t| profile::thread_name(pid, t).is_some_and(|n| n.starts_with(prefix)));
        if found.is_some() {
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Sender and receiver profiles over 1 s of a 64 KiB stream with `mechanism`, after warm-up.
fn profile_sides(mechanism: &str) -> Result<(ProfileBlock, ProfileBlock), String> {
    let child = Command::new(env!("CARGO_BIN_EXE_bytepath"))
        .args([
            "run",
            "-m",
            mechanism,
            "-s",
            "64K",
            "--duration",
            "4s",
            "--warmup",
            "1s",
        ])
        .args(["--counters", "none"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let child = Running(child);
    let pid = child.0.id();
    let deadline = Instant::now() + Duration::from_secs(10);
    let sender = wait_for_thread(pid, "bytepath-0-send", deadline).ok_or("no sender thread")?;
    let receiver = wait_for_thread(pid, "bytepath-0-rece", deadline).ok_or("no receiver thread")?;
    std::thread::sleep(Duration::from_millis(1200));
    let settings = SamplerSettings::default();
    let s = profile::start(&[sender], &settings).map_err(|u| u.reason)?;
    let r = profile::start(&[receiver], &settings).map_err(|u| u.reason)?;
    std::thread::sleep(Duration::from_secs(1));
    let (s, r) = (s.stop_sampling(), r.stop_sampling());
    let mut symbols = profile::Symbolizer::new();
    let (s, r) = (s.build(&mut symbols), r.build(&mut symbols));
    drop(child);
    match (s, r) {
        (Profile::Measured(s), Profile::Measured(r)) => Ok((*s, *r)),
        (s, r) => Err(format!(
            "{:?} / {:?}",
            s.unavailable_reason(),
            r.unavailable_reason()
        )),
    }
}

fn print(name: &str, side: &str, b: &ProfileBlock) {
    let parts: Vec<String> = b
        .categories
        .iter()
        .filter(|c| c.share >= 0.005)
        .map(|c| format!("{} {:.1}", c.name.name(), 100.0 * c.share))
        .collect();
    eprintln!(
        "{name} {side}: n={} skew {:.1} % recharged {}: {}",
        b.samples,
        100.0 * b.skew.irq_reenable_share,
        b.skew.recharged_samples,
        parts.join(", ")
    );
}

fn share(b: &ProfileBlock, c: Category) -> f64 {
    b.category(c).share
}

#[test]
fn sendfile_copies_less_from_user_than_copy_and_both_receivers_copy_to_user() {
    if !common::is_root() {
        common::skip("sampling kernel code needs root here");
        return;
    }
    let (copy_s, copy_r) = match profile_sides("copy") {
        Ok(sides) => sides,
        Err(reason) => return common::skip(format!("profile unavailable: {reason}")),
    };
    let (file_s, file_r) = profile_sides("sendfile").expect("sendfile profiles like copy");
    for (name, s, r) in [("copy", &copy_s, &copy_r), ("sendfile", &file_s, &file_r)] {
        print(name, "sender", s);
        print(name, "receiver", r);
        for b in [s, r] {
            let total: f64 = b.categories.iter().map(|c| c.share).sum();
            assert!((total - 1.0).abs() < 1e-9, "shares sum to 100 %");
            assert!(b.samples > 200, "{name}: {} samples in 1 s", b.samples);
        }
        assert!(
            share(r, Category::CopyKernelToUser) > 0.05,
            "{name} receiver copies out"
        );
    }
    // copy: _copy_from_iter is 15-25 % of the sender here; sendfile hands page-cache pages
    // over and copies nothing from user space. Structural, noise cannot flip it: intervals
    // are a few points wide and the gap is over ten.
    let copy_in = share(&copy_s, Category::CopyUserToKernel);
    let file_in = share(&file_s, Category::CopyUserToKernel);
    assert!(copy_in > 0.05, "copy sender copies in: {copy_in:.3}");
    assert!(
        file_in < copy_in / 2.0,
        "sendfile {file_in:.3} vs copy {copy_in:.3}"
    );
    assert!(
        share(&copy_s, Category::CopyInUser) > 0.0,
        "copy serializes in user space"
    );
    assert!(share(&file_s, Category::PageRefs) > share(&copy_s, Category::PageRefs));
}
