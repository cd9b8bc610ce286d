//! Leaders and peaks on hand-made rounds, and seeded simulations among equals: the share of
//! studies that claim a leader or a single peak stays at or below α.
use super::*;

/// Five rounds around `mean` with the relative noise `noise` (pattern per candidate).
fn rounds(mean: f64, noise: [f64; 5]) -> Rounds {
    noise
        .iter()
        .enumerate()
        .map(|(r, n)| (r, mean * (1.0 + n)))
        .collect()
}

const A: [f64; 5] = [0.01, -0.01, 0.0, 0.005, -0.005];
const B: [f64; 5] = [-0.01, 0.0, 0.01, -0.005, 0.005];
const C: [f64; 5] = [0.0, 0.01, -0.01, 0.0, 0.0];

fn named(list: &[(&str, Rounds)]) -> Vec<(String, Rounds)> {
    list.iter()
        .map(|(n, r)| (n.to_string(), r.clone()))
        .collect()
}

#[test]
fn a_candidate_that_beats_every_other_leads_and_one_that_beats_only_some_does_not() {
    let clear = named(&[
        ("epoll", rounds(120.0, A)),
        ("poll", rounds(100.0, B)),
        ("select", rounds(80.0, C)),
    ]);
    let l = leadership(&clear, true, 0.05);
    assert_eq!((l.leader, l.top.clone()), (Some(0), vec![0]), "{l:?}");
    assert_eq!(l.family.tests, 3, "every pair, one Holm family");
    // Lower is better: select's 80 leads on cost.
    assert_eq!(leadership(&clear, false, 0.05).leader, Some(2));
    // epoll and poll within 0.5 %: neither beats the other, both stay on top.
    let tied = named(&[
        ("epoll", rounds(100.5, A)),
        ("poll", rounds(100.0, B)),
        ("select", rounds(80.0, C)),
    ]);
    let l = leadership(&tied, true, 0.05);
    assert_eq!((l.leader, l.top), (None, vec![0, 1]));
}

#[test]
fn adjacent_steps_place_a_single_peak_a_plateau_or_none() {
    use Step::*;
    assert_eq!(
        peak(&[Rises, Falls, Falls]),
        Peak::Single { at: 1, falls: true }
    );
    assert_eq!(
        peak(&[Rises, Rises]),
        Peak::Single {
            at: 2,
            falls: false
        }
    );
    assert_eq!(
        peak(&[Falls, NotSeparated]),
        Peak::Single { at: 0, falls: true }
    );
    assert_eq!(
        peak(&[Rises, NotSeparated, Falls]),
        Peak::Plateau {
            from: 1,
            to: 2,
            falls: true
        }
    );
    assert_eq!(peak(&[Rises, Falls, Rises]), Peak::Several(vec![1, 3]));
    assert_eq!(peak(&[NotSeparated, NotSeparated]), Peak::NotSeparated);
}

#[test]
fn steps_are_tested_on_the_later_size_over_the_earlier() {
    let series = named(&[
        ("4 KiB", rounds(10.0, A)),
        ("16 KiB", rounds(20.0, B)),
        ("64 KiB", rounds(12.0, C)),
    ]);
    let s = steps(&series, 0.05);
    assert_eq!(s.steps, [Step::Rises, Step::Falls]);
    assert_eq!(s.peak, Peak::Single { at: 1, falls: true });
    assert!((s.family.judged[0].ratio - 2.0).abs() < 0.01);
}

use crate::stats::draw::standard_normal as normal;

/// `means.len()` candidates over `rounds` rounds: a regime per round shared by all (it
/// cancels in each pair) and each visit's own 5 % spread.
fn simulated(rng: &mut fastrand::Rng, means: &[f64], rounds: usize) -> Vec<(String, Rounds)> {
    let regimes: Vec<f64> = (0..rounds)
        .map(|_| (1.0 + 0.1 * normal(rng)).max(0.3))
        .collect();
    means
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let r = (0..rounds)
                .map(|round| (round, m * regimes[round] * (1.0 + 0.05 * normal(rng))))
                .collect();
            (format!("{i}"), r)
        })
        .collect()
}

