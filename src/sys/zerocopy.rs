//! Reading MSG_ZEROCOPY completion notifications from a socket's error queue
//! (Documentation/networking/msg_zerocopy.rst; tools/testing/selftests/net/msg_zerocopy.c).
use super::cvt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// `SO_EE_ORIGIN_ZEROCOPY` from linux/errqueue.h (not in the libc crate).
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
/// `SO_EE_CODE_ZEROCOPY_COPIED`: the kernel fell back to copying for this range.
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

/// One notification: sends `[first, last]` (inclusive, 32-bit, may wrap) are complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletionRange {
    pub first: u32,
    pub last: u32,
    pub copied: bool,
}

/// What one read of the error queue returned.
#[derive(Debug)]
pub enum ErrorQueueEntry {
    Completion(CompletionRange),
    /// A queued error that is not a zero-copy notification (e.g. a real socket error).
    Other {
        origin: u8,
        errno: u32,
    },
}

/// Reads one entry from the error queue without blocking; `Ok(None)` when it is empty.
pub fn read_error_queue(fd: BorrowedFd<'_>) -> io::Result<Option<ErrorQueueEntry>> {
    // u64 elements keep the control buffer aligned for cmsghdr.
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain old data; a zeroed one has no name and no iovec.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at a writable control buffer of the length given; no data iovec.
    let ret = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, libc::MSG_ERRQUEUE) };
    match cvt(ret) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
        Err(e) => return Err(e),
    }
    // SAFETY: the kernel filled msg and its control buffer; CMSG_FIRSTHDR/NXTHDR stay inside
    // msg_controllen, and each IP(V6)_RECVERR payload is a sock_extended_err.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            let c = &*cmsg;
            let is_recverr = (c.cmsg_level == libc::SOL_IP && c.cmsg_type == libc::IP_RECVERR)
                || (c.cmsg_level == libc::SOL_IPV6 && c.cmsg_type == libc::IPV6_RECVERR);
            if is_recverr {
                let ee = std::ptr::read_unaligned(
                    libc::CMSG_DATA(cmsg) as *const libc::sock_extended_err
                );
                return Ok(Some(decode(&ee)));
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "error queue message without IP_RECVERR",
    ))
}

fn decode(ee: &libc::sock_extended_err) -> ErrorQueueEntry {
    if ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY && ee.ee_errno == 0 {
        ErrorQueueEntry::Completion(CompletionRange {
            first: ee.ee_info,
            last: ee.ee_data,
            copied: ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0,
        })
    } else {
        ErrorQueueEntry::Other {
            origin: ee.ee_origin,
            errno: ee.ee_errno,
        }
    }
}
