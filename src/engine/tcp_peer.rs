//! The server's side of a `--remote` run's TCP_INFO: its series thinned to what one control
//! frame carries before they travel (`for_the_wire`), checked when they arrive (`accepted`:
//! a server cannot make the driver keep more than this bound, nor series of flows the run
//! does not have), and joined to this host's (`joined`).
use super::tcp_sampler::{TcpSampling, TcpSeries};
use super::worker::Role;

/// The most readings, over every flow, a server sends back for one run and its driver
/// accepts. A reading is about 400 bytes on the wire, so they fit one control frame (1 MiB);
/// at 100 ms slices that is over three minutes of one flow at one reading per slice.
pub const MAX_PEER_READINGS: usize = 2048;

/// What a server sends back: each series thinned to its even share of [`MAX_PEER_READINGS`]
/// (the first and the last reading kept, so the measured phase's totals stay whole), or why
/// there are none.
pub fn for_the_wire(sampling: TcpSampling) -> (Vec<TcpSeries>, Option<String>) {
    let series = match sampling {
        TcpSampling::NotSampled(why) => return (Vec::new(), Some(why)),
        TcpSampling::Sampled(series) | TcpSampling::WithPeer { here: series, .. } => series,
    };
    if series.len() * 2 > MAX_PEER_READINGS {
        let why = format!(
            "{} flows: the server sends TCP_INFO back for at most {} (two readings each)",
            series.len(),
            MAX_PEER_READINGS / 2
        );
        return (Vec::new(), Some(why));
    }
    let share = MAX_PEER_READINGS / series.len().max(1);
    (
        series.into_iter().map(|s| thinned(s, share)).collect(),
        None,
    )
}

/// At most `most` (2 or more) of a series' readings, evenly spread, the first and last among
/// them.
fn thinned(mut series: TcpSeries, most: usize) -> TcpSeries {
    let len = series.at.len().min(series.samples.len());
    if len <= most {
        return series;
    }
    let keep: Vec<usize> = (0..most).map(|i| i * (len - 1) / (most - 1)).collect();
    series.at = keep.iter().map(|&i| series.at[i]).collect();
    series.samples = keep.iter().map(|&i| series.samples[i]).collect();
    series
}

/// The series a server sent, if they fit the run: one per flow side it ran (`expected`), at
/// most once each, as many times as readings, times that never go back, and no more than
/// [`MAX_PEER_READINGS`] readings in all. Anything else is refused whole, with the reason.
pub fn accepted(
    series: Vec<TcpSeries>,
    expected: &[(u32, Role)],
) -> Result<Vec<TcpSeries>, String> {
    let refused = |why: String| Err(format!("its TCP_INFO series were refused: {why}"));
    let mut seen = Vec::with_capacity(series.len());
    let mut readings = 0usize;
    for s in &series {
        let side = (s.flow, s.role);
        if !expected.contains(&side) || seen.contains(&side) {
            return refused(format!(
                "a series for flow {} ({:?}), which is not one of the server's sides or came twice",
                s.flow, s.role
            ));
        }
        seen.push(side);
        if s.at.len() != s.samples.len() || s.at.windows(2).any(|w| w[1] < w[0]) {
            return refused(format!(
                "flow {}'s reading times do not match its readings",
                s.flow
            ));
        }
        readings += s.samples.len();
    }
    if readings > MAX_PEER_READINGS {
        return refused(format!(
            "{readings} readings, above the {MAX_PEER_READINGS} a run takes back"
        ));
    }
    Ok(series)
}

/// This host's sampling and the server's series (or why it has none; `None`: it sent
/// nothing), as the record takes them. A run not sampled here says why and nothing more.
pub fn joined(here: TcpSampling, peer: Option<Result<Vec<TcpSeries>, String>>) -> TcpSampling {
    let peer = peer.unwrap_or_else(|| Err("the server sent no TCP_INFO of its side".into()));
    match here {
        TcpSampling::Sampled(here) => TcpSampling::WithPeer { here, peer },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::tcp_info::TcpFlowInfo;
    use std::time::Duration;

    fn series(flow: u32, role: Role, readings: u64) -> TcpSeries {
        TcpSeries {
            flow,
            role,
            at: (0..readings).map(Duration::from_millis).collect(),
            samples: (0..readings)
                .map(|i| TcpFlowInfo {
                    total_retrans: Some(i as u32),
                    ..Default::default()
                })
                .collect(),
            buffers: Some((32 << 10, 64 << 10)),
            error: None,
        }
    }

    #[test]
    fn a_long_series_is_thinned_to_its_share_keeping_the_first_and_the_last() {
        let (sent, why) = for_the_wire(TcpSampling::Sampled(vec![
            series(0, Role::Sender, 5000),
            series(1, Role::Sender, 3),
        ]));
        assert_eq!(why, None);
        let long = &sent[0];
        assert_eq!(long.samples.len(), MAX_PEER_READINGS / 2);
        assert_eq!(long.at.len(), long.samples.len());
        assert_eq!(long.samples[0].total_retrans, Some(0));
        assert_eq!(long.samples.last().unwrap().total_retrans, Some(4999));
        assert!(long.at.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            sent[1],
            series(1, Role::Sender, 3),
            "a short one travels whole"
        );
        let (none, why) = for_the_wire(TcpSampling::NotSampled("udp".into()));
        assert!(none.is_empty());
        assert_eq!(why.as_deref(), Some("udp"));
    }

    #[test]
    fn series_that_do_not_fit_the_run_are_refused_whole() {
        let expected = [(0, Role::Sender), (1, Role::Sender)];
        let ok = vec![series(0, Role::Sender, 4), series(1, Role::Sender, 4)];
        assert_eq!(accepted(ok.clone(), &expected).unwrap(), ok);
        let mut backwards = series(0, Role::Sender, 4);
        backwards.at.reverse();
        let mut short = series(0, Role::Sender, 4);
        short.at.pop();
        for bad in [
            vec![series(2, Role::Sender, 4)],
            vec![series(0, Role::Receiver, 4)],
            vec![series(0, Role::Sender, 4), series(0, Role::Sender, 4)],
            vec![backwards],
            vec![short],
            vec![series(0, Role::Sender, MAX_PEER_READINGS as u64 + 1)],
        ] {
            let why = accepted(bad, &expected).unwrap_err();
            assert!(why.starts_with("its TCP_INFO series were refused"), "{why}");
        }
    }

    #[test]
    fn the_servers_series_join_this_hosts_or_say_why_they_are_missing() {
        let here = TcpSampling::Sampled(vec![series(0, Role::Receiver, 3)]);
        match joined(here.clone(), None) {
            TcpSampling::WithPeer { here, peer } => {
                assert_eq!(here.len(), 1);
                assert!(peer.unwrap_err().contains("sent no TCP_INFO"));
            }
            other => panic!("{other:?}"),
        }
        let off = TcpSampling::NotSampled("off".into());
        assert_eq!(joined(off.clone(), Some(Ok(vec![]))), off);
    }
}
