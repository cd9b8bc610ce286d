//! The order of a study's visits (the sweep's, ipc's and the servers study's). Points are grouped by what a comparison holds equal (pattern,
//! flows, size); a round visits groups in a seeded shuffled order, and inside a group visits
//! its mechanisms back to back, so every pair of mechanisms is compared within seconds. A
//! group's mechanism order is drawn afresh from the seed on every odd visit of the group and
//! reversed on the next, so in any pair each mechanism goes first once in every two visits (a
//! drift within a round does not read as a difference between them), and in a group of three
//! or more no mechanism keeps the middle or the ends (a fixed order only reversed would).
//! The whole order follows from the seed
//! and from which groups each round includes, so `--resume` replays it exactly and skips the
//! visits already made.
/// What a visit is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VisitKind {
    /// No perf counter open: the headline figures come from these.
    Headline,
    /// Perf counters open: counter figures only, labelled as such.
    Counters,
    /// Every side's threads sampled (`--profile`): the CPU breakdown only.
    Profile,
    /// The kernel's tracepoints open (`--count-copies`): the copies block only.
    Copies,
}

/// One visit to make: which point (its index in the matrix), in which round, for what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlannedVisit {
    pub point: usize,
    pub group: usize,
    pub round: usize,
    pub kind: VisitKind,
}

/// The seeded order of a study's visits.
pub struct Schedule {
    /// Each group's points, in the order drawn from the seed.
    groups: Vec<Vec<usize>>,
    /// Headline visits each group has been given so far (its parity reverses the order).
    visited: Vec<usize>,
    /// Each group's order of its current pair of visits (drawn on the first of the two).
    orders: Vec<Vec<usize>>,
    rng: fastrand::Rng,
}

impl Schedule {
    /// `groups` holds point indexes; every point belongs to exactly one group.
    pub fn new(mut groups: Vec<Vec<usize>>, seed: u64) -> Schedule {
        let mut rng = fastrand::Rng::with_seed(seed);
        for group in &mut groups {
            rng.shuffle(group);
        }
        Schedule {
            visited: vec![0; groups.len()],
            orders: groups.clone(),
            groups,
            rng,
        }
    }

    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// A headline round over `which` groups. With `shuffled` the groups come in a seeded random
    /// order; without, in the order given (adaptive rounds give the neediest first).
    pub fn round(&mut self, round: usize, which: &[usize], shuffled: bool) -> Vec<PlannedVisit> {
        let mut order = which.to_vec();
        if shuffled {
            self.rng.shuffle(&mut order);
        }
        let mut out = Vec::new();
        for g in order {
            let reversed = self.visited[g] % 2 == 1;
            // The group's first visit keeps the order drawn in `new`; every later pair of
            // visits opens with a fresh permutation.
            if !reversed && self.visited[g] > 0 {
                self.rng.shuffle(&mut self.orders[g]);
            }
            self.visited[g] += 1;
            let members = &self.orders[g];
            let ordered: Box<dyn Iterator<Item = &usize>> = if reversed {
                Box::new(members.iter().rev())
            } else {
                Box::new(members.iter())
            };
            out.extend(ordered.map(|&point| PlannedVisit {
                point,
                group: g,
                round,
                kind: VisitKind::Headline,
            }));
        }
        out
    }

    /// A counter round: one counter visit of every point of every group, groups shuffled.
    pub fn counter_round(&mut self, round: usize) -> Vec<PlannedVisit> {
        self.extra_round(round, VisitKind::Counters)
    }

    /// A profile round (`--profile`): one profiled visit of every point, groups shuffled.
    pub fn profile_round(&mut self, round: usize) -> Vec<PlannedVisit> {
        self.extra_round(round, VisitKind::Profile)
    }

    /// A copies round (`--count-copies`): one visit of every point with the tracepoints open.
    pub fn copies_round(&mut self, round: usize) -> Vec<PlannedVisit> {
        self.extra_round(round, VisitKind::Copies)
    }

