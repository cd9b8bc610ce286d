//! Kernel tracepoints through perf_event_open(2) (`PERF_TYPE_TRACEPOINT`, the event's id from
//! tracefs as its config): one ring buffer per CPU, every hit a sample record carrying the
//! task's pid and tid and the event's raw record (`PERF_SAMPLE_RAW`), as `perf record -e
//! <group>:<name> -a` makes them. Several events of one CPU write into that CPU's ring
//! (PERF_EVENT_IOC_SET_OUTPUT); a record's first field, `common_type`, says which event it is.
//! Events opened for every task of a CPU need root or CAP_PERFMON (perf_event_paranoid ≤ -1
//! otherwise). The perf-event2 crate maps the ring and reads it; no unsafe code here.
use super::sampling::redirect_output;
use perf_event::events::Tracepoint;
use perf_event::{Builder, Counter, SampleFlag, Sampler};
use std::io;

/// One record read from a ring.
#[derive(Debug, PartialEq, Eq)]
pub enum RingRecord<'a> {
    /// A tracepoint hit: the process and thread it fired in, and the event's raw record.
    Hit { pid: u32, tid: u32, raw: &'a [u8] },
    /// The ring was full: this many hits were dropped (`PERF_RECORD_LOST`).
    Lost(u64),
}

const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_SAMPLE: u32 = 9;

/// Tracepoints counted on one CPU, for every task that runs there.
pub struct CpuTracepoints {
    ring: Sampler,
    followers: Vec<Counter>,
}

impl CpuTracepoints {
    /// Opens (disabled) the tracepoints `ids` on `cpu`, every hit sampled into one ring of
    /// `ring_bytes` (a power of two).
    pub fn open(ids: &[u64], cpu: usize, ring_bytes: usize) -> io::Result<CpuTracepoints> {
        let (first, rest) = ids
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no tracepoint"))?;
        let ring = builder(*first, cpu).build()?.sampled(ring_bytes)?;
        let mut followers = Vec::with_capacity(rest.len());
        for &id in rest {
            let event = builder(id, cpu).build()?;
            redirect_output(&event, &ring)?;
            followers.push(event);
        }
        Ok(CpuTracepoints { ring, followers })
    }

    /// Starts counting every event of this CPU.
    pub fn enable(&mut self) -> io::Result<()> {
        self.ring.as_counter_mut().enable()?;
        self.followers.iter_mut().try_for_each(Counter::enable)
    }

    /// Stops counting every event of this CPU.
    pub fn disable(&mut self) -> io::Result<()> {
        self.ring.as_counter_mut().disable()?;
        self.followers.iter_mut().try_for_each(Counter::disable)
    }

    /// Hands every record the ring holds to `visit`, oldest first, and frees its room.
    pub fn drain(&mut self, mut visit: impl FnMut(RingRecord<'_>)) {
        while let Some(record) = self.ring.next_record() {
            let ty = record.ty();
            // Contiguous unless the record wraps around the ring's end (then copied once).
            let bytes = record.to_contiguous();
            match ty {
                PERF_RECORD_SAMPLE => {
                    if let Some(hit) = parse_hit(&bytes) {
                        visit(hit);
                    }
                }
                PERF_RECORD_LOST => visit(RingRecord::Lost(word(&bytes, 8).unwrap_or(0))),
                _ => {}
            }
        }
    }
}

/// Every hit a sample (period 1) with pid/tid and the raw record; kernel mode, where
/// tracepoints fire, included.
fn builder(id: u64, cpu: usize) -> Builder<'static> {
    let mut b = Builder::new(Tracepoint::with_id(id));
    b.any_pid()
        .one_cpu(cpu)
        .sample_period(1)
        .sample(SampleFlag::TID | SampleFlag::RAW)
        .include_kernel()
        .enabled(false);
    b
}

/// A sample's body for sample_type TID | RAW: pid and tid (u32 each), the raw record's size
/// (u32) and the raw record (perf_event_open(2), PERF_RECORD_SAMPLE).
fn parse_hit(bytes: &[u8]) -> Option<RingRecord<'_>> {
    let u32_at = |at: usize| Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let (pid, tid, size) = (u32_at(0)?, u32_at(4)?, u32_at(8)? as usize);
    let raw = bytes.get(12..12 + size)?;
    Some(RingRecord::Hit { pid, tid, raw })
}

/// The native-endian u64 at byte `at` of a record body.
fn word(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_body_gives_pid_tid_and_the_raw_record() {
        let mut body = Vec::new();
        body.extend_from_slice(&7u32.to_ne_bytes());
        body.extend_from_slice(&9u32.to_ne_bytes());
        body.extend_from_slice(&4u32.to_ne_bytes());
        body.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(
            parse_hit(&body),
            Some(RingRecord::Hit {
                pid: 7,
                tid: 9,
                raw: &[1, 2, 3, 4]
            })
        );
        // A size that runs past the record is not read.
        body[8..12].copy_from_slice(&40u32.to_ne_bytes());
        assert_eq!(parse_hit(&body), None);
    }

    #[test]
    fn no_tracepoint_is_refused() {
        assert!(CpuTracepoints::open(&[], 0, 1 << 16).is_err());
    }
}
