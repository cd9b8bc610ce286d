//! The client's hellos and handshake: the hello exchange (an address that answers no bytepath
//! hello is told apart from a bytepath server that refuses, and for a peer run refused without
//! detail), the version and capability checks, and the Noise handshake keyed by the token.
use super::{resolve, RemotePeer, STEP_TIMEOUT};
use crate::config::remote::{DriverIdentity, KEY_BYTES};
use crate::config::Target;
use crate::error::Error;
use crate::remote::channel::{ControlStream, HandshakeError, Proof, Refusal};
use crate::remote::identity;
use crate::remote::protocol::{self, Message, VERSION};
use crate::remote::{capabilities, REVERSE, SERVERS};
use std::net::TcpStream;

/// What every protocol version's hello has in common: its type and its version (the rest of
/// another version's hello may not read as this version's `Message`).
#[derive(serde::Deserialize)]
struct AnyHello {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    version: Option<u64>,
}

/// The version a hello of another protocol version names, if it is one.
fn other_version(hello: &[u8]) -> Option<u32> {
    let hello: AnyHello = serde_json::from_slice(hello).ok()?;
    if hello.kind != "server_hello" {
        return None;
    }
    hello
        .version
        .and_then(|v| u32::try_from(v).ok())
        .filter(|&v| v != VERSION)
}

/// Says once per process that a server runs `--insecure`.
fn warn_insecure(target: &Target) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        eprintln!("bytepath: WARNING: the server at {target} runs --insecure: the control channel is neither authenticated nor encrypted");
    });
}

/// Why the hello exchange failed: answered by a bytepath server (its refusal, its version), or
/// not answered as one (nothing listens, silence, another service).
enum HelloError {
    Answered(Error),
    Unanswered(Error),
}

impl RemotePeer {
    pub(super) fn handshake(&mut self) -> Result<(), Error> {
        let (client_hello, server_hello, secure) = match self.hellos() {
            Ok(hellos) => hellos,
            Err(HelloError::Answered(e)) => return Err(e),
            Err(HelloError::Unanswered(e)) => return Err(self.unanswered(e)),
        };
        self.secure_channel(secure, &client_hello, &server_hello)?;
        self.read_system()?;
        self.check_capabilities()
    }

    /// The server's release and kernel: its first frame once the channel is secure (it says
    /// nothing of them before). Kept escaped, as every text from the server is before it is
    /// shown or recorded.
    fn read_system(&mut self) -> Result<(), Error> {
        match self.receive("its system")? {
            Message::System { system } => {
                self.server_system = crate::remote::escaped(&system);
                Ok(())
            }
            other => Err(self.unexpected("system", &other)),
        }
    }

