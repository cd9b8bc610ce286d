//! file study over two hosts (`file --remote`): the control session that asks `bytepath
//! server` to write, prepare and send each test file, as the study's `FileServer`.
use super::{resolve, RemotePeer, FILE_DATA_IDLE, STEP_TIMEOUT};
use crate::config::remote::DriverIdentity;
use crate::config::{RemoteRun, Target};
use crate::error::Error;
use crate::file::server::{FileSent, FileServer, FileSession as Session};
use crate::record::wire::FileRequest;
use crate::remote::protocol::{self, Message, DATA_TAG_BYTES};
use crate::remote::FILE;
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The server at `--remote`, serving every transfer of one `file --remote` command, each over
/// a control session of its own.
pub struct RemoteFiles {
    target: Target,
    token: Option<Vec<u8>>,
    identity: Option<DriverIdentity>,
}

impl RemoteFiles {
    /// Asks the server now whether it is there, takes this client and serves files, so a
    /// wrong address or an older server is one error before any transfer.
    pub fn connect(remote: &RemoteRun) -> Result<RemoteFiles, Error> {
        RemotePeer::new(remote.target.clone(), remote.token.clone(), false)
            .with_identity(remote.identity.clone())
            .check_file()?;
        Ok(RemoteFiles {
            target: remote.target.clone(),
            token: remote.token.clone(),
            identity: remote.identity.clone(),
        })
    }
}

impl FileServer for RemoteFiles {
    fn open(&self, request: &FileRequest) -> Result<(Box<dyn Session>, TcpStream), Error> {
        let peer = RemotePeer::new(self.target.clone(), self.token.clone(), false)
            .with_identity(self.identity.clone());
        let (session, data) = peer.open_file(request)?;
        Ok((Box::new(session), data))
    }
}

impl RemotePeer {
    /// file study: `check` for `file --remote`, which also needs the server to serve files.
    pub fn check_file(mut self) -> Result<(), Error> {
        self.handshake()?;
        let able = self.require(FILE, "serve files (file --remote)");
        self.send(&Message::Bye)?;
        able
    }

    /// file study: asks the server to write and prepare the file, and opens the one data
    /// connection (cookie, flow index 0). The server writes the whole file before it answers,
    /// so that step may take as long as writing it does.
    fn open_file(mut self, request: &FileRequest) -> Result<(FileSession, TcpStream), Error> {
        self.handshake()?;
        self.require(FILE, "serve files (file --remote)")?;
        self.send(&Message::FileRun {
            request: request.clone(),
        })?;
        // A slow disk writes 16 MiB/s; past that the server is taken to be gone.
        let writing = STEP_TIMEOUT + Duration::from_secs(request.size / (16 << 20));
        self.stream()
            .set_read_timeout(Some(writing))
            .map_err(Error::Setup)?;
        let (port, cookie, hash) = match self.receive("its answer to the file request")? {
            Message::FileAccepted {
                data_port,
                cookie,
                hash,
            } => (data_port, cookie, hash),
            other => return Err(self.unexpected("file_accepted", &other)),
        };
        self.stream()
            .set_read_timeout(Some(STEP_TIMEOUT))
            .map_err(Error::Setup)?;
        let cookie = protocol::from_hex(&cookie)
            .filter(|c| c.len() == protocol::COOKIE_BYTES)
            .ok_or_else(|| self.fail("its session cookie is not 16 bytes of hex"))?;
        let mut addr = resolve(&self.target)?;
        addr.set_port(port);
        let data = TcpStream::connect_timeout(&addr, STEP_TIMEOUT).and_then(|mut stream| {
            let mut tag = [0u8; DATA_TAG_BYTES];
            tag[..cookie.len()].copy_from_slice(&cookie);
            stream.write_all(&tag)?; // flow index 0: the tag's last four bytes stay zero
            stream.set_read_timeout(Some(FILE_DATA_IDLE))?;
            Ok(stream)
        });
        let data = data.map_err(|e| {
            self.fail(format_args!(
                "opening the data connection to port {port}: {e}"
            ))
        })?;
        Ok((FileSession { peer: self, hash }, data))
    }
}

/// file study: one remote file transfer between `FileAccepted` and `FileSent`.
struct FileSession {
    peer: RemotePeer,
    /// The file's xxh3-64 as the server computed it (when verifying).
    hash: Option<u64>,
}

impl Session for FileSession {
    fn go(&mut self, rep: u32) -> Result<Instant, Error> {
        let go = Instant::now();
        self.peer.send(&Message::FileGo { rep })?;
        Ok(go)
    }

    fn hash(&self) -> Option<u64> {
        self.hash
    }

    fn sent(mut self: Box<Self>) -> Result<FileSent, Error> {
        match self.peer.receive("its report of the sent file")? {
            Message::FileSent {
                server,
                syscalls,
                residency,
                error,
            } => {
                let _ = self.peer.send(&Message::Bye);
                Ok(FileSent {
                    server,
                    syscalls,
                    residency,
                    // The server's text, shown later: escaped.
                    error: error.as_deref().map(crate::remote::escaped),
                })
            }
            other => Err(self.peer.unexpected("file_sent", &other)),
        }
    }
}