    fn extra_round(&mut self, round: usize, kind: VisitKind) -> Vec<PlannedVisit> {
        let mut order: Vec<usize> = (0..self.groups.len()).collect();
        self.rng.shuffle(&mut order);
        order
            .into_iter()
            .flat_map(|g| {
                self.groups[g].iter().map(move |&point| PlannedVisit {
                    point,
                    group: g,
                    round,
                    kind,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups() -> Vec<Vec<usize>> {
        vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7, 8], vec![9, 10, 11]]
    }

    fn three_rounds(seed: u64) -> Vec<PlannedVisit> {
        let mut s = Schedule::new(groups(), seed);
        (0..3)
            .flat_map(|r| s.round(r, &[0, 1, 2, 3], true))
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_order_and_another_seed_another() {
        assert_eq!(three_rounds(7), three_rounds(7));
        assert_ne!(three_rounds(7), three_rounds(8));
    }

    #[test]
    fn a_group_is_visited_back_to_back_and_every_point_once_per_round() {
        for round in three_rounds(3).chunks(12) {
            let mut points: Vec<usize> = round.iter().map(|v| v.point).collect();
            for chunk in round.chunks(3) {
                assert!(chunk.iter().all(|v| v.group == chunk[0].group), "{chunk:?}");
            }
            points.sort();
            assert_eq!(points, (0..12).collect::<Vec<_>>());
        }
    }

    #[test]
    fn in_every_pair_each_member_goes_first_on_alternate_visits() {
        let visits = three_rounds(11);
        let position = |round: usize, point: usize| {
            visits
                .iter()
                .position(|v| v.round == round && v.point == point)
                .unwrap()
        };
        for (a, b) in [(0, 1), (0, 2), (4, 5), (9, 11)] {
            let first: Vec<bool> = (0..2).map(|r| position(r, a) < position(r, b)).collect();
            assert_eq!(first, [first[0], !first[0]], "pair {a},{b}");
        }
    }

    #[test]
    fn every_two_visits_pairs_alternate_and_over_many_no_member_keeps_its_position() {
        let mut s = Schedule::new(vec![vec![0, 1, 2]], 17);
        let orders: Vec<Vec<usize>> = (0..20)
            .map(|r| s.round(r, &[0], true).iter().map(|v| v.point).collect())
            .collect();
        for pair in orders.chunks(2) {
            let mut reversed = pair[0].clone();
            reversed.reverse();
            assert_eq!(pair[1], reversed, "{orders:?}");
        }
        // A fixed order only reversed keeps one member in the middle for ever.
        let middles: std::collections::HashSet<usize> = orders.iter().map(|o| o[1]).collect();
        assert_eq!(middles.len(), 3, "{orders:?}");
    }

    #[test]
    fn an_adaptive_round_keeps_the_given_group_order_and_each_groups_alternation() {
        let mut s = Schedule::new(groups(), 5);
        let first = s.round(0, &[0, 1, 2, 3], true);
        let order_of = |visits: &[PlannedVisit], g: usize| -> Vec<usize> {
            visits
                .iter()
                .filter(|v| v.group == g)
                .map(|v| v.point)
                .collect()
        };
        let adaptive = s.round(1, &[2, 0], false);
        assert_eq!(adaptive[0].group, 2);
        assert_eq!(adaptive.len(), 6);
        let mut reversed = order_of(&first, 2);
        reversed.reverse();
        assert_eq!(order_of(&adaptive, 2), reversed);
        let later = s.round(2, &[2], false);
        let mut sorted = order_of(&later, 2);
        sorted.sort();
        assert_eq!(sorted, [6, 7, 8], "a fresh permutation of the same members");
    }

    #[test]
    fn a_counter_round_visits_every_point_once_for_counters() {
        let mut s = Schedule::new(groups(), 1);
        let round = s.counter_round(4);
        assert_eq!(round.len(), 12);
        assert!(round
            .iter()
            .all(|v| v.kind == VisitKind::Counters && v.round == 4));
    }
}
