//! The probe as a readable text block: one section each for clocks (clock_getres(2)),
//! syscalls (syscall(2)), the memcpy roofline, counters (perf_event_open(2)) and kernel
//! features; every figure with its unit and how many trials it came from.
use super::clocks::{ClockFigures, Clocks, TscFigures};
use super::counters::Counters;
use super::features::{Feature, KernelLimits, PathFeature};
use super::roofline::Roofline;
use super::roofline_threads::ThreadCurve;
use super::summary::Timing;
use super::syscalls::Syscalls;
use super::Probe;
use crate::measure::unmeasured;
use std::fmt::Write;

pub fn render(p: &Probe) -> String {
    let mut out = String::new();
    let env = &p.environment;
    let _ = writeln!(
        out,
        "bytepath probe: kernel {}, {}, {} online CPUs (allowed {}){}{}\n",
        env.kernel_release,
        env.cpu_model,
        env.online_cpus,
        env.allowed_cpus,
        if env.running_as_root { ", root" } else { "" },
        if p.quick { ", --quick" } else { "" },
    );
    clocks(&mut out, &p.clocks);
    syscalls(&mut out, &p.syscalls);
    roofline(&mut out, &p.memcpy_roofline);
    counters(&mut out, &p.counters);
    features(&mut out, p);
    crr_ports(&mut out, &p.crr_ports);
    let _ = writeln!(out, "\nprobe took {:.2} s", p.elapsed_s);
    out
}

/// A duration in nanoseconds with a unit that keeps 2-3 significant digits.
pub fn ns(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.1} ns")
    } else if v < 1e3 {
        format!("{v:.0} ns")
    } else if v < 1e6 {
        format!("{:.2} µs", v / 1e3)
    } else {
        format!("{:.2} ms", v / 1e6)
    }
}

/// A byte count in the largest binary unit that divides it, else in bytes.
pub fn bytes(v: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if v >= 1 << shift && v % (1 << shift) == 0 {
            return format!("{} {unit}", v >> shift);
        }
    }
    format!("{v} B")
}

fn min_median(t: &Timing) -> String {
    format!("{} / {}", ns(t.min_ns), ns(t.median_ns))
}

