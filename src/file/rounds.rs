//! The rounds of a file study's transfers: every size in turn (its test file written, or the
//! user's file, or none when the remote server writes its own), every repetition of every
//! mechanism, each transfer's record appended to the results folder as it ends. Within a
//! repetition the mechanisms go back to back in an order drawn from `--seed` afresh for every
//! two repetitions and reversed on the second of the two, so each repetition is a round of
//! pairs that share the machine's state, in any pair each mechanism goes first equally often,
//! and with three or more no mechanism keeps the middle (an order only reversed would). With
//! `--cache warm,cold` each mechanism's transfers under the two caches go back to back within
//! that order (the pair reversed with it), so a cold transfer and its warm partner share the
//! machine's state too.
use super::mechanisms::FileMechanism;
use super::record::{TransferRecord, SCHEMA_VERSION};
use super::server::FileServer;
use super::test_files::ServedFile;
use super::{transfer, Cache, FileSpec, Server, Source};
use crate::error::{Error, Status};
use crate::measure::counters::CounterSelection;
use crate::record::wire::{FileRequest, Residency};
use crate::report::folder::{ResultsFolder, Saved};
use crate::study::Underway;
use crate::transport::FlowConnector;
use std::fs::File;
use std::io::Read;

/// Which transfer of a (size, mechanism, cache) one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transfer {
    /// A measured repetition, nothing open but getrusage: the figures come from these.
    Measured,
    /// After the repetitions, with the study's perf counters open: its counts, nothing else.
    Counted,
    /// Last, sampled (`--profile`): the file sent this many times over one connection.
    Profiled(u32),
}

impl Transfer {
    /// The counters this transfer opens: the study's in the counted one, none elsewhere.
    fn counters(self, spec: &FileSpec) -> CounterSelection {
        match self {
            Transfer::Counted => spec.counters,
            _ => CounterSelection::None,
        }
    }

    fn repeats(self) -> Option<u32> {
        match self {
            Transfer::Profiled(repeats) => Some(repeats),
            _ => None,
        }
    }
}

/// The (mechanism, cache) pairs of one repetition before reversal: each mechanism of `order`
/// under every cache in turn, so the caches of one mechanism are back to back.
pub fn with_caches(order: &[FileMechanism], caches: &[Cache]) -> Vec<(FileMechanism, Cache)> {
    order
        .iter()
        .flat_map(|&m| caches.iter().map(move |&c| (m, c)))
        .collect()
}

/// The transfers in the order repetition `rep` measures them: the mechanisms in a permutation
/// drawn from `seed` for each two repetitions (the first two keep `seeded_order(.., seed)`),
/// each under every cache (`with_caches`), the second repetition of the two reversed.
pub fn rep_order(
    mechanisms: &[FileMechanism],
    caches: &[Cache],
    seed: u64,
    rep: u32,
) -> Vec<(FileMechanism, Cache)> {
    // A distinct stream per pair of repetitions: the golden-ratio step keeps them apart.
    let pair_seed = seed ^ u64::from(rep / 2).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut out = with_caches(&seeded_order(mechanisms, pair_seed), caches);
    if rep % 2 == 1 {
        out.reverse();
    }
    out
}

/// The mechanisms in an order drawn from `seed`.
pub fn seeded_order(mechanisms: &[FileMechanism], seed: u64) -> Vec<FileMechanism> {
    let mut out = mechanisms.to_vec();
    fastrand::Rng::with_seed(seed).shuffle(&mut out);
    out
}

/// Every size in turn: its test file written (or the user's file), then all its transfers.
pub(super) fn measure_all(
    spec: &FileSpec,
    server: Server<'_>,
    (sizes, source): (&[u64], Source<'_>),
    run: &mut Underway<'_, ResultsFolder>,
    transfers: &mut Vec<TransferRecord>,
) -> Result<Status, Error> {
    let mut status = Status::Success;
    for &size in sizes {
        let served = match source {
            Source::User(f) => Some(f.clone()),
            Source::Server => None,
            Source::Test(t) => match t.write(size, spec.verify, run.interrupt) {
                Ok(f) => Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                    return Ok(Status::Interrupted)
                }
                Err(source) => {
                    return Err(Error::File {
                        path: t.dir.clone(),
                        source,
                    })
                }
            },
        };
        let mut size_run = SizeRun {
            spec,
            size,
            run: &mut *run,
            transfers,
        };
        let measured = match (server, &served) {
            (Server::Here(connector), Some(served)) => size_run.here(connector, served)?,
            (Server::Remote(files), _) => size_run.remote(files)?,
            (Server::Here(_), None) => unreachable!("a study here has its files here"),
        };
        match measured {
            Status::Success => {}
            Status::Failed => status = Status::Failed,
            Status::Interrupted => return Ok(Status::Interrupted),
        }
    }
    Ok(status)
}

