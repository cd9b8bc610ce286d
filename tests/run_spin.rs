//! --spin on its own test binary: a busy-polling thread pinned to a CPU would slow the tests
//! running beside it, and their load would blur what this test observes.
mod common;
use common::{run_json, u};
use serde_json::Value;

#[test]
fn spin_mode_busy_polls_instead_of_sleeping() {
    let args = [
        "-m", "copy", "-p", "rr", "-s", "64", "--pin", "cross", "--verify",
    ];
    let (blocking, code) = run_json(&args);
    assert_eq!(code, 0);
    let (spinning, code) = run_json(&[&args[..], &["--spin"]].concat());
    assert_eq!(code, 0);
    assert_eq!(spinning["transfer"]["all_delivered"], true);
    assert_eq!(spinning["verify"]["mismatched_bytes"], 0);
    assert_eq!(spinning["config"]["spin"], true);
    let sleeps = |r: &Value| {
        let server = &r["sides"][1];
        u(&server["voluntary_context_switches"]) as f64 / u(&server["messages"]).max(1) as f64
    };
    // A blocking server sleeps in recv for almost every request; a spinning one almost never.
    assert!(
        sleeps(&blocking) > 0.5,
        "blocking server sleeps per request: {}",
        sleeps(&blocking)
    );
    assert!(
        sleeps(&spinning) < 0.1,
        "spinning server should not sleep: {}",
        sleeps(&spinning)
    );
}
