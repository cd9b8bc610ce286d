//! Text -> value, one parser per kind of value (sizes, durations, counts, percentages, CPU
//! lists, comma lists, counter selections), each refusing with one line that names the flag
//! and says what is allowed. A parser that more than one flag uses takes the flag's name and
//! words its refusal with it, so no caller rewrites a message. Pure functions: the only I/O
//! is `--pipe-size` reading the kernel's pipe-max-size.
use super::{
    bad, Pattern, Pinning, DEFAULT_QUEUE_DEPTH, MAX_MESSAGE_SIZE, MAX_QUEUE_DEPTH, MAX_THREADS,
};
use crate::error::ConfigError;
use crate::measure::counters::CounterSelection;
use std::time::Duration;

/// The flag of one entry of a list: its refusal names the value alone, and `parse_list` puts
/// the list's flag in front (`--sizes: "12" (12 B): allowed: …`).
pub const LIST_ENTRY: &str = "";

/// How a refusal names the value it refuses: `--flag "text"`, or `"text"` for a `LIST_ENTRY`.
fn named(flag: &str, text: &str) -> String {
    match flag {
        LIST_ENTRY => format!("{text:?}"),
        flag => format!("{flag} {text:?}"),
    }
}

/// Parses `--queue-depth`: submissions in flight at once.
pub fn parse_queue_depth(text: Option<&str>) -> Result<u32, ConfigError> {
    let Some(text) = text else {
        return Ok(DEFAULT_QUEUE_DEPTH);
    };
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_QUEUE_DEPTH).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "--queue-depth {text:?}: allowed: a whole number from 1 to {MAX_QUEUE_DEPTH}"
        ))),
    }
}

/// Parses a byte count: plain digits, or with K/KB/KiB, M/MB/MiB, G/GB/GiB (all binary, any case).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    if digits.is_empty() {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// A message size (`--size`, `--sizes`, server's `--max-message-size`): eight fields of
/// equal size.
pub fn parse_message_size(flag: &str, text: &str) -> Result<usize, ConfigError> {
    let allowed = "a multiple of 8 from 8 B to 64 MiB (e.g. 256, 1K, 4KiB, 512k)";
    let value = named(flag, text);
    let n =
        parse_bytes(text).ok_or_else(|| bad(format!("{value}: not a size; allowed: {allowed}")))?;
    if n == 0 || n % 8 != 0 || n > MAX_MESSAGE_SIZE as u64 {
        return Err(bad(format!("{value} ({n} B): allowed: {allowed}")));
    }
    Ok(n as usize)
}

pub fn parse_recv_size(text: &str) -> Result<usize, ConfigError> {
    let allowed = "1 B to 64 MiB (e.g. 128K)";
    match parse_bytes(text) {
        Some(n) if n >= 1 && n <= MAX_MESSAGE_SIZE as u64 => Ok(n as usize),
        _ => Err(bad(format!("--recv-size {text:?}: allowed: {allowed}"))),
    }
}

/// `--counters`: `auto` counts everything in stream and nothing in rr, where per-thread
/// counters would add their context-switch cost to every round trip.
pub fn parse_counters(text: &str, pattern: Pattern) -> Result<CounterSelection, ConfigError> {
    match text {
        "auto" if pattern != Pattern::Stream => Ok(CounterSelection::None),
        "auto" | "all" => Ok(CounterSelection::All),
        "software" => Ok(CounterSelection::Software),
        "hardware" => Ok(CounterSelection::Hardware),
        "none" => Ok(CounterSelection::None),
        _ => Err(bad(format!(
            "--counters {text:?}: allowed: auto, all, software, hardware, none"
        ))),
    }
}

/// Parses a share given as `2%` or `2` (percent), returning 0.02; allowed: above 0, at most `max_percent`.
pub fn parse_percent(flag: &str, text: &str, max_percent: f64) -> Result<f64, ConfigError> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= max_percent && p.is_finite() => Ok(p / 100.0),
        _ => Err(bad(format!(
            "{flag} {text:?}: allowed: a percentage above 0 and at most {max_percent}, such as 2%"
        ))),
    }
}

/// A pipe buffer or ring size (`--pipe-size`, `--pipe-sizes`), up to the kernel's
/// pipe-max-size.
pub fn parse_pipe_size(flag: &str, text: &str) -> Result<usize, ConfigError> {
    let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .unwrap_or(1 << 20);
    match parse_bytes(text) {
        Some(n) if n >= 4096 && n <= max => Ok(n as usize),
        _ => Err(bad(format!(
            "{}: allowed: 4 KiB to {max} (pipe-max-size)",
            named(flag, text)
        ))),
    }
}

/// A flow count (`--threads`, server's `--max-threads`).
pub fn parse_threads(flag: &str, text: &str) -> Result<usize, ConfigError> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(bad(format!(
            "{}: allowed: a whole number from 1 to {MAX_THREADS}",
            named(flag, text)
        ))),
    }
}

