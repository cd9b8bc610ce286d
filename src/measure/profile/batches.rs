//! Batch means of the copy share over time blocks of one profiled window, so a report can test
//! how the share changes between two points with a spread that is more than sampling noise:
//! samples of one window are autocorrelated (a thread copies in bursts), so Wilson intervals
//! that treat them as independent are too narrow for a test. A perf ring keeps its samples in
//! the order they were taken, and a pinned thread's samples come from one ring, so each
//! thread's samples in order are its timeline; block k holds the k-th share of every thread's
//! samples. Reports state the blocks' lag-1 autocorrelation beside any verdict.
use super::breakdown::{NamedSample, Tally};
use super::categories::Category;
use super::sampler::RawSample;

/// Blocks per window when there are samples for them.
pub const BLOCKS: usize = 10;
/// The fewest samples a block needs for its share to mean anything.
pub const MIN_BLOCK_SAMPLES: usize = 20;
/// The fewest blocks worth keeping: fewer give no usable spread.
pub const MIN_BLOCKS: usize = 4;

/// Each time block's copy share (the copy categories' share of the block's samples); empty
/// when the window has too few samples for `MIN_BLOCKS` blocks. `raw` and `named` are aligned.
pub fn copy_share_blocks(raw: &[RawSample], named: &[NamedSample]) -> Vec<f64> {
    let blocks = BLOCKS.min(named.len() / MIN_BLOCK_SAMPLES);
    if blocks < MIN_BLOCKS || raw.len() != named.len() {
        return Vec::new();
    }
    // Each sample's position within its own thread's timeline, as a share of that timeline.
    let mut seen: std::collections::HashMap<u32, (usize, usize)> = Default::default();
    for s in raw {
        seen.entry(s.tid).or_default().1 += 1;
    }
    let mut tallies: Vec<Tally> = (0..blocks).map(|_| Tally::default()).collect();
    for (s, n) in raw.iter().zip(named) {
        let (at, total) = seen.get_mut(&s.tid).expect("counted above");
        let block = (*at * blocks / *total).min(blocks - 1);
        *at += 1;
        tallies[block].add(n, 1);
    }
    tallies
        .iter()
        .map(|t| {
            Category::ALL
                .iter()
                .filter(|c| c.is_copy())
                .map(|&c| t.share(c))
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::profile::categories::Space;
    use std::sync::Arc;

    fn sample(tid: u32, leaf: &str) -> (RawSample, NamedSample) {
        (
            RawSample {
                tid,
                space: Space::Kernel,
                ip: 0,
                callers: Box::new([]),
            },
            NamedSample {
                space: Space::Kernel,
                frames: vec![Arc::from(leaf)],
            },
        )
    }

    #[test]
    fn each_threads_timeline_is_cut_into_the_same_blocks() {
        // Two threads of 100 samples each: the first half of each copies, the second does not.
        let mut pairs = Vec::new();
        for tid in [1, 2] {
            for i in 0..100 {
                let leaf = if i < 50 {
                    "_copy_from_user"
                } else {
                    "schedule"
                };
                pairs.push(sample(tid, leaf));
            }
        }
        let (raw, named): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
        let blocks = copy_share_blocks(&raw, &named);
        assert_eq!(blocks.len(), BLOCKS);
        assert_eq!(&blocks[..5], &[1.0; 5], "{blocks:?}");
        assert_eq!(&blocks[5..], &[0.0; 5], "{blocks:?}");
    }

    #[test]
    fn too_few_samples_give_no_blocks() {
        let (raw, named): (Vec<_>, Vec<_>) = (0..60).map(|_| sample(1, "schedule")).unzip();
        assert!(copy_share_blocks(&raw, &named).is_empty(), "3 blocks of 20");
    }
}
