//! Who may open a control connection, so that nobody anonymous can lock drivers out: at most
//! `MAX_PER_ADDRESS` connections from one address, at most `MAX_HANDSHAKING` of the server's
//! connections before their handshake is done (the rest are kept for authenticated sessions),
//! each of those bounded by `HANDSHAKE_DEADLINE` in all, and an address whose token was wrong
//! `MAX_FAILURES` times within `FAILURE_WINDOW` is turned away until the window passes.
use super::claim::OpenSlot;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Control connections one source address may hold open at once.
pub(super) const MAX_PER_ADDRESS: usize = 4;
/// Connections still in their hellos or handshake, of the server's 16.
pub(super) const MAX_HANDSHAKING: usize = 8;
/// The whole of the hellos and the handshake, however the bytes trickle in.
pub(super) const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(5);
/// Wrong tokens an address may present within `FAILURE_WINDOW`.
pub(super) const MAX_FAILURES: u32 = 5;
pub(super) const FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// Failure records kept before the expired ones are swept (bounds the map's memory).
const FAILURE_RECORDS: usize = 4096;

#[derive(Default)]
pub(super) struct Admission {
    per_address: Mutex<HashMap<IpAddr, usize>>,
    handshaking: Arc<AtomicUsize>,
    failures: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

/// One admitted connection: its share of its address's count, and its handshake slot until
/// `authenticated`.
pub(super) struct Admitted {
    admission: Arc<Admission>,
    ip: IpAddr,
    handshake: Option<OpenSlot>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Admission {
    /// The connection admitted, or why not (sent to it as `busy` and logged).
    pub(super) fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Admitted, String> {
        if let Some((count, since)) = lock(&self.failures).get(&ip) {
            if *count >= MAX_FAILURES && since.elapsed() < FAILURE_WINDOW {
                return Err(format!(
                    "{count} wrong tokens from {ip} within {} s; try again later",
                    FAILURE_WINDOW.as_secs()
                ));
            }
        }
        let handshake = OpenSlot::take(&self.handshaking, MAX_HANDSHAKING).ok_or_else(|| {
            format!("{MAX_HANDSHAKING} connections are in their handshake; try again later")
        })?;
        let mut per_address = lock(&self.per_address);
        let open = per_address.entry(ip).or_insert(0);
        if *open >= MAX_PER_ADDRESS {
            return Err(format!(
                "{MAX_PER_ADDRESS} control connections from {ip} are open; try again later"
            ));
        }
        *open += 1;
        Ok(Admitted {
            admission: self.clone(),
            ip,
            handshake: Some(handshake),
        })
    }

    /// Counts a wrong token from `ip`.
    pub(super) fn failed(&self, ip: IpAddr) {
        let mut failures = lock(&self.failures);
        if failures.len() >= FAILURE_RECORDS {
            failures.retain(|_, (_, since)| since.elapsed() < FAILURE_WINDOW);
        }
        let entry = failures.entry(ip).or_insert((0, Instant::now()));
        if entry.1.elapsed() >= FAILURE_WINDOW {
            *entry = (0, Instant::now());
        }
        entry.0 += 1;
    }
}

impl Admitted {
    /// The handshake is done: its slot goes to the next connection.
    pub(super) fn authenticated(&mut self) {
        self.handshake = None;
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut per_address = lock(&self.admission.per_address);
        if let Some(open) = per_address.get_mut(&self.ip) {
            *open -= 1;
            if *open == 0 {
                per_address.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_gets_its_share_and_the_handshake_slots_free_on_authentication() {
        let admission = Arc::new(Admission::default());
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let mut held: Vec<Admitted> = (0..MAX_PER_ADDRESS)
            .map(|_| admission.admit(a).unwrap())
            .collect();
        let refused = admission.admit(a).err().unwrap();
        assert!(refused.contains("from 192.0.2.1"), "{refused}");
        held.pop();
        held.push(admission.admit(a).unwrap());
        // Other addresses fill the handshake slots; an authenticated one frees its slot.
        let others: Vec<Admitted> = (0..MAX_HANDSHAKING - MAX_PER_ADDRESS)
            .map(|i| {
                admission
                    .admit(IpAddr::from([198, 51, 100, i as u8]))
                    .unwrap()
            })
            .collect();
        let b: IpAddr = "203.0.113.7".parse().unwrap();
        assert!(admission.admit(b).err().unwrap().contains("handshake"));
        held[0].authenticated();
        let _b = admission.admit(b).unwrap();
        drop(others);
        drop(held);
        assert!(lock(&admission.per_address).get(&a).is_none());
    }

    #[test]
    fn an_address_with_too_many_wrong_tokens_is_turned_away_and_others_are_not() {
        let admission = Arc::new(Admission::default());
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        (0..MAX_FAILURES).for_each(|_| admission.failed(a));
        assert!(admission.admit(a).err().unwrap().contains("wrong tokens"));
        assert!(admission.admit("192.0.2.2".parse().unwrap()).is_ok());
    }
}
