//! Log lines a flood could multiply (connections turned away before a session, sessions
//! refused before they authenticated), throttled: in each interval the first line of each
//! kind is written, the others are counted, and one summary line says how many of each were
//! held back once the interval has passed (at the next such line or the accept loop's next
//! idle poll, whichever comes first). Authenticated sessions' audit lines are never held back.
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one interval lasts.
pub(super) const INTERVAL: Duration = Duration::from_secs(1);

#[derive(Default)]
pub(super) struct Quiet {
    inner: Mutex<Interval>,
    json: bool,
}

#[derive(Default)]
struct Interval {
    began: Option<Instant>,
    /// Kinds written in this interval.
    written: Vec<String>,
    /// Lines held back in this interval, by kind.
    held: BTreeMap<String, u64>,
}

impl Quiet {
    pub(super) fn new(json: bool) -> Quiet {
        Quiet {
            json,
            ..Quiet::default()
        }
    }

    /// Writes `line` to stderr unless a line of `kind` was written in this interval.
    pub(super) fn log(&self, kind: &str, line: impl FnOnce() -> String) {
        if let Some(line) = self.admit(kind, Instant::now(), line) {
            eprintln!("{line}");
        }
    }

    /// The summary of the interval that passed, if it held lines back; written to stderr.
    pub(super) fn flush(&self) {
        if let Some(summary) = self.summary(Instant::now()) {
            eprintln!("{summary}");
        }
    }

    /// What to write now for a line of `kind` (the interval's summary first, when one passed).
    fn admit(&self, kind: &str, now: Instant, line: impl FnOnce() -> String) -> Option<String> {
        let summary = self.summary(now);
        let mut interval = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        interval.began.get_or_insert(now);
        if interval.written.iter().any(|k| k == kind) {
            *interval.held.entry(kind.to_string()).or_insert(0) += 1;
            return summary;
        }
        interval.written.push(kind.to_string());
        let line = line();
        Some(match summary {
            Some(summary) => format!("{summary}\n{line}"),
            None => line,
        })
    }

    /// Ends the interval if it has passed; its summary line when it held lines back.
    fn summary(&self, now: Instant) -> Option<String> {
        let mut interval = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let began = interval.began?;
        if now.duration_since(began) < INTERVAL {
            return None;
        }
        let ended = std::mem::take(&mut *interval);
        if ended.held.is_empty() {
            return None;
        }
        let seconds = now.duration_since(began).as_secs_f64();
        Some(self.render(&ended.held, seconds))
    }

    fn render(&self, held: &BTreeMap<String, u64>, seconds: f64) -> String {
        let total: u64 = held.values().sum();
        if self.json {
            return serde_json::json!({
                "time_unix_ms": std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64),
                "held_back": total,
                "over_s": (seconds * 10.0).round() / 10.0,
                "by_kind": held,
            })
            .to_string();
        }
        let kinds: Vec<String> = held.iter().map(|(k, n)| format!("{n} {k}")).collect();
        format!(
            "bytepath server: {total} more lines like the ones above held back over {seconds:.1} s: {}",
            kinds.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_of_each_kind_is_written_and_the_rest_summed_up_once_the_interval_passed() {
        let quiet = Quiet::new(false);
        let t0 = Instant::now();
        let line = |n: u32| move || format!("line {n}");
        assert_eq!(
            quiet.admit("refused", t0, line(1)).as_deref(),
            Some("line 1")
        );
        assert_eq!(quiet.admit("refused", t0, line(2)), None);
        assert_eq!(
            quiet.admit("turned away", t0, line(3)).as_deref(),
            Some("line 3")
        );
        for n in 4..40 {
            assert_eq!(quiet.admit("refused", t0, line(n)), None);
        }
        assert_eq!(
            quiet.summary(t0 + INTERVAL / 2),
            None,
            "the interval goes on"
        );
        let next = quiet.admit("refused", t0 + INTERVAL, line(40)).unwrap();
        let (summary, written) = next.split_once('\n').unwrap();
        assert!(
            summary.contains("37 more lines like the ones above held back over 1.0 s: 37 refused"),
            "{summary}"
        );
        assert_eq!(written, "line 40");
        assert_eq!(
            quiet.summary(t0 + 3 * INTERVAL),
            None,
            "nothing held back since"
        );
    }

    #[test]
    fn a_quiet_interval_writes_no_summary_and_json_summaries_parse() {
        let quiet = Quiet::new(true);
        let t0 = Instant::now();
        assert!(quiet.admit("refused", t0, || "a".into()).is_some());
        assert_eq!(quiet.summary(t0 + INTERVAL), None);
        assert!(quiet
            .admit("refused", t0 + INTERVAL, || "b".into())
            .is_some());
        assert!(quiet
            .admit("refused", t0 + INTERVAL, || "c".into())
            .is_none());
        let summary = quiet.summary(t0 + 2 * INTERVAL).unwrap();
        let v: serde_json::Value = serde_json::from_str(&summary).unwrap();
        assert_eq!(v["held_back"], 1);
        assert_eq!(v["by_kind"]["refused"], 1);
    }
}
