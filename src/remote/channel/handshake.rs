//! The handshake that opens the control channel: Noise NNpsk0 keyed by the token, or with
//! identities per host IK (IKpsk1 with the token too); what each end brings (`Proof`), the
//! prologue both hellos make, and why a handshake failed.
use super::{ControlStream, Incoming, Secure, MAX_RECORD};
use crate::config::remote::{KeyPair, KEY_BYTES};
use sha2::{Digest, Sha256};
use std::io;
use std::sync::{Arc, Mutex};

/// The Noise protocol the control channel runs with the token alone.
pub const NOISE_PARAMS: &str = "Noise_NNpsk0_25519_ChaChaPoly_SHA256";
/// With identities (`identity`, which says why IK): the driver names the server's key.
pub const IDENTITY_PARAMS: &str = "Noise_IK_25519_ChaChaPoly_SHA256";
/// With identities and the token: the token joins at the end of the first message.
pub const IDENTITY_TOKEN_PARAMS: &str = "Noise_IKpsk1_25519_ChaChaPoly_SHA256";
/// Binds the key derived from the token to this use, so it is no other protocol's key.
const PSK_CONTEXT: &[u8] = b"bytepath control v3 psk";

impl ControlStream {
    /// The initiator's side of the handshake keyed by the token alone: the client.
    pub fn client_handshake(
        &mut self,
        token: &[u8],
        prologue: &[u8],
    ) -> Result<(), HandshakeError> {
        self.initiate(Proof::token(token), None, prologue)
    }

    /// The initiator's side: the driver. With `proof.keys` the handshake is IK toward
    /// `server_key` (the key the server's hello announced, already checked against
    /// `--trusted-servers`): only the holder of its private key can answer.
    pub fn initiate(
        &mut self,
        proof: Proof<'_>,
        server_key: Option<&[u8; KEY_BYTES]>,
        prologue: &[u8],
    ) -> Result<(), HandshakeError> {
        let key = proof.token.map(psk);
        let mut noise =
            builder(proof.keys, key.as_ref(), server_key, prologue)?.build_initiator()?;
        let mut buf = vec![0u8; MAX_RECORD];
        let n = noise.write_message(&[], &mut buf)?;
        crate::remote::frame::write_frame(self, &buf[..n]).map_err(HandshakeError::Io)?;
        let answer = crate::remote::frame::read_frame(self).map_err(HandshakeError::Frame)?;
        if let Ok(refusal) = crate::remote::protocol::parse(&answer) {
            return Err(HandshakeError::Answered(refusal.into()));
        }
        noise
            .read_message(&answer, &mut buf)
            .map_err(|_| HandshakeError::WrongToken)?;
        self.secure = Some(secured(noise)?);
        Ok(())
    }

    /// The responder's side keyed by the token alone: the server.
    pub fn server_handshake(
        &mut self,
        token: &[u8],
        prologue: &[u8],
    ) -> Result<(), HandshakeError> {
        self.respond(Proof::token(token), prologue, &|_| true)
    }

    /// The responder's side: the server. With `proof.keys` the handshake is IK, and the
    /// driver's static key, learnt from the first message, is judged by `authorize` before
    /// any answer: a driver it refuses gets no handshake message back.
    pub fn respond(
        &mut self,
        proof: Proof<'_>,
        prologue: &[u8],
        authorize: &dyn Fn(&[u8; KEY_BYTES]) -> bool,
    ) -> Result<(), HandshakeError> {
        let key = proof.token.map(psk);
        let mut noise = builder(proof.keys, key.as_ref(), None, prologue)?.build_responder()?;
        let mut buf = vec![0u8; MAX_RECORD];
        let first = crate::remote::frame::read_frame(self).map_err(HandshakeError::Frame)?;
        noise
            .read_message(&first, &mut buf)
            .map_err(|_| HandshakeError::WrongToken)?;
        if let Some(driver) = static_key(noise.get_remote_static()) {
            if !authorize(&driver) {
                return Err(HandshakeError::Unauthorized(driver));
            }
        }
        let n = noise.write_message(&[], &mut buf)?;
        crate::remote::frame::write_frame(self, &buf[..n]).map_err(HandshakeError::Io)?;
        self.secure = Some(secured(noise)?);
        Ok(())
    }

    /// The other end's static key, which the handshake proved: the driver's, on a server that
    /// ran IK; `None` for a handshake keyed by the token alone.
    pub fn peer_key(&self) -> Option<[u8; KEY_BYTES]> {
        static_key(self.secure.as_ref()?.transport.get_remote_static())
    }
}

