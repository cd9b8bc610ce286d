//! The network every flow crosses. The type lives with the `Link` opened from it
//! (`transport::network`); what refuses a transport it cannot carry, as an input error,
//! lives here.
use crate::error::ConfigError;
pub use crate::transport::network::{Network, Placement, DEFAULT_MTU, MTU_RANGE};
use crate::transport::Transport;

impl Network {
    /// Refuses a transport that cannot cross a veth pair: only IP sockets can.
    pub fn check_transport(&self, transport: Transport) -> Result<(), ConfigError> {
        match self.refusal(transport) {
            None => Ok(()),
            Some(why) => Err(ConfigError(why)),
        }
    }
}
