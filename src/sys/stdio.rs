//! Standard output handed over to a machine-readable stream (`--json-stream`): dup(2) keeps
//! the original stdout for the stream, dup2(2) points descriptor 1 at stderr, so every text
//! line the commands print (and any child they start) goes to stderr without each print site
//! having to know.
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;

/// Returns the original stdout as a file (close-on-exec) and makes descriptor 1 a copy of
/// descriptor 2. Flushes Rust's stdout buffer first, so nothing printed before moves.
pub fn take_stdout() -> io::Result<File> {
    io::stdout().flush()?;
    let original = io::stdout().as_fd().try_clone_to_owned()?;
    // SAFETY: dup2 on two descriptors this process has open (0-2 are opened by the shell or
    // by the Rust runtime's start-up); it touches no memory, and descriptor 1 stays open.
    super::cvt(unsafe { libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) })?;
    Ok(File::from(original))
}
