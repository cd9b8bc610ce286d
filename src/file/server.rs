//! The server side of a file study when it runs on another host (`file --remote`): what the
//! study asks that server for (`FileRequest`), what it reports back (`FileSent`), and the two
//! traits a remote placement implements (`remote::client`'s file sessions), so the study can
//! drive a transfer without knowing the control protocol.
use crate::error::Error;
use crate::record::wire::{FileRequest, Residency, SideUsage};
use std::net::TcpStream;
use std::time::Instant;

/// What the server reported after sending.
pub struct FileSent {
    pub server: Option<SideUsage>,
    pub syscalls: Option<u64>,
    pub residency: Residency,
    pub error: Option<String>,
}

/// `bytepath server` on another host, serving test files (`file --remote`).
pub trait FileServer {
    /// Asks the server to write and prepare the file `request` names, and opens the one data
    /// connection the file will arrive on. A refusal is `Error::Config` (it holds for every
    /// transfer); any other failure is `Error::Failed` or `Error::Setup`.
    fn open(&self, request: &FileRequest) -> Result<(Box<dyn FileSession>, TcpStream), Error>;
}

/// One remote transfer, between the server's acceptance and its report.
pub trait FileSession: Send {
    /// Tells the server to send; returns the instant just before the message left.
    fn go(&mut self, rep: u32) -> Result<Instant, Error>;
    /// The file's xxh3-64 as the server computed it (when verifying).
    fn hash(&self) -> Option<u64>;
    /// Reads the server's report (after this host has read to EOF) and says goodbye.
    fn sent(self: Box<Self>) -> Result<FileSent, Error>;
}
