//! Copies counted, not inferred (`--count-copies`): three of the kernel's tracepoints, read
//! through perf rings (`sys::tracepoint`) while a run of their own goes on.
//! - `skb:skb_copy_datagram_iovec` fires in skb_copy_datagram_iter() (net/core/datagram.c)
//!   each time a socket receive copies `len` bytes of a packet to user memory: recv(2),
//!   read(2), io_uring receives, and the part of TCP_ZEROCOPY_RECEIVE that is copied, not
//!   mapped. It fires in the receiving thread's system call, so each hit is kept with the
//!   process it fired in, and a run's copies are its own processes'.
//! - `skb:kfree_skb` fires for every packet the kernel drops (a packet consumed goes through
//!   consume_skb instead), with the drop's reason (enum skb_drop_reason, named from the
//!   event's format file).
//! - `net:net_dev_xmit` fires for every packet a device transmitted: its length and device.
//!
//! Scope: the events are opened per CPU for every task, on the CPUs the run may use. Drops and
//! transmits happen in softirq context, on whatever task the CPU was running or in ksoftirqd,
//! so they cannot be tied to the run's threads: those counts include every task on those
//! CPUs. The receive copies of other processes on the same CPUs are counted apart.
//!
//! Not seen by the copy event: UDP's copy of a datagram held in one linear buffer
//! (copy_linear_skb(), every small datagram on loopback), a datagram copied while its checksum
//! is computed (skb_copy_and_csum_datagram, UDP without checksum offload) and copies outside
//! sockets (pipe_read(), a shared ring). Every hit costs a sample record (about 40 bytes); a thread
//! drains the rings every `DRAIN_EVERY`, and what a full ring dropped is counted as lost.
use crate::sys::tracefs::{is_mounted_at, EventFormat, Field, Tracefs, TRACEFS};
use crate::sys::tracepoint::{CpuTracepoints, RingRecord};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the drain thread empties the rings.
const DRAIN_EVERY: Duration = Duration::from_millis(10);
/// The rings of all CPUs together: a sample record is about 40 bytes, and 64-byte messages
/// over loopback make about 1.5 million hits a second (70 MB/s of records); on a small machine
/// whose CPUs the run keeps busy the drain thread may wait well past `DRAIN_EVERY` for one, so
/// each ring holds a few hundred milliseconds of that where the CPUs are few.
const RINGS_BYTES: usize = 64 << 20;
/// One CPU's ring at most and at least (a power of two each, as perf requires).
const MAX_RING_BYTES: usize = 16 << 20;
const MIN_RING_BYTES: usize = 256 << 10;

/// The receive copies of one process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessCopies {
    pub pid: u32,
    pub bytes: u64,
    /// Times the event fired (one per packet, or part of one, copied).
    pub calls: u64,
}

/// Packets dropped for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCount {
    /// The kernel's name for the reason (`NO_SOCKET`, `OTHERHOST`), or its number where the
    /// format file names none.
    pub reason: String,
    pub code: u64,
    pub packets: u64,
}

/// What one device transmitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceTransmit {
    pub device: String,
    /// Bytes of the packets the device took (return code NETDEV_TX_OK), headers included.
    pub bytes: u64,
    pub packets: u64,
    /// Hits the driver refused (NETDEV_TX_BUSY): handed again later, not counted above.
    pub refused: u64,
}

/// What the tracepoints saw between start and stop.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CopyCounts {
    pub copies: Vec<ProcessCopies>,
    pub drops: Vec<DropCount>,
    pub transmit: Vec<DeviceTransmit>,
    /// Hits a full ring dropped: a count with any is incomplete.
    pub lost: u64,
    /// The CPUs the events were open on.
    pub cpus: Vec<usize>,
    /// Where the events' ids and formats were read, and whether bytepath mounted tracefs.
    pub tracefs: String,
}

impl CopyCounts {
    /// Bytes and calls of the receive copies made in the processes `pids`.
    pub fn copied_by(&self, pids: &[u32]) -> (u64, u64) {
        self.copies
            .iter()
            .filter(|c| pids.contains(&c.pid))
            .fold((0, 0), |(b, n), c| (b + c.bytes, n + c.calls))
    }

    /// Bytes of the receive copies made in other processes than `pids`.
    pub fn copied_by_others(&self, pids: &[u32]) -> u64 {
        let all: u64 = self.copies.iter().map(|c| c.bytes).sum();
        all - self.copied_by(pids).0
    }
}

/// The three events, each with the fields read from its records.
struct Events {
    /// `common_type`, the first field of every record: which event it is.
    kind: Field,
    copy: (u64, Field),
    drop: (u64, Field, Vec<(u64, String)>),
    xmit: (u64, [Field; 3]),
}

