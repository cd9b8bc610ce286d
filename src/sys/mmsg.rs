//! What real UDP senders batch with: sendmmsg(2), several datagrams handed to the kernel in
//! one system call, and UDP_SEGMENT (udp(7), UDP GSO), one send the kernel cuts into datagrams
//! of a set size.
use super::cvt;
use super::socket::set_int_option;
use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, BorrowedFd};

/// The most messages one sendmmsg(2) call takes: the kernel silently caps `vlen` at UIO_MAXIOV.
pub const MAX_MESSAGES_PER_CALL: usize = 1024;

/// UDP_SEGMENT on the socket: every later send longer than `segment` bytes is cut by the kernel
/// into datagrams of `segment` bytes, the last one shorter; 0 turns it off.
pub fn set_gso_segment(fd: BorrowedFd<'_>, segment: u16) -> io::Result<()> {
    set_int_option(fd, libc::SOL_UDP, libc::UDP_SEGMENT, i32::from(segment))
}

/// A sendmmsg(2) vector: the message headers and the gather lists they point at, made once
/// with room for a whole batch and refilled by every `send_all`, so that sending a batch
/// allocates nothing.
pub struct MessageVector {
    headers: Vec<libc::mmsghdr>,
    iovecs: Vec<libc::iovec>,
    /// Gather entries of each message of the batch being built.
    entries: Vec<usize>,
}

// SAFETY: the raw pointers in `headers` and `iovecs` are written by `send_all` from memory it
// borrows for its whole call and are handed to the kernel only inside that call; nothing
// dereferences them afterwards, so moving the vector to another thread moves no access.
unsafe impl Send for MessageVector {}

/// Adds the messages of one `MessageVector::send_all` batch: their bytes, borrowed for `'a`,
/// which outlives the call that sends them.
pub struct MessageBuilder<'v, 'a> {
    vector: &'v mut MessageVector,
    open: usize,
    _bytes: PhantomData<&'a [u8]>,
}

impl<'a> MessageBuilder<'_, 'a> {
    /// Appends `bytes` to the gather list of the message being built.
    #[inline]
    pub fn slice(&mut self, bytes: &'a [u8]) {
        self.vector.iovecs.push(libc::iovec {
            iov_base: bytes.as_ptr() as *mut libc::c_void,
            iov_len: bytes.len(),
        });
        self.open += 1;
    }

    /// Ends the message being built: one datagram (or one GSO send) of the slices since the
    /// last.
    #[inline]
    pub fn end_message(&mut self) {
        self.vector.entries.push(self.open);
        self.open = 0;
    }
}

impl MessageVector {
    /// Room for `messages` messages of `iovecs` gather entries in all per batch; a larger
    /// batch still goes, after growing the vector once.
    pub fn with_capacity(messages: usize, iovecs: usize) -> MessageVector {
        MessageVector {
            headers: Vec::with_capacity(messages),
            iovecs: Vec::with_capacity(iovecs),
            entries: Vec::with_capacity(messages),
        }
    }

    /// Hands the kernel every message `build` adds, in order, in as few sendmmsg(2) calls as
    /// it takes (the kernel takes at most `MAX_MESSAGES_PER_CALL` a call, and after a failure
    /// reports the messages before it: the next call starts at the failed one and returns its
    /// error). Returns how many calls it made.
    pub fn send_all<'a>(
        &mut self,
        fd: BorrowedFd<'_>,
        flags: i32,
        build: impl FnOnce(&mut MessageBuilder<'_, 'a>),
    ) -> io::Result<u32> {
        self.iovecs.clear();
        self.entries.clear();
        build(&mut MessageBuilder {
            vector: self,
            open: 0,
            _bytes: PhantomData,
        });
        self.point_headers();
        let mut done = 0;
        let mut calls = 0;
        while done < self.headers.len() {
            let n = (self.headers.len() - done).min(MAX_MESSAGES_PER_CALL);
            // SAFETY: headers[done..done + n] point at gather lists in `self.iovecs`, which is
            // not touched until the call returns, and those name bytes the builder borrowed
            // for 'a, which outlives this function; the kernel reads them and writes only
            // msg_len in the headers, which this vector owns.
            let ret = unsafe {
                libc::sendmmsg(
                    fd.as_raw_fd(),
                    self.headers[done..].as_mut_ptr(),
                    n as libc::c_uint,
                    flags | libc::MSG_NOSIGNAL,
                )
            };
            calls += 1;
            match cvt(ret) {
                Ok(sent) => done += sent as usize,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(calls)
    }

    /// One header per built message, pointing at its gather entries (set after all entries
    /// are in, so a vector grown while building leaves no header pointing at the old one).
    fn point_headers(&mut self) {
        self.headers.clear();
        let mut at = 0;
        for &len in &self.entries {
            let list = &self.iovecs[at..at + len];
            // SAFETY: mmsghdr is plain old data; all-zero is a message with no name, no data
            // and no control data.
            let mut header: libc::mmsghdr = unsafe { std::mem::zeroed() };
            header.msg_hdr.msg_iov = list.as_ptr() as *mut libc::iovec;
            header.msg_hdr.msg_iovlen = list.len() as _;
            self.headers.push(header);
            at += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsFd;

    fn pair() -> (UdpSocket, UdpSocket) {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        b.set_read_timeout(Some(std::time::Duration::from_millis(200)))
            .unwrap();
        (a, b)
    }

    #[test]
    fn one_batch_sends_each_message_as_one_datagram_of_its_slices() {
        let (a, b) = pair();
        let mut v = MessageVector::with_capacity(1, 1);
        let calls = v
            .send_all(a.as_fd(), 0, |m| {
                m.slice(b"ab");
                m.slice(b"cd");
                m.end_message();
                m.slice(b"e");
                m.end_message();
                m.slice(b"fgh");
                m.end_message();
            })
            .unwrap();
        assert_eq!(calls, 1, "three messages, one call (the vector grew once)");
        let mut buf = [0u8; 16];
        for want in [&b"abcd"[..], b"e", b"fgh"] {
            let n = b.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], want);
        }
    }

    #[test]
    fn a_batch_above_the_kernels_cap_goes_in_several_calls() {
        let (a, b) = pair();
        let count = MAX_MESSAGES_PER_CALL + 5;
        let bytes: Vec<[u8; 2]> = (0..count as u16).map(|i| i.to_le_bytes()).collect();
        let mut v = MessageVector::with_capacity(count, count);
        let calls = v
            .send_all(a.as_fd(), 0, |m| {
                for b in &bytes {
                    m.slice(b);
                    m.end_message();
                }
            })
            .unwrap();
        assert_eq!(calls, 2);
        // The receive buffer may drop some of 1029 datagrams; those that arrive are in order.
        let mut buf = [0u8; 4];
        let mut last = None;
        while let Ok(n) = b.recv(&mut buf) {
            assert_eq!(n, 2);
            let i = u16::from_le_bytes([buf[0], buf[1]]);
            assert!(last.is_none_or(|l| i > l), "{i} after {last:?}");
            last = Some(i);
        }
        assert!(last.is_some(), "nothing arrived");
    }

    #[test]
    fn a_gso_send_arrives_as_datagrams_of_the_segment_size() {
        let (a, b) = pair();
        set_gso_segment(a.as_fd(), 1000).unwrap();
        a.send(&[7u8; 3500]).unwrap();
        let mut buf = [0u8; 4096];
        for want in [1000, 1000, 1000, 500] {
            assert_eq!(b.recv(&mut buf).unwrap(), want);
        }
    }
}
