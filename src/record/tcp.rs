//! The record's `tcp_info` block: each local tcp side's TCP_INFO per slice (arrays per field,
//! one entry per reading: the start of the measured phase, every slice boundary, the stop) and
//! what the measured phase added up to (the difference of the counters between the first and
//! the last reading), with the shares the "What limited each flow?" answer reads. A field the
//! kernel's tcp_info does not reach is `null`, its name listed in `missing_fields`.
use crate::engine::tcp_sampler::{TcpSampling, TcpSeries};
use crate::engine::worker::Role;
use crate::sys::tcp_info::TcpFlowInfo;
use serde::{Deserialize, Serialize};

/// The record's two keys: the block, or why a record has none (not tcp, crr, a placement
/// not sampled); both absent from records written before them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpBlock {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_info: Option<TcpInfoReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_info_unavailable_reason: Option<String>,
}

/// `--tcp-info` as the record's config states it.
pub fn switch_of(spec: &crate::config::RunSpec) -> &'static str {
    match spec.tcp_info {
        true => "on",
        false => "off",
    }
}

/// What a record written before `--tcp-info` states: sampling was on.
pub fn switched_on() -> String {
    "on".into()
}

/// The block of a run (`skipped`: a point this kernel could not run gives no reason).
pub fn block(
    spec: &crate::config::RunSpec,
    outcome: &crate::engine::RunOutcome,
    skipped: bool,
) -> TcpBlock {
    let report = match crate::engine::tcp_sampler::why_not_sampled(spec) {
        Some(why) => Err(why),
        None => report(&outcome.tcp, super::side_names(spec.pattern)),
    };
    TcpBlock {
        tcp_info_unavailable_reason: report.as_ref().err().filter(|_| !skipped).cloned(),
        tcp_info: report.ok(),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TcpInfoReport {
    /// When the readings were taken, in words.
    pub sampled: String,
    pub flows: Vec<TcpSide>,
    /// `--remote`: why the server's sides are not among `flows` (an older server, a series it
    /// sent that did not fit the run); absent when they are, and off `--remote`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_unavailable_reason: Option<String>,
    /// The run's figures in one place, over its flows (`headline`): what the CSV row and the
    /// OpenMetrics samples show. Absent from records written before it (all `null`).
    #[serde(default)]
    pub headline: TcpHeadline,
}

/// A run's TCP_INFO in a few figures over all its flows. The sending sockets are those the
/// kernel counted busy time on (data in flight); where none was, every socket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpHeadline {
    /// Segments retransmitted in the measured phase, summed over every sampled socket.
    pub retransmits: Option<u64>,
    /// Mean over the sending sockets of their mean smoothed round-trip time.
    pub rtt_us: Option<f64>,
    /// The sending sockets' busy time over their measured phase, summed over sockets.
    pub busy_share: Option<f64>,
    /// The sending sockets' receive-window-limited and send-buffer-limited times, each over
    /// their busy time, summed over sockets.
    pub rwnd_limited_share: Option<f64>,
    pub sndbuf_limited_share: Option<f64>,
}

/// One side of one flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TcpSide {
    pub flow: u32,
    pub side: String,
    /// `--remote`: the host that read this side, "driver" (this one) or "server"; absent when
    /// both sides ran here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// SO_RCVBUF / SO_SNDBUF as getsockopt(2) read them back (the kernel doubles what is set).
    pub rcvbuf_bytes: Option<usize>,
    pub sndbuf_bytes: Option<usize>,
    pub series: TcpSeriesFields,
    pub measured: TcpMeasured,
    /// Kernel fields this kernel's tcp_info does not reach (Linux 4.10+ for the busy and
    /// limited times).
    pub missing_fields: Vec<String>,
    #[serde(default)]
    pub error: Option<String>,
}

/// Per reading: milliseconds after the start of the measured phase, and each field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpSeriesFields {
    pub at_ms: Vec<f64>,
    pub total_retrans: Option<Vec<u64>>,
    pub lost: Option<Vec<u64>>,
    pub reordering: Option<Vec<u64>>,
    pub snd_cwnd: Option<Vec<u64>>,
    pub snd_ssthresh: Option<Vec<u64>>,
    pub rtt_us: Option<Vec<u64>>,
    pub rttvar_us: Option<Vec<u64>>,
    pub delivery_rate_bytes_per_s: Option<Vec<u64>>,
    pub pacing_rate_bytes_per_s: Option<Vec<u64>>,
    pub busy_time_us: Option<Vec<u64>>,
    pub rwnd_limited_us: Option<Vec<u64>>,
    pub sndbuf_limited_us: Option<Vec<u64>>,
    pub bytes_acked: Option<Vec<u64>>,
    pub bytes_received: Option<Vec<u64>>,
}

