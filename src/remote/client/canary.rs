//! The driver's side of a canary on request: one control session to a host's server, which
//! measures the canary on itself and sends it back (`bytepath mesh`, once per round per host).
use super::RemotePeer;
use crate::error::Error;
use crate::probe::canary::Canary;
use crate::remote::protocol::Message;
use crate::remote::CANARY;

impl RemotePeer {
    /// Says hello, asks for the canary and returns it; a server that does not announce the
    /// capability (an older bytepath) is refused before anything is asked.
    pub fn canary(mut self) -> Result<Canary, Error> {
        self.handshake()?;
        self.require(CANARY, "measure the canary (issue 25)")?;
        self.send(&Message::Canary)?;
        match self.receive("canary_taken")? {
            Message::CanaryTaken { canary } => {
                let _ = self.send(&Message::Bye);
                Ok(*canary)
            }
            other => Err(self.unexpected("canary_taken", &other)),
        }
    }
}
