//! The file study's answers from synthetic transfers with known outcomes.
use super::*;
use crate::file::record::{FileConfig, SCHEMA_VERSION};
use crate::record::wire::SideUsage;
use FileMechanism::{Mmap, Readsend, Sendfile, Splice};

const MIB: u64 = 1 << 20;
/// Repetitions per point: 8, the fewest from which a comparison may read "equivalent".
const REPS: usize = 8;
/// Per-repetition noise: the same for every mechanism (a shared regime) or its own.
const SHARED: [f64; REPS] = [0.1, -0.1, 0.05, -0.05, 0.0, 0.02, -0.02, 0.0];
const OWN: [f64; REPS] = [0.04, -0.04, -0.03, 0.03, 0.0, 0.02, -0.02, 0.0];
/// Another mechanism's own noise, unlike `OWN`: a pair of figures with noise of their own
/// never shares all of it (a ratio with no spread has no standard error to judge by).
const OTHER: [f64; REPS] = [-0.03, 0.03, 0.04, -0.04, 0.02, 0.0, 0.0, -0.02];

fn usage(cpu_ns: u64, switches: u64) -> SideUsage {
    SideUsage {
        user_ns: cpu_ns / 10,
        system_ns: cpu_ns - cpu_ns / 10,
        voluntary_switches: switches,
        involuntary_switches: 0,
        minor_faults: 0,
        major_faults: 0,
        counters: Default::default(),
        profile: None,
    }
}

/// `REPS` repetitions of `m` at `size`: `ms` per transfer in the shared regime, times `own`.
fn reps(size: u64, m: FileMechanism, ms: f64, own: [f64; REPS], calls: u64) -> Vec<TransferRecord> {
    (0..REPS)
        .map(|rep| {
            let t = ms * (1.0 + SHARED[rep]) * (1.0 + own[rep]);
            TransferRecord {
                schema_version: SCHEMA_VERSION,
                counter_transfer: false,
                size_bytes: size,
                mechanism: m,
                rep: rep as u32,
                residency_before: None,
                elapsed_ms: Some(t),
                throughput_gbps: None,
                server_syscalls: Some(calls),
                client_recv_calls: Some(calls),
                server: Some(usage((t * 1e6 * 0.5) as u64, calls / 2)),
                client: Some(usage((t * 1e6 * 0.4) as u64, calls / 2)),
                verified: None,
                error: None,
                profiled: None,
                cache: None,
            }
        })
        .collect()
}

fn study(mechanisms: &[FileMechanism], reps_: u32, transfers: Vec<TransferRecord>) -> FileStudy {
    let mut sizes: Vec<u64> = transfers.iter().map(|t| t.size_bytes).collect();
    sizes.sort();
    sizes.dedup();
    FileStudy {
        schema_version: SCHEMA_VERSION,
        command: "file",
        config: FileConfig {
            seed: Some(3),
            ..FileConfig::for_tests(sizes, mechanisms.to_vec(), reps_)
        },
        environment: None,
        status: "completed",
        transfers,
        summaries: Vec::new(),
    }
}

#[test]
fn a_sendfile_saving_like_the_seeds_is_confirmed_and_a_tie_cannot_be_told_apart() {
    let mut t = reps(8 * MIB, Readsend, 10.0, [0.0; REPS], 256);
    t.extend(reps(8 * MIB, Sendfile, 3.5, OWN, 2));
    t.extend(reps(8 * MIB, Mmap, 10.1, OWN, 256));
    let s = study(&[Readsend, Sendfile, Mmap], REPS as u32, t);
    let a = answers(&s);
    assert_eq!(a[0].question, SHARE);
    assert_eq!(
        a[0].verdict.as_deref(),
        Some("at 8 MiB: confirmed: the share lies within ±5 % of the seeds' 35 % (90 % CI 34 to 36 %)")
    );
    assert!(
        a[0].details[0].contains("8 MiB sendfile: 35 % of readsend's time: 0.35×"),
        "{:?}",
        a[0].details
    );
    assert!(
        a[0].details[1].contains(
            "8 MiB mmap: 101 % of readsend's time: equivalent within ±5 % (1.01×, 95 % CI"
        ),
        "{:?}",
        a[0].details
    );
    // Two comparisons, one family: Holm's first step at 97.5 %, BH's equivalence at
    // 1 − 2 · 0.05 · 1/2.
    assert!(
        a[0].details[0].contains("0.35× (97.5 % CI"),
        "{:?}",
        a[0].details
    );
    assert!(
        a[0].finding.ends_with(
            "Shares per size: one family: 2 tests, Holm at α = 0.05 (Benjamini–Hochberg for \
             equivalence), equivalence margin ±5 %."
        ),
        "{}",
        a[0].finding
    );
    assert!(a[0].rests_on.contains("seed 3") && a[0].rests_on.contains("loopback TCP"));
    // Where it comes from: less server CPU per byte, far fewer system calls.
    let why = &a[1];
    assert!(
        why.details[0].contains("server CPU per byte 0.35×"),
        "{:?}",
        why.details
    );
    assert!(why.details[0].contains("system calls per transfer 2.0 against 256.0"));
}