/// Over the measured phase: last reading minus first, and the shares.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpMeasured {
    pub elapsed_ms: f64,
    pub retransmits: Option<u64>,
    pub busy_us: Option<u64>,
    pub rwnd_limited_us: Option<u64>,
    pub sndbuf_limited_us: Option<u64>,
    /// Busy time over the elapsed time between the first and the last reading.
    pub busy_share: Option<f64>,
    /// Receive-window-limited and send-buffer-limited time, each over the busy time.
    pub rwnd_limited_share: Option<f64>,
    pub sndbuf_limited_share: Option<f64>,
    /// Mean of the readings' smoothed round-trip times.
    pub rtt_us_mean: Option<f64>,
}

const SAMPLED: &str = "one getsockopt(TCP_INFO) per socket at the start of the measured phase, at every slice boundary and at the stop, from a thread that is not a worker";

/// The block, or why there is none.
pub fn report(sampling: &TcpSampling, names: [&str; 2]) -> Result<TcpInfoReport, String> {
    match sampling {
        TcpSampling::NotSampled(why) => Err(why.clone()),
        TcpSampling::Sampled(series) => {
            let flows: Vec<TcpSide> = series.iter().map(|s| side(s, names, None)).collect();
            Ok(TcpInfoReport {
                sampled: SAMPLED.into(),
                headline: headline(&flows),
                flows,
                server_unavailable_reason: None,
            })
        }
        TcpSampling::WithPeer { here, peer } => {
            let on = |host: &'static str| move |s: &TcpSeries| side(s, names, Some(host));
            let mut flows: Vec<TcpSide> = here.iter().map(on("driver")).collect();
            flows.extend(peer.iter().flatten().map(on("server")));
            // As a local run lists them: by flow, its sending side first.
            flows.sort_by_key(|s| (s.flow, s.side != names[0]));
            Ok(TcpInfoReport {
                sampled: format!("{SAMPLED}; the server's sides by the server, at its own slice boundaries (its schedule starts at the driver's go), sent back with its results"),
                headline: headline(&flows),
                flows,
                server_unavailable_reason: peer.as_ref().err().map(|why| format!("the server's sides were not sampled: {why}")),
            })
        }
    }
}

/// The figures over `flows` (a block's sides, local or remote): call again when sides are
/// added to a block.
pub fn headline(flows: &[TcpSide]) -> TcpHeadline {
    if flows.is_empty() {
        return TcpHeadline::default();
    }
    let busy = |s: &&TcpSide| s.measured.busy_us.unwrap_or(0) > 0;
    let sending: Vec<&TcpSide> = match flows.iter().any(|s| busy(&s)) {
        true => flows.iter().filter(busy).collect(),
        false => flows.iter().collect(),
    };
    // A sum over sockets, `None` when any socket lacks the field.
    let sum = |get: fn(&TcpMeasured) -> Option<u64>, over: &[&TcpSide]| -> Option<u64> {
        over.iter().map(|s| get(&s.measured)).sum()
    };
    let share = |part: Option<u64>, whole: Option<f64>| match (part, whole) {
        (Some(p), Some(w)) if w > 0.0 => Some((p as f64 / w).min(1.0)),
        _ => None,
    };
    let busy_us = sum(|m| m.busy_us, &sending).map(|b| b as f64);
    let elapsed_us: f64 = sending.iter().map(|s| s.measured.elapsed_ms * 1e3).sum();
    let rtts: Option<Vec<f64>> = sending.iter().map(|s| s.measured.rtt_us_mean).collect();
    TcpHeadline {
        retransmits: sum(|m| m.retransmits, &flows.iter().collect::<Vec<_>>()),
        rtt_us: rtts
            .filter(|v| !v.is_empty())
            .map(|v| v.iter().sum::<f64>() / v.len() as f64),
        busy_share: share(busy_us.map(|b| b as u64), Some(elapsed_us)),
        rwnd_limited_share: share(sum(|m| m.rwnd_limited_us, &sending), busy_us),
        sndbuf_limited_share: share(sum(|m| m.sndbuf_limited_us, &sending), busy_us),
    }
}