/// Parses `5s`, `1.5s`, `200ms`, `2m`, `500us`; a bare number means seconds.
pub fn parse_duration(flag: &str, text: &str, zero_ok: bool) -> Result<Duration, ConfigError> {
    let allowed = if zero_ok {
        "a duration such as 1s, 1.5s, 200ms, 2m, or 0s"
    } else {
        "a duration above zero such as 5s, 1.5s, 200ms, 2m"
    };
    let err = || bad(format!("{flag} {text:?}: allowed: {allowed}"));
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| err())?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(err()),
    };
    if !seconds.is_finite() || seconds > 86_400.0 || (seconds == 0.0 && !zero_ok) {
        return Err(err());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses `cross`, `same`, or a CPU list (`0,1`, `0-3,6`) checked against `cpus`.
pub fn parse_pinning(text: Option<&str>, cpus: &[usize]) -> Result<Pinning, ConfigError> {
    let online = format_cpu_list(cpus);
    match text.map(str::trim) {
        None | Some("none") => Ok(Pinning::Unpinned),
        Some("cross") if cpus.len() < 2 => Err(bad(format!(
            "--pin cross: needs two CPUs, this process may use only {online}; use --pin same"
        ))),
        Some("cross") => Ok(Pinning::Cross),
        Some("same") => Ok(Pinning::Same),
        Some(list) => {
            let parsed = parse_cpu_list(list).ok_or_else(|| {
                bad(format!(
                    "--pin {list:?}: allowed: cross, same, or a CPU list such as 0,1 or 0-3"
                ))
            })?;
            if let Some(missing) = parsed.iter().find(|c| !cpus.contains(c)) {
                return Err(bad(format!(
                    "--pin {list:?}: CPU {missing} does not exist or is not available; available CPUs: {online}"
                )));
            }
            Ok(Pinning::List(parsed))
        }
    }
}

/// `0-2,5` -> `[0, 1, 2, 5]`, in the order written; `None` for a malformed or empty list.
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b || b - a > 4096 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().ok()?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// `[0,1,2,5]` -> `0-2,5`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Splits a comma list and parses each entry; refuses an empty list, an empty entry and a
/// value given twice (compared after parsing, so `1K,1024` is a duplicate).
pub fn parse_list<T: PartialEq>(
    flag: &str,
    text: &str,
    parse: impl Fn(&str) -> Result<T, ConfigError>,
) -> Result<Vec<T>, ConfigError> {
    if text.trim().is_empty() {
        return Err(bad(format!(
            "{flag} {text:?}: empty; allowed: a comma-separated list such as a,b,c"
        )));
    }
    let mut out: Vec<T> = Vec::new();
    for (i, part) in text.split(',').map(str::trim).enumerate() {
        if part.is_empty() {
            return Err(bad(format!(
                "{flag} {text:?}: entry {} is empty; allowed: a comma-separated list with no empty entries",
                i + 1
            )));
        }
        let value = parse(part).map_err(|e| bad(format!("{flag}: {e}")))?;
        if out.contains(&value) {
            return Err(bad(format!(
                "{flag} {text:?}: {part:?} repeats an earlier value; allowed: each value once"
            )));
        }
        out.push(value);
    }
    Ok(out)
}

/// Bounds of the lists, for the property tests and the error texts.
pub const SIZE_BOUNDS: (usize, usize) = (8, MAX_MESSAGE_SIZE);
pub const THREAD_BOUNDS: (usize, usize) = (1, MAX_THREADS);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_accept_the_documented_spellings() {
        let size = |t| parse_message_size("--size", t).unwrap();
        assert_eq!(size("256"), 256);
        assert_eq!(size("1K"), 1024);
        assert_eq!(size("4KiB"), 4096);
        assert_eq!(size("512k"), 512 * 1024);
        assert_eq!(size("64M"), 64 << 20);
    }

    #[test]
    fn sizes_outside_the_rules_are_refused_with_the_rule() {
        for text in ["0", "12", "65M", "abc", "4X", "", "-8"] {
            let err = parse_message_size("--size", text).unwrap_err().0;
            assert!(err.starts_with(&format!("--size {text:?}")), "{err}");
            assert!(err.contains("multiple of 8"), "{err}");
        }
    }

    #[test]
    fn durations_accept_seconds_milliseconds_and_minutes() {
        assert_eq!(
            parse_duration("-d", "5s", false).unwrap(),
            Duration::from_secs(5)
        );
        assert_eq!(
            parse_duration("-d", "1.5s", false).unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(
            parse_duration("-d", "200ms", false).unwrap(),
            Duration::from_millis(200)
        );
        assert_eq!(
            parse_duration("-d", "2m", false).unwrap(),
            Duration::from_secs(120)
        );
        assert_eq!(parse_duration("-w", "0s", true).unwrap(), Duration::ZERO);
    }

    #[test]
    fn zero_or_unparsable_duration_is_refused() {
        for text in ["0s", "0", "fast", "5x", "1.2.3s", ""] {
            let err = parse_duration("--duration", text, false).unwrap_err().0;
            assert!(err.starts_with("--duration"), "{err}");
        }
    }

    #[test]
    fn auto_counters_stay_off_the_round_trip() {
        assert_eq!(
            parse_counters("auto", Pattern::Rr).unwrap(),
            CounterSelection::None
        );
        assert_eq!(
            parse_counters("auto", Pattern::Stream).unwrap(),
            CounterSelection::All
        );
        assert_eq!(
            parse_counters("all", Pattern::Rr).unwrap(),
            CounterSelection::All
        );
        assert!(parse_counters("some", Pattern::Rr)
            .unwrap_err()
            .0
            .contains("auto, all"));
    }

    #[test]
    fn percentages_parse_with_or_without_the_sign() {
        assert_eq!(parse_percent("--ci", "2%", 50.0).unwrap(), 0.02);
        assert_eq!(parse_percent("--ci", "0.5", 50.0).unwrap(), 0.005);
        for text in ["0", "-1%", "51%", "two", ""] {
            assert!(parse_percent("--ci", text, 50.0)
                .unwrap_err()
                .0
                .starts_with("--ci"));
        }
    }

    #[test]
    fn threads_must_be_between_one_and_1024() {
        assert_eq!(parse_threads("--threads", "4").unwrap(), 4);
        for text in ["0", "1025", "-1", "two"] {
            assert!(parse_threads("--threads", text)
                .unwrap_err()
                .0
                .contains("1 to 1024"));
        }
    }

    /// A parser names the value by the flag it was given, or by the value alone in a list,
    /// whose flag `parse_list` names once.
    #[test]
    fn a_refusal_names_the_flag_it_was_given() {
        assert_eq!(
            parse_threads("--max-threads", "0").unwrap_err().0,
            "--max-threads \"0\": allowed: a whole number from 1 to 1024"
        );
        assert_eq!(
            parse_message_size("--max-message-size", "12").unwrap_err().0,
            "--max-message-size \"12\" (12 B): allowed: a multiple of 8 from 8 B to 64 MiB (e.g. 256, 1K, 4KiB, 512k)"
        );
        let listed = parse_list("--sizes", "256,12", |t| parse_message_size(LIST_ENTRY, t));
        assert!(listed
            .unwrap_err()
            .0
            .starts_with("--sizes: \"12\" (12 B): allowed: a multiple of 8"),);
        let pipe = parse_pipe_size(LIST_ENTRY, "huge").unwrap_err().0;
        assert!(pipe.starts_with("\"huge\": allowed: 4 KiB to "), "{pipe}");
        let pipe = parse_pipe_size("--pipe-size", "1").unwrap_err().0;
        assert!(
            pipe.starts_with("--pipe-size \"1\": allowed: 4 KiB to "),
            "{pipe}"
        );
    }

    #[test]
    fn cpu_lists_must_name_available_cpus() {
        let cpus = [0, 1];
        assert_eq!(
            parse_pinning(Some("0,1"), &cpus).unwrap(),
            Pinning::List(vec![0, 1])
        );
        assert_eq!(
            parse_pinning(Some("0-1"), &cpus).unwrap(),
            Pinning::List(vec![0, 1])
        );
        let err = parse_pinning(Some("0,7"), &cpus).unwrap_err().0;
        assert!(
            err.contains("CPU 7 does not exist") && err.contains("0-1"),
            "{err}"
        );
        assert!(parse_pinning(Some("cross"), &[0]).is_err());
        assert!(parse_pinning(Some("x"), &cpus).is_err());
    }

    #[test]
    fn cpu_lists_format_as_ranges() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 5]), "0-2,5");
        assert_eq!(format_cpu_list(&[3]), "3");
    }

    proptest! {
        #[test]
        fn any_multiple_of_eight_in_range_parses_back(n in 1usize..=(MAX_MESSAGE_SIZE / 8)) {
            prop_assert_eq!(parse_message_size("--size", &(n * 8).to_string()).unwrap(), n * 8);
        }

        #[test]
        fn suffixes_multiply_by_powers_of_1024(n in 1u64..=64, s in prop::sample::select(vec![("K", 10), ("KiB", 10), ("m", 20), ("MB", 20)])) {
            prop_assert_eq!(parse_bytes(&format!("{n}{}", s.0)), Some(n << s.1));
        }

        #[test]
        fn size_parser_never_panics(text in ".{0,12}") {
            let _ = parse_message_size("--size", &text);
        }

        #[test]
        fn listed_sizes_parse_back_in_order(sizes in prop::collection::hash_set(1usize..=(SIZE_BOUNDS.1 / 8), 1..8)) {
            let sizes: Vec<usize> = sizes.into_iter().map(|n| n * 8).collect();
            let text = sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(",");
            prop_assert_eq!(parse_list("--sizes", &text, |t| parse_message_size(LIST_ENTRY, t)).unwrap(), sizes);
        }

        #[test]
        fn a_repeated_thread_count_is_always_refused(list in prop::collection::vec(THREAD_BOUNDS.0..=THREAD_BOUNDS.1, 1..6), pick in any::<prop::sample::Index>()) {
            let mut list = list;
            list.push(*pick.get(&list));
            let text = list.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(",");
            prop_assert!(parse_list("--threads", &text, |t| parse_threads(LIST_ENTRY, t)).is_err());
        }
    }
}
