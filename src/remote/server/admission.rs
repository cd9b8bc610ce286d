//! Who may open a control connection, so that nobody without a token can lock drivers out.
//! Before its token is proved a connection holds a place among the `PENDING` (`pool`): one per
//! source (an address; an IPv6 /64), and when the pool is full, or its source already holds
//! its place, the OLDEST such connection is shut down instead of the newcomer refused: a
//! driver's reconnect displaces its own stale socket, and a stranger who reopens idle sockets
//! only churns its own. Each is bounded by `HANDSHAKE_DEADLINE` in all. Once authenticated a
//! session takes one of the server's `MAX_OPEN`, at most `MAX_PER_ADDRESS` from one source, so
//! unauthenticated connections can never use those up. A source is turned away until
//! `FAILURE_WINDOW` passes after `MAX_FAILURES` wrong tokens, or `MAX_EXPIRIES` connections
//! that held their place unauthenticated until the deadline, within the window (counted
//! apart: a token guesser and a socket holder are barred each by their own count).
use super::claim::OpenSlot;
use super::pool::{Place, Pool, Source};
use std::collections::HashMap;
use std::net::{IpAddr, TcpStream};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Authenticated control sessions open at once; more are answered `busy` (threads, and what
/// one run at a time leaves them to do: checks, a run's waiting neighbours).
pub(super) const MAX_OPEN: usize = 16;
/// Authenticated control sessions one source may hold open at once.
pub(super) const MAX_PER_ADDRESS: usize = 4;
/// Connections before their token is proved. Each costs a thread (a small stack) and a
/// socket, so 64 is far from the machine's bounds; to keep a driver out, strangers would
/// need 64 sources opening a connection each within the few milliseconds of its handshake.
pub(super) const PENDING: usize = 64;
/// The whole of the hellos and the handshake, however the bytes trickle in.
pub(super) const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(5);
/// Wrong tokens a source may present within `FAILURE_WINDOW`.
pub(super) const MAX_FAILURES: u32 = 5;
/// Connections a source may let reach the deadline unauthenticated within `FAILURE_WINDOW`.
pub(super) const MAX_EXPIRIES: u32 = 5;
pub(super) const FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// Records kept before the expired ones are swept (bounds the map's memory).
const RECORDS: usize = 4096;

pub(super) struct Admission {
    pending: Arc<Pool>,
    /// The server's count of authenticated sessions (`State::open`).
    open: Arc<AtomicUsize>,
    per_source: Mutex<HashMap<Source, usize>>,
    /// How long an unauthenticated connection may live: the deadline, or the server's read
    /// timeout when shorter; one that ended unauthenticated after it counts as an expiry.
    patience: Duration,
    records: Mutex<HashMap<Source, Record>>,
}

/// What a source did wrong within the window that began at `since`.
#[derive(Clone, Copy)]
struct Record {
    wrong_tokens: u32,
    expiries: u32,
    since: Instant,
}

/// One admitted connection: its place among the pending until `authenticated`, then its
/// share of its source's count and of the server's.
pub(super) struct Admitted {
    admission: Arc<Admission>,
    source: Source,
    since: Instant,
    stage: Stage,
}

enum Stage {
    Pending(Place),
    /// Holds its share of the server's open sessions until the session ends.
    Authenticated {
        _share: OpenSlot,
    },
    TurnedAway,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Admission {
    /// Admission counting authenticated sessions in `open`, whose server reads with `timeout`.
    pub(super) fn new(open: Arc<AtomicUsize>, timeout: Duration) -> Admission {
        Admission {
            pending: Arc::new(Pool::new(PENDING, 1)),
            open,
            per_source: Mutex::default(),
            patience: timeout.min(HANDSHAKE_DEADLINE),
            records: Mutex::default(),
        }
    }

    /// The connection `socket` from `ip` admitted (evicting the oldest pending one if need
    /// be), or why not (sent to it as `busy` and logged).
    pub(super) fn admit(
        self: &Arc<Self>,
        ip: IpAddr,
        socket: &TcpStream,
    ) -> Result<Admitted, String> {
        let source = Source::of(ip);
        self.barred(source)?;
        let place = self
            .pending
            .hold(source, socket)
            .map_err(|e| format!("cannot hold the connection: {e}"))?;
        Ok(Admitted {
            admission: self.clone(),
            source,
            since: Instant::now(),
            stage: Stage::Pending(place),
        })
    }

    /// Why `source` is turned away now, if it is.
    fn barred(&self, source: Source) -> Result<(), String> {
        let Some(record) = lock(&self.records).get(&source).copied() else {
            return Ok(());
        };
        let window = FAILURE_WINDOW.as_secs();
        if record.since.elapsed() >= FAILURE_WINDOW {
            Ok(())
        } else if record.wrong_tokens >= MAX_FAILURES {
            let count = record.wrong_tokens;
            Err(format!(
                "{count} wrong tokens from {source} within {window} s; try again later"
            ))
        } else if record.expiries >= MAX_EXPIRIES {
            let count = record.expiries;
            Err(format!(
                "{count} connections from {source} reached the handshake deadline unauthenticated within {window} s; try again later"
            ))
        } else {
            Ok(())
        }
    }

    /// Counts a wrong token from `ip`.
    pub(super) fn failed(&self, ip: IpAddr) {
        self.record(Source::of(ip), |r| r.wrong_tokens += 1);
    }

    /// Counts a connection from `source` that ended unauthenticated past the patience.
    fn expired(&self, source: Source) {
        self.record(source, |r| r.expiries += 1);
    }

    fn record(&self, source: Source, count: impl FnOnce(&mut Record)) {
        let mut records = lock(&self.records);
        if records.len() >= RECORDS {
            records.retain(|_, r| r.since.elapsed() < FAILURE_WINDOW);
        }
        let fresh = || Record {
            wrong_tokens: 0,
            expiries: 0,
            since: Instant::now(),
        };
        let record = records.entry(source).or_insert_with(fresh);
        if record.since.elapsed() >= FAILURE_WINDOW {
            *record = fresh();
        }
        count(record);
    }

    /// A session of `source` authenticated: its share of the open sessions, or why not.
    fn open_session(&self, source: Source) -> Result<OpenSlot, String> {
        let mut per_source = lock(&self.per_source);
        let open = per_source.get(&source).copied().unwrap_or(0);
        if open >= MAX_PER_ADDRESS {
            return Err(format!(
                "{MAX_PER_ADDRESS} control sessions from {source} are open; try again later"
            ));
        }
        let slot = OpenSlot::take(&self.open, MAX_OPEN)
            .ok_or_else(|| format!("{MAX_OPEN} control sessions are open; try again later"))?;
        // Counted only once taken: a refused source leaves no entry behind.
        per_source.insert(source, open + 1);
        Ok(slot)
    }

    fn close_session(&self, source: Source) {
        let mut per_source = lock(&self.per_source);
        if let Some(open) = per_source.get_mut(&source) {
            *open -= 1;
            if *open == 0 {
                per_source.remove(&source);
            }
        }
    }
}

impl Admitted {
    /// The token is proved: the connection leaves the pending for a session's share, or is
    /// told why not (too many sessions open, or it had been evicted meanwhile: its socket is
    /// shut down already).
    pub(super) fn authenticated(&mut self) -> Result<(), String> {
        let stage = std::mem::replace(&mut self.stage, Stage::TurnedAway);
        let Stage::Pending(mut place) = stage else {
            self.stage = stage;
            return Ok(());
        };
        if !place.leave() {
            return Err("evicted before its handshake completed, to make room".into());
        }
        let share = self.admission.open_session(self.source)?;
        self.stage = Stage::Authenticated { _share: share };
        Ok(())
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        match &mut self.stage {
            // Still held (not evicted) when it ended, and it held on the whole patience.
            Stage::Pending(place) => {
                if place.leave() && self.since.elapsed() >= self.admission.patience {
                    self.admission.expired(self.source);
                }
            }
            Stage::Authenticated { .. } => self.admission.close_session(self.source),
            Stage::TurnedAway => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::pool::tests::{pair, was_shut};
    use super::*;
    use std::net::TcpListener;
    use std::sync::atomic::Ordering;

    fn admission(timeout: Duration) -> (Arc<Admission>, Arc<AtomicUsize>) {
        let open = Arc::new(AtomicUsize::new(0));
        (Arc::new(Admission::new(open.clone(), timeout)), open)
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_newcomer_evicts_its_sources_pending_socket_and_a_full_pool_its_oldest() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let (admission, _) = admission(HANDSHAKE_DEADLINE);
        let ends: Vec<_> = (0..PENDING + 2).map(|_| pair(&listener)).collect();
        // Two sockets from one IPv6 /64: the second evicts the first.
        let first = admission.admit(ip("2001:db8::1"), &ends[0].0).unwrap();
        let _second = admission.admit(ip("2001:db8::2"), &ends[1].0).unwrap();
        assert!(was_shut(&ends[0].0));
        assert!(!was_shut(&ends[1].0));
        drop(first);
        assert_eq!(admission.pending.len(), 1, "the evicted one was let go of");
        // The pool fills from other sources; the next newcomer evicts the oldest of all.
        let held: Vec<Admitted> = (2..PENDING + 1)
            .map(|i| admission.admit(IpAddr::from([198, 51, 100, i as u8]), &ends[i].0))
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(admission.pending.len(), PENDING);
        assert!(!was_shut(&ends[1].0));
        let _newest = admission
            .admit(ip("203.0.113.9"), &ends[PENDING + 1].0)
            .unwrap();
        assert!(
            was_shut(&ends[1].0),
            "the oldest pending socket was evicted"
        );
        assert!(!was_shut(&ends[2].0));
        drop(held);
    }

    #[test]
    fn authenticated_sessions_keep_the_per_source_and_server_caps_and_leave_the_pool() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let (admission, open) = admission(HANDSHAKE_DEADLINE);
        let ends: Vec<_> = (0..MAX_OPEN + 2).map(|_| pair(&listener)).collect();
        let mut from_a = Vec::new();
        for end in &ends[..MAX_PER_ADDRESS + 1] {
            let mut a = admission.admit(ip("192.0.2.1"), &end.0).unwrap();
            let proved = a.authenticated();
            from_a.push((a, proved));
        }
        let refused = from_a.last().unwrap().1.clone().unwrap_err();
        assert!(refused.contains("from 192.0.2.1"), "{refused}");
        assert!(from_a[..MAX_PER_ADDRESS].iter().all(|(_, p)| p.is_ok()));
        assert_eq!(open.load(Ordering::Acquire), MAX_PER_ADDRESS);
        assert_eq!(
            admission.pending.len(),
            0,
            "authenticated ones left the pool"
        );
        let others: Vec<Admitted> = (MAX_PER_ADDRESS + 1..MAX_OPEN + 1)
            .map(|i| {
                let mut other = admission
                    .admit(IpAddr::from([198, 51, 100, i as u8]), &ends[i].0)
                    .unwrap();
                other.authenticated().unwrap();
                other
            })
            .collect();
        assert_eq!(open.load(Ordering::Acquire), MAX_OPEN);
        let mut last = admission
            .admit(ip("203.0.113.7"), &ends[MAX_OPEN + 1].0)
            .unwrap();
        assert!(last
            .authenticated()
            .unwrap_err()
            .contains("16 control sessions"));
        drop((others, from_a, last));
        assert_eq!(open.load(Ordering::Acquire), 0);
        assert!(lock(&admission.per_source).is_empty());
    }

    #[test]
    fn an_evicted_connection_cannot_authenticate_nor_counts_as_an_expiry() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let (admission, open) = admission(Duration::ZERO);
        let ends: Vec<_> = (0..2).map(|_| pair(&listener)).collect();
        let mut old = admission.admit(ip("192.0.2.1"), &ends[0].0).unwrap();
        let _new = admission.admit(ip("192.0.2.1"), &ends[1].0).unwrap();
        assert!(old.authenticated().unwrap_err().contains("evicted"));
        assert_eq!(open.load(Ordering::Acquire), 0);
        drop(old);
        assert!(lock(&admission.records).is_empty());
    }

    #[test]
    fn connections_that_reach_the_deadline_unauthenticated_bar_their_source() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let (admission, _) = admission(Duration::from_millis(20));
        let end = pair(&listener);
        let a = ip("192.0.2.1");
        // Authenticated, or ended before the patience: not expiries.
        let mut proved = admission.admit(a, &end.0).unwrap();
        proved.authenticated().unwrap();
        drop(proved);
        drop(admission.admit(a, &end.0).unwrap());
        assert!(admission.barred(Source::of(a)).is_ok());
        for _ in 0..MAX_EXPIRIES {
            let idle = admission.admit(a, &end.0).unwrap();
            std::thread::sleep(Duration::from_millis(30));
            drop(idle);
        }
        let barred = admission.admit(a, &end.0).err().unwrap();
        assert!(
            barred.contains("5 connections from 192.0.2.1 reached the handshake deadline"),
            "{barred}"
        );
        assert!(admission.admit(ip("192.0.2.2"), &end.0).is_ok());
    }

    #[test]
    fn a_source_with_too_many_wrong_tokens_is_turned_away_and_others_are_not() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let (admission, _) = admission(HANDSHAKE_DEADLINE);
        let end = pair(&listener);
        (0..MAX_FAILURES).for_each(|_| admission.failed(ip("2001:db8::1")));
        // The whole /64 is one source.
        let barred = admission.admit(ip("2001:db8::ff"), &end.0).err().unwrap();
        assert!(
            barred.contains("5 wrong tokens from 2001:db8::/64"),
            "{barred}"
        );
        assert!(admission.admit(ip("2001:db8:0:1::1"), &end.0).is_ok());
    }
}
