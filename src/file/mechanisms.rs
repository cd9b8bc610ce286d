//! The four ways a server hands a file to a socket, behind one trait: `readsend` (read(2) into
//! a user buffer, then send(2): two copies), `sendfile` (sendfile(2): the kernel moves page-cache
//! pages to the socket), `splice` (file → pipe → socket with splice(2), the pipe sized to the
//! chunk with F_SETPIPE_SZ) and `mmap` (mmap(2) the file, send(2) from the mapping: one copy).
//! Each counts the system calls it makes, so the report can say what each one costs per call.
use crate::error::ConfigError;
use crate::sys::{fdio, file as sysfile, socket};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// A file-serving mechanism as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileMechanism {
    Readsend,
    Sendfile,
    Splice,
    Mmap,
}

impl FileMechanism {
    pub const ALL: [FileMechanism; 4] = [
        FileMechanism::Readsend,
        FileMechanism::Sendfile,
        FileMechanism::Splice,
        FileMechanism::Mmap,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FileMechanism::Readsend => "readsend",
            FileMechanism::Sendfile => "sendfile",
            FileMechanism::Splice => "splice",
            FileMechanism::Mmap => "mmap",
        }
    }

    pub fn parse(text: &str) -> Result<FileMechanism, ConfigError> {
        FileMechanism::ALL
            .into_iter()
            .find(|m| m.name() == text)
            .ok_or_else(|| {
                ConfigError(format!(
                    "{text:?}: unknown mechanism; allowed: readsend, sendfile, splice, mmap"
                ))
            })
    }

    /// The sender, with everything it needs allocated up front (buffer, pipe) so the
    /// per-chunk path only makes the transfer's own system calls.
    pub fn sender(self, chunk: usize) -> io::Result<Box<dyn FileSender + Send>> {
        Ok(match self {
            FileMechanism::Readsend => Box::new(ReadSend {
                buffer: vec![0u8; chunk],
            }),
            FileMechanism::Sendfile => Box::new(SendFile { chunk }),
            FileMechanism::Splice => Box::new(Splice::new(chunk)?),
            FileMechanism::Mmap => Box::new(Mmap { chunk }),
        })
    }
}

/// Sends a whole file over a connected socket.
pub trait FileSender {
    /// Sends the first `len` bytes of `file` (opened at offset 0) to `socket`; returns the
    /// number of system calls made. Fails if the file ends early.
    fn send_file(&mut self, file: &File, len: u64, socket: BorrowedFd<'_>) -> io::Result<u64>;
}

fn ended_early(sent: u64, len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the file ended after {sent} of {len} B (was it truncated?)"),
    )
}

/// Sends all of `buf`, looping on short sends; returns the send(2) calls made.
fn send_all(socket: BorrowedFd<'_>, mut buf: &[u8]) -> io::Result<u64> {
    let mut calls = 0;
    while !buf.is_empty() {
        let n = socket::send(socket, buf, 0)?;
        calls += 1;
        buf = &buf[n..];
    }
    Ok(calls)
}

struct ReadSend {
    buffer: Vec<u8>,
}

impl FileSender for ReadSend {
    fn send_file(&mut self, file: &File, len: u64, socket: BorrowedFd<'_>) -> io::Result<u64> {
        let (mut sent, mut calls) = (0u64, 0u64);
        while sent < len {
            let want = self.buffer.len().min((len - sent) as usize);
            let n = fdio::read(file.as_fd(), &mut self.buffer[..want])?;
            calls += 1;
            if n == 0 {
                return Err(ended_early(sent, len));
            }
            calls += send_all(socket, &self.buffer[..n])?;
            sent += n as u64;
        }
        Ok(calls)
    }
}

struct SendFile {
    chunk: usize,
}

impl FileSender for SendFile {
    fn send_file(&mut self, file: &File, len: u64, socket: BorrowedFd<'_>) -> io::Result<u64> {
        let (mut offset, mut calls) = (0i64, 0u64);
        while (offset as u64) < len {
            let want = self.chunk.min((len - offset as u64) as usize);
            let n = sysfile::sendfile(socket, file.as_fd(), &mut offset, want)?;
            calls += 1;
            if n == 0 {
                return Err(ended_early(offset as u64, len));
            }
        }
        Ok(calls)
    }
}

