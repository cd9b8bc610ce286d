//! Readiness notification for the event-driven servers and the load generator: epoll(7)
//! (epoll_create1(2), epoll_ctl(2), epoll_wait(2)), poll(2) over many descriptors, and
//! select(2) with every FD_SET index checked against FD_SETSIZE (select(2), BUGS: an index at
//! or above FD_SETSIZE is undefined behaviour, so the check is what makes `FdSet` safe).
use super::cvt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// The highest descriptor count select(2) can watch (glibc's fd_set is a fixed bit array).
pub const FD_SETSIZE: usize = libc::FD_SETSIZE;

/// Readiness bits as epoll reports them.
pub const READABLE: u32 = libc::EPOLLIN as u32;
pub const WRITABLE: u32 = libc::EPOLLOUT as u32;
/// Wake only one of the epoll instances sharing a listener (EPOLLEXCLUSIVE, Linux 4.5).
pub const EXCLUSIVE: u32 = libc::EPOLLEXCLUSIVE as u32;

/// An epoll instance (level-triggered: interest stays armed until removed).
pub struct Epoll {
    fd: OwnedFd,
}

/// Where `Epoll::wait` puts its events, allocated once.
pub struct EventList {
    raw: Vec<libc::epoll_event>,
}

impl EventList {
    pub fn with_capacity(n: usize) -> EventList {
        EventList {
            raw: vec![libc::epoll_event { events: 0, u64: 0 }; n.max(1)],
        }
    }

    /// The `i`th event of the last wait as (token, readiness bits).
    pub fn get(&self, i: usize) -> (u64, u32) {
        let e = self.raw[i];
        (e.u64, e.events)
    }
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: epoll_create1 has no pointer arguments.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: the call succeeded, so fd is open and owned by nobody else.
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn control(&self, op: i32, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut event = libc::epoll_event { events, u64: token };
        // SAFETY: event is a valid epoll_event the kernel only reads during the call.
        cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut event) })?;
        Ok(())
    }

    pub fn add(&self, fd: BorrowedFd<'_>, events: u32, token: u64) -> io::Result<()> {
        self.control(libc::EPOLL_CTL_ADD, fd.as_raw_fd(), events, token)
    }

    pub fn modify(&self, fd: BorrowedFd<'_>, events: u32, token: u64) -> io::Result<()> {
        self.control(libc::EPOLL_CTL_MOD, fd.as_raw_fd(), events, token)
    }

    pub fn delete(&self, fd: BorrowedFd<'_>) -> io::Result<()> {
        self.control(libc::EPOLL_CTL_DEL, fd.as_raw_fd(), 0, 0)
    }

    /// Waits up to `timeout_ms` (-1: no limit); returns how many events `list` holds.
    /// EINTR reads as no events.
    pub fn wait(&self, list: &mut EventList, timeout_ms: i32) -> io::Result<usize> {
        let max = list.raw.len().min(i32::MAX as usize) as i32;
        // SAFETY: list.raw holds `max` writable epoll_events for the duration of the call.
        let n = unsafe {
            libc::epoll_wait(self.fd.as_raw_fd(), list.raw.as_mut_ptr(), max, timeout_ms)
        };
        match cvt(n) {
            Ok(n) => Ok(n as usize),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
            Err(e) => Err(e),
        }
    }
}

/// One entry of a poll(2) set.
pub type PollFd = libc::pollfd;
pub const POLLIN: i16 = libc::POLLIN;
pub const POLLOUT: i16 = libc::POLLOUT;

pub fn poll_entry(fd: RawFd, events: i16) -> PollFd {
    PollFd {
        fd,
        events,
        revents: 0,
    }
}

/// poll(2) over `set`; returns how many entries have events. EINTR reads as none.
pub fn poll(set: &mut [PollFd], timeout_ms: i32) -> io::Result<usize> {
    // SAFETY: set is a valid, writable slice of pollfds for the duration of the call.
    match cvt(unsafe { libc::poll(set.as_mut_ptr(), set.len() as libc::nfds_t, timeout_ms) }) {
        Ok(n) => Ok(n as usize),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
        Err(e) => Err(e),
    }
}

/// A descriptor select(2) cannot watch: its number is at or above FD_SETSIZE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BeyondFdSetSize(pub RawFd);

impl std::fmt::Display for BeyondFdSetSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "descriptor {} is beyond select's FD_SETSIZE ({FD_SETSIZE})",
            self.0
        )
    }
}

/// An fd_set whose every index is checked against FD_SETSIZE.
pub struct FdSet {
    raw: libc::fd_set,
}

impl Default for FdSet {
    fn default() -> Self {
        Self::new()
    }
}

impl FdSet {
    pub fn new() -> FdSet {
        // SAFETY: fd_set is plain old data; FD_ZERO then makes it the empty set.
        let mut raw: libc::fd_set = unsafe { std::mem::zeroed() };
        // SAFETY: raw is a valid, writable fd_set.
        unsafe { libc::FD_ZERO(&mut raw) };
        FdSet { raw }
    }

    fn check(fd: RawFd) -> Result<(), BeyondFdSetSize> {
        if fd < 0 || fd as usize >= FD_SETSIZE {
            return Err(BeyondFdSetSize(fd));
        }
        Ok(())
    }

