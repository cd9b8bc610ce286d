//! The control protocol's frames: a u32 big-endian length and that many bytes (the JSON of one
//! message: `protocol` reads and writes those; this file only frames bytes). A frame above
//! `MAX_FRAME` is refused before anything is allocated for it, so no peer can make the other
//! allocate more than `MAX_FRAME`; a frame begun must be whole by the instant its source names
//! (`FrameSource`: the control connection's limit, else `FRAME_PATIENCE`), however its bytes
//! trickle in.
use std::fmt;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

/// The largest frame either side accepts. The largest message is one thread's sample (results
/// come as one frame per thread, so the thread count does not matter): its latency histogram
/// (1 ns..100 s at 3 significant digits) has at most ~39,000 buckets, each written as at most
/// ~22 bytes of JSON (`[99999999999,9999999],`), about 860 KB in the very worst case; 1 MiB
/// holds that and the sample's other fields.
pub const MAX_FRAME: usize = 1 << 20;

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The read timed out before any byte of the frame arrived (the caller may wait again).
    Idle,
    /// The peer closed the connection between frames.
    Closed,
    /// The declared length is above `MAX_FRAME` (or zero). The length itself is not kept: it is
    /// the first bytes a remote service sent, and an error that repeats it is an oracle of them.
    Oversized,
    /// The connection ended or stalled inside a frame.
    Truncated {
        expected: usize,
        got: usize,
    },
    /// The body is not a message of this protocol.
    Malformed(String),
    Io(io::Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Idle => write!(f, "no frame arrived within the timeout"),
            FrameError::Closed => write!(f, "the connection was closed"),
            FrameError::Oversized => write!(
                f,
                "a frame was over the limit (a frame holds 1 to {MAX_FRAME} bytes)"
            ),
            FrameError::Truncated { expected, got } => write!(
                f,
                "a frame ended after {got} of its {expected} bytes (connection closed or timed out)"
            ),
            FrameError::Malformed(e) => write!(f, "a frame is not a bytepath message: {e}"),
            FrameError::Io(e) => write!(f, "reading a frame failed: {e}"),
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Once a frame has begun, how long its remaining bytes may take in all, unless its source
/// says otherwise.
pub(crate) const FRAME_PATIENCE: Duration = Duration::from_secs(10);

/// What frames are read from. Told when a frame's first byte arrived, a source names the
/// instant the whole frame must be in by; a source that bounds its own reads (the control
/// connection) holds every read to it, any other is checked between reads.
pub trait FrameSource: Read {
    fn frame_began(&mut self) -> Instant {
        Instant::now() + FRAME_PATIENCE
    }

    /// The frame was read whole, or given up.
    fn frame_ended(&mut self) {}
}

impl FrameSource for std::net::TcpStream {}
impl FrameSource for &std::net::TcpStream {}
impl<T: AsRef<[u8]>> FrameSource for io::Cursor<T> {}
impl FrameSource for &[u8] {}

/// Fills `buf` from `r`; returns how many bytes arrived before EOF or an error. With `until`,
/// a read timeout is waited through, and the whole of `buf` must be in by then.
fn fill(
    r: &mut impl Read,
    buf: &mut [u8],
    until: Option<Instant>,
) -> Result<usize, (usize, io::Error)> {
    let mut got = 0;
    while got < buf.len() {
        if until.is_some_and(|t| Instant::now() >= t) {
            let late = "the rest of a frame did not arrive in time (bytes trickled in too slowly)";
            return Err((got, io::Error::new(io::ErrorKind::TimedOut, late)));
        }
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && until.is_some() => {}
            Err(e) => return Err((got, e)),
        }
    }
    Ok(got)
}

/// Reads one frame's body. Never allocates more than `MAX_FRAME` bytes, and nothing before the
/// declared length has been checked against it. A read timeout set on the stream bounds the
/// wait for a frame to begin (`Idle`); once begun, it must be whole by the instant its source
/// names (`FrameSource::frame_began`) or it is `Truncated`.
pub fn read_frame(r: &mut impl FrameSource) -> Result<Vec<u8>, FrameError> {
    let mut header = [0u8; 4];
    match fill(r, &mut header[..1], None) {
        Ok(0) => return Err(FrameError::Closed),
        Ok(_) => {}
        Err((_, e)) if is_timeout(&e) => return Err(FrameError::Idle),
        Err((_, e)) => return Err(FrameError::Io(e)),
    }
    let until = r.frame_began();
    let rest = rest_of_frame(r, header, until);
    r.frame_ended();
    rest
}

