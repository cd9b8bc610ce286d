//! The canary on request (issue 25): `bytepath mesh` asks each host's server for one per
//! round, so a shift of a host between two meshes can be seen. It takes the server's turn like
//! a run, so it never lands inside another client's measured window.
use super::audit::Served;
use super::{send, take_turn, Refusal, State};
use crate::remote::channel::ControlStream;
use crate::remote::protocol::Message;

/// Measures the canary on every CPU this server may use (the first, and the second for the
/// cross-CPU round trip) and sends it back; answers `busy` while another run holds the server.
pub(super) fn serve(stream: &mut ControlStream, state: &State) -> Result<Served, Refusal> {
    let Some(_claim) = take_turn(stream, state) else {
        return Ok(String::from("canary: busy, another run is in progress").into());
    };
    let cpus = crate::sys::affinity::allowed_cpus().unwrap_or_default();
    let canary = crate::probe::canary::measure(&cpus);
    let took = format!("canary: {:.0} ms", canary.elapsed_ms);
    send(
        stream,
        &Message::CanaryTaken {
            canary: Box::new(canary),
        },
    )?;
    Ok(Served {
        ran: Some("canary".into()),
        bytes: None,
        detail: took,
    })
}