#[test]
fn a_wide_interval_containing_the_seeds_share_is_undecided_never_confirmed() {
    // Sendfile's own spread of ±40 % between repetitions: its share's interval holds 0.35 and
    // much else (one real run read "saving 8 to 78 %, confirmed").
    let mut t = reps(MIB, Readsend, 10.0, [0.0; REPS], 16);
    t.extend(reps(
        MIB,
        Sendfile,
        3.5,
        [0.4, -0.3, 0.35, -0.35, 0.0, 0.3, -0.4, 0.0],
        2,
    ));
    let a = answers(&study(&[Readsend, Sendfile], REPS as u32, t));
    let v = a[0].verdict.as_deref().unwrap();
    assert!(
        v.starts_with("at 1 MiB: undecided: the share's 90 % CI ("),
        "{v}"
    );
    assert!(!v.contains("confirmed"), "{v}");
}

#[test]
fn a_saving_far_from_the_seeds_is_not_confirmed() {
    let mut t = reps(MIB, Readsend, 10.0, [0.0; REPS], 16);
    t.extend(reps(MIB, Sendfile, 8.0, OWN, 2));
    let a = answers(&study(&[Readsend, Sendfile], REPS as u32, t));
    assert_eq!(
        a[0].verdict.as_deref(),
        Some("at 1 MiB: not confirmed: sendfile saves less than the seeds' ~65 %")
    );
}

#[test]
fn too_few_points_say_what_is_missing() {
    let one_rep: Vec<TransferRecord> = reps(MIB, Readsend, 10.0, [0.0; REPS], 16)
        .into_iter()
        .chain(reps(MIB, Splice, 9.0, [0.0; REPS], 16))
        .filter(|t| t.rep == 0)
        .collect();
    let a = answers(&study(&[Readsend, Splice], 1, one_rep));
    assert!(a[0]
        .finding
        .contains("1 repetition per point; a paired interval needs at least 2"));
    let no_base = answers(&study(
        &[Sendfile],
        REPS as u32,
        reps(MIB, Sendfile, 3.0, [0.0; REPS], 2),
    ));
    assert!(no_base[0].finding.contains("readsend was not measured"));
    // Splice only: shares, but no seeds' check.
    let mut t = reps(MIB, Readsend, 10.0, [0.0; REPS], 16);
    t.extend(reps(MIB, Splice, 9.0, [0.0; REPS], 16));
    let a = answers(&study(&[Readsend, Splice], REPS as u32, t));
    assert_eq!(a[0].verdict.as_deref(), Some("sendfile not measured"));
    assert!(a[2].finding.contains("measured the warm cache only"));
    assert!(
        a[2].finding.contains("--cache warm,cold"),
        "{}",
        a[2].finding
    );
    assert_eq!(a[2].verdict.as_deref(), Some("cannot be said"));
}

/// `reps` under `cache`, the record naming it.
fn cached(cache: &str, t: Vec<TransferRecord>) -> Vec<TransferRecord> {
    t.into_iter()
        .map(|mut t| {
            t.cache = Some(cache.into());
            t
        })
        .collect()
}

