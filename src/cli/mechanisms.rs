//! The help of the flags that choose send mechanisms, written from the mechanisms'
//! descriptors: production passes `MechanismKind::ALL` (in the clap attributes of `run` and
//! `sweep`), so a mechanism appears in `--help` by being listed.
use crate::mechanism::descriptor::names;
use crate::mechanism::MechanismKind;

/// `run --mechanism`: every mechanism with its help line.
pub fn run_help(mechanisms: &[MechanismKind]) -> String {
    let each: Vec<String> = mechanisms
        .iter()
        .map(|m| format!("{} ({})", m.name(), m.help))
        .collect();
    format!(
        "How the sender hands a message to the kernel: {}",
        each.join(", ")
    )
}

/// `sweep --mechanisms`: the names to choose from.
pub fn sweep_help(mechanisms: &[MechanismKind]) -> String {
    format!(
        "Mechanisms, comma-separated ({}), or all",
        names(mechanisms, |_| true).join(", ")
    )
}

/// `--queue-depth` (run and sweep): the mechanisms that keep an io_uring queue.
pub fn queue_depth_help(mechanisms: &[MechanismKind]) -> String {
    let batched = names(mechanisms, |m| m.uses_queue_depth);
    format!(
        "Batching mechanisms ({}): messages handed to the kernel together (io_uring: sends \
         linked so they go out in order; sendmmsg: one call); 1 to 4096, default 16. Refused \
         without such a mechanism",
        batched.join(", ")
    )
}
