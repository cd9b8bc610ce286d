//! The adaptive stopping rule, driven through the library: a point stops once the 95 % CI of
//! its slices is within the target (never before the minimum time), or at the maximum time.
use bytepath::config::{parse_message_size, Pattern, Pinning, RunSpec, Stopping};
use bytepath::engine::phases::StopReason;
use bytepath::environment::Environment;
use bytepath::measure::counters::CounterSelection;
use bytepath::mechanism::MechanismKind;
use bytepath::transport::{tcp::Loopback, Transport};
use bytepath::{engine, record};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn spec(ci_target: Option<f64>, max: Duration) -> RunSpec {
    let ms = Duration::from_millis;
    RunSpec {
        transport: Transport::Tcp,
        pipe_size: None,
        mechanism: MechanismKind::Gather,
        pattern: Pattern::Stream,
        message_size: parse_message_size("16K").unwrap(),
        threads: 1,
        duration: max,
        stopping: Stopping {
            messages_per_flow: None,
            slice: ms(20),
            min_time: ms(100),
            ci_target,
        },
        warmup: ms(50),
        pinning: Pinning::Unpinned,
        cpus: vec![0],
        recv_size: None,
        spin: false,
        verify: false,
        counters: CounterSelection::None,
        udp_split: false,
        processes: false,
        network: Default::default(),
        queue_depth: bytepath::config::DEFAULT_QUEUE_DEPTH,
        recv_path: Default::default(),
    }
}

fn measure(spec: &RunSpec) -> record::RunRecord {
    static NEVER: AtomicBool = AtomicBool::new(false);
    let outcome = engine::run(spec, &Loopback, &NEVER).unwrap();
    record::build(spec, &outcome, Environment::detect(&[0]))
}

#[test]
fn a_loose_target_stops_the_point_early_but_not_before_the_minimum_time() {
    // A target no spread can miss (±1000 %): the test is about the rule, not this VM's noise.
    let r = measure(&spec(Some(10.0), Duration::from_secs(10)));
    let st = &r.statistics;
    assert_eq!(st.stop_reason, StopReason::CiTargetMet);
    assert!(
        st.slices >= 5,
        "min time 100 ms = 5 slices of 20 ms, got {}",
        st.slices
    );
    assert!(
        r.measured_s < 5.0,
        "stopped long before the 10 s maximum: {}",
        r.measured_s
    );
    assert_eq!(st.ci_target_met, Some(true));
    assert!(st.summary.unwrap().ci95_rel <= 10.0);
    assert_eq!(st.values.len(), st.slices);
}

#[test]
fn an_unreachable_target_runs_to_the_maximum_time_and_says_so() {
    let r = measure(&spec(Some(1e-9), Duration::from_millis(300)));
    let st = &r.statistics;
    assert_eq!(st.stop_reason, StopReason::MaxTime);
    assert_eq!(st.slices, 15, "300 ms of 20 ms slices");
    assert_eq!(st.ci_target_met, Some(false));
}

#[test]
fn slice_totals_agree_with_the_receivers_own_count() {
    let r = measure(&spec(None, Duration::from_millis(400)));
    let st = &r.statistics;
    assert_eq!(st.stop_reason, StopReason::FixedDuration);
    let mean = st.summary.unwrap().mean;
    let window = r.sides[1].throughput_gbps;
    // Same bytes, two clocks (slice boundaries vs the window's own open/close).
    assert!(
        (mean - window).abs() / window < 0.1,
        "slices {mean} vs window {window}"
    );
}