fn side(series: &TcpSeries, names: [&str; 2], host: Option<&str>) -> TcpSide {
    let fields = fields(series);
    TcpSide {
        flow: series.flow,
        side: names[(series.role == Role::Receiver) as usize].into(),
        host: host.map(str::to_string),
        rcvbuf_bytes: series.buffers.map(|b| b.0),
        sndbuf_bytes: series.buffers.map(|b| b.1),
        measured: measured(&fields),
        missing_fields: missing(series.samples.first()),
        series: fields,
        error: series.error.clone(),
    }
}

/// One field over every reading, `None` when the kernel's struct lacks it.
fn column<T: Into<u64> + Copy>(
    s: &[TcpFlowInfo],
    get: impl Fn(&TcpFlowInfo) -> Option<T>,
) -> Option<Vec<u64>> {
    s.iter()
        .map(|i| get(i).map(Into::into))
        .collect::<Option<Vec<u64>>>()
        .filter(|v| !v.is_empty())
}

fn fields(series: &TcpSeries) -> TcpSeriesFields {
    let s = &series.samples;
    TcpSeriesFields {
        at_ms: series.at.iter().map(|d| d.as_secs_f64() * 1e3).collect(),
        total_retrans: column(s, |i| i.total_retrans),
        lost: column(s, |i| i.lost),
        reordering: column(s, |i| i.reordering),
        snd_cwnd: column(s, |i| i.snd_cwnd),
        snd_ssthresh: column(s, |i| i.snd_ssthresh),
        rtt_us: column(s, |i| i.rtt_us),
        rttvar_us: column(s, |i| i.rttvar_us),
        delivery_rate_bytes_per_s: column(s, |i| i.delivery_rate),
        pacing_rate_bytes_per_s: column(s, |i| i.pacing_rate),
        busy_time_us: column(s, |i| i.busy_time_us),
        rwnd_limited_us: column(s, |i| i.rwnd_limited_us),
        sndbuf_limited_us: column(s, |i| i.sndbuf_limited_us),
        bytes_acked: column(s, |i| i.bytes_acked),
        bytes_received: column(s, |i| i.bytes_received),
    }
}

/// Last minus first of a counter (never below 0).
fn grew(v: &Option<Vec<u64>>) -> Option<u64> {
    let v = v.as_ref()?;
    Some(v.last()?.saturating_sub(*v.first()?))
}

/// What the measured phase added, and the shares: limited times over busy time, busy time
/// over elapsed time; `None` where the kernel gave no field or nothing was busy.
pub(crate) fn measured(f: &TcpSeriesFields) -> TcpMeasured {
    let elapsed_ms = match (f.at_ms.first(), f.at_ms.last()) {
        (Some(a), Some(b)) => b - a,
        _ => 0.0,
    };
    let busy = grew(&f.busy_time_us);
    let (rwnd, sndbuf) = (grew(&f.rwnd_limited_us), grew(&f.sndbuf_limited_us));
    let elapsed_us = (elapsed_ms > 0.0).then_some((elapsed_ms * 1e3) as u64);
    TcpMeasured {
        elapsed_ms,
        retransmits: grew(&f.total_retrans),
        busy_us: busy,
        rwnd_limited_us: rwnd,
        sndbuf_limited_us: sndbuf,
        busy_share: share(busy, elapsed_us),
        rwnd_limited_share: share(rwnd, busy),
        sndbuf_limited_share: share(sndbuf, busy),
        rtt_us_mean: f
            .rtt_us
            .as_ref()
            .filter(|v| !v.is_empty())
            .map(|v| v.iter().sum::<u64>() as f64 / v.len() as f64),
    }
}

/// A visited point's block from its headline visits' (`block`: the first visit's): each flow
/// side's measured phase summed over the visits (limited times, busy time, retransmits and
/// elapsed time added, the shares taken over the sums, the rtt the mean of the visits'), its
/// readings the first visit's, the headline over the sums.
pub fn combine(block: &TcpBlock, visits: &[&super::RunRecord]) -> TcpBlock {
    let Some(mut report) = block.tcp_info.clone().filter(|_| !visits.is_empty()) else {
        return block.clone();
    };
    for side in &mut report.flows {
        let same: Vec<&TcpMeasured> = visits
            .iter()
            .filter_map(|r| r.tcp.tcp_info.as_ref())
            .flat_map(|t| &t.flows)
            .filter(|s| (s.flow, &s.side, &s.host) == (side.flow, &side.side, &side.host))
            .map(|s| &s.measured)
            .collect();
        side.measured = summed(&same);
    }
    report.headline = headline(&report.flows);
    report.sampled = format!(
        "{}; for this point, each side's measured figures are summed over its headline \
         visits (statistics.visits.count) and its readings (series) are the first visit's",
        report.sampled
    );
    TcpBlock {
        tcp_info: Some(report),
        ..block.clone()
    }
}