#[test]
fn cold_slower_than_warm_is_said_per_mechanism_and_a_tie_cannot_be_told_apart() {
    let mut t = cached("warm", reps(8 * MIB, Readsend, 10.0, [0.0; REPS], 256));
    t.extend(cached("warm", reps(8 * MIB, Sendfile, 3.5, [0.0; REPS], 2)));
    // Cold: readsend twice as slow; sendfile the same as warm up to its own noise.
    t.extend(cached("cold", reps(8 * MIB, Readsend, 20.0, OTHER, 256)));
    t.extend(cached("cold", reps(8 * MIB, Sendfile, 3.5, OWN, 2)));
    let mut s = study(&[Readsend, Sendfile], REPS as u32, t);
    s.config.cache = "warm,cold".into();
    let a = answers(&s);
    // The shares rest on the warm cache alone, and say so.
    assert!(a[0].details[0].contains("35 % of readsend's time: 0.35×"));
    assert!(
        a[0].rests_on.contains("cache warm (of warm,cold"),
        "{}",
        a[0].rests_on
    );
    let c = &a[2];
    assert_eq!(c.question, CACHE);
    assert!(
        c.details[0].starts_with("8 MiB readsend: cold takes 2.00× (97.5 % CI 1.94 to 2.06)"),
        "{:?}",
        c.details
    );
    assert!(
        c.details[1].starts_with("8 MiB sendfile: cold and warm equivalent within ±5 %"),
        "{:?}",
        c.details
    );
    assert!(c
        .finding
        .contains("cold is slower in 1, faster in 0 and cannot be told apart in 1"));
    // Cold, sendfile takes 3.5/20 of readsend's time: the saving holds.
    assert!(
        c.details[2].contains("sendfile against readsend, both cold: 18 %"),
        "{:?}",
        c.details
    );
    assert!(
        c.finding
            .contains("against 35 % warm: the saving holds cold"),
        "{}",
        c.finding
    );
    assert_eq!(
        c.verdict.as_deref(),
        Some("cold slower in 1 of 2; sendfile's saving at 8 MiB holds cold")
    );
}

#[test]
fn both_caches_with_one_repetition_say_what_is_missing() {
    let mut t = cached("warm", reps(MIB, Readsend, 10.0, [0.0; REPS], 16));
    t.extend(cached("cold", reps(MIB, Readsend, 20.0, [0.0; REPS], 16)));
    t.retain(|t| t.rep == 0);
    let mut s = study(&[Readsend], 1, t);
    s.config.cache = "warm,cold".into();
    let a = answers(&s);
    assert!(a[2]
        .finding
        .contains("a paired interval of cold against warm needs at least 2"));
}

#[test]
fn a_cold_saving_that_cannot_be_told_from_readsend_is_undecided_not_lost() {
    // Cold sendfile about as slow as cold readsend but with ±30 % of its own noise: neither a
    // saving nor its absence is shown.
    let wide = [0.3, -0.3, 0.25, -0.25, 0.0, 0.3, -0.3, 0.0];
    let mut t = cached("warm", reps(8 * MIB, Readsend, 10.0, [0.0; REPS], 256));
    t.extend(cached("warm", reps(8 * MIB, Sendfile, 3.5, [0.0; REPS], 2)));
    t.extend(cached(
        "cold",
        reps(8 * MIB, Readsend, 20.0, [0.0; REPS], 256),
    ));
    t.extend(cached("cold", reps(8 * MIB, Sendfile, 19.0, wide, 2)));
    let mut s = study(&[Readsend, Sendfile], REPS as u32, t);
    s.config.cache = "warm,cold".into();
    let c = &answers(&s)[2];
    assert!(
        c.verdict
            .as_deref()
            .unwrap()
            .ends_with("sendfile's saving at 8 MiB is undecided cold: sendfile's interval against readsend includes 1"),
        "{:?}",
        c.verdict
    );
    assert!(!c.finding.contains("does not hold"), "{}", c.finding);
}

