//! The machine-change test simulated at this machine's noise: a quiet A/A names no change in
//! more than 5 % of pairs (each round a process of its own, and older folders whose rounds
//! shared the study's process, widened by the between-process spread), and a memory hog's
//! 16 % memcpy shift is still named. The noise is tests/data/noise.json's (the noise bench's
//! default variant): each component's spread from round to round (`round_log_sd`) and the
//! spread of one process's level, (d² − se²) / 2 pooled over the deciding components as
//! `BETWEEN_PROCESS_SD` is.
use super::tests::canary;
use super::*;
use crate::stats::draw::standard_normal as normal;
use serde::Deserialize;

#[derive(Deserialize)]
struct NoiseFile {
    variants: Vec<Variant>,
}

#[derive(Deserialize)]
struct Variant {
    variant: String,
    canary_between_processes: BTreeMap<String, ComponentNoise>,
}

#[derive(Deserialize)]
struct ComponentNoise {
    round_log_sd: f64,
    log_ratio: f64,
    se_from_rounds: f64,
}

/// One component's noise: its spread from round to round inside a process, and that of one
/// process's level.
#[derive(Debug, Clone, Copy)]
struct Noise {
    round: f64,
    process: f64,
}

/// The noise of each component, in `Component::ALL`'s order, as the noise bench measured it.
fn measured() -> [Noise; 4] {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/noise.json");
    let file: NoiseFile = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let default = file
        .variants
        .into_iter()
        .find(|v| v.variant == "default")
        .expect("noise.json has the default variant");
    let field = |c: Component| match c {
        Component::Getpid => "getpid_ns",
        Component::Memcpy => "memcpy_gbit_s",
        Component::PipeRrSameCpu => "pipe_rr_same_cpu_us",
        Component::PipeRrCrossCpu => "pipe_rr_cross_cpu_us",
    };
    let of = |c: Component| &default.canary_between_processes[field(c)];
    let deciding: Vec<&ComponentNoise> = Component::ALL
        .iter()
        .filter(|&&c| decides(c))
        .map(|&c| of(c))
        .collect();
    let process_var = deciding
        .iter()
        .map(|n| (n.log_ratio.powi(2) - n.se_from_rounds.powi(2)) / 2.0)
        .sum::<f64>()
        / deciding.len() as f64;
    Component::ALL.map(|c| Noise {
        round: of(c).round_log_sd,
        process: process_var.max(0.0).sqrt(),
    })
}

/// A canary whose components' log costs are offset by `offsets` (in `Component::ALL`'s order).
fn offset_canary(offsets: [f64; 4]) -> Canary {
    let mut c = canary(1.0, 1.0);
    c.getpid_ns *= offsets[0].exp();
    c.memcpy_gbit_s /= offsets[1].exp();
    c.pipe_rr_same_cpu_us = c.pipe_rr_same_cpu_us.map(|us| us * offsets[2].exp());
    c.pipe_rr_cross_cpu_us = c.pipe_rr_cross_cpu_us.map(|us| us * offsets[3].exp());
    c
}

/// A quiet study's canaries: `rounds` of them, each its own process (an offset drawn per
/// round) or all of the study's one process (an offset drawn once).
fn quiet_study(
    rng: &mut fastrand::Rng,
    noise: &[Noise; 4],
    rounds: usize,
    own: bool,
) -> Vec<Canary> {
    let draw = |rng: &mut fastrand::Rng| noise.map(|n| n.process * normal(rng));
    let study_offset = draw(rng);
    (0..rounds)
        .map(|_| {
            let process = if own { draw(rng) } else { study_offset };
            let mut offsets = [0.0; 4];
            for (i, n) in noise.iter().enumerate() {
                offsets[i] = process[i] + n.round * normal(rng);
            }
            offset_canary(offsets)
        })
        .collect()
}

/// The share of `pairs` simulated quiet A/A pairs of `rounds` rounds a side that name a
/// machine change; `own`: each round a process of its own; `recorded_own`: what the folders
/// say of how they were taken.
fn quiet_named_share(seed: u64, pairs: usize, own: bool, recorded_own: bool) -> f64 {
    let noise = measured();
    let mut rng = fastrand::Rng::with_seed(seed);
    let recorded = |c: Vec<Canary>| match recorded_own {
        true => StudyCanaries::own(c),
        false => StudyCanaries::in_study(c),
    };
    share_named(pairs, || {
        let old = recorded(quiet_study(&mut rng, &noise, 16, own));
        (old, recorded(quiet_study(&mut rng, &noise, 16, own)))
    })
}

/// The share of `pairs` pairs of studies, each drawn by `pair`, in which compare names a
/// machine change.
fn share_named(pairs: usize, mut pair: impl FnMut() -> (StudyCanaries, StudyCanaries)) -> f64 {
    let named = (0..pairs)
        .filter(|_| {
            let (old, new) = pair();
            machine_change(&old, &new)
                .unwrap()
                .beyond_margin()
                .is_some()
        })
        .count();
    named as f64 / pairs as f64
}

#[test]
fn the_noise_file_s_between_process_spread_is_the_one_the_code_allows() {
    let noise = measured();
    // The code's figure was derived from the file; the file may be refreshed (from a quieter
    // run, the allowance is then on the safe side), and a noisier one says by how much the
    // allowance lags it.
    assert!(
        noise[0].process <= BETWEEN_PROCESS_SD + 0.005,
        "noise.json gives {:.4}, the code allows {BETWEEN_PROCESS_SD}",
        noise[0].process
    );
}