/// One side's measured phases added up.
fn summed(parts: &[&TcpMeasured]) -> TcpMeasured {
    let add = |get: fn(&TcpMeasured) -> Option<u64>| parts.iter().map(|m| get(m)).sum();
    let (busy, rwnd, sndbuf) = (
        add(|m| m.busy_us),
        add(|m| m.rwnd_limited_us),
        add(|m| m.sndbuf_limited_us),
    );
    let elapsed_ms: f64 = parts.iter().map(|m| m.elapsed_ms).sum();
    let rtts: Option<Vec<f64>> = parts.iter().map(|m| m.rtt_us_mean).collect();
    TcpMeasured {
        elapsed_ms,
        retransmits: add(|m| m.retransmits),
        busy_us: busy,
        rwnd_limited_us: rwnd,
        sndbuf_limited_us: sndbuf,
        busy_share: share(
            busy,
            (elapsed_ms > 0.0).then_some((elapsed_ms * 1e3) as u64),
        ),
        rwnd_limited_share: share(rwnd, busy),
        sndbuf_limited_share: share(sndbuf, busy),
        rtt_us_mean: rtts
            .filter(|v| !v.is_empty())
            .map(|v| v.iter().sum::<f64>() / v.len() as f64),
    }
}

/// `part` over `whole`, at most 1; `None` without either or with nothing in `whole`.
fn share(part: Option<u64>, whole: Option<u64>) -> Option<f64> {
    match (part, whole) {
        (Some(p), Some(w)) if w > 0 => Some((p as f64 / w as f64).min(1.0)),
        _ => None,
    }
}