    /// Connects and exchanges hellos: returns both hellos and whether the server runs with a
    /// token. An address that refuses, stays silent or answers with something other than a
    /// bytepath hello is `Unanswered`.
    fn hellos(&mut self) -> Result<(Vec<u8>, Vec<u8>, bool), HelloError> {
        use HelloError::{Answered, Unanswered};
        let addr = resolve(&self.target).map_err(Answered)?;
        let started = std::time::Instant::now();
        let stream = TcpStream::connect_timeout(&addr, STEP_TIMEOUT)
            .map_err(|e| Unanswered(self.fail(format_args!("connecting: {e}"))))?;
        let setup = stream
            .set_read_timeout(Some(self.hello_wait(started)))
            .and_then(|()| stream.set_write_timeout(Some(STEP_TIMEOUT)))
            .and_then(|()| stream.set_nodelay(true));
        setup.map_err(|e| Unanswered(self.fail(e)))?;
        self.control = Some(ControlStream::plain(stream));
        let client_hello = protocol::encode(&Message::ClientHello {
            version: VERSION,
            capabilities: capabilities(),
        })
        .map_err(|e| Answered(self.fail(e)))?;
        let sent = protocol::write_frame(self.stream(), &client_hello);
        sent.map_err(|e| Unanswered(self.fail(format_args!("sending client_hello: {e}"))))?;
        let server_hello = protocol::read_frame(self.stream())
            .map_err(|e| Unanswered(self.fail(format_args!("waiting for its hello: {e}"))))?;
        let stepped = self.stream().set_read_timeout(Some(STEP_TIMEOUT));
        stepped.map_err(|e| Answered(self.fail(e)))?;
        let (version, secure) = match protocol::parse(&server_hello) {
            // Its `random` is for the handshake's prologue only: the hello is taken whole.
            Ok(Message::ServerHello {
                version,
                secure,
                capabilities,
                ..
            }) => {
                self.server_capabilities = capabilities;
                (version, secure)
            }
            Ok(Message::Error { code, message }) => {
                return Err(Answered(self.refused(code, &message)))
            }
            Ok(other) => return Err(Unanswered(self.unexpected("its hello", &other))),
            // An older server's hello has other fields: still name its version.
            Err(e) => match other_version(&server_hello) {
                Some(version) => (version, false),
                None => return Err(Unanswered(self.fail(format_args!("its hello: {e}")))),
            },
        };
        if version != VERSION {
            return Err(Answered(crate::error::ConfigError(format!(
                "--remote {}: protocol version mismatch: this client speaks version {VERSION}, the server speaks version {version}; use the same bytepath release on both hosts",
                self.target
            ))
            .into()));
        }
        Ok((client_hello, server_hello, secure))
    }

    /// An address that did not answer a bytepath hello. For a peer run the driver learns only
    /// that (whether a port is closed, filtered or holds another service is not its to probe
    /// through this server); the detail is kept for the server's log.
    fn unanswered(&self, detail: Error) -> Error {
        let Some(kept) = &self.peer_run else {
            return detail;
        };
        *kept.lock().unwrap_or_else(|p| p.into_inner()) = Some(detail.to_string());
        Error::Failed(format!(
            "the peer at {} did not answer a bytepath hello",
            self.target
        ))
    }

    /// The Noise handshake keyed by the token, when the server runs with one; a server
    /// without one (`--insecure`) is taken only by a client without one, with a warning. With
    /// `--identity` the handshake is IK toward the key the server's hello announced, once
    /// `--trusted-servers` holds it: a server announcing another key, or none, is refused
    /// before any request.
    fn secure_channel(
        &mut self,
        secure: bool,
        client_hello: &[u8],
        server_hello: &[u8],
    ) -> Result<(), Error> {
        let (token, identity) = (self.token.clone(), self.identity.clone());
        let server_key = self.trusted_server_key(identity.as_ref(), server_hello)?;
        let prologue = crate::remote::channel::prologue(client_hello, server_hello);
        match (secure, token.as_deref(), server_key) {
            (true, token, Some(key)) => {
                let keys = identity.as_ref().map(|i| &i.keys);
                self.prove(Proof { token, keys }, Some(&key), &prologue)
            }
            (true, Some(token), None) => self.prove(Proof::token(token), None, &prologue),
            (true, None, None) => Err(crate::error::ConfigError(format!(
                "--remote {}: the server requires a token; give the same one with --token-file",
                self.target
            ))
            .into()),
            (false, Some(_), _) => Err(crate::error::ConfigError(format!(
                "--remote {}: the server runs --insecure (no token), so it cannot prove it holds this --token-file; refused",
                self.target
            ))
            .into()),
            (false, None, _) => {
                warn_insecure(&self.target);
                Ok(())
            }
        }
    }