#[test]
fn a_quiet_a_a_of_own_process_rounds_names_no_change_beyond_five_percent() {
    // 16 rounds a side (the noise bench's sweeps), every round a process of its own: the
    // rounds' spread holds the processes', and Welch on rounds is the test.
    let named = quiet_named_share(36, 1000, true, true);
    eprintln!(
        "quiet A/A, own-process rounds: named in {:.1} %",
        named * 100.0
    );
    assert!(named <= 0.05, "named in {:.1} %", named * 100.0);
}

#[test]
fn older_folders_whose_rounds_shared_one_process_are_held_by_the_between_process_allowance() {
    // Both studies' canaries taken in their study's process: one offset each, which no count
    // of rounds narrows. With the allowance an A/A names a change in at most 5 %…
    let held = quiet_named_share(37, 1000, false, false);
    assert!(held <= 0.05, "named in {:.1} %", held * 100.0);
    // …and read as if each round were a process of its own (the allowance removed) the same
    // canaries name one in many pairs: what the quiet A/A saw.
    let without = quiet_named_share(37, 1000, false, true);
    eprintln!(
        "quiet A/A, study-process rounds: named in {:.1} % with the allowance, {:.1} % without",
        held * 100.0,
        without * 100.0
    );
    assert!(
        without >= 0.15,
        "without the allowance named in only {:.1} %",
        without * 100.0
    );
}

/// One copy's spread on the log scale with a memory-bandwidth hog on the other CPU: the
/// lead's run (7 rounds a side, median of 3 copies) gave memcpy new/old 1.16 with 95 % CI
/// 0.965–1.393, a per-round spread of 0.158 on the log scale; the median of 3 normal draws
/// spreads 0.67 times as much as one draw, so one copy spreads about 0.236. Taken as the
/// copies' own spread (none of it shared by a round), which is what more copies can narrow.
const HOG_COPY_SPREAD: f64 = 0.236;

/// A study's canaries as the hog leaves them, each round a process of its own (every
/// component offset by that process's level): each round's memcpy the median of `copies`
/// copies whose cost is `memcpy_cost` times the quiet machine's; getpid and the one-CPU round
/// trip 2 % spread a round, unchanged; the cross-CPU round trip anywhere in 1–8×.
fn hogged_study(
    rng: &mut fastrand::Rng,
    rounds: usize,
    copies: usize,
    memcpy_cost: f64,
) -> Vec<Canary> {
    (0..rounds)
        .map(|_| {
            let process = [(); 4].map(|()| (BETWEEN_PROCESS_SD * normal(rng)).exp());
            let trials: Vec<f64> = (0..copies)
                .map(|_| 80.0 / memcpy_cost / process[1] * (HOG_COPY_SPREAD * normal(rng)).exp())
                .collect();
            let mut c = canary(1.0, 1.0);
            c.getpid_ns *= process[0] * (0.02 * normal(rng)).exp();
            c.pipe_rr_same_cpu_us = c
                .pipe_rr_same_cpu_us
                .map(|us| us * process[2] * (0.02 * normal(rng)).exp());
            c.pipe_rr_cross_cpu_us = c
                .pipe_rr_cross_cpu_us
                .map(|us| us * process[3] * 8f64.powf(rng.f64()));
            c.memcpy_gbit_s = crate::probe::canary::memcpy_figure(&trials);
            c.memcpy_trials_gbit_s = trials;
            c
        })
        .collect()
}

/// The share of `pairs` simulated comparisons of `rounds` rounds a side that name a machine
/// change, with the new study's memcpy costing `memcpy_cost`.
fn named_share(seed: u64, pairs: usize, rounds: usize, copies: usize, memcpy_cost: f64) -> f64 {
    let mut rng = fastrand::Rng::with_seed(seed);
    share_named(pairs, || {
        let old = StudyCanaries::own(hogged_study(&mut rng, rounds, copies, 1.0));
        (
            old,
            StudyCanaries::own(hogged_study(&mut rng, rounds, copies, memcpy_cost)),
        )
    })
}

#[test]
fn a_memory_hog_like_shift_of_memcpy_alone_is_named_with_the_canary_s_copies() {
    use crate::probe::canary::MEMCPY_TRIALS;
    // Memcpy 16 % dearer, nothing else, each round a process of its own: named in most
    // comparisons of the noise bench's 16 rounds a side with today's copies…
    let power = named_share(25, 300, 16, MEMCPY_TRIALS, 1.16);
    assert!(power >= 0.8, "named in {:.0} % of 300", power * 100.0);
    // …where the 3 copies of the first canary left it mostly unnamed (the lead's run had 7
    // rounds a side).
    let before = named_share(25, 300, 7, 3, 1.16);
    assert!(
        before < power - 0.2,
        "3 copies {before}, {MEMCPY_TRIALS} copies {power}"
    );
    // And an A/A pair names a change in at most 5 % (Holm over the 3 deciding components;
    // 400 pairs, so 8 % leaves room for chance).
    let false_alarms = named_share(26, 400, 16, MEMCPY_TRIALS, 1.0);
    // Fewer rounds see less (each round now carries its process's offset too): stated, not
    // held.
    let seven = named_share(25, 300, 7, MEMCPY_TRIALS, 1.16);
    eprintln!(
        "memcpy 16 % dearer: named in {:.1} % ({MEMCPY_TRIALS} copies, 16 rounds), {:.1} % ({MEMCPY_TRIALS} copies, 7 rounds), {:.1} % (3 copies, 7 rounds); A/A {:.1} %",
        power * 100.0,
        seven * 100.0,
        before * 100.0,
        false_alarms * 100.0
    );
    assert!(
        false_alarms <= 0.08,
        "A/A named in {:.1} %",
        false_alarms * 100.0
    );
}