/// The kernel names of the fields a reading lacks.
fn missing(first: Option<&TcpFlowInfo>) -> Vec<String> {
    let Some(i) = first else { return Vec::new() };
    [
        ("tcpi_total_retrans", i.total_retrans.is_none()),
        ("tcpi_delivery_rate", i.delivery_rate.is_none()),
        ("tcpi_busy_time", i.busy_time_us.is_none()),
        ("tcpi_rwnd_limited", i.rwnd_limited_us.is_none()),
        ("tcpi_sndbuf_limited", i.sndbuf_limited_us.is_none()),
        ("tcpi_bytes_acked", i.bytes_acked.is_none()),
        ("tcpi_bytes_received", i.bytes_received.is_none()),
    ]
    .into_iter()
    .filter(|(_, gone)| *gone)
    .map(|(name, _)| name.to_string())
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_limited_time_over_busy_time_and_busy_over_elapsed() {
        let f = TcpSeriesFields {
            at_ms: vec![0.0, 100.0, 200.0],
            total_retrans: Some(vec![5, 6, 9]),
            busy_time_us: Some(vec![1_000, 80_000, 161_000]),
            rwnd_limited_us: Some(vec![0, 60_000, 120_000]),
            sndbuf_limited_us: Some(vec![500, 500, 16_500]),
            rtt_us: Some(vec![10, 20, 30]),
            ..Default::default()
        };
        let m = measured(&f);
        assert_eq!(m.retransmits, Some(4));
        assert_eq!(m.busy_us, Some(160_000));
        assert_eq!(m.busy_share, Some(0.8));
        assert_eq!(m.rwnd_limited_share, Some(0.75));
        assert_eq!(m.sndbuf_limited_share, Some(0.1));
        assert_eq!(m.rtt_us_mean, Some(20.0));
    }

    #[test]
    fn an_absent_field_or_no_busy_time_gives_no_share() {
        let f = TcpSeriesFields {
            at_ms: vec![0.0, 100.0],
            busy_time_us: Some(vec![7, 7]),
            rwnd_limited_us: Some(vec![0, 0]),
            ..Default::default()
        };
        let m = measured(&f);
        assert_eq!(m.busy_share, Some(0.0));
        assert_eq!(m.rwnd_limited_share, None, "nothing was busy");
        assert_eq!(m.sndbuf_limited_share, None, "the kernel gave no field");
        assert_eq!(m.retransmits, None);
        let old = TcpFlowInfo {
            total_retrans: Some(0),
            ..Default::default()
        };
        assert!(missing(Some(&old)).contains(&"tcpi_busy_time".to_string()));
    }

    fn sock(side: &str, busy: Option<u64>, rwnd: u64, retrans: u64, rtt: f64) -> TcpSide {
        TcpSide {
            flow: 0,
            side: side.into(),
            host: None,
            rcvbuf_bytes: None,
            sndbuf_bytes: None,
            series: TcpSeriesFields::default(),
            measured: TcpMeasured {
                elapsed_ms: 100.0,
                retransmits: Some(retrans),
                busy_us: busy,
                rwnd_limited_us: busy.map(|_| rwnd),
                sndbuf_limited_us: busy.map(|_| 0),
                rtt_us_mean: Some(rtt),
                ..Default::default()
            },
            missing_fields: Vec::new(),
            error: None,
        }
    }

    #[test]
    fn a_visited_points_sides_are_summed_over_its_visits() {
        let visit = |busy: u64, rwnd: u64, retrans: u64, rtt: f64| {
            let spec = crate::config::RunSpec::plain(64, std::time::Duration::from_millis(100));
            let outcome = crate::engine::RunOutcome::not_run(&spec, String::new());
            let env = crate::environment::Environment::detect(&[0]);
            let mut r = crate::record::build(&spec, &outcome, env);
            let mut s = sock("sender", Some(busy), rwnd, retrans, rtt);
            s.measured.busy_share = Some(0.123);
            r.tcp = TcpBlock {
                tcp_info: Some(TcpInfoReport {
                    sampled: "read".into(),
                    headline: headline(std::slice::from_ref(&s)),
                    flows: vec![s],
                    server_unavailable_reason: None,
                }),
                tcp_info_unavailable_reason: None,
            };
            r
        };
        let (a, b) = (visit(60_000, 30_000, 1, 10.0), visit(40_000, 0, 2, 30.0));
        let c = combine(&a.tcp, &[&a, &b]);
        let report = c.tcp_info.unwrap();
        let m = &report.flows[0].measured;
        assert_eq!(
            (m.elapsed_ms, m.retransmits, m.busy_us),
            (200.0, Some(3), Some(100_000))
        );
        assert_eq!(m.busy_share, Some(0.5), "100 ms busy of 200 ms");
        assert_eq!(m.rwnd_limited_share, Some(0.3));
        assert_eq!(m.rtt_us_mean, Some(20.0));
        assert_eq!(report.headline.retransmits, Some(3));
        assert!(report.sampled.contains("summed over its headline visits"));
        let one = combine(&a.tcp, &[&a]).tcp_info.unwrap();
        let (m, own) = (
            &one.flows[0].measured,
            &a.tcp.tcp_info.as_ref().unwrap().flows[0],
        );
        assert_eq!((m.busy_us, m.rwnd_limited_share), (Some(60_000), Some(0.5)));
        assert_eq!(
            m.retransmits, own.measured.retransmits,
            "one visit is its own point"
        );
        assert_eq!(combine(&a.tcp, &[]), a.tcp);
    }

    #[test]
    fn the_headline_is_over_the_sending_sockets_and_sums_every_sockets_retransmits() {
        let flows = [
            sock("sender", Some(80_000), 40_000, 3, 30.0),
            sock("sender", Some(20_000), 0, 1, 10.0),
            sock("receiver", Some(0), 0, 2, 500.0),
        ];
        let h = headline(&flows);
        assert_eq!(h.retransmits, Some(6));
        assert_eq!(h.rtt_us, Some(20.0), "the idle receiver's rtt is left out");
        assert_eq!(h.busy_share, Some(0.5), "100 ms busy of 200 ms");
        assert_eq!(h.rwnd_limited_share, Some(0.4));
        assert_eq!(h.sndbuf_limited_share, Some(0.0));
        let old = [sock("sender", None, 0, 0, 10.0)];
        let h = headline(&old);
        assert_eq!((h.busy_share, h.rwnd_limited_share), (None, None));
        assert_eq!(h.rtt_us, Some(10.0));
        assert_eq!(headline(&[]), TcpHeadline::default());
    }
}