/// The rest of a frame whose first byte is `header[0]`, whole by `until`.
fn rest_of_frame(
    r: &mut impl Read,
    mut header: [u8; 4],
    until: Instant,
) -> Result<Vec<u8>, FrameError> {
    let until = Some(until);
    match fill(r, &mut header[1..], until) {
        Ok(3) => {}
        Err((_, e)) if e.kind() == io::ErrorKind::InvalidData => return Err(FrameError::Io(e)),
        Ok(got) | Err((got, _)) => {
            return Err(FrameError::Truncated {
                expected: 4,
                got: 1 + got,
            })
        }
    }
    let declared = u32::from_be_bytes(header) as u64;
    if declared == 0 || declared > MAX_FRAME as u64 {
        return Err(FrameError::Oversized);
    }
    let expected = declared as usize;
    let mut body = vec![0u8; expected];
    match fill(r, &mut body, until) {
        Ok(got) if got == expected => Ok(body),
        Err((_, e)) if e.kind() == io::ErrorKind::InvalidData => Err(FrameError::Io(e)),
        Ok(got) | Err((got, _)) => Err(FrameError::Truncated { expected, got }),
    }
}

/// Writes one body as one frame (one write call, so a frame is never interleaved).
pub fn write_frame(w: &mut impl Write, body: &[u8]) -> io::Result<()> {
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(body);
    w.write_all(&frame)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::protocol::parse;
    use proptest::prelude::*;
    use std::io::Cursor;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn a_declared_length_above_the_limit_is_refused_before_reading_the_body() {
        let mut wire = Cursor::new(frame(&[]));
        wire.get_mut()[..4].copy_from_slice(&(1u32 << 30).to_be_bytes());
        let err = read_frame(&mut wire).unwrap_err();
        assert!(matches!(err, FrameError::Oversized), "{err}");
        // Only that it was over the limit: not the length, which is what the peer sent.
        assert_eq!(
            err.to_string(),
            format!("a frame was over the limit (a frame holds 1 to {MAX_FRAME} bytes)")
        );
        assert!(!err.to_string().contains("1073741824"), "{err}");
        assert_eq!(wire.position(), 4, "nothing past the header was read");
    }

    #[test]
    fn a_frame_cut_short_is_truncated_and_an_empty_stream_is_closed() {
        let mut wire = frame(b"{\"type\":\"ready\"}");
        wire.truncate(10);
        let err = read_frame(&mut Cursor::new(wire)).unwrap_err();
        assert!(
            matches!(
                err,
                FrameError::Truncated {
                    expected: 16,
                    got: 6
                }
            ),
            "{err}"
        );
        assert!(matches!(
            read_frame(&mut Cursor::new(Vec::new())),
            Err(FrameError::Closed)
        ));
    }

    /// A reader that yields its bytes, then endless filler: a decoder that trusted a length or
    /// read past its frame would be caught by the count of bytes it took.
    struct Endless {
        head: Cursor<Vec<u8>>,
        taken: usize,
    }

    impl FrameSource for Endless {}

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = match self.head.read(buf)? {
                0 => {
                    buf.fill(b' ');
                    buf.len()
                }
                n => n,
            };
            self.taken += n;
            Ok(n)
        }
    }

    proptest! {
        // Bounded for CI: 2,000 cases of up to 4 KiB each take well under a second.
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_never_panic_and_never_read_past_the_frame_limit(
            bytes in proptest::collection::vec(any::<u8>(), 0..4096),
            endless in any::<bool>(),
        ) {
            let mut finite = Cursor::new(bytes.clone());
            if let Ok(body) = read_frame(&mut finite) {
                prop_assert!(body.len() <= MAX_FRAME && body.capacity() <= MAX_FRAME);
                let _ = parse(&body);
            }
            if endless {
                let mut r = Endless { head: Cursor::new(bytes), taken: 0 };
                let got = read_frame(&mut r);
                prop_assert!(r.taken <= 4 + MAX_FRAME, "took {} bytes", r.taken);
                if let Ok(body) = got {
                    prop_assert!(body.capacity() <= MAX_FRAME);
                    let _ = parse(&body);
                }
            }
        }

        #[test]
        fn a_declared_length_is_never_trusted_beyond_the_limit(
            declared in 0u32..(MAX_FRAME as u32 + 64),
            body in proptest::collection::vec(any::<u8>(), 0..2048),
        ) {
            let mut wire = declared.to_be_bytes().to_vec();
            wire.extend_from_slice(&body);
            let mut r = Endless { head: Cursor::new(wire), taken: 0 };
            match read_frame(&mut r) {
                Ok(got) => {
                    prop_assert_eq!(got.len(), declared as usize);
                    prop_assert!(got.capacity() <= MAX_FRAME);
                    let _ = parse(&got);
                }
                Err(FrameError::Oversized) => {
                    prop_assert!(declared == 0 || declared as usize > MAX_FRAME);
                    prop_assert_eq!(r.taken, 4);
                }
                Err(e) => prop_assert!(false, "unexpected {}", e),
            }
            prop_assert!(r.taken <= 4 + MAX_FRAME);
        }
    }
}
