//! The CSV columns of TCP_INFO and of `--under-load`: the `tcp_info` block's headline (over
//! all the run's flows, as `record::tcp::headline` derives it) and, for the rr points of a
//! sweep with `--under-load`, the load's flows and which of the pair the row is. Appended
//! after every older column, so those keep their places.
use super::csv_cell::Cell::{self, Scalar};

pub const CSV: &[(&str, &str, Cell)] = &[
    ("tcp_retransmits", "/tcp_info/headline/retransmits", Scalar),
    ("tcp_rtt_us", "/tcp_info/headline/rtt_us", Scalar),
    (
        "tcp_rwnd_limited_share",
        "/tcp_info/headline/rwnd_limited_share",
        Scalar,
    ),
    (
        "tcp_sndbuf_limited_share",
        "/tcp_info/headline/sndbuf_limited_share",
        Scalar,
    ),
    ("tcp_busy_share", "/tcp_info/headline/busy_share", Scalar),
    (
        "tcp_info_unavailable_reason",
        "/tcp_info_unavailable_reason",
        Scalar,
    ),
    ("under_load_visit", "/under_load_visit", Scalar),
    ("under_load_flows", "/under_load/flows", Scalar),
    ("under_load_gbps", "/under_load/gbps", Scalar),
];

#[cfg(test)]
mod tests {
    use crate::report::csv::{header, row};
    use serde_json::json;

    #[test]
    fn the_headline_and_the_load_fill_their_cells_and_absent_ones_stay_empty() {
        let loaded = json!({
            "tcp_info": {"headline": {"retransmits": 4, "rtt_us": 31.5, "busy_share": 0.5,
                "rwnd_limited_share": 0.25, "sndbuf_limited_share": null}},
            "under_load": {"flows": 2, "gbps": 9.5},
            "under_load_visit": "loaded",
        });
        let names = header();
        let get = |record: &serde_json::Value, name: &str| {
            row(record)[names.iter().position(|n| n == name).unwrap()].clone()
        };
        assert_eq!(get(&loaded, "tcp_retransmits"), "4");
        assert_eq!(get(&loaded, "tcp_rtt_us"), "31.5");
        assert_eq!(get(&loaded, "tcp_rwnd_limited_share"), "0.25");
        assert_eq!(
            get(&loaded, "tcp_sndbuf_limited_share"),
            "",
            "null is empty, not 0"
        );
        assert_eq!(get(&loaded, "under_load_visit"), "loaded");
        assert_eq!(get(&loaded, "under_load_flows"), "2");
        let udp = json!({"tcp_info_unavailable_reason": "udp flows are not tcp"});
        assert_eq!(get(&udp, "tcp_retransmits"), "");
        assert_eq!(
            get(&udp, "tcp_info_unavailable_reason"),
            "udp flows are not tcp"
        );
        assert_eq!(get(&udp, "under_load_visit"), "");
    }
}