/// Tracepoints open and counting on the run's CPUs.
pub struct CopyCounter {
    stop: Arc<AtomicBool>,
    drainer: JoinHandle<Tally>,
    drops_named: Vec<(u64, String)>,
    cpus: Vec<usize>,
    tracefs: String,
}

impl CopyCounter {
    /// Opens the three tracepoints on `cpus` and starts counting. `Err` says why there is no
    /// count (no root, no tracefs, a kernel without the events).
    pub fn start(cpus: &[usize]) -> Result<CopyCounter, String> {
        if cpus.is_empty() {
            return Err("no CPU was named to open the tracepoints on".into());
        }
        let (events, tracefs) = read_events()?;
        let ids = [events.copy.0, events.drop.0, events.xmit.0];
        let mut rings = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            rings.push(open_cpu(&ids, cpu, ring_bytes(cpus.len()))?);
        }
        for ring in &mut rings {
            ring.enable()
                .map_err(|e| format!("enabling the tracepoints failed: {e}"))?;
        }
        let drops_named = events.drop.2.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let drainer = std::thread::Builder::new()
            .name("bytepath-copies".into())
            .spawn(move || drain_until_stopped(rings, &events, &flag))
            .map_err(|e| format!("starting the thread that reads the tracepoints failed: {e}"))?;
        Ok(CopyCounter {
            stop,
            drainer,
            drops_named,
            cpus: cpus.to_vec(),
            tracefs,
        })
    }

    /// Stops counting, reads what the rings still hold and hands the counts over.
    pub fn stop(self) -> Result<CopyCounts, String> {
        self.stop.store(true, Ordering::Release);
        self.drainer.thread().unpark();
        let tally = self
            .drainer
            .join()
            .map_err(|_| "the thread that read the tracepoints panicked".to_string())?;
        Ok(tally.into_counts(&self.drops_named, self.cpus, self.tracefs))
    }
}

/// Reads the events' ids and formats from tracefs, mounting it for that moment where it is not
/// mounted: once the events are open, perf needs tracefs no more. A tracefs found mounted that
/// another process unmounts under the reading (another bytepath that had mounted it) is
/// mounted once more.
fn read_events() -> Result<(Events, String), String> {
    let mut tries = 0;
    loop {
        let fs = Tracefs::open()?;
        let read = (|| {
            let copy = fs.event("skb", "skb_copy_datagram_iovec")?;
            let drop = fs.event("skb", "kfree_skb")?;
            let xmit = fs.event("net", "net_dev_xmit")?;
            events_of(&copy, &drop, &xmit)
        })();
        let gone = !fs.mounted_here() && !is_mounted_at(Path::new(TRACEFS));
        match read {
            Err(_) if gone && tries == 0 => tries += 1,
            Err(e) => return Err(e),
            Ok(events) => return Ok((events, tracefs_said(&fs))),
        }
    }
}

fn tracefs_said(fs: &Tracefs) -> String {
    if fs.mounted_here() {
        format!(
            "bytepath mounted tracefs at {TRACEFS} to read the events' ids and formats and \
             unmounted it at once"
        )
    } else {
        format!("tracefs found mounted at {TRACEFS}")
    }
}

/// The fields each record is read by, found by name in the events' formats.
fn events_of(copy: &EventFormat, drop: &EventFormat, xmit: &EventFormat) -> Result<Events, String> {
    let device = field(xmit, "name")?;
    if !device.is_data_loc() {
        return Err(format!(
            "net_dev_xmit's name is `{}`, not the __data_loc string this build reads",
            device.c_type
        ));
    }
    Ok(Events {
        kind: field(copy, "common_type")?,
        copy: (copy.id, field(copy, "len")?),
        drop: (drop.id, field(drop, "reason")?, drop.symbols("reason")),
        xmit: (xmit.id, [field(xmit, "len")?, field(xmit, "rc")?, device]),
    })
}

fn field(event: &EventFormat, name: &str) -> Result<Field, String> {
    event.field(name).cloned()
}

/// Each CPU's share of [`RINGS_BYTES`], within the bounds, rounded down to a power of two.
fn ring_bytes(cpus: usize) -> usize {
    let share = (RINGS_BYTES / cpus.max(1)).clamp(MIN_RING_BYTES, MAX_RING_BYTES);
    1 << share.ilog2()
}