struct Splice {
    chunk: usize,
    pipe_read: OwnedFd,
    pipe_write: OwnedFd,
}

impl Splice {
    fn new(chunk: usize) -> io::Result<Splice> {
        let (pipe_read, pipe_write) = fdio::pipe()?;
        // A pipe holds 64 KiB by default; a larger chunk would be cut into pipe-sized pieces
        // and the chunk size would not mean what it says.
        fdio::set_pipe_size(pipe_write.as_fd(), chunk).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("F_SETPIPE_SZ to the chunk ({chunk} B) failed: {e}"),
            )
        })?;
        Ok(Splice {
            chunk,
            pipe_read,
            pipe_write,
        })
    }
}

impl FileSender for Splice {
    fn send_file(&mut self, file: &File, len: u64, socket: BorrowedFd<'_>) -> io::Result<u64> {
        let (mut offset, mut calls) = (0i64, 0u64);
        while (offset as u64) < len {
            let want = self.chunk.min((len - offset as u64) as usize);
            let mut in_pipe = sysfile::splice_from_file(
                file.as_fd(),
                &mut offset,
                self.pipe_write.as_fd(),
                want,
            )?;
            calls += 1;
            if in_pipe == 0 {
                return Err(ended_early(offset as u64, len));
            }
            // Drain the pipe before refilling it, so it never holds more than one chunk.
            while in_pipe > 0 {
                in_pipe -= sysfile::splice_to_socket(self.pipe_read.as_fd(), socket, in_pipe)?;
                calls += 1;
            }
        }
        Ok(calls)
    }
}

struct Mmap {
    chunk: usize,
}

impl FileSender for Mmap {
    fn send_file(&mut self, file: &File, len: u64, socket: BorrowedFd<'_>) -> io::Result<u64> {
        // The mapping (mmap, and munmap on drop) is part of serving the file: two calls.
        let map = sysfile::Mapping::of_file(file, len as usize)?;
        let mut calls = 2;
        for piece in map.chunks(self.chunk) {
            calls += send_all(socket, piece)?;
        }
        Ok(calls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{Ipv4Addr, TcpListener, TcpStream};
    use xxhash_rust::xxh3::xxh3_64;

    /// Sends `len` pseudo-random bytes with `mechanism` over a loopback TCP pair; returns
    /// (hash sent, hash received, bytes received).
    fn round_trip(mechanism: FileMechanism, len: usize, chunk: usize) -> (u64, u64, usize) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..len as u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
            .collect();
        File::create(&path).unwrap().write_all(&data).unwrap();
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let sender = std::thread::spawn(move || {
            let file = File::open(&path).unwrap();
            let mut s = mechanism.sender(chunk).unwrap();
            s.send_file(&file, len as u64, server.as_fd()).unwrap();
        });
        let mut got = Vec::new();
        (&client).take(len as u64).read_to_end(&mut got).unwrap();
        sender.join().unwrap();
        (xxh3_64(&data), xxh3_64(&got), got.len())
    }

    #[test]
    fn every_mechanism_delivers_awkward_sizes_intact() {
        for m in FileMechanism::ALL {
            for len in [1, 4095, 4096, 4097, (3 << 20) + 5] {
                let (sent, received, n) = round_trip(m, len, 64 << 10);
                assert_eq!(n, len, "{} {len} B", m.name());
                assert_eq!(sent, received, "{} {len} B", m.name());
            }
        }
    }

    #[test]
    fn a_chunk_that_is_not_a_page_multiple_still_delivers_everything() {
        for m in FileMechanism::ALL {
            let (sent, received, _) = round_trip(m, 100_003, 5000);
            assert_eq!(sent, received, "{}", m.name());
        }
    }

    #[test]
    fn unknown_mechanisms_name_the_allowed_ones() {
        let e = FileMechanism::parse("zerocopy").unwrap_err();
        assert!(e.0.contains("\"zerocopy\"") && e.0.contains("readsend, sendfile"));
    }
}