/// The transfers of one size, and where their records go.
struct SizeRun<'a, 'u> {
    spec: &'a FileSpec,
    size: u64,
    run: &'a mut Underway<'u, ResultsFolder>,
    transfers: &'a mut Vec<TransferRecord>,
}

impl SizeRun<'_, '_> {
    /// The server a thread here, on a flow from `connector`, sending `served`.
    fn here(
        &mut self,
        connector: &dyn FlowConnector,
        served: &ServedFile,
    ) -> Result<Status, Error> {
        let file_error = |source| Error::File {
            path: served.path.clone(),
            source,
        };
        let (spec, size) = (self.spec, self.size);
        // One cache: warmed once. Both: a cold transfer drops the pages, so each warm one
        // reads the file through first.
        let interleaved = spec.caches.len() > 1;
        if spec.caches == [Cache::Warm] {
            read_through(served).map_err(file_error)?;
        }
        self.measure(|mechanism, cache, rep, kind| {
            if interleaved && cache == Cache::Warm {
                read_through(served).map_err(file_error)?;
            }
            let residency = prepare_cache(served, cache).map_err(file_error)?;
            let setup = transfer::Setup {
                connector,
                placement: spec.placement(),
                chunk: spec.chunk,
                counters: kind.counters(spec),
                profiled: kind.repeats(),
            };
            let measured = transfer::transfer(served, mechanism, setup);
            let mut record = record_of(
                (size, mechanism, cache),
                rep,
                Some(residency),
                measured.map_err(|e| e.to_string()),
            );
            mark_kind(&mut record, kind);
            if let Some(repeats) = kind.repeats() {
                mark_profiled(&mut record, repeats);
            }
            Ok(record)
        })
    }

    /// The server `bytepath server` on another host, writing and sending its own test file.
    fn remote(&mut self, files: &dyn FileServer) -> Result<Status, Error> {
        let (spec, size) = (self.spec, self.size);
        // `--profile` with `--remote` is refused at the command line: never profiled here.
        self.measure(|mechanism, cache, rep, kind| {
            let counters = kind.counters(spec);
            let request = FileRequest {
                size,
                mechanism: mechanism.name().into(),
                chunk: spec.chunk as u64,
                cache: cache.name().into(),
                verify: spec.verify,
                counters: counters.name().into(),
            };
            let measured =
                transfer::transfer_remote(files, &request, rep, spec.placement(), counters);
            let measured = match measured {
                // A refusal (a limit, an older server) holds for every transfer.
                Err(Error::Config(e)) => return Err(Error::Config(e)),
                other => other.map_err(|e| e.to_string()),
            };
            let residency = measured.as_ref().ok().and_then(|m| m.residency);
            let mut record = record_of((size, mechanism, cache), rep, residency, measured);
            mark_kind(&mut record, kind);
            Ok(record)
        })
    }

    fn measure(
        &mut self,
        one: impl FnMut(FileMechanism, Cache, u32, Transfer) -> Result<TransferRecord, Error>,
    ) -> Result<Status, Error> {
        measure_size(self.spec, self.size, self.run, self.transfers, one)
    }
}

/// All repetitions of every mechanism (under every cache) for one size (`rep_order`), then
/// with counters asked for one counted transfer of each under every cache, then with
/// `--profile` one profiled transfer of each under the first cache; `one` measures one
/// transfer of the kind it is given.
fn measure_size(
    spec: &FileSpec,
    size: u64,
    run: &mut Underway<'_, ResultsFolder>,
    transfers: &mut Vec<TransferRecord>,
    mut one: impl FnMut(FileMechanism, Cache, u32, Transfer) -> Result<TransferRecord, Error>,
) -> Result<Status, Error> {
    let mut status = Status::Success;
    let order = seeded_order(&spec.mechanisms, spec.seed ^ size);
    let measured = (0..spec.reps).flat_map(|rep| {
        rep_order(&spec.mechanisms, &spec.caches, spec.seed ^ size, rep)
            .into_iter()
            .map(move |(m, c)| (m, c, rep, Transfer::Measured))
    });
    let counted = with_caches(&order, &spec.caches);
    let counted = counted
        .iter()
        .filter(|_| spec.counters != CounterSelection::None);
    let counted = counted.map(|&(m, c)| (m, c, spec.reps, Transfer::Counted));
    let first = spec.caches.first().copied().unwrap_or(Cache::Warm);
    let profiled = order.iter().filter(|_| spec.profile);
    // Its repeats are fixed from the measured transfers once they are all in (below).
    let profiled = profiled.map(|&m| (m, first, spec.reps, Transfer::Profiled(0)));
    // A canary between repetitions (issue 25): before each repetition's first transfer,
    // recorded in canary.jsonl with the repetition as its round.
    let mut canary_rep = None;
    for (mechanism, cache, rep, kind) in measured.chain(counted).chain(profiled) {
        if run.interrupted() {
            return Ok(Status::Interrupted);
        }
        if rep < spec.reps && canary_rep != Some(rep) {
            run.canary(rep as usize)?;
            canary_rep = Some(rep);
        }
        let kind = match kind {
            Transfer::Profiled(_) => {
                Transfer::Profiled(profile_repeats(transfers, size, mechanism, cache))
            }
            other => other,
        };
        let record = one(mechanism, cache, rep, kind)?;
        if !record.ok() {
            status = Status::Failed;
            eprintln!(
                "file: {size} B {} {} cache rep {rep}: {}",
                mechanism.name(),
                cache.name(),
                record
                    .error
                    .as_deref()
                    .unwrap_or("verify mismatch: the hashes differ")
            );
        }
        run.folder.append(&Saved::from_value(
            serde_json::to_value(&record).expect("the record serializes"),
        ))?;
        transfers.push(record);
    }
    Ok(status)
}