/// One CPU's ring of `bytes`, halved while the locked-memory limit refuses it.
fn open_cpu(ids: &[u64], cpu: usize, bytes: usize) -> Result<CpuTracepoints, String> {
    let mut bytes = bytes;
    loop {
        match CpuTracepoints::open(ids, cpu, bytes) {
            Ok(ring) => return Ok(ring),
            Err(e) if bytes > MIN_RING_BYTES && e.raw_os_error() == Some(libc::EPERM) => bytes /= 2,
            Err(e) => return Err(open_error(cpu, &e)),
        }
    }
}

fn open_error(cpu: usize, e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "permission: tracepoints of every task on a CPU need root or CAP_PERFMON \
             (perf_event_open on CPU {cpu}: {e})"
        ),
        Some(libc::ENOENT) | Some(libc::ENODEV) => format!(
            "this kernel cannot count tracepoints with perf (perf_event_open on CPU {cpu}: {e})"
        ),
        _ => format!("perf_event_open of the tracepoints on CPU {cpu} failed: {e}"),
    }
}

fn drain_until_stopped(
    mut rings: Vec<CpuTracepoints>,
    events: &Events,
    stop: &AtomicBool,
) -> Tally {
    let mut tally = Tally::default();
    loop {
        let last = stop.load(Ordering::Acquire);
        if last {
            for ring in &mut rings {
                let _ = ring.disable();
            }
        }
        for ring in &mut rings {
            ring.drain(|record| tally.add(events, record));
        }
        if last {
            return tally;
        }
        std::thread::park_timeout(DRAIN_EVERY);
    }
}

/// Running sums, kept in small lists: few processes copy and few devices send in one run.
#[derive(Debug, Default)]
struct Tally {
    copies: Vec<ProcessCopies>,
    drops: Vec<(u64, u64)>,
    transmit: Vec<DeviceTransmit>,
    lost: u64,
}

impl Tally {
    fn add(&mut self, events: &Events, record: RingRecord<'_>) {
        let (pid, raw) = match record {
            RingRecord::Lost(n) => return self.lost += n,
            RingRecord::Hit { pid, raw, .. } => (pid, raw),
        };
        let Some(kind) = events.kind.unsigned(raw) else {
            return;
        };
        if kind == events.copy.0 {
            let len = events.copy.1.integer(raw).unwrap_or(0).max(0) as u64;
            self.copied(pid, len);
        } else if kind == events.drop.0 {
            let code = events.drop.1.unsigned(raw).unwrap_or(u64::MAX);
            match self.drops.iter_mut().find(|(c, _)| *c == code) {
                Some((_, n)) => *n += 1,
                None => self.drops.push((code, 1)),
            }
        } else if kind == events.xmit.0 {
            let [len, rc, name] = &events.xmit.1;
            let device = name.text(raw).unwrap_or("?");
            let sent = rc.integer(raw) == Some(0);
            self.transmitted(device, len.unsigned(raw).unwrap_or(0), sent);
        }
    }

    fn copied(&mut self, pid: u32, len: u64) {
        match self.copies.iter_mut().find(|c| c.pid == pid) {
            Some(c) => (c.bytes, c.calls) = (c.bytes + len, c.calls + 1),
            None => self.copies.push(ProcessCopies {
                pid,
                bytes: len,
                calls: 1,
            }),
        }
    }

    fn transmitted(&mut self, device: &str, len: u64, sent: bool) {
        let at = match self.transmit.iter().position(|d| d.device == device) {
            Some(at) => at,
            None => {
                self.transmit.push(DeviceTransmit {
                    device: device.to_string(),
                    bytes: 0,
                    packets: 0,
                    refused: 0,
                });
                self.transmit.len() - 1
            }
        };
        let d = &mut self.transmit[at];
        if sent {
            (d.bytes, d.packets) = (d.bytes + len, d.packets + 1);
        } else {
            d.refused += 1;
        }
    }

    fn into_counts(self, named: &[(u64, String)], cpus: Vec<usize>, tracefs: String) -> CopyCounts {
        let mut drops: Vec<DropCount> = self
            .drops
            .into_iter()
            .map(|(code, packets)| DropCount {
                reason: named
                    .iter()
                    .find(|(c, _)| *c == code)
                    .map_or_else(|| code.to_string(), |(_, n)| n.clone()),
                code,
                packets,
            })
            .collect();
        drops.sort_by(|a, b| b.packets.cmp(&a.packets).then(a.code.cmp(&b.code)));
        let mut transmit = self.transmit;
        transmit.sort_by(|a, b| a.device.cmp(&b.device));
        CopyCounts {
            copies: self.copies,
            drops,
            transmit,
            lost: self.lost,
            cpus,
            tracefs,
        }
    }
}

#[cfg(test)]
#[path = "copies_tests.rs"]
mod tests;
