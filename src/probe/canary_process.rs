//! The canary of one round, taken in a short process of its own: this executable run again as
//! `bytepath probe --canary-child CPUS` (a hidden flag), which prints the canary as one JSON
//! line. Two processes on an unchanged machine differ by more than one process's rounds show
//! (tests/data/noise.json, `canary_between_processes`: an A/A pair of sweeps read the one-CPU
//! pipe round trip 18 % apart, 2.7 standard errors of its rounds): where a process lands in
//! memory, its stack and its code addresses move its figures for its whole life. With every
//! round in a process of its own that spread is in the rounds' spread, and Welch on rounds
//! (compare::machine) stays the right test of a machine change. Where the child cannot run
//! (no executable to find, a deadline passed, a test harness in its place) the canary is taken
//! in the study's process and the line says so and why.
use super::canary::{self, Canary};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The hidden `probe` flag that takes the canary as a study's round does and prints it as one
/// JSON line.
pub const CHILD_FLAG: &str = "--canary-child";

/// How long the child may take, start to exit. A canary takes tens of milliseconds on a quiet
/// machine and up to 0.7 s with both CPUs busy (probe::canary, `RR_BUDGET`); past this it is
/// stopped and the round's canary is taken in the study's process.
const CHILD_DEADLINE: Duration = Duration::from_secs(5);

/// How often the study looks whether the child has exited: a fraction of the canary's own
/// tens of milliseconds, so waiting adds little to the round.
const POLL: Duration = Duration::from_micros(500);

/// Where a round's canary was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CanaryProcess {
    /// A short process of its own: the rounds' spread covers the spread between processes.
    Own,
    /// The study's own process (older folders, and where the own process could not run): all
    /// rounds of the study share that process's placement.
    Study,
}

/// A round's canary and how it was taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Taken {
    pub canary: Canary,
    pub process: CanaryProcess,
    /// Why the canary is not from a process of its own.
    pub process_unavailable_reason: Option<String>,
    /// The wall time of taking it, the child's start and exit included (ms).
    pub wall_ms: f64,
}

/// Measures the canary on `cpus` in a process of its own, or in this one where that fails.
pub fn measure_in_own_process(cpus: &[usize]) -> Taken {
    let start = Instant::now();
    let (canary, process, process_unavailable_reason) = match from_child(cpus) {
        Ok(c) => (c, CanaryProcess::Own, None),
        Err(why) => (canary::measure(cpus), CanaryProcess::Study, Some(why)),
    };
    Taken {
        canary,
        process,
        process_unavailable_reason,
        wall_ms: start.elapsed().as_secs_f64() * 1e3,
    }
}

/// The CPU list the child is handed: the first CPU (getpid, memcpy, the one-CPU round trip)
/// and the second (the cross-CPU round trip), in the order the study gave them.
pub fn cpu_list(cpus: &[usize]) -> String {
    let first_two: Vec<String> = cpus.iter().take(2).map(usize::to_string).collect();
    first_two.join(",")
}

/// Reads a `--canary-child` value back: CPU numbers separated by commas (empty: none), by the
/// one CPU-list parser `--pin` uses.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    crate::config::parse_cpu_list(text).ok_or_else(|| {
        format!("{CHILD_FLAG} {text:?}: expected CPU numbers separated by commas, such as 0,1")
    })
}

/// The canary line the child prints.
pub fn child_line(c: &Canary) -> String {
    serde_json::to_string(c).expect("a canary serializes")
}

fn from_child(cpus: &[usize]) -> Result<Canary, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("this executable could not be found to run again: {e}"))?;
    let mut child = Command::new(exe)
        .args(["probe", CHILD_FLAG, &cpu_list(cpus)])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("its process could not start: {e}"))?;
    let status = wait_until(&mut child, CHILD_DEADLINE)?;
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        stdout
            .read_to_string(&mut out)
            .map_err(|e| format!("reading its process's output: {e}"))?;
    }
    if !status.success() {
        return Err(format!("its process ended with {status}"));
    }
    read_child_line(&out)
}

/// The canary of the child's last line of output.
fn read_child_line(out: &str) -> Result<Canary, String> {
    let line = out.lines().last().unwrap_or("");
    serde_json::from_str(line)
        .map_err(|e| format!("its process printed no canary this build reads ({e})"))
}

/// Waits for `child` to exit, stopping it once `deadline` has passed. The child writes one
/// line of well under a pipe's 64 KiB, so it never blocks on its output while unread.
fn wait_until(child: &mut Child, deadline: Duration) -> Result<ExitStatus, String> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if start.elapsed() < deadline => std::thread::sleep(POLL),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "its process took longer than {} ms and was stopped",
                    deadline.as_millis()
                ));
            }
            Err(e) => return Err(format!("waiting for its process: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_list_goes_to_the_child_and_back_in_the_study_s_order() {
        assert_eq!(cpu_list(&[3, 1, 2]), "3,1");
        assert_eq!(parse_cpu_list("3,1"), Ok(vec![3, 1]));
        assert_eq!(cpu_list(&[]), "");
        assert_eq!(parse_cpu_list(""), Ok(vec![]));
        let bad = parse_cpu_list("0,x").unwrap_err();
        assert_eq!(
            bad,
            "--canary-child \"0,x\": expected CPU numbers separated by commas, such as 0,1"
        );
    }

    #[test]
    fn the_child_s_line_reads_back_and_anything_else_is_refused_with_why() {
        let c = canary::fixture(120.0);
        let out = format!("{}\n", child_line(&c));
        assert_eq!(read_child_line(&out), Ok(c));
        let why = read_child_line("running 0 tests\n").unwrap_err();
        assert!(why.starts_with("its process printed no canary"), "{why}");
    }

    #[test]
    fn a_child_past_its_deadline_is_stopped_and_said_so() {
        let mut child = Command::new("sleep").arg("5").spawn().unwrap();
        let start = Instant::now();
        let why = wait_until(&mut child, Duration::from_millis(50)).unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(2), "{why}");
        assert_eq!(why, "its process took longer than 50 ms and was stopped");
    }

    /// Under the test harness this executable is not bytepath: the child refuses the flag, and
    /// the canary is taken here, with the reason, and still measured.
    #[test]
    fn where_the_child_cannot_give_a_canary_it_is_taken_in_this_process_and_said_so() {
        let cpus = crate::sys::affinity::allowed_cpus().unwrap();
        let taken = measure_in_own_process(&cpus);
        assert_eq!(taken.process, CanaryProcess::Study);
        let why = taken.process_unavailable_reason.unwrap();
        assert!(why.starts_with("its process"), "{why}");
        assert!(taken.canary.getpid_ns > 0.0);
        assert!(
            taken.wall_ms >= taken.canary.elapsed_ms,
            "{}",
            taken.wall_ms
        );
    }
}
