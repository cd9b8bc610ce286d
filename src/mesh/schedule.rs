//! The mesh's order: rounds of disjoint pairs, so no host is in two tests at once (the
//! "exclusive" tests of perfSONAR's pScheduler never overlap on a host either). All pairs come
//! from a round-robin tournament by the circle method (one host fixed, the others rotated; a
//! bye when the count is odd): n − 1 rounds one way, n − 1 the other, every round a matching.
//! A subset (ring, star) keeps the tournament's order and is packed greedily into rounds. The
//! whole schedule is repeated once per visit, so each (pair, point) is measured in several
//! short visits spread over the mesh rather than in one long stretch.
use super::spec::{MeshPoint, PairSet};

/// One ordered pair: the source sends (stream) or asks (rr), the destination receives or
/// answers; indices into the host list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pair {
    pub src: usize,
    pub dst: usize,
}

/// Every ordered pair of `hosts` hosts in tournament order, grouped into rounds: each round a
/// matching (no host twice), first every pairing one way, then the other.
pub fn tournament(hosts: usize) -> Vec<Vec<Pair>> {
    if hosts < 2 {
        return Vec::new();
    }
    // An odd count gets a bye (None): whoever meets it sits the round out.
    let mut seats: Vec<Option<usize>> = (0..hosts).map(Some).collect();
    if hosts % 2 == 1 {
        seats.push(None);
    }
    let m = seats.len();
    let mut one_way = Vec::with_capacity(m - 1);
    for _ in 0..m - 1 {
        let round: Vec<Pair> = (0..m / 2)
            .filter_map(|i| {
                Some(Pair {
                    src: seats[i]?,
                    dst: seats[m - 1 - i]?,
                })
            })
            .collect();
        one_way.push(round);
        // Circle method: seat 0 stays, the others move one place round.
        seats[1..].rotate_right(1);
    }
    let other_way = one_way.iter().map(|round| {
        round
            .iter()
            .map(|p| Pair {
                src: p.dst,
                dst: p.src,
            })
            .collect()
    });
    let mut rounds = one_way.clone();
    rounds.extend(other_way);
    rounds
}

/// Whether `pairs` selects the ordered pair.
fn selected(pairs: PairSet, hosts: usize, p: Pair) -> bool {
    let neighbours = |a: usize, b: usize| (a + 1) % hosts == b || (b + 1) % hosts == a;
    match pairs {
        PairSet::All => true,
        PairSet::Ring => neighbours(p.src, p.dst),
        PairSet::Star(center) => p.src == center || p.dst == center,
    }
}

/// The rounds of the selected pairs: the tournament's order, each round filled greedily with
/// pairs whose hosts are free in it. For `all` this is the tournament itself.
pub fn rounds(hosts: usize, pairs: PairSet) -> Vec<Vec<Pair>> {
    let mut pending: Vec<Pair> = tournament(hosts)
        .into_iter()
        .flatten()
        .filter(|&p| selected(pairs, hosts, p))
        .collect();
    let mut rounds = Vec::new();
    while !pending.is_empty() {
        let mut busy = vec![false; hosts];
        let mut round = Vec::new();
        pending.retain(|p| {
            if busy[p.src] || busy[p.dst] {
                return true;
            }
            busy[p.src] = true;
            busy[p.dst] = true;
            round.push(*p);
            false
        });
        rounds.push(round);
    }
    rounds
}

/// One run of the mesh: a point measured once on a pair, in one visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// 0-based.
    pub visit: usize,
    /// 0-based, within the visit.
    pub round: usize,
    pub pair: Pair,
    pub point: MeshPoint,
}

/// The whole schedule: `visits` repetitions of the rounds; within a round, each pair's points
/// back to back. Runs of one round are returned together (they may run at once).
pub fn plan(rounds: &[Vec<Pair>], points: &[MeshPoint], visits: usize) -> Vec<Vec<Run>> {
    let mut out = Vec::with_capacity(visits * rounds.len());
    for visit in 0..visits {
        for (r, round) in rounds.iter().enumerate() {
            let runs = round
                .iter()
                .flat_map(|&pair| {
                    points.iter().map(move |&point| Run {
                        visit,
                        round: r,
                        pair,
                        point,
                    })
                })
                .collect();
            out.push(runs);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn is_matching(round: &[Pair]) -> bool {
        let mut seen = HashSet::new();
        round
            .iter()
            .all(|p| p.src != p.dst && seen.insert(p.src) && seen.insert(p.dst))
    }

    #[test]
    fn every_ordered_pair_once_in_rounds_of_disjoint_pairs() {
        for n in 2..=9 {
            let rounds = rounds(n, PairSet::All);
            let all: Vec<Pair> = rounds.iter().flatten().copied().collect();
            let unique: HashSet<Pair> = all.iter().copied().collect();
            assert_eq!(all.len(), n * (n - 1), "{n} hosts");
            assert_eq!(unique.len(), all.len(), "{n} hosts: a pair twice");
            assert!(rounds.iter().all(|r| is_matching(r)), "{n} hosts");
            // The circle method's optimum: 2(n-1) rounds for even n, 2n for odd.
            let expected = if n % 2 == 0 { 2 * (n - 1) } else { 2 * n };
            assert_eq!(rounds.len(), expected, "{n} hosts");
        }
    }

    #[test]
    fn four_hosts_run_two_pairs_a_round_in_six_rounds() {
        let rounds = rounds(4, PairSet::All);
        assert_eq!(rounds.len(), 6);
        assert!(rounds.iter().all(|r| r.len() == 2));
    }

    #[test]
    fn a_ring_and_a_star_select_their_pairs_only() {
        let ring: HashSet<Pair> = rounds(5, PairSet::Ring).into_iter().flatten().collect();
        assert_eq!(ring.len(), 10);
        assert!(ring.contains(&Pair { src: 4, dst: 0 }) && ring.contains(&Pair { src: 0, dst: 4 }));
        assert!(!ring.contains(&Pair { src: 0, dst: 2 }));
        let star = rounds(4, PairSet::Star(2));
        assert_eq!(star.len(), 6, "every pair holds the centre: one a round");
        assert!(star.iter().flatten().all(|p| p.src == 2 || p.dst == 2));
    }

    #[test]
    fn the_plan_repeats_the_rounds_once_per_visit() {
        let point = MeshPoint {
            mechanism: crate::mechanism::MechanismKind::SEND,
            pattern: crate::config::Pattern::Stream,
            message_size: 4096,
            threads: 1,
            bidir: false,
            loopback_twin: false,
            under_load: false,
        };
        let rounds = rounds(3, PairSet::All);
        let plan = plan(&rounds, &[point, point], 2);
        assert_eq!(plan.len(), 2 * rounds.len());
        assert_eq!(plan.iter().flatten().count(), 2 * 6 * 2);
        assert_eq!(plan[rounds.len()][0].visit, 1);
        assert_eq!(plan[rounds.len()][0].pair, plan[0][0].pair);
    }
}