    pub fn insert(&mut self, fd: RawFd) -> Result<(), BeyondFdSetSize> {
        Self::check(fd)?;
        // SAFETY: 0 <= fd < FD_SETSIZE, checked above, so the bit lies inside the set.
        unsafe { libc::FD_SET(fd, &mut self.raw) };
        Ok(())
    }

    pub fn contains(&self, fd: RawFd) -> bool {
        // SAFETY: FD_ISSET only runs for 0 <= fd < FD_SETSIZE, inside the set.
        Self::check(fd).is_ok() && unsafe { libc::FD_ISSET(fd, &self.raw) }
    }

    pub fn clear(&mut self) {
        // SAFETY: raw is a valid, writable fd_set.
        unsafe { libc::FD_ZERO(&mut self.raw) };
    }
}

/// select(2) over descriptors below `limit` (the highest watched plus one, at most
/// FD_SETSIZE); returns how many are ready. EINTR reads as none.
pub fn select(
    limit: usize,
    read: &mut FdSet,
    write: &mut FdSet,
    timeout: Option<Duration>,
) -> io::Result<usize> {
    let mut tv = timeout.map(|t| libc::timeval {
        tv_sec: t.as_secs() as libc::time_t,
        tv_usec: t.subsec_micros() as libc::suseconds_t,
    });
    let tv_ptr = tv
        .as_mut()
        .map_or(std::ptr::null_mut(), |t| t as *mut libc::timeval);
    let nfds = limit.min(FD_SETSIZE) as i32;
    // SAFETY: both sets are valid fd_sets and nfds never exceeds FD_SETSIZE, so the kernel
    // reads and writes only inside them; tv_ptr is null or a valid timeval.
    let n = unsafe {
        libc::select(
            nfds,
            &mut read.raw,
            &mut write.raw,
            std::ptr::null_mut(),
            tv_ptr,
        )
    };
    match cvt(n) {
        Ok(n) => Ok(n as usize),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
        Err(e) => Err(e),
    }
}

/// Non-blocking connect(2) to an IPv4 address: the returned socket (non-blocking,
/// close-on-exec) becomes writable once the handshake ends; `take_error` then says how.
pub fn connect_nonblocking(addr: std::net::SocketAddrV4) -> io::Result<OwnedFd> {
    // SAFETY: socket has no pointer arguments.
    let fd = cvt(unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })?;
    // SAFETY: the call succeeded, so fd is open and owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: addr.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*addr.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sin is a valid sockaddr_in whose size is passed; the kernel only reads it.
    let ret = unsafe {
        libc::connect(
            fd,
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    match cvt(ret) {
        Ok(_) => Ok(owned),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(owned),
        Err(e) => Err(e),
    }
}

/// The pending socket error (SO_ERROR), cleared by reading it; `None` if there is none.
pub fn take_error(fd: BorrowedFd<'_>) -> io::Result<Option<io::Error>> {
    let code = super::socket::get_int_option(fd, libc::SOL_SOCKET, libc::SO_ERROR)?;
    Ok((code != 0).then(|| io::Error::from_raw_os_error(code)))
}

/// listen(2) again on a listening socket: raises its accept backlog (std uses 128; the kernel
/// caps the value at net.core.somaxconn).
pub fn set_backlog(fd: BorrowedFd<'_>, backlog: i32) -> io::Result<()> {
    // SAFETY: listen has no pointer arguments.
    cvt(unsafe { libc::listen(fd.as_raw_fd(), backlog) })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn an_fd_set_refuses_descriptors_beyond_fd_setsize() {
        let mut set = FdSet::new();
        assert_eq!(set.insert(3), Ok(()));
        assert!(set.contains(3));
        assert_eq!(
            set.insert(FD_SETSIZE as RawFd),
            Err(BeyondFdSetSize(FD_SETSIZE as RawFd))
        );
        assert!(!set.contains(FD_SETSIZE as RawFd));
        assert!(set.insert(-1).is_err());
        set.clear();
        assert!(!set.contains(3));
    }

    #[test]
    fn epoll_reports_a_readable_pipe_with_its_token() {
        let (r, w) = super::super::fdio::pipe().unwrap();
        let ep = Epoll::new().unwrap();
        ep.add(r.as_fd(), READABLE, 42).unwrap();
        let mut list = EventList::with_capacity(4);
        assert_eq!(ep.wait(&mut list, 0).unwrap(), 0);
        super::super::fdio::write(w.as_fd(), b"x").unwrap();
        assert_eq!(ep.wait(&mut list, 1000).unwrap(), 1);
        let (token, bits) = list.get(0);
        assert_eq!(token, 42);
        assert!(bits & READABLE != 0);
    }

    #[test]
    fn poll_and_select_see_the_same_readable_pipe() {
        let (r, w) = super::super::fdio::pipe().unwrap();
        super::super::fdio::write(w.as_fd(), b"x").unwrap();
        let mut set = [poll_entry(r.as_raw_fd(), POLLIN)];
        assert_eq!(poll(&mut set, 1000).unwrap(), 1);
        assert!(set[0].revents & POLLIN != 0);
        let mut read = FdSet::new();
        let mut write = FdSet::new();
        read.insert(r.as_raw_fd()).unwrap();
        let limit = r.as_raw_fd() as usize + 1;
        assert_eq!(
            select(limit, &mut read, &mut write, Some(Duration::from_secs(1))).unwrap(),
            1
        );
        assert!(read.contains(r.as_raw_fd()));
    }
}
