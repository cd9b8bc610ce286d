//! `bytepath probe`: the JSON document has every figure, plausible and with units in its keys;
//! what is missing is null with a reason; the text block has its sections; bad flags exit 2.
mod common;
use common::bytepath;
use serde_json::Value;
use std::sync::OnceLock;

/// One probe shared by the JSON tests: each run allocates 128 MiB and keeps a CPU busy.
fn probe_json() -> &'static Value {
    static PROBE: OnceLock<Value> = OnceLock::new();
    PROBE.get_or_init(run_probe_json)
}

fn run_probe_json() -> Value {
    let out = bytepath()
        .args(["probe", "--json", "--quick"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("bytepath ran");
    common::assert_success(&out);
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

fn positive(v: &Value, what: &str) -> f64 {
    let x = v
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {v}"));
    assert!(x > 0.0, "{what} = {x}");
    x
}

/// A figure that is either present or null with a sibling `<key>_unavailable_reason`.
fn present_or_explained(object: &Value, key: &str) -> Option<f64> {
    match object[key].as_f64() {
        Some(v) => Some(v),
        None => {
            assert!(object[key].is_null(), "{key}: {}", object[key]);
            let reason = object[format!("{key}_unavailable_reason")].as_str();
            assert!(
                reason.is_some_and(|r| !r.is_empty()),
                "{key} is null without a reason: {object}"
            );
            None
        }
    }
}

#[test]
fn json_probe_states_its_schema_environment_and_effort() {
    let p = probe_json();
    assert_eq!(p["schema_version"], 1);
    assert_eq!(p["command"], "probe");
    assert_eq!(p["quick"], true);
    assert!(p["environment"]["kernel_release"].is_string());
    assert!(p["environment"]["online_cpus"].as_u64().unwrap() >= 1);
    // How long it took is a figure, not a check (a loaded machine stretches it): --quick's
    // lighter effort is checked by the probe's unit test, dimension by dimension.
    positive(&p["elapsed_s"], "elapsed_s");
}

#[test]
fn every_clock_has_a_positive_resolution_and_read_cost() {
    let p = probe_json();
    let clocks = p["clocks"]["clocks"].as_array().unwrap();
    let names: Vec<&str> = clocks
        .iter()
        .map(|c| c["clock"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "CLOCK_REALTIME",
            "CLOCK_MONOTONIC",
            "CLOCK_MONOTONIC_RAW",
            "CLOCK_MONOTONIC_COARSE"
        ]
    );
    for c in clocks {
        positive(&c["resolution_ns"], "resolution_ns");
        let cost = &c["read_cost"];
        assert!(cost["trials"].as_u64().unwrap() > 0);
        let min = positive(&cost["min_ns"], "read_cost.min_ns");
        assert!(min <= cost["median_ns"].as_f64().unwrap());
        present_or_explained(c, "smallest_step_ns");
    }
}

#[test]
fn the_tsc_is_calibrated_or_explained() {
    let p = probe_json();
    let tsc = &p["clocks"]["tsc"];
    assert!(tsc["rdtscp_available"].is_boolean());
    assert!(tsc["constant_tsc"].is_boolean() && tsc["nonstop_tsc"].is_boolean());
    if let Some(hz) = present_or_explained(tsc, "frequency_hz") {
        assert!((1e8..1e11).contains(&hz), "TSC at {hz} Hz");
        positive(&tsc["rdtscp_cost"]["median_ns"], "rdtscp_cost.median_ns");
    }
    present_or_explained(tsc, "sysfs_frequency_hz");
}

#[test]
fn wakeups_are_derived_from_pipe_round_trips_on_one_cpu_and_two() {
    let w = &probe_json()["wakeups"];
    assert!(w["method"].as_str().unwrap().contains("4 × the raw getpid"));
    let getpid = p_getpid();
    for (rt, wake) in [
        ("pipe_rr_same_cpu_ns", "same_cpu_wakeup_ns"),
        ("pipe_rr_cross_cpu_ns", "cross_cpu_wakeup_ns"),
    ] {
        if let Some(round_trip) = present_or_explained(w, rt) {
            // (round trip − 4 getpid) / 2, or null when the calls leave nothing over.
            match w[wake].as_f64() {
                Some(v) => {
                    assert!((v - (round_trip - 4.0 * getpid) / 2.0).abs() < 1e-6 * round_trip)
                }
                None => assert!(round_trip <= 4.0 * getpid),
            }
        }
    }
}

fn p_getpid() -> f64 {
    positive(&probe_json()["syscalls"]["getpid"]["min_ns"], "getpid")
}

#[test]
fn syscalls_and_memcpy_cost_something() {
    let p = probe_json();
    for call in ["getpid", "getuid"] {
        let t = &p["syscalls"][call];
        positive(&t["min_ns"], call);
        positive(&t["median_ns"], call);
        assert!(t["trials"].as_u64().unwrap() > 0);
    }
    let points = p["memcpy_roofline"]["points"].as_array().unwrap();
    let levels: Vec<&str> = points
        .iter()
        .map(|x| x["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["dram", "l2"]);
    // Source and destination together hold 1.5 × the last-level cache, at least 8 MiB each.
    let dram = points[0]["buffer_bytes"].as_u64().unwrap();
    match p["memcpy_roofline"]["llc_bytes"].as_u64() {
        Some(llc) => assert_eq!(dram, (llc * 3 / 4).max(8 << 20)),
        None => assert_eq!(dram, 24 << 20),
    }
    for point in points {
        let bw = &point["bandwidth"];
        positive(&bw["best_gb_per_s"], "best_gb_per_s");
        positive(&bw["median_gib_per_s"], "median_gib_per_s");
        assert!(bw["best_gb_per_s"].as_f64() >= bw["median_gb_per_s"].as_f64());
    }
}

fn p_json_dram() -> Value {
    probe_json()["memcpy_roofline"]["points"][0].clone()
}

/// The curve doubles the threads up to the CPUs this process may run on and ends on them.
#[test]
fn the_memcpy_curve_runs_1_2_4_threads_up_to_the_allowed_cpus() {
    let allowed = bytepath::sys::affinity::allowed_cpus().unwrap().len() as u64;
    let mut expected: Vec<u64> = std::iter::successors(Some(1), |n| Some(n * 2))
        .take_while(|n| *n < allowed)
        .collect();
    expected.push(allowed);
    let curve = &probe_json()["memcpy_roofline"]["by_threads"];
    assert_eq!(curve["allowed_cpus"], allowed);
    let points = curve["points"].as_array().unwrap();
    let threads: Vec<u64> = points
        .iter()
        .map(|p| p["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, expected);
    for p in points {
        let n = p["threads"].as_f64().unwrap();
        let bw = &p["aggregate"];
        let best = positive(&bw["best_gb_per_s"], "aggregate best_gb_per_s");
        let median = positive(&bw["median_gb_per_s"], "aggregate median_gb_per_s");
        assert!(best >= median, "{p}");
        let per_thread = positive(&bw["per_thread_median_gb_per_s"], "per thread");
        assert!((per_thread * n - median).abs() < 1e-6 * median, "{p}");
        assert!(p["buffer_bytes_per_thread"].as_u64().unwrap() > 0);
        assert_eq!(p["trials"], 4, "--quick's trials");
    }
    // One thread is the DRAM point, measured once.
    let dram = &p_json_dram();
    assert_eq!(points[0]["buffer_bytes_per_thread"], dram["buffer_bytes"]);
    assert_eq!(
        points[0]["aggregate"]["best_gb_per_s"],
        dram["bandwidth"]["best_gb_per_s"]
    );
    let method = curve["method"].as_str().unwrap();
    assert!(method.contains("divided by the thread count"), "{method}");
    positive(&curve["elapsed_s"], "the curve's elapsed_s");
}

#[test]
fn counters_list_task_clock_and_explain_missing_hardware_events() {
    let p = probe_json();
    let counters = &p["counters"];
    assert!(counters["pmu_present"].is_boolean());
    let events = counters["events"].as_array().unwrap();
    let task_clock = events
        .iter()
        .find(|e| e["event"] == "task_clock")
        .expect("task_clock listed");
    assert_eq!(task_clock["hardware"], false);
    for e in events {
        assert!(e["available"].is_boolean(), "{e}");
        let counted = present_or_explained(e, "count");
        assert_eq!(e["available"].as_bool(), Some(counted.is_some()), "{e}");
    }
    assert!(events.iter().any(|e| e["hardware"] == true));
}

#[test]
fn every_kernel_feature_is_a_yes_or_a_no_with_a_reason() {
    let p = probe_json();
    let features = p["kernel_features"].as_object().unwrap();
    for name in [
        "msg_zerocopy",
        "io_uring",
        "sendfile",
        "splice",
        "tcp_zerocopy_receive",
        "udp_gso",
        "udp_zerocopy",
    ] {
        let f = &features[name];
        let available = f["available"]
            .as_bool()
            .unwrap_or_else(|| panic!("{name}: {f}"));
        assert_eq!(available, f["unavailable_reason"].is_null(), "{name}: {f}");
    }
    // Every --mechanism and --recv choice, by the probe a run makes before it starts.
    let paths = features["paths"].as_array().unwrap();
    let names: Vec<(&str, &str)> = paths
        .iter()
        .map(|p| (p["flag"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    assert_eq!(names.len(), 14, "{names:?}");
    for name in [
        "send", "sendmmsg", "zerocopy", "uring-zc", "splice", "sendfile",
    ] {
        assert!(names.contains(&("--mechanism", name)), "{name}");
    }
    for name in ["recv", "uring-recv", "zc-recv", "trunc"] {
        assert!(names.contains(&("--recv", name)), "{name}");
    }
    for path in paths {
        let available = path["available"].as_bool().unwrap();
        assert_eq!(available, path["unavailable_reason"].is_null(), "{path}");
    }
    let always = |flag: &str, name: &str| {
        paths
            .iter()
            .find(|p| p["flag"] == flag && p["name"] == name)
            .map(|p| p["available"] == true)
    };
    assert_eq!(always("--mechanism", "send"), Some(true));
    assert_eq!(always("--recv", "recv"), Some(true));
    let limits = &p["kernel_limits"];
    for key in [
        "optmem_max_bytes",
        "pipe_max_size_bytes",
        "io_uring_disabled",
        "rlimit_memlock_soft_bytes",
        "rlimit_memlock_hard_bytes",
        "rlimit_nofile_soft",
        "rlimit_nofile_hard",
    ] {
        present_or_explained(limits, key);
    }
}

#[test]
fn text_probe_has_every_section_heading() {
    let out = bytepath()
        .args(["probe", "--quick"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for heading in [
        "clocks",
        "syscalls",
        "memcpy roofline",
        "counters",
        "kernel features",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(heading)),
            "no {heading:?} section in:\n{text}"
        );
    }
    assert!(text.contains("trials"), "trial counts are stated");
    let allowed = bytepath::sys::affinity::allowed_cpus().unwrap().len();
    let one = "    1 thread ";
    let all = format!("{allowed:>5} thread");
    let section: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("memcpy roofline"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(
        section
            .iter()
            .any(|l| l.contains("threads copying at once")),
        "{text}"
    );
    assert!(section.iter().any(|l| l.starts_with(one)), "{text}");
    assert!(section.iter().any(|l| l.starts_with(&all)), "{text}");
}

#[test]
fn an_unknown_probe_flag_exits_2_with_one_line() {
    let out = bytepath().args(["probe", "--bogus"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("--bogus"), "{err}");
}