fn or_na<T>(value: Option<T>, reason: &Option<String>, show: impl Fn(T) -> String) -> String {
    match value {
        Some(v) => show(v),
        None => format!("n/a ({})", reason.as_deref().unwrap_or("unknown")),
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn clocks(out: &mut String, c: &Clocks) {
    let (trials, batch) = c
        .clocks
        .iter()
        .find_map(|f| f.read_cost.map(|t| (t.trials, t.batch)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "clocks (resolution: clock_getres; read cost: {trials} trials of {batch} back-to-back \
         clock_gettime calls, per call, min / median)"
    );
    let _ = writeln!(
        out,
        "  {:<24}{:>12}{:>16}   read cost",
        "clock", "resolution", "smallest step"
    );
    for f in &c.clocks {
        clock_line(out, f);
    }
    tsc(out, &c.tsc);
}

/// The TSC: its clocksource and flags, frequency, and what reading it costs.
fn tsc(out: &mut String, t: &TscFigures) {
    let _ = writeln!(
        out,
        "  clocksource {}; rdtscp {}; constant_tsc {}; nonstop_tsc {}; tsc_known_freq {}",
        or_na(
            t.clocksource.clone(),
            &t.clocksource_unavailable_reason,
            |s| s
        ),
        yes_no(t.rdtscp_available),
        yes_no(t.constant_tsc),
        yes_no(t.nonstop_tsc),
        yes_no(t.tsc_known_freq),
    );
    let spread = or_na(
        t.frequency_spread_ppm,
        &t.frequency_spread_ppm_unavailable_reason,
        |s| format!("{s:.1} ppm"),
    );
    let _ = writeln!(
        out,
        "  TSC frequency {} (median of {} calibrations {} ms apart against CLOCK_MONOTONIC, \
         spread {spread})\n  TSC frequency from sysfs: {}",
        or_na(
            t.frequency_hz,
            &t.frequency_hz_unavailable_reason,
            |hz| format!("{:.4} GHz", hz / 1e9)
        ),
        t.frequency_calibrations,
        t.frequency_interval_ms,
        or_na(
            t.sysfs_frequency_hz,
            &t.sysfs_frequency_hz_unavailable_reason,
            |hz| format!("{:.4} GHz", hz as f64 / 1e9)
        ),
    );
    let cost = or_na(t.rdtscp_cost, &t.rdtscp_cost_unavailable_reason, |c| {
        format!("{} ({} trials of {})", min_median(&c), c.trials, c.batch)
    });
    let gap = or_na(t.rdtscp_gap, &t.rdtscp_gap_unavailable_reason, |g| {
        format!(
            "{:.0} / {:.0} TSC cycles ({} pairs)",
            g.min_cycles, g.median_cycles, g.pairs
        )
    });
    let _ = writeln!(out, "  rdtscp cost per call min / median {cost}");
    let _ = writeln!(out, "  rdtscp back-to-back gap min / median {gap}\n");
}

fn clock_line(out: &mut String, f: &ClockFigures) {
    let resolution = or_na(f.resolution_ns, &f.resolution_ns_unavailable_reason, |v| {
        ns(v as f64)
    });
    let step = or_na(
        f.smallest_step_ns,
        &f.smallest_step_ns_unavailable_reason,
        |v| ns(v as f64),
    );
    let cost = or_na(f.read_cost, &f.read_cost_unavailable_reason, |t| {
        min_median(&t)
    });
    let _ = writeln!(out, "  {:<24}{resolution:>12}{step:>16}   {cost}", f.clock);
}

fn syscalls(out: &mut String, s: &Syscalls) {
    let _ = writeln!(
        out,
        "syscalls (raw syscall(2); {} trials of {} back-to-back calls, per call, min / median)",
        s.getpid.trials, s.getpid.batch
    );
    let _ = writeln!(out, "  {:<10}{}", "getpid", min_median(&s.getpid));
    let _ = writeln!(out, "  {:<10}{}\n", "getuid", min_median(&s.getuid));
}

fn roofline(out: &mut String, r: &Roofline) {
    let _ = writeln!(
        out,
        "memcpy roofline (copy_from_slice; one thread, then threads at once; bytes copied per \
         second, best / median)"
    );
    for p in &r.points {
        let bw = or_na(p.bandwidth, &p.bandwidth_unavailable_reason, |b| {
            format!(
                "{:.1} / {:.1} GiB/s   ({:.1} / {:.1} GB/s)",
                b.best_gib_per_s, b.median_gib_per_s, b.best_gb_per_s, b.median_gb_per_s
            )
        });
        let _ = writeln!(
            out,
            "  {:<6}{:>9}   {bw}   {} trials of {} cop{}",
            p.level,
            bytes(p.buffer_bytes),
            p.copy_time.trials,
            p.copy_time.batch,
            if p.copy_time.batch == 1 { "y" } else { "ies" },
        );
    }
    let l2 = or_na(
        r.l2_cache_bytes,
        &r.l2_cache_bytes_unavailable_reason,
        bytes,
    );
    let _ = writeln!(
        out,
        "  L2 is {l2}; the l2 buffer is a quarter of it, so source and destination stay resident"
    );
    if let Some(curve) = &r.by_threads {
        thread_curve(out, curve);
    }
    out.push('\n');
}

/// The curve: aggregate and per-thread bandwidth beyond the caches at each thread count.
fn thread_curve(out: &mut String, c: &ThreadCurve) {
    let _ = writeln!(
        out,
        "  beyond the caches, threads copying at once (aggregate best / median, per thread \
         median; {} allowed CPUs; beyond one thread, the dram point, measured in {:.2} s):",
        c.allowed_cpus, c.elapsed_s
    );
    for p in &c.points {
        let bw = or_na(p.aggregate, &p.aggregate_unavailable_reason, |b| {
            format!(
                "{:.1} / {:.1} GB/s   ({:.1} GB/s per thread)",
                b.best_gb_per_s, b.median_gb_per_s, b.per_thread_median_gb_per_s
            )
        });
        let unpinned = p
            .pinning_unavailable_reason
            .as_ref()
            .map_or(String::new(), |why| format!("; unpinned: {why}"));
        let _ = writeln!(
            out,
            "  {:>3} thread{} {bw}   {} each, {} trials{unpinned}",
            p.threads,
            if p.threads == 1 { " " } else { "s" },
            bytes(p.buffer_bytes_per_thread),
            p.trials,
        );
    }
}

fn counters(out: &mut String, c: &Counters) {
    let paranoid = or_na(
        c.perf_event_paranoid,
        &c.perf_event_paranoid_unavailable_reason,
        |p| p.to_string(),
    );
    let _ = writeln!(
        out,
        "counters (perf_event_open(2), per thread, over a ~1 ms busy loop; perf_event_paranoid={paranoid}, PMU {}, {})",
        if c.pmu_present { "present" } else { "absent" },
        if c.running_as_root { "root" } else { "not root" },
    );
    // An event that could not be counted, for one reason shared with others, is one line
    // with them.
    let cells: Vec<(&str, Vec<Option<&str>>)> = c
        .events
        .iter()
        .map(|e| (e.event, vec![uncounted(e)]))
        .collect();
    let folded = unmeasured::fold(&cells);
    for e in folded.kept.iter().map(|&i| &c.events[i]) {
        let state = match (e.count, &e.scope) {
            (Some(v), Some(scope)) => format!(
                "counted, {} ({v:.0} {})",
                match scope {
                    crate::measure::counters::Scope::UserAndKernel => "user+kernel",
                    crate::measure::counters::Scope::UserOnly => "user only",
                },
                e.count_unit
            ),
            _ => or_na(None::<()>, &e.count_unavailable_reason, |_| String::new()),
        };
        let _ = writeln!(out, "  {:<20}{state}", e.event);
    }
    for line in &folded.unmeasured {
        let _ = writeln!(out, "  {line}");
    }
    out.push('\n');
}

/// Why an event has no count, when it has none (an event with no count and no reason
/// recorded reads "unknown", as its row would).
fn uncounted(e: &super::counters::EventFigures) -> Option<&str> {
    match (e.count, &e.scope) {
        (Some(_), Some(_)) => None,
        _ => Some(e.count_unavailable_reason.as_deref().unwrap_or("unknown")),
    }
}

fn feature_line(out: &mut String, name: &str, f: &Feature) {
    let state = match &f.unavailable_reason {
        None if f.available => "yes".to_string(),
        reason => format!("no ({})", reason.as_deref().unwrap_or("unknown")),
    };
    let _ = writeln!(out, "  {name:<22}{state}");
}

fn features(out: &mut String, p: &Probe) {
    let (f, l) = (&p.kernel_features, &p.kernel_limits);
    let _ = writeln!(out, "kernel features (each tried once on loopback)");
    feature_line(out, "MSG_ZEROCOPY", &f.msg_zerocopy);
    feature_line(out, "io_uring", &f.io_uring);
    feature_line(out, "sendfile", &f.sendfile);
    feature_line(out, "splice", &f.splice);
    feature_line(out, "TCP_ZEROCOPY_RECEIVE", &f.tcp_zerocopy_receive);
    feature_line(out, "UDP GSO (UDP_SEGMENT)", &f.udp_gso);
    feature_line(out, "MSG_ZEROCOPY on UDP", &f.udp_zerocopy);
    path_lines(out, &f.paths);
    if let Some(sink) = &p.sink {
        // Not on loopback: into a sink's veth pair, as `--sink` sends.
        let _ = writeln!(out, "  {:<22}{}", "--sink", super::sink::describe(sink));
    }
    limits(out, l);
}

/// Per flag, the choices that run here on one line, then each that does not with why.
pub(crate) fn path_lines(out: &mut String, paths: &[PathFeature]) {
    for flag in ["--mechanism", "--recv"] {
        let of_flag = || paths.iter().filter(move |p| p.flag == flag);
        let usable: Vec<&str> = of_flag()
            .filter(|p| p.feature.available)
            .map(|p| p.name)
            .collect();
        let _ = writeln!(out, "  {flag:<22}runs here: {}", usable.join(", "));
        for p in of_flag().filter(|p| !p.feature.available) {
            let reason = p.feature.unavailable_reason.as_deref().unwrap_or("unknown");
            let _ = writeln!(out, "    {:<20}no ({reason})", p.name);
        }
    }
}

/// The kernel's limits a mechanism runs into: io_uring's switch, optmem, pipe size, rlimits.
fn limits(out: &mut String, l: &KernelLimits) {
    let num = |v: Option<u64>, r: &Option<String>| or_na(v, r, |n| n.to_string());
    let size = |v: Option<u64>, r: &Option<String>| or_na(v, r, bytes);
    let rows = [
        (
            "io_uring_disabled",
            num(l.io_uring_disabled, &l.io_uring_disabled_unavailable_reason),
        ),
        (
            "optmem_max",
            size(l.optmem_max_bytes, &l.optmem_max_bytes_unavailable_reason),
        ),
        (
            "pipe-max-size",
            size(
                l.pipe_max_size_bytes,
                &l.pipe_max_size_bytes_unavailable_reason,
            ),
        ),
        (
            "RLIMIT_MEMLOCK",
            format!(
                "soft {}, hard {}",
                size(
                    l.rlimit_memlock_soft_bytes,
                    &l.rlimit_memlock_soft_bytes_unavailable_reason
                ),
                size(
                    l.rlimit_memlock_hard_bytes,
                    &l.rlimit_memlock_hard_bytes_unavailable_reason
                ),
            ),
        ),
        (
            "RLIMIT_NOFILE",
            format!(
                "soft {}, hard {}",
                num(
                    l.rlimit_nofile_soft,
                    &l.rlimit_nofile_soft_unavailable_reason
                ),
                num(
                    l.rlimit_nofile_hard,
                    &l.rlimit_nofile_hard_unavailable_reason
                ),
            ),
        ),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {name:<22}{value}");
    }
}

/// Whether a long crr run can keep finding client ports.
fn crr_ports(out: &mut String, p: &super::ports::CrrPorts) {
    let _ = writeln!(out, "connections (--pattern crr)");
    let no_port = match &p.ip_bind_address_no_port_unavailable_reason {
        None => "yes (crr connects without bind, so it does not need it)".to_string(),
        Some(why) => format!("no ({why})"),
    };
    let _ = writeln!(out, "  IP_BIND_ADDRESS_NO_PORT {no_port}");
    let range = p.ephemeral_port_range.map_or_else(
        || "n/a (unreadable)".into(),
        |[lo, hi]| format!("{lo}-{hi} ({} ports)", u64::from(hi - lo) + 1),
    );
    let _ = writeln!(out, "  {:<22}{range}", "ephemeral ports");
    let reuse = p
        .tcp_tw_reuse
        .map_or_else(|| "n/a".into(), |v| v.to_string());
    let _ = writeln!(
        out,
        "  {:<22}{reuse}; TIME_WAIT lasts {} s",
        "tcp_tw_reuse", p.time_wait_s
    );
    let _ = writeln!(out, "  {:<22}{}", "long crr run", p.long_crr_run);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_keep_two_or_three_significant_digits() {
        assert_eq!(ns(1.0), "1.0 ns");
        assert_eq!(ns(20.44), "20.4 ns");
        assert_eq!(ns(138.2), "138 ns");
        assert_eq!(ns(2_500.0), "2.50 µs");
        assert_eq!(ns(4_000_000.0), "4.00 ms");
    }

    #[test]
    fn byte_counts_use_the_largest_exact_binary_unit() {
        assert_eq!(bytes(64 << 20), "64 MiB");
        assert_eq!(bytes(131_072), "128 KiB");
        assert_eq!(bytes(1000), "1000 B");
    }

    /// The probe's counter section with these events: `Some(reason)` could not be counted.
    fn counter_section(events: &[(&'static str, Option<&str>)]) -> String {
        let figures = |&(event, reason): &(&'static str, Option<&str>)| {
            super::super::counters::EventFigures {
                event,
                hardware: true,
                available: reason.is_none(),
                scope: reason
                    .is_none()
                    .then_some(crate::measure::counters::Scope::UserAndKernel),
                count: reason.is_none().then_some(3.0),
                count_unavailable_reason: reason.map(String::from),
                count_unit: "events",
            }
        };
        let c = Counters {
            perf_event_paranoid: Some(2),
            perf_event_paranoid_unavailable_reason: None,
            pmu_present: false,
            running_as_root: false,
            events: events.iter().map(figures).collect(),
        };
        let mut out = String::new();
        counters(&mut out, &c);
        out
    }

    #[test]
    fn events_uncounted_for_one_reason_are_one_line_and_counted_ones_stay_rows() {
        let text = counter_section(&[
            ("page_faults", None),
            ("cycles", Some("no PMU")),
            ("instructions", Some("no PMU")),
            (
                "context_switches",
                Some("permission: perf_event_paranoid=2"),
            ),
        ]);
        let lines: Vec<&str> = text.lines().skip(1).filter(|l| !l.is_empty()).collect();
        assert_eq!(
            lines,
            [
                "  page_faults         counted, user+kernel (3 events)",
                "  hardware counters (cycles, instructions): not measured: this machine exposes no PMU",
                "  perf counters (context_switches): not measured: permission: perf_event_paranoid=2",
            ]
        );
        assert!(!text.contains("n/a"), "{text}");
    }

    #[test]
    fn a_missing_value_reads_as_na_with_its_reason() {
        assert_eq!(
            or_na(None::<u64>, &Some("no PMU".into()), bytes),
            "n/a (no PMU)"
        );
        assert_eq!(or_na(Some(1024u64), &None, bytes), "1 KiB");
    }
}
