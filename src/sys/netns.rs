//! Network namespaces for `--netns`: setns(2) with CLONE_NEWNET on a handle opened from the
//! bind mount `ip netns add` makes (/var/run/netns/NAME, see ip-netns(8)). A socket keeps the
//! namespace it was created in whichever thread uses it later (network_namespaces(7)), so a
//! thread only has to be inside the namespace while it creates its sockets.
use super::cvt;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// Where `ip netns add NAME` mounts the namespace.
pub const NETNS_RUN_DIR: &str = "/var/run/netns";

/// An open reference to a named network namespace. While it is open the namespace exists even
/// after `ip netns del` (which only unmounts the name), so holders drop it with the pair.
#[derive(Debug)]
pub struct NetnsHandle {
    file: File,
    name: String,
}

impl NetnsHandle {
    pub fn open(name: &str) -> io::Result<NetnsHandle> {
        let path = PathBuf::from(NETNS_RUN_DIR).join(name);
        let file = File::open(&path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("opening network namespace {}: {e}", path.display()),
            )
        })?;
        Ok(NetnsHandle {
            file,
            name: name.to_string(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Moves the calling thread (only it) into this namespace.
    pub fn enter(&self) -> io::Result<()> {
        // SAFETY: setns takes a descriptor we own (open for the call's duration) and a flag; it
        // changes only the calling thread's namespace and touches no memory of ours.
        cvt(unsafe { libc::setns(self.file.as_raw_fd(), libc::CLONE_NEWNET) }).map(|_| ())
    }
}

/// Removes the name of a namespace as `ip netns del NAME` does (a lazy unmount of its bind
/// mount, then the file), with no process to start: the way out when `ip` cannot be started
/// (no file descriptor or process left). The namespace itself goes with its last reference.
pub fn remove_named(name: &str) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let path = PathBuf::from(NETNS_RUN_DIR).join(name);
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: umount2 reads the NUL-terminated path, which lives for the call's duration.
    cvt(unsafe { libc::umount2(c_path.as_ptr(), libc::MNT_DETACH) })?;
    std::fs::remove_file(&path)
}

/// Runs `f` on a short-lived thread inside `netns` and returns its result: the caller's own
/// thread never changes namespace, so nothing else it does later lands in the wrong one.
pub fn in_netns<T: Send>(
    netns: &NetnsHandle,
    f: impl FnOnce() -> io::Result<T> + Send,
) -> io::Result<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name(format!("netns {}", netns.name()))
            .spawn_scoped(scope, || {
                netns.enter()?;
                f()
            })?
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_namespace_is_named_in_the_error() {
        let e = NetnsHandle::open("bytepath-no-such-namespace").unwrap_err();
        assert!(
            e.to_string()
                .contains("/var/run/netns/bytepath-no-such-namespace"),
            "{e}"
        );
    }
}
