//! mesh: the driver's side of a peer run. The driver asks one server (the pair's source) to
//! run a point against another (the destination) and waits for the record it sends back; a
//! Ctrl-C on the driver becomes a `Stop` to the source, whose record then says it was
//! interrupted, so nothing already measured is lost.
use super::{request_for, RemotePeer, STEP_TIMEOUT, WATCH_POLL};
use crate::config::Target;
use crate::error::Error;
use crate::mesh::hosts::{MeshHosts, PairRun};
use crate::remote::protocol::{self, FrameError, Message, RunRequest};
use crate::remote::{PEERS, TCP_INFO};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The mesh driver's client: one control session per check or run, to the host named.
pub struct MeshClient;

impl MeshHosts for MeshClient {
    fn check(&self, host: &Target, token: Option<&[u8]>) -> Result<String, String> {
        RemotePeer::new(host.clone(), token.map(<[u8]>::to_vec), false)
            .check_peers()
            .map_err(|e| e.to_string())
    }

    fn run_pair(
        &self,
        run: &PairRun<'_>,
        interrupt: &AtomicBool,
    ) -> Result<serde_json::Value, Error> {
        let request = request_for(run.spec, run.reverse);
        RemotePeer::new(run.src.clone(), run.token.map(<[u8]>::to_vec), false)
            .peer_run(run.dst, run.names, request, interrupt)
    }

    fn canary(
        &self,
        host: &Target,
        token: Option<&[u8]>,
    ) -> Result<crate::probe::canary::Canary, String> {
        RemotePeer::new(host.clone(), token.map(<[u8]>::to_vec), false)
            .canary()
            .map_err(|e| e.to_string())
    }

    fn fresh_token(&self) -> Result<Vec<u8>, Error> {
        let bytes = protocol::random_bytes::<32>().map_err(Error::Setup)?;
        Ok(protocol::to_hex(&bytes).into_bytes())
    }
}

impl RemotePeer {
    /// The longest a peer run's hello toward its peer takes, connecting and the peer's answer
    /// together (elsewhere each is a step of its own): a closed port, a filtered one and a
    /// silent service all end within it, so a server that answers every refusal of a peer run
    /// after it tells its driver nothing by the timing of its answer.
    pub const PEER_HELLO_BUDGET: Duration = STEP_TIMEOUT;

    /// How long a hello may still wait for the server's answer, `started` being when connecting
    /// began: in a peer run, what is left of `PEER_HELLO_BUDGET`; otherwise a step of its own.
    pub(super) fn hello_wait(&self, started: Instant) -> Duration {
        if self.peer_run.is_none() {
            return STEP_TIMEOUT;
        }
        let left = Self::PEER_HELLO_BUDGET.saturating_sub(started.elapsed());
        left.max(Duration::from_millis(1))
    }

    /// Says hello (and proves the token) and checks that the server runs peer tests; returns
    /// its version and kernel. Whether it allows the mesh's hosts shows at its first run.
    pub fn check_peers(mut self) -> Result<String, Error> {
        self.handshake()?;
        let able = self.require(PEERS, "run tests toward other hosts (bytepath mesh)");
        self.send(&Message::Bye)?;
        able.map(|()| self.server_system)
    }

    /// Asks this server to run `request` against the server at `peer` and returns the run
    /// record it sends back. `names` are (source, destination) as the mesh names them, for the
    /// record. A refusal (peer outside `--allow-peers` or `--peer-ports`, limits, version,
    /// token) is an input
    /// error; a server that cannot be reached or goes away is a failure.
    pub fn peer_run(
        mut self,
        peer: &Target,
        (src, dst): (&str, &str),
        request: RunRequest,
        interrupt: &AtomicBool,
    ) -> Result<serde_json::Value, Error> {
        self.handshake()?;
        self.require(PEERS, "run tests toward other hosts (bytepath mesh)")?;
        // An older server refuses a field it does not know: TCP_INFO only where it can.
        let tcp_info = request.tcp_info && self.can(TCP_INFO);
        let request = RunRequest {
            tcp_info,
            ..request
        };
        // The source needs the run's own time, its stop grace, and a set-up step per side.
        let budget = Duration::from_millis(request.warmup_ms + request.duration_ms)
            + crate::engine::STOP_GRACE
            + 3 * STEP_TIMEOUT;
        self.send(&Message::PeerRun {
            peer: peer.to_string(),
            src: src.to_string(),
            dst: dst.to_string(),
            request,
        })?;
        self.stream()
            .set_read_timeout(Some(WATCH_POLL))
            .map_err(Error::Setup)?;
        let deadline = Instant::now() + budget;
        let mut stopped = false;
        loop {
            if !stopped && interrupt.load(Ordering::SeqCst) {
                // The source may be between runs already; its answer tells.
                let _ = protocol::write_message(self.stream(), &Message::Stop);
                stopped = true;
            }
            match protocol::read_message(self.stream()) {
                Ok(Message::PeerRecord { record }) => return Ok(record),
                Ok(Message::Error { code, message }) => return Err(self.refused(code, &message)),
                Ok(Message::Busy { message }) => {
                    return Err(self.fail(format_args!("busy: {message}")))
                }
                Ok(other) => return Err(self.unexpected("peer_record", &other)),
                Err(FrameError::Idle) if Instant::now() < deadline => {}
                Err(FrameError::Idle) => {
                    return Err(self.fail(format_args!(
                        "sent no record within {} s of the request",
                        budget.as_secs()
                    )))
                }
                Err(e) => {
                    return Err(self.fail(format_args!("waiting for the record: {e}")));
                }
            }
        }
    }
}