const STUDIES: usize = 1000;
/// Two binomial standard errors of a 5 % rate over `STUDIES`.
const NOISE: f64 = 0.014;

/// The old rule: the highest estimate leads when its paired interval against the runner-up
/// (by estimate) excludes 1.
fn curse_claims(c: &[(String, Rounds)]) -> bool {
    let mean = |r: &Rounds| r.iter().map(|x| x.1).sum::<f64>();
    let mut order: Vec<usize> = (0..c.len()).collect();
    order.sort_by(|a, b| mean(&c[*b].1).total_cmp(&mean(&c[*a].1)));
    ratio_of(&c[order[0]].1, &c[order[1]].1, "").is_ok_and(|r| r.low > 1.0)
}

/// The old peak rule: the highest estimate is the peak, and the series "falls beyond" it when
/// any larger size's paired interval against it lies below 1.
fn old_falls(s: &[(String, Rounds)]) -> bool {
    let mean = |r: &Rounds| r.iter().map(|x| x.1).sum::<f64>();
    let top = (0..s.len())
        .max_by(|a, b| mean(&s[*a].1).total_cmp(&mean(&s[*b].1)))
        .unwrap();
    s[top + 1..]
        .iter()
        .any(|(_, r)| ratio_of(r, &s[top].1, "").is_ok_and(|r| r.high < 1.0))
}

#[test]
fn among_equal_candidates_a_leader_is_claimed_in_at_most_five_percent_of_studies() {
    let mut rng = fastrand::Rng::with_seed(24);
    let (mut claims, mut cursed) = (0, 0);
    for _ in 0..STUDIES {
        let c = simulated(&mut rng, &[100.0; 5], 4);
        claims += usize::from(leadership(&c, true, 0.05).leader.is_some());
        cursed += usize::from(curse_claims(&c));
    }
    let (rate, old) = (
        claims as f64 / STUDIES as f64,
        cursed as f64 / STUDIES as f64,
    );
    println!("equal leaders: claimed {rate:.3}, highest-then-test {old:.3}");
    assert!(rate <= 0.05 + NOISE, "claim rate {rate}");
    assert!(old > rate, "the old rule claims more ({old})");
}

#[test]
fn among_equal_sizes_a_single_peak_is_claimed_in_at_most_five_percent_of_studies() {
    let mut rng = fastrand::Rng::with_seed(25);
    let (mut claims, mut cursed) = (0, 0);
    for _ in 0..STUDIES {
        let s = simulated(&mut rng, &[10.0; 7], 4);
        claims += usize::from(matches!(steps(&s, 0.05).peak, Peak::Single { .. }));
        cursed += usize::from(old_falls(&s));
    }
    let (rate, old) = (
        claims as f64 / STUDIES as f64,
        cursed as f64 / STUDIES as f64,
    );
    println!("equal sizes: single peak claimed {rate:.3}, highest-then-test 'falls' {old:.3}");
    assert!(rate <= 0.05 + NOISE, "claim rate {rate}");
    assert!(old > 0.05 + NOISE, "the old rule is cursed ({old})");
}

#[test]
fn a_clear_peak_and_a_clear_leader_are_found() {
    let mut rng = fastrand::Rng::with_seed(26);
    let (mut peaks, mut leaders) = (0, 0);
    for _ in 0..200 {
        let s = simulated(&mut rng, &[5.0, 10.0, 20.0, 10.0, 5.0], 4);
        peaks += usize::from(steps(&s, 0.05).peak == Peak::Single { at: 2, falls: true });
        let c = simulated(&mut rng, &[150.0, 100.0, 100.0], 4);
        leaders += usize::from(leadership(&c, true, 0.05).leader == Some(0));
    }
    assert!(peaks >= 160 && leaders >= 160, "{peaks} {leaders} of 200");
}