#[test]
fn the_margin_given_judges_equivalence_and_is_stated() {
    let mut t = reps(8 * MIB, Readsend, 10.0, [0.0; REPS], 256);
    t.extend(reps(8 * MIB, Sendfile, 3.5, OWN, 2));
    t.extend(reps(8 * MIB, Mmap, 10.1, OWN, 256));
    let mut s = study(&[Readsend, Sendfile, Mmap], REPS as u32, t);
    s.config.margin = 0.001;
    let a = answers(&s);
    assert_eq!(
        a[0].verdict.as_deref(),
        Some("at 8 MiB: undecided: the share's 90 % CI (34 to 36 %) is too wide to place it within ±0.1 % of the seeds' 35 %")
    );
    // Stated wherever a margin is: no answer says the default ±5 %.
    assert!(!format!("{a:?}").contains("±5 %"), "{a:?}");
    assert!(a[0].rests_on.contains("±0.1 %"), "{}", a[0].rests_on);
    // mmap's 1.01× was equivalent within ±5 %; its interval is far wider than ±0.1 %.
    assert!(
        a[0].details[1].contains("8 MiB mmap: 101 % of readsend's time: undecided (1.01×"),
        "{:?}",
        a[0].details
    );
}

#[test]
fn the_seeds_check_from_two_repetitions_prints_no_bounds_and_decides_nothing() {
    let two = RatioInterval {
        ratio: 0.35,
        low: 0.2,
        high: 0.6,
        n: 2,
        df: 1.0,
    };
    let (line, verdict) = seeds_verdict(1 << 20, &two, 0.05);
    assert!(
        line.contains("a 65 % saving (too few rounds for an interval (2 pairs))"),
        "{line}"
    );
    assert!(
        verdict.ends_with("undecided: too few repetitions to place the saving"),
        "{verdict}"
    );
}

#[test]
fn twenty_four_per_size_shares_are_one_family_and_a_marginal_difference_stays_undecided() {
    // 8 sizes × 3 mechanisms against readsend, every one as fast as readsend but for splice at
    // the largest size, 6 % slower with its own ±5 % per repetition: alone, at 95 %, that
    // reads "slower"; among 24 comparisons it is what chance makes of one of them.
    let sizes: Vec<u64> = (0..8).map(|i| MIB << i).collect();
    let marginal = [0.06, -0.06, 0.05, -0.05, 0.04, -0.04, 0.06, -0.06];
    let mut t = Vec::new();
    for &size in &sizes {
        t.extend(reps(size, Readsend, 10.0, [0.0; REPS], 16));
        t.extend(reps(size, Sendfile, 10.0, OWN, 16));
        t.extend(reps(size, Mmap, 10.0, OWN, 16));
        let splice = if size == 128 * MIB { 10.6 } else { 10.0 };
        t.extend(reps(
            size,
            Splice,
            splice,
            if size == 128 * MIB { marginal } else { OWN },
            16,
        ));
    }
    let s = study(&[Readsend, Sendfile, Splice, Mmap], REPS as u32, t);
    let alone = verdict::judge_one(&share(&s, 128 * MIB, Splice).unwrap(), 0.05);
    assert_eq!(
        alone.state,
        Verdict::Beats,
        "uncorrected, the marginal share is a claim"
    );
    let a = &answers(&s)[0];
    assert_eq!(a.details.len(), 24);
    let line = a
        .details
        .iter()
        .find(|d| d.starts_with("128 MiB splice"))
        .unwrap();
    assert!(
        line.contains("106 % of readsend's time: undecided (1.06×, 99."),
        "{line}"
    );
    assert!(
        a.details
            .iter()
            .all(|d| d.contains("undecided") || d.contains("equivalent")),
        "no claim from 24 comparisons at 1: {:?}",
        a.details
    );
    assert!(
        a.finding.contains(
            "Shares per size: one family: 24 tests, Holm at α = 0.05 (Benjamini–Hochberg for \
             equivalence), equivalence margin ±5 %."
        ),
        "{}",
        a.finding
    );
    assert!(
        a.rests_on.contains("the list is one family"),
        "{}",
        a.rests_on
    );
    assert!(
        !a.rests_on.contains("no family correction"),
        "{}",
        a.rests_on
    );
}
