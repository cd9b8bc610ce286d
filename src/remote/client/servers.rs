//! servers study over two hosts (`servers --remote`): the host whose `bytepath server` forks
//! every point's server model, as the study's `ServersHost`, and each point's server driven
//! over its control connection, as the study's `ServerSide`.
use super::{resolve, RemotePeer, STEP_TIMEOUT};
use crate::config::RemoteRun;
use crate::error::{ConfigError, Error};
use crate::record::wire::ServerReport;
use crate::remote::protocol::{self, Message};
use crate::servers::host::{ServersHost, Started};
use crate::servers::process::{ServerSetup, ServerSide};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

/// `--remote`: the host whose `bytepath server` forks every point's server model.
pub struct RemoteServers {
    run: RemoteRun,
    /// The address the load generator connects to (the server's listener port comes per point).
    addr: Ipv4Addr,
    /// The server's version and kernel, from its hello.
    system: String,
}

impl RemoteServers {
    /// Says hello (and proves the token) once, so an unreachable server, a wrong token or a
    /// server without server models is one error before any point.
    pub fn open(run: &RemoteRun) -> Result<Box<dyn ServersHost>, Error> {
        let addr = match resolve(&run.target)? {
            SocketAddr::V4(a) => *a.ip(),
            SocketAddr::V6(a) => {
                return Err(ConfigError(format!(
                    "--remote {}: resolves to the IPv6 address {}; the load generator connects over IPv4 only; give an IPv4 address",
                    run.target,
                    a.ip()
                ))
                .into())
            }
        };
        let system = RemotePeer::for_servers(run.target.clone(), run.token.clone())
            .with_identity(run.identity.clone())
            .check_system()?;
        Ok(Box::new(RemoteServers {
            run: run.clone(),
            addr,
            system,
        }))
    }
}

impl ServersHost for RemoteServers {
    fn addr(&self) -> Ipv4Addr {
        self.addr
    }

    fn describe(&self) -> String {
        format!("the server at {} ({})", self.run.target, self.system)
    }

    fn start(&self, setup: ServerSetup<'_>, clients: usize) -> Result<Started, Error> {
        let peer = RemotePeer::for_servers(self.run.target.clone(), self.run.token.clone())
            .with_identity(self.run.identity.clone());
        peer.servers_run(setup, clients)
    }
}

impl RemotePeer {
    /// Asks the server to fork the model for one `bytepath servers` point.
    fn servers_run(mut self, setup: ServerSetup<'_>, clients: usize) -> Result<Started, Error> {
        self.handshake()?;
        self.send(&Message::ServersRun {
            model: setup.model.name().into(),
            size: setup.size as u64,
            server_threads: setup.threads as u64,
            clients: clients as u64,
            connections: setup.door.most,
        })?;
        match self.receive("its answer to the servers request")? {
            Message::ServersAccepted { port } => Ok(Started::Accepted {
                port,
                server: Box::new(RemoteServer { peer: self }),
            }),
            Message::ServersSkipped { reason } => Ok(Started::Skipped(format!(
                "the server at {}: {}",
                self.target,
                crate::remote::escaped(&reason)
            ))),
            other => Err(self.unexpected("servers_accepted", &other)),
        }
    }
}

/// A `bytepath servers` point's server, forked by `bytepath server` on the other host and
/// driven over the control connection.
struct RemoteServer {
    peer: RemotePeer,
}

impl ServerSide for RemoteServer {
    fn start_window(&mut self) -> io::Result<()> {
        protocol::write_message(self.peer.stream(), &Message::ServersWindow)
    }

    fn end_window(&mut self, deadline: Duration) -> Result<ServerReport, String> {
        self.peer
            .send(&Message::ServersStop)
            .map_err(|e| e.to_string())?;
        // The server needs its own deadline for its process's report, plus the trip back.
        let _ = self
            .peer
            .stream()
            .set_read_timeout(Some(deadline + STEP_TIMEOUT));
        match self.peer.receive("the server's report") {
            Ok(Message::ServersReport { report }) => Ok(*report),
            Ok(other) => Err(self.peer.unexpected("servers_report", &other).to_string()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The server says so in its answer to `servers_stop`; nothing to look at before.
    fn ended(&mut self) -> Option<String> {
        None
    }

    fn close(mut self: Box<Self>) {
        // `bye` back means the point's server process is gone and the next point may start.
        let _ = self.peer.send(&Message::Bye);
        let _ = self.peer.stream().set_read_timeout(Some(STEP_TIMEOUT));
        let _ = protocol::read_message(self.peer.stream());
    }
}