/// One transfer's record, from what it measured or why it failed.
fn record_of(
    (size, mechanism, cache): (u64, FileMechanism, Cache),
    rep: u32,
    residency: Option<Residency>,
    measured: Result<transfer::Measured, String>,
) -> TransferRecord {
    let mut record = TransferRecord {
        profiled: None,
        counter_transfer: false,
        schema_version: SCHEMA_VERSION,
        size_bytes: size,
        mechanism,
        rep,
        residency_before: residency,
        elapsed_ms: None,
        throughput_gbps: None,
        server_syscalls: None,
        client_recv_calls: None,
        server: None,
        client: None,
        verified: None,
        error: None,
        cache: Some(cache.name().into()),
    };
    match measured {
        Ok(m) => {
            let secs = m.elapsed.as_secs_f64();
            record.elapsed_ms = Some(secs * 1e3);
            record.throughput_gbps =
                (secs > 0.0).then(|| m.bytes_received as f64 * 8.0 / secs / 1e9);
            record.server_syscalls = Some(m.server_syscalls);
            record.client_recv_calls = Some(m.client_syscalls);
            record.server = Some(m.server);
            record.client = Some(m.client);
            record.verified = m.verified;
        }
        Err(e) => record.error = Some(e),
    }
    record
}

/// How long the profiled transfer should sample: enough samples at 3999 Hz per busy thread.
const PROFILE_TARGET_MS: f64 = 500.0;

/// Times the profiled transfer sends the file: enough for `PROFILE_TARGET_MS` at the measured
/// transfers' mean time (one when none was measured), at most 64 GiB in all.
fn profile_repeats(transfers: &[TransferRecord], size: u64, m: FileMechanism, cache: Cache) -> u32 {
    let times: Vec<f64> = transfers
        .iter()
        .filter(|t| t.size_bytes == size && t.mechanism == m && t.ok() && t.is_measured())
        .filter(|t| t.cache.as_deref() == Some(cache.name()))
        .filter_map(|t| t.elapsed_ms)
        .collect();
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    let wanted = if mean > 0.0 {
        (PROFILE_TARGET_MS / mean).ceil()
    } else {
        1.0
    };
    let cap = ((64u64 << 30) / size.max(1)).max(1) as f64;
    wanted.clamp(1.0, cap.min(f64::from(u32::MAX))) as u32
}

/// Marks the counted transfer; the others opened no counter, so their sides carry none (an
/// empty map, not a reason per event).
fn mark_kind(record: &mut TransferRecord, kind: Transfer) {
    record.counter_transfer = kind == Transfer::Counted;
    if kind != Transfer::Counted {
        for side in [&mut record.server, &mut record.client]
            .into_iter()
            .flatten()
        {
            side.counters.clear();
        }
    }
}

/// Labels the profiled transfer and fills its blocks' CPU-ns per byte (over every repeat).
fn mark_profiled(record: &mut TransferRecord, repeats: u32) {
    let bytes = record.size_bytes as f64 * f64::from(repeats);
    for side in [&mut record.server, &mut record.client]
        .into_iter()
        .flatten()
    {
        let per_byte = side.cpu_ns() as f64 / bytes;
        if let Some(crate::measure::profile::Profile::Measured(block)) = &mut side.profile {
            // No memcpy cost is measured by the file study: copies' worth is left out.
            block.apply_costs(per_byte, None);
        }
    }
    record.profiled = Some(super::record::ProfiledTransfer {
        repeats,
        description: format!(
            "after the measured transfers, the file sent {repeats} time(s) over one connection \
             with the server's sending thread and the client's receiving thread sampled; kept \
             out of every figure"
        ),
    });
}

