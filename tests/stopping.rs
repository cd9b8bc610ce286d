//! How a run ends, driven through the library: at its duration, whatever its slices say (no
//! interval is tested while a run goes on; a study's intervals come from visits), with the
//! slices kept as diagnostics that agree with the measured side's own count.
use bytepath::config::{parse_message_size, RunSpec, Stopping};
use bytepath::engine::phases::StopReason;
use bytepath::environment::Environment;
use bytepath::mechanism::MechanismKind;
use bytepath::transport::tcp::Loopback;
use bytepath::{engine, record};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn spec(max: Duration) -> RunSpec {
    let ms = Duration::from_millis;
    RunSpec {
        mechanism: MechanismKind::GATHER,
        stopping: Stopping {
            messages_per_flow: None,
            slice: ms(20),
        },
        warmup: ms(50),
        ..RunSpec::plain(parse_message_size("--size", "16K").unwrap(), max)
    }
}

fn measure(spec: &RunSpec) -> record::RunRecord {
    static NEVER: AtomicBool = AtomicBool::new(false);
    let outcome = engine::run(spec, &Loopback, &NEVER).unwrap();
    record::build(spec, &outcome, Environment::detect(&[0]))
}

#[test]
fn a_run_measures_its_whole_duration_in_slices_and_says_what_its_interval_covers() {
    let r = measure(&spec(Duration::from_millis(300)));
    let st = &r.statistics;
    assert_eq!(st.stop_reason, StopReason::FixedDuration.name());
    assert_eq!(st.slices, 15, "300 ms of 20 ms slices");
    assert_eq!(st.values.len(), st.slices);
    assert_eq!(st.basis, bytepath::stats::point::Basis::Slices);
    assert!(st.method.contains("does not cover"), "{}", st.method);
    assert!(!st.counters_open);
    assert!((r.measured_s - 0.3).abs() < 0.05, "{}", r.measured_s);
}

#[test]
fn slice_totals_agree_with_the_receivers_own_count() {
    let r = measure(&spec(Duration::from_millis(400)));
    let st = &r.statistics;
    assert_eq!(st.stop_reason, StopReason::FixedDuration.name());
    let mean = st.summary.unwrap().mean;
    let window = r.sides[1].throughput_gbps;
    // Same bytes, two clocks (slice boundaries vs the window's own open/close).
    assert!(
        (mean - window).abs() / window < 0.1,
        "slices {mean} vs window {window}"
    );
}
