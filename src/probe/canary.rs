//! The canary: a short fixed workload (tens of milliseconds) whose figures move when the machine
//! does — raw getpid(2) cost, a memcpy beyond the caches, and a 64 B pipe(7) round trip with
//! both ends on one CPU and on two. A study measures it at the start of every round so a shift
//! of the whole machine between two runs can be seen (and divided out by `compare`).
use super::roofline::DRAM_BUFFER_BYTES;
use super::summary::{median, time_batches};
use crate::sys::affinity::pin_current_thread;
use crate::sys::fdio;
use crate::sys::support::raw_getpid;
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

/// The study folder's file of canaries: one JSON line per round (`round`, `unix_s`, `canary`).
pub const CANARY_JSONL: &str = "canary.jsonl";

/// The version of the canary's layout, so `compare` can refuse to pair unlike canaries.
pub const CANARY_VERSION: u32 = 1;
const GETPID_TRIALS: usize = 40;
const GETPID_BATCH: usize = 64;
/// Timed copies of the DRAM-sized buffer after one untimed copy that faults the pages in. With
/// a memory-bandwidth hog on the other CPU one copy's rate swings by about a quarter (a median
/// of 3 moved 16 % from round to round), which left a 16 % slower memcpy undecided by 7 rounds
/// a side; the median of 21 narrows each round's figure about 2.6× (so `compare` names such a
/// shift, see compare::machine's simulation) for about 1 ms a copy on a quiet machine.
pub const MEMCPY_TRIALS: usize = 21;
/// Round-trip batches and round trips per batch of one pipe figure.
const RR_TRIALS: usize = 8;
const RR_BATCH: usize = 10;
/// Timed round trips stop after this long once `RR_MIN_TRIALS` batches are in: a quiet machine
/// does all 8 batches in a few milliseconds, but with the other CPU busy each cross-CPU trip
/// waits for the scheduler (3-5 ms a trip measured here), which made one canary take 0.3-0.7 s.
const RR_BUDGET: std::time::Duration = std::time::Duration::from_millis(20);
const RR_MIN_TRIALS: usize = 2;
const RR_MESSAGE_BYTES: usize = 64;

/// The canary's figures; a figure that could not be taken is `None` with a reason beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Canary {
    pub canary_version: u32,
    /// Median cost of one raw getpid(2).
    pub getpid_ns: f64,
    /// Median bandwidth of copying a buffer larger than the last-level cache.
    pub memcpy_gbit_s: f64,
    /// Each timed copy's bandwidth, in the order made: the spread inside one round, beside
    /// the spread between rounds that `compare` tests on (empty in canaries before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memcpy_trials_gbit_s: Vec<f64>,
    /// Median 64 B round trip over two pipes, both ends on one CPU.
    pub pipe_rr_same_cpu_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipe_rr_same_cpu_unavailable_reason: Option<String>,
    /// The same with the two ends on two CPUs.
    pub pipe_rr_cross_cpu_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipe_rr_cross_cpu_unavailable_reason: Option<String>,
    /// The CPUs the canary ran on (the first of the run's pinning, and the second for cross).
    pub cpus: Vec<usize>,
    /// How long the whole canary took, so its share of a study's wall time can be stated.
    pub elapsed_ms: f64,
}

/// One component of the canary, as `compare` pairs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    Getpid,
    Memcpy,
    PipeRrSameCpu,
    PipeRrCrossCpu,
}

impl Component {
    pub const ALL: [Component; 4] = [
        Component::Getpid,
        Component::Memcpy,
        Component::PipeRrSameCpu,
        Component::PipeRrCrossCpu,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Component::Getpid => "getpid",
            Component::Memcpy => "memcpy",
            Component::PipeRrSameCpu => "pipe round trip, one CPU",
            Component::PipeRrCrossCpu => "pipe round trip, two CPUs",
        }
    }
}