/// Warm: reads the whole file once, so its pages are cached.
pub fn read_through(served: &ServedFile) -> std::io::Result<()> {
    let mut file = File::open(&served.path)?;
    let mut buf = vec![0u8; 1 << 20];
    while file.read(&mut buf)? > 0 {}
    Ok(())
}

/// Cold: fsync (dirty pages cannot be dropped) and POSIX_FADV_DONTNEED. Either way, returns
/// what mincore says is resident now, so the report shows what was achieved, not intended.
pub fn prepare_cache(served: &ServedFile, cache: Cache) -> std::io::Result<Residency> {
    let file = File::open(&served.path)?;
    if cache == Cache::Cold {
        file.sync_all()?;
        crate::sys::file::drop_cached_pages(&file)?;
    }
    let (resident_pages, total_pages) = crate::sys::file::resident_pages(&file, served.len)?;
    Ok(Residency {
        resident_pages,
        total_pages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::test_files::TestFolder;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn every_two_repetitions_draw_a_fresh_order_and_reverse_it() {
        let all = [
            FileMechanism::Readsend,
            FileMechanism::Sendfile,
            FileMechanism::Splice,
            FileMechanism::Mmap,
        ];
        let order = seeded_order(&all, 7);
        assert_eq!(order, seeded_order(&all, 7), "the seed gives the order");
        assert!(
            (0..20).any(|s| seeded_order(&all, s) != order),
            "seeds differ"
        );
        let warm = [Cache::Warm];
        let reps: Vec<Vec<FileMechanism>> = (0..20)
            .map(|rep| rep_order(&all, &warm, 7, rep).iter().map(|p| p.0).collect())
            .collect();
        assert_eq!(
            reps[0], order,
            "the first repetition keeps the seeded order"
        );
        for pair in reps.chunks(2) {
            let mut reversed = pair[0].clone();
            reversed.reverse();
            assert_eq!(pair[1], reversed, "{reps:?}");
        }
        // An order only reversed keeps two mechanisms in the middle for ever.
        let mut second: Vec<FileMechanism> = reps.iter().map(|o| o[1]).collect();
        second.sort_by_key(|m| all.iter().position(|a| a == m));
        second.dedup();
        assert!(second.len() > 2, "{reps:?}");
    }

    #[test]
    fn both_caches_of_a_mechanism_go_back_to_back_and_one_cache_keeps_the_order() {
        use FileMechanism::{Readsend, Sendfile};
        let order = [Sendfile, Readsend];
        let one = with_caches(&order, &[Cache::Warm]);
        assert_eq!(one, [(Sendfile, Cache::Warm), (Readsend, Cache::Warm)]);
        let caches = [Cache::Warm, Cache::Cold];
        let first = rep_order(&order, &caches, 3, 0);
        let (a, b) = (first[0].0, first[2].0);
        assert_eq!(first, with_caches(&[a, b], &caches));
        assert_eq!(
            rep_order(&order, &caches, 3, 1),
            [
                (b, Cache::Cold),
                (b, Cache::Warm),
                (a, Cache::Cold),
                (a, Cache::Warm),
            ]
        );
    }

    #[test]
    fn cold_cache_reports_what_mincore_saw_after_dropping() {
        let parent = tempfile::tempdir().unwrap();
        let folder = TestFolder::create(parent.path()).unwrap();
        let served = folder
            .write(8 << 20, false, &AtomicBool::new(false))
            .unwrap();
        read_through(&served).unwrap();
        let warm = prepare_cache(&served, Cache::Warm).unwrap();
        let cold = prepare_cache(&served, Cache::Cold).unwrap();
        let file = File::open(&served.path).unwrap();
        let (now, total) = crate::sys::file::resident_pages(&file, served.len).unwrap();
        assert_eq!(cold.total_pages, total);
        assert_eq!(total, 2048);
        // The kernel may keep pages anyway (e.g. on tmpfs, where they are the file); the figure
        // reported must be what mincore said, never what was intended.
        assert!(
            cold.resident_pages <= warm.resident_pages,
            "{cold:?} vs {warm:?}"
        );
        assert!(
            now.abs_diff(cold.resident_pages) <= total / 100,
            "{now} vs {cold:?}"
        );
        if !is_tmpfs(parent.path()) {
            assert!(
                cold.fraction() < 0.5,
                "DONTNEED after fsync dropped most pages: {cold:?}"
            );
        }
    }

    fn is_tmpfs(path: &std::path::Path) -> bool {
        std::process::Command::new("stat")
            .args(["-f", "-c", "%T"])
            .arg(path)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "tmpfs")
            .unwrap_or(false)
    }
}
