//! The block's lines as a reader sees them, and the sweep section's line per mechanism and
//! receive path.
use super::*;
use crate::measure::copies::DropCount;

fn block(ratio: Option<f64>, drops: Option<Vec<DropCount>>) -> CopiesReport {
    let mut b = crate::record::copies::not_counted("a run of its own".into(), "no root");
    b.delivered_bytes = 1000;
    if let Some(r) = ratio {
        b.copied_per_byte_delivered = Some(r);
        b.copied_to_user_bytes = Some((r * 1000.0) as u64);
        b.copied_per_byte_delivered_unavailable_reason = None;
    }
    if drops.is_some() {
        b.drops = drops;
        b.drops_unavailable_reason = None;
        b.transmit = Some(vec![DeviceTransmit {
            device: "lo".into(),
            bytes: 2048,
            packets: 2,
            refused: 0,
        }]);
        b.transmit_unavailable_reason = None;
    }
    b
}

#[test]
fn a_measured_block_reads_as_a_ratio_with_its_drops_and_devices() {
    let drops = vec![DropCount {
        reason: "NO_SOCKET".into(),
        code: 3,
        packets: 50,
    }];
    let text = in_brief(&block(Some(0.999), Some(drops)));
    assert_eq!(
        text,
        "0.999 B copied to user space per byte delivered (999 of 1000 B); packets dropped: \
         NO_SOCKET 50; transmitted: lo 2.00 KiB in 2 packets"
    );
}

#[test]
fn a_block_with_nothing_counted_is_one_line_with_the_reason() {
    let mut out = String::new();
    lines(&mut out, &block(None, None), "Gbit/s");
    assert_eq!(out, "copies (kernel tracepoints): not counted: no root\n");
    assert_eq!(in_brief(&block(None, None)), "copies not counted: no root");
}

#[test]
fn a_figure_missing_beside_counted_ones_says_why_in_its_place() {
    // A pipe: drops and transmits counted, no socket receive to see.
    let mut b = block(None, Some(Vec::new()));
    b.copied_to_user_bytes_unavailable_reason = Some("--transport pipe".into());
    b.copied_per_byte_delivered_unavailable_reason = Some("--transport pipe".into());
    b.headline_value = Some(1.5);
    let mut out = String::new();
    lines(&mut out, &b, "Gbit/s");
    assert!(
        out.contains("bytes copied to user space n/a (--transport pipe)"),
        "{out}"
    );
    assert!(
        out.contains("no packet dropped; transmitted: lo 2.00 KiB in 2 packets"),
        "{out}"
    );
    assert!(out.contains("that run's own figure: 1.500 Gbit/s"), "{out}");
}

#[test]
fn the_zc_share_is_set_beside_the_count() {
    let mut b = block(Some(0.43), Some(Vec::new()));
    b.mapped_share = Some(0.57);
    let text = in_brief(&b);
    assert!(
        text.contains("mapped 57.0 % of the bytes, so 1 − mapped = 0.430"),
        "{text}"
    );
    assert!(text.contains("no packet dropped"), "{text}");
}

#[test]
fn the_csv_columns_follow_the_block() {
    let b = block(Some(1.0), Some(Vec::new()));
    let record = serde_json::json!({ "copies": serde_json::to_value(&b).unwrap() });
    let columns = crate::report::csv::fixed(CSV);
    let cells = crate::report::csv::row_of(&columns, &record);
    let at = |n: &str| cells[columns.iter().position(|c| c.name == n).unwrap()].clone();
    assert_eq!(at("copies_copied_per_byte_delivered"), "1.0");
    assert_eq!(at("copies_copied_to_user_bytes"), "1000");
    assert_eq!(at("copies_drops"), "[]");
    assert!(at("copies_transmit").contains("\"device\":\"lo\""));
    assert_eq!(at("copies_drops_unavailable_reason"), "");
}