impl Canary {
    /// The component's figure as a cost (larger is slower), so ratios of all components read
    /// the same way: ns per getpid, ns per byte copied, µs per round trip.
    pub fn cost(&self, component: Component) -> Option<f64> {
        match component {
            Component::Getpid => Some(self.getpid_ns),
            Component::Memcpy => (self.memcpy_gbit_s > 0.0).then(|| 8.0 / self.memcpy_gbit_s),
            Component::PipeRrSameCpu => self.pipe_rr_same_cpu_us,
            Component::PipeRrCrossCpu => self.pipe_rr_cross_cpu_us,
        }
    }
}

/// Measures the canary on `cpus[0]` (and `cpus[1]` for the cross-CPU round trip) from threads
/// of its own, so the caller's own placement is left as it was.
pub fn measure(cpus: &[usize]) -> Canary {
    // The heap's freed pages first: the canary's two buffers (48 MiB) come on top of whatever
    // is resident, and this is a study's largest moment.
    crate::sys::release_free_memory();
    let start = Instant::now();
    let first = cpus.first().copied();
    let second = cpus.get(1).copied();
    let (getpid_ns, memcpy_trials_gbit_s) = std::thread::scope(|s| {
        s.spawn(|| {
            if let Some(cpu) = first {
                let _ = pin_current_thread(cpu);
            }
            (getpid_cost_ns(), memcpy_trials_gbit_s())
        })
        .join()
        .expect("the canary thread does not panic")
    });
    let same = match first {
        Some(cpu) => pipe_rr_us(cpu, cpu),
        None => Err("no CPU is allowed to this process".to_string()),
    };
    let cross = match (first, second) {
        (Some(a), Some(b)) => pipe_rr_us(a, b),
        _ => Err("only one CPU is allowed, so there is no second CPU to cross to".to_string()),
    };
    Canary {
        canary_version: CANARY_VERSION,
        getpid_ns,
        memcpy_gbit_s: memcpy_figure(&memcpy_trials_gbit_s),
        memcpy_trials_gbit_s,
        pipe_rr_same_cpu_us: same.as_ref().ok().copied(),
        pipe_rr_same_cpu_unavailable_reason: same.err(),
        pipe_rr_cross_cpu_us: cross.as_ref().ok().copied(),
        pipe_rr_cross_cpu_unavailable_reason: cross.err(),
        cpus: cpus.iter().copied().take(2).collect(),
        elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
    }
}

/// The canary as a text block (what `bytepath probe --canary` prints).
pub fn render(c: &Canary) -> String {
    let rr = |v: Option<f64>, why: &Option<String>| match (v, why) {
        (Some(us), _) => format!("{us:.2} µs"),
        (None, Some(why)) => format!("not measured: {why}"),
        (None, None) => "not measured".to_string(),
    };
    format!(
        "canary (CPUs {:?}, took {:.1} ms)\n  getpid              {:.1} ns\n  memcpy beyond cache {:.1} Gbit/s\n  64 B pipe round trip, one CPU   {}\n  64 B pipe round trip, two CPUs  {}\n",
        c.cpus,
        c.elapsed_ms,
        c.getpid_ns,
        c.memcpy_gbit_s,
        rr(c.pipe_rr_same_cpu_us, &c.pipe_rr_same_cpu_unavailable_reason),
        rr(c.pipe_rr_cross_cpu_us, &c.pipe_rr_cross_cpu_unavailable_reason),
    )
}

fn getpid_cost_ns() -> f64 {
    time_batches(GETPID_TRIALS, GETPID_BATCH, || {
        black_box(raw_getpid());
    })
    .median_ns
}

/// A round's memcpy figure from its trials: the median, so one copy that lost the CPU does
/// not move it.
pub fn memcpy_figure(trials_gbit_s: &[f64]) -> f64 {
    median(trials_gbit_s).unwrap_or(0.0)
}

fn memcpy_trials_gbit_s() -> Vec<f64> {
    let source = vec![0x5au8; DRAM_BUFFER_BYTES];
    let mut target = vec![0u8; DRAM_BUFFER_BYTES];
    target.copy_from_slice(&source);
    (0..MEMCPY_TRIALS)
        .map(|_| {
            let start = Instant::now();
            target.copy_from_slice(black_box(&source));
            black_box(&target);
            let s = start.elapsed().as_secs_f64().max(1e-9);
            DRAM_BUFFER_BYTES as f64 * 8.0 / s / 1e9
        })
        .collect()
}