/// What one end brings to the handshake: the token, its own key pair, or both.
#[derive(Clone, Copy, Default)]
pub struct Proof<'a> {
    pub token: Option<&'a [u8]>,
    /// This host's `--identity`: with it the handshake is IK (IKpsk1 with the token too).
    pub keys: Option<&'a KeyPair>,
}

impl<'a> Proof<'a> {
    pub fn token(token: &'a [u8]) -> Proof<'a> {
        Proof {
            token: Some(token),
            keys: None,
        }
    }
}

fn static_key(key: Option<&[u8]>) -> Option<[u8; KEY_BYTES]> {
    key?.try_into().ok()
}

/// The handshake for what this end brings: NNpsk0 with the token alone; IK with a key pair
/// (the initiator also names the server's key), the token joining as psk1 when there is one.
fn builder<'a>(
    keys: Option<&'a KeyPair>,
    psk: Option<&'a [u8; 32]>,
    server_key: Option<&'a [u8; KEY_BYTES]>,
    prologue: &'a [u8],
) -> Result<snow::Builder<'a>, snow::Error> {
    let (name, psk_at) = match (keys, psk) {
        (None, _) => (NOISE_PARAMS, 0),
        (Some(_), None) => (IDENTITY_PARAMS, 0),
        (Some(_), Some(_)) => (IDENTITY_TOKEN_PARAMS, 1),
    };
    let params = name.parse().expect("the Noise pattern names are valid");
    let mut builder = snow::Builder::new(params).prologue(prologue)?;
    if let Some(keys) = keys {
        builder = builder.local_private_key(&keys.private)?;
    }
    if let Some(server) = server_key {
        builder = builder.remote_public_key(server)?;
    }
    if let Some(key) = psk {
        builder = builder.psk(psk_at, key)?;
    }
    Ok(builder)
}

fn secured(noise: snow::HandshakeState) -> Result<Arc<Secure>, HandshakeError> {
    let transport = noise.into_stateless_transport_mode()?;
    Ok(Arc::new(Secure {
        transport,
        send: Mutex::new(0),
        incoming: Mutex::new(Incoming::default()),
    }))
}

/// The handshake's prologue: both hellos as they crossed the wire, each with its length.
pub fn prologue(client_hello: &[u8], server_hello: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(8 + client_hello.len() + server_hello.len());
    for hello in [client_hello, server_hello] {
        p.extend_from_slice(&(hello.len() as u32).to_be_bytes());
        p.extend_from_slice(hello);
    }
    p
}

/// The Noise pre-shared key: SHA-256 of a context string and the token (any length of token
/// becomes the 32 bytes Noise takes; the token's strength is checked where it is read).
fn psk(token: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(PSK_CONTEXT);
    hash.update(token);
    hash.finalize().into()
}

/// Why the handshake failed.
#[derive(Debug)]
pub enum HandshakeError {
    /// The other side does not hold the same token (or the hellos were altered on the way; or,
    /// with identities, the server does not hold the key its hello announced).
    WrongToken,
    /// The server's side: the driver proved a key its `--authorized-drivers` does not hold.
    Unauthorized([u8; KEY_BYTES]),
    /// The server answered the handshake with a plaintext message: its refusal (code, text).
    Answered(Refusal),
    Frame(crate::remote::frame::FrameError),
    Io(io::Error),
    Noise(snow::Error),
}

/// What a server's plaintext answer to the handshake says.
#[derive(Debug)]
pub struct Refusal(pub crate::remote::protocol::ErrorCode, pub String);

impl From<crate::remote::protocol::Message> for Refusal {
    fn from(m: crate::remote::protocol::Message) -> Refusal {
        use crate::remote::protocol::{ErrorCode, Message};
        match m {
            Message::Error { code, message } => Refusal(code, message),
            Message::Busy { message } => Refusal(ErrorCode::Failed, format!("busy: {message}")),
            other => Refusal(
                ErrorCode::OutOfOrder,
                format!("a {} message instead of the handshake", other.kind()),
            ),
        }
    }
}

impl From<snow::Error> for HandshakeError {
    fn from(e: snow::Error) -> Self {
        HandshakeError::Noise(e)
    }
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandshakeError::WrongToken => write!(
                f,
                "the handshake failed: the other side does not hold the same token (or the hellos were altered on the way)"
            ),
            HandshakeError::Unauthorized(key) => write!(
                f,
                "the driver's key {} is not among this server's --authorized-drivers",
                crate::remote::identity::fingerprint(key)
            ),
            HandshakeError::Answered(r) => write!(f, "{}", r.1),
            HandshakeError::Frame(e) => write!(f, "the handshake: {e}"),
            HandshakeError::Io(e) => write!(f, "the handshake: {e}"),
            HandshakeError::Noise(e) => write!(f, "the handshake: {e}"),
        }
    }
}
