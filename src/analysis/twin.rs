//! The one lookup of a paired answer's twin (a point measured with one thing changed, and the
//! same point without it), and the words of a paired ratio's state. `--bidir` pairs a bidir
//! point with its one-way twin, `--under-load` a loaded point with its twin without the load:
//! what makes two points twins, and how "equivalent" and "undecided" read, is said here once.
use super::point::Point;
use crate::stats::verdict::{percent, Verdict};

/// The point of `points` that `p` pairs with: the same mechanism, pattern, transport, receive
/// path, size and threads, and `is_twin` (the other half of the pair: one-way, unloaded).
pub fn twin<'a>(
    p: &Point,
    points: &[&'a Point],
    is_twin: impl Fn(&Point) -> bool,
) -> Option<&'a Point> {
    points.iter().copied().find(|q| {
        is_twin(q)
            && q.mechanism == p.mechanism
            && q.pattern == p.pattern
            && q.transport == p.transport
            && q.recv == p.recv
            && q.size == p.size
            && q.threads == p.threads
    })
}

/// The state of one paired ratio in an answer's words: `above` where the interval lies above
/// 1, `below` where it lies below, and the same words for equivalence and indecision in every
/// answer.
pub fn word(state: Verdict, margin: f64, (above, below): (&str, &str)) -> String {
    match state {
        Verdict::Beats => above.into(),
        Verdict::Slower => below.into(),
        Verdict::Equivalent => format!("equivalent within ±{}", percent(margin)),
        Verdict::Undecided => "undecided".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::synthetic::{record, Shape};

    fn point(mechanism: &'static str, size: u64, bidir: bool) -> Point {
        let r = record(&Shape::stream(mechanism, size, 1, 10.0));
        Point {
            bidir,
            ..crate::analysis::point::from_value(&r, 1).unwrap()
        }
    }

    #[test]
    fn the_twin_is_the_same_point_on_the_other_side_of_the_pair() {
        let points = [
            point("send", 64, true),
            point("copy", 64, false),
            point("send", 4096, false),
            point("send", 64, false),
        ];
        let refs: Vec<&Point> = points.iter().collect();
        let found = twin(&points[0], &refs, |q| !q.bidir).unwrap();
        assert!(std::ptr::eq(found, &points[3]));
        assert!(twin(&points[0], &refs[..3], |q| !q.bidir).is_none());
    }

    #[test]
    fn equivalence_and_indecision_read_alike_in_every_answer() {
        let words = ("raises", "lowers");
        assert_eq!(word(Verdict::Beats, 0.05, words), "raises");
        assert_eq!(word(Verdict::Slower, 0.05, words), "lowers");
        assert_eq!(
            word(Verdict::Equivalent, 0.05, words),
            "equivalent within ±5 %"
        );
        assert_eq!(word(Verdict::Undecided, 0.05, words), "undecided");
    }
}