/// Median 64 B round trip: the client on `client_cpu` writes, the echo thread on `echo_cpu`
/// reads and writes back.
pub(super) fn pipe_rr_us(client_cpu: usize, echo_cpu: usize) -> Result<f64, String> {
    let (to_echo_r, to_echo_w) = fdio::pipe().map_err(|e| format!("pipe2: {e}"))?;
    let (to_client_r, to_client_w) = fdio::pipe().map_err(|e| format!("pipe2: {e}"))?;
    std::thread::scope(|s| {
        let echo = s.spawn(move || echo(echo_cpu, to_echo_r, to_client_w));
        let client = s.spawn(move || client(client_cpu, to_echo_w, to_client_r));
        let timed = client
            .join()
            .map_err(|_| "the client panicked".to_string())?;
        echo.join()
            .map_err(|_| "the echo thread panicked".to_string())??;
        timed
    })
}

/// Echoes every message until the client closes its end between two messages.
fn echo(cpu: usize, input: OwnedFd, output: OwnedFd) -> Result<(), String> {
    pin_current_thread(cpu).map_err(|e| format!("pinning to CPU {cpu}: {e}"))?;
    let mut buf = [0u8; RR_MESSAGE_BYTES];
    while read_message(&input, &mut buf)? {
        write_whole(&output, &buf)?;
    }
    Ok(())
}

fn client(cpu: usize, output: OwnedFd, input: OwnedFd) -> Result<f64, String> {
    pin_current_thread(cpu).map_err(|e| format!("pinning to CPU {cpu}: {e}"))?;
    let mut buf = [7u8; RR_MESSAGE_BYTES];
    // One untimed trip wakes both threads up.
    write_whole(&output, &buf)?;
    read_whole(&input, &mut buf)?;
    let mut per_trip = Vec::with_capacity(RR_TRIALS);
    let timed = Instant::now();
    for _ in 0..RR_TRIALS {
        if enough_round_trips(per_trip.len(), timed.elapsed()) {
            break;
        }
        let start = Instant::now();
        for _ in 0..RR_BATCH {
            write_whole(&output, &buf)?;
            read_whole(&input, &mut buf)?;
        }
        per_trip.push(start.elapsed().as_secs_f64() * 1e6 / RR_BATCH as f64);
    }
    median(&per_trip).ok_or_else(|| "no round trip was timed".to_string())
}

/// Whether the round trips timed so far (`batches`, over `elapsed`) are enough: the budget is
/// spent and the minimum of batches is in.
fn enough_round_trips(batches: usize, elapsed: std::time::Duration) -> bool {
    batches >= RR_MIN_TRIALS && elapsed > RR_BUDGET
}

fn read_whole(fd: &OwnedFd, buf: &mut [u8]) -> Result<(), String> {
    match read_message(fd, buf)? {
        true => Ok(()),
        false => Err("the pipe closed before the echo came back".into()),
    }
}

