//! Many flows, on its own test binary so its 2048 threads do not load the other tests.
mod common;
use serde_json::Value;

#[test]
fn a_thousand_flows_keep_the_schedule_and_deliver_everything() {
    // With 2048 busy workers on a small machine, phase changes must not wait for the
    // controller thread to be scheduled (it once left the warm-up running for minutes).
    let out = common::bytepath()
        .args([
            "run", "-m", "copy", "-s", "256", "-t", "1024", "-d", "500ms", "--warmup", "100ms",
            "--json",
        ])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_success(&out);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "completed", "{}", r["errors"]);
    assert_eq!(r["transfer"]["all_delivered"], true);
    assert_eq!(r["sides"][1]["threads"], 1024);
    let receiver_window = r["sides"][1]["elapsed_s"].as_f64().unwrap();
    // A starved receiver closes its window at its first message after the schedule's end, so
    // allow seconds, not the minutes the controller-flipped phase once took.
    assert!(
        receiver_window < 5.0,
        "windows end with the schedule: {receiver_window}"
    );
    let machine = &r["machine_wide_cpu"];
    assert!(machine.is_object() || r["machine_wide_cpu_unavailable_reason"].is_string());
}
