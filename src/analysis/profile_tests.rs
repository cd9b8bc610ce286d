//! The profile answer on hand-made blocks: a change across sizes is tested on the blocks' batch
//! means and stated with their autocorrelation, or said not tested, never read off intervals.
use super::*;
use crate::measure::profile::categories::Category;

/// A side whose copy share is `copy` of 1,000 samples, with `blocks` time-block shares.
fn side(name: &str, copy: u64, blocks: &[f64]) -> SideProfile {
    let mut counts = [0; Category::ALL.len()];
    counts[0] = copy;
    counts[Category::ALL.len() - 1] = 1000 - copy;
    let mut b = ProfileBlock::of_counts(counts);
    b.copy_share_blocks = blocks.to_vec();
    SideProfile {
        side: name.into(),
        profile: Ok(b),
    }
}

fn point(size: f64, sides: Vec<SideProfile>) -> Profiled {
    Profiled {
        series: "copy (stream, 1 flow(s))".into(),
        mechanism: "copy".into(),
        size,
        at: size_label(size),
        sides,
    }
}

const LOW: [f64; 10] = [0.10, 0.12, 0.09, 0.11, 0.10, 0.12, 0.09, 0.11, 0.10, 0.11];
const SAME: [f64; 10] = [0.11, 0.10, 0.12, 0.09, 0.11, 0.10, 0.12, 0.10, 0.09, 0.11];

#[test]
fn a_rise_in_the_block_shares_is_tested_and_states_its_autocorrelation() {
    let high: Vec<f64> = LOW.iter().map(|s| s * 2.5).collect();
    let points = [
        point(
            256.0,
            vec![side("sender", 105, &LOW), side("receiver", 105, &LOW)],
        ),
        point(
            65536.0,
            vec![side("sender", 262, &high), side("receiver", 105, &SAME)],
        ),
    ];
    let a = answer_for(&points, "profile visit").unwrap();
    assert!(
        a.finding
            .contains("sender 10 % at 256 B → 26 % at 64 KiB: rises: 2.50× ("),
        "{}",
        a.finding
    );
    assert!(a
        .finding
        .contains("(10 and 10 time blocks; lag-1 autocorrelation of the block shares"));
    assert!(
        !a.finding
            .contains("receiver 10 % at 256 B → 10 % at 64 KiB: rises"),
        "equal windows do not rise: {}",
        a.finding
    );
    let v = a.verdict.unwrap();
    assert!(v.contains("sender copy share rises"), "{v}");
    assert!(a.rests_on.contains("batch means") && a.rests_on.contains("2 tests, Holm"));
}

#[test]
fn profiles_without_time_blocks_say_the_change_is_not_tested() {
    let points = [
        point(256.0, vec![side("sender", 100, &[])]),
        point(65536.0, vec![side("sender", 300, &[])]),
    ];
    let a = answer_for(&points, "profile visit").unwrap();
    assert!(
        a.finding
            .contains("a change not tested: the profiles hold no time blocks"),
        "{}",
        a.finding
    );
    assert!(a.verdict.unwrap().contains("copy share not tested"));
}