/// Reads one whole message; `false` when the writer closed its end before the message began
/// (the client's way of saying it is done).
fn read_message(fd: &OwnedFd, buf: &mut [u8]) -> Result<bool, String> {
    let mut done = 0;
    while done < buf.len() {
        match fdio::read(fd.as_fd(), &mut buf[done..]) {
            Ok(0) if done == 0 => return Ok(false),
            Ok(0) => return Err("the pipe closed in the middle of a round trip".into()),
            Ok(n) => done += n,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    Ok(true)
}

fn write_whole(fd: &OwnedFd, buf: &[u8]) -> Result<(), String> {
    let mut done = 0;
    while done < buf.len() {
        done += fdio::write(fd.as_fd(), &buf[done..]).map_err(|e| format!("write: {e}"))?;
    }
    Ok(())
}

/// A canary with fixed figures (getpid as given, memcpy 80 Gbit/s, a 5 µs round trip on one
/// CPU, none across two), for the tests of the modules that read canaries.
#[cfg(test)]
pub(crate) fn fixture(getpid_ns: f64) -> Canary {
    Canary {
        canary_version: CANARY_VERSION,
        getpid_ns,
        memcpy_gbit_s: 80.0,
        memcpy_trials_gbit_s: Vec::new(),
        pipe_rr_same_cpu_us: Some(5.0),
        pipe_rr_same_cpu_unavailable_reason: None,
        pipe_rr_cross_cpu_us: None,
        pipe_rr_cross_cpu_unavailable_reason: Some("one CPU".into()),
        cpus: vec![0],
        elapsed_ms: 20.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canary_measures_every_component_it_can_and_says_why_not_otherwise() {
        let cpus = crate::sys::affinity::allowed_cpus().unwrap();
        let c = measure(&cpus);
        assert!(c.getpid_ns > 0.0 && c.getpid_ns < 1e6, "{c:?}");
        assert!(c.memcpy_gbit_s > 0.0, "{c:?}");
        assert_eq!(c.memcpy_trials_gbit_s.len(), MEMCPY_TRIALS);
        assert_eq!(c.memcpy_gbit_s, memcpy_figure(&c.memcpy_trials_gbit_s));
        assert!(c.pipe_rr_same_cpu_us.unwrap() > 0.0, "{c:?}");
        if cpus.len() >= 2 {
            assert!(c.pipe_rr_cross_cpu_us.unwrap() > 0.0, "{c:?}");
        } else {
            assert!(c.pipe_rr_cross_cpu_unavailable_reason.is_some());
        }
        // Tens of milliseconds, not seconds, even on a loaded machine.
        assert!(c.elapsed_ms < 2000.0, "{c:?}");
    }

    #[test]
    fn round_trips_stop_at_the_budget_only_once_enough_batches_are_in() {
        let over = RR_BUDGET + std::time::Duration::from_millis(1);
        assert!(!enough_round_trips(RR_MIN_TRIALS - 1, over));
        assert!(enough_round_trips(RR_MIN_TRIALS, over));
        assert!(!enough_round_trips(RR_MIN_TRIALS, RR_BUDGET / 2));
    }

    #[test]
    fn cost_reads_every_component_as_larger_is_slower() {
        let c = fixture(100.0);
        assert_eq!(c.cost(Component::Memcpy), Some(0.1));
        assert_eq!(c.cost(Component::Getpid), Some(100.0));
        assert_eq!(c.cost(Component::PipeRrCrossCpu), None);
    }

    #[test]
    fn a_canary_round_trips_through_json_with_its_reasons() {
        // Fixed figures: serde_json's default float parsing may move the last bit of a
        // measured one, which is not what this test is about.
        let c = Canary {
            canary_version: CANARY_VERSION,
            getpid_ns: 125.5,
            memcpy_gbit_s: 96.25,
            memcpy_trials_gbit_s: vec![96.25, 90.5, 97.0],
            pipe_rr_same_cpu_us: Some(4.5),
            pipe_rr_same_cpu_unavailable_reason: None,
            pipe_rr_cross_cpu_us: None,
            pipe_rr_cross_cpu_unavailable_reason: Some("only one CPU".into()),
            cpus: vec![3],
            elapsed_ms: 31.0,
        };
        let text = serde_json::to_string(&c).unwrap();
        assert!(
            !text.contains("pipe_rr_same_cpu_unavailable_reason"),
            "{text}"
        );
        let back: Canary = serde_json::from_str(&text).unwrap();
        assert_eq!(back, c);
        // A canary recorded before the copies were kept reads with none.
        let older = text.replace(r#""memcpy_trials_gbit_s":[96.25,90.5,97.0],"#, "");
        assert_ne!(older, text);
        let back: Canary = serde_json::from_str(&older).unwrap();
        assert!(back.memcpy_trials_gbit_s.is_empty());
    }
}
