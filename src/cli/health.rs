//! `bytepath server --health-port`: the flag for the plain-HTTP health endpoint that
//! liveness and readiness probes ask instead of taking a control slot.
use clap::Args;

#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct HealthArgs {
    /// Answer plain HTTP `GET /healthz` on this port (same --bind address) with the server's
    /// state: 200 while it serves, 503 once it is ending. For Kubernetes probes: they take no
    /// control slot and start no session. Off unless given.
    #[arg(long)]
    pub health_port: Option<String>,
}