    /// The server key the handshake is to prove: the one its hello announces, when this
    /// driver has an identity and its `--trusted-servers` holds that key. A server without an
    /// identity is refused by a driver with one, and the other way round.
    fn trusted_server_key(
        &self,
        identity: Option<&DriverIdentity>,
        server_hello: &[u8],
    ) -> Result<Option<[u8; KEY_BYTES]>, Error> {
        let refuse = |why: String| -> Error {
            crate::error::ConfigError(format!("--remote {}: {why}", self.target)).into()
        };
        let announced = match protocol::parse(server_hello) {
            Ok(Message::ServerHello { identity, .. }) => identity,
            _ => None,
        };
        let announced = announced
            .map(|hex| identity::parse_key(&hex).ok_or(hex))
            .transpose()
            .map_err(|hex| {
                refuse(format!(
                    "the server's hello announces {:?}, which is no public key; refused",
                    crate::remote::escaped(&hex)
                ))
            })?;
        match (identity, announced) {
            (None, None) => Ok(None),
            (Some(_), None) => Err(refuse(
                "the server has no --identity, so it cannot prove it is one of --trusted-servers; refused".into(),
            )),
            (None, Some(key)) => Err(refuse(format!(
                "the server (key {}) takes only drivers with an identity; give --identity FILE and --trusted-servers FILE",
                identity::fingerprint(&key)
            ))),
            (Some(mine), Some(key)) => match identity::find(&mine.trusted_servers, &key) {
                Some(_) => Ok(Some(key)),
                None => Err(refuse(format!(
                    "the server's key {} is not among --trusted-servers; refused before any request (add the line of that server's FILE.pub if it is one of yours)",
                    identity::fingerprint(&key)
                ))),
            },
        }
    }

    /// Runs the handshake: what the server answers, or what this side concludes.
    fn prove(
        &mut self,
        proof: Proof<'_>,
        server_key: Option<&[u8; KEY_BYTES]>,
        prologue: &[u8],
    ) -> Result<(), Error> {
        match self.stream().initiate(proof, server_key, prologue) {
            Ok(()) => Ok(()),
            Err(HandshakeError::Answered(Refusal(code, message))) => {
                Err(self.refused(code, &message))
            }
            Err(HandshakeError::WrongToken) => {
                let what = match server_key {
                    Some(_) => "this --token-file and the key its hello announced",
                    None => "this --token-file",
                };
                Err(crate::error::ConfigError(format!(
                    "--remote {}: the server could not prove it holds {what} (a different token, or the connection was altered on the way)",
                    self.target
                ))
                .into())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    fn check_capabilities(&self) -> Result<(), Error> {
        if self.reverse && !self.server_capabilities.iter().any(|c| c == REVERSE) {
            return Err(crate::error::ConfigError(format!(
                "--remote {} --reverse: the server ({}) cannot run the measured side; use the same bytepath release on both hosts",
                self.target, self.server_system
            ))
            .into());
        }
        if self.servers && !self.server_capabilities.iter().any(|c| c == SERVERS) {
            return Err(crate::error::ConfigError(format!(
                "--remote {} with servers: the server ({}) cannot run server models; use the same bytepath release on both hosts",
                self.target, self.server_system
            ))
            .into());
        }
        Ok(())
    }

    /// Refuses a server whose hello does not announce `capability` (an older release).
    pub(super) fn require(&self, capability: &str, what: &str) -> Result<(), Error> {
        if self.server_capabilities.iter().any(|c| c == capability) {
            return Ok(());
        }
        Err(crate::error::ConfigError(format!(
            "--remote {}: the server ({}) cannot {what}; use the same bytepath release on both hosts",
            self.target, self.server_system
        ))
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_3_hello_with_its_system_is_named_as_the_older_version() {
        let older = br#"{"type":"server_hello","version":3,"capabilities":["tcp"],"system":"bytepath 0.9, Linux 6.1","secure":true}"#;
        // Not a hello of this version (it names a system, and no random)...
        assert!(protocol::parse(older).is_err());
        // ...but its version is still read, for the mismatch message.
        assert_eq!(other_version(older), Some(3));
        let this = protocol::encode(&Message::ServerHello {
            version: VERSION,
            capabilities: vec![],
            random: "00".into(),
            secure: true,
            identity: None,
        })
        .unwrap();
        assert_eq!(other_version(&this), None);
    }
}
