//! How many threads the load generator runs (`--client-threads`): by default one per CPU of
//! the load side, so the clients are not the limit of a many-core machine where the server
//! model could serve more (two threads on 16 CPUs hid a 3× lead); never more than one per
//! client, never fewer than one. A count given on the command line wins.
use crate::config::format_cpu_list;

/// The load generator's thread count for a study, and where the default came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClientThreads {
    /// The count before the per-point cap (at most one per client).
    #[serde(rename = "client_threads")]
    pub count: usize,
    /// `false`: `--client-threads N` was given.
    #[serde(rename = "client_threads_default")]
    pub default: bool,
    /// The CPUs the load generator may run on (the default counts them).
    #[serde(skip)]
    pub load_cpus: Vec<usize>,
    /// Which CPUs those are, in words: "the load side of --placement split".
    #[serde(skip)]
    pub side: &'static str,
}

impl ClientThreads {
    /// `given` (`--client-threads N`), or one per CPU of `load_cpus` (at least one).
    pub fn new(given: Option<usize>, load_cpus: &[usize], side: &'static str) -> ClientThreads {
        ClientThreads {
            count: given.unwrap_or(load_cpus.len()).max(1),
            default: given.is_none(),
            load_cpus: load_cpus.to_vec(),
            side,
        }
    }

    /// The threads that drive `clients` connections: at most one per client.
    pub fn for_clients(&self, clients: usize) -> usize {
        self.count.min(clients).max(1)
    }

    /// The count for `clients` and why, as the record states it: "8: the default, one per
    /// CPU of the load side of --placement split (CPUs 8-15)".
    pub fn chosen(&self, clients: usize) -> String {
        let n = self.for_clients(clients);
        let why = match self.default {
            true => format!(
                "the default, one per CPU of {} (CPU{} {})",
                self.side,
                if self.load_cpus.len() == 1 { "" } else { "s" },
                format_cpu_list(&self.load_cpus)
            ),
            false => format!("--client-threads {}", self.count),
        };
        let capped = match n < self.count {
            true => format!(", at most one per client ({clients} clients)"),
            false => String::new(),
        };
        format!("{n}: {why}{capped}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPLIT: &str = "the load side of --placement split";

    #[test]
    fn the_default_is_one_thread_per_load_cpu_at_most_one_per_client() {
        let sixteen: Vec<usize> = (0..16).collect();
        let t = ClientThreads::new(None, &sixteen, SPLIT);
        assert_eq!((t.count, t.default), (16, true));
        assert_eq!(t.for_clients(15), 15, "15 clients on 16 load CPUs");
        assert_eq!(t.for_clients(1000), 16);
        assert_eq!(
            t.chosen(15),
            "15: the default, one per CPU of the load side of --placement split (CPUs 0-15), at most one per client (15 clients)"
        );
        let upper: Vec<usize> = (8..16).collect();
        assert_eq!(
            ClientThreads::new(None, &upper, SPLIT).chosen(1000),
            "8: the default, one per CPU of the load side of --placement split (CPUs 8-15)"
        );
        // A 2-CPU machine split in halves: one client thread on the one load CPU.
        let two = ClientThreads::new(None, &[0], SPLIT);
        assert_eq!(
            (two.for_clients(5), two.chosen(5).as_str()),
            (
                1,
                "1: the default, one per CPU of the load side of --placement split (CPU 0)"
            )
        );
        assert_eq!(
            ClientThreads::new(None, &[], SPLIT).count,
            1,
            "at least one"
        );
    }

    #[test]
    fn a_given_count_wins_and_is_still_capped_per_client() {
        let t = ClientThreads::new(Some(4), &[0], SPLIT);
        assert_eq!((t.count, t.default), (4, false));
        assert_eq!(t.chosen(100), "4: --client-threads 4");
        assert_eq!(
            t.chosen(2),
            "2: --client-threads 4, at most one per client (2 clients)"
        );
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"client_threads": 4, "client_threads_default": false})
        );
    }
}
