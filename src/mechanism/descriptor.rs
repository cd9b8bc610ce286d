//! A send mechanism described once: its name, its help line, the transports it can send on,
//! the patterns it carries, what it needs from the kernel, how it sends, what `--verify` holds
//! it to, and the properties other layers ask about. Each mechanism's file holds its
//! descriptor; `MechanismKind::ALL` in `mod.rs` lists them, and everything else (the command
//! line's help, the refusals, the probe's rows, the records, the report's questions) reads
//! them from there. A mechanism is its descriptor: `MechanismKind` is a handle to one.
use super::{FlowContext, SendMechanism};
use crate::transport::datagram::Framing;
use crate::transport::Transport;
use std::io;

/// Everything bytepath knows about one send mechanism. Plain data and functions: building the
/// sender is one call through `build` at set-up; the per-message path is the sender's own.
pub struct MechanismDescriptor {
    /// What the command line and the records call it (kebab-case: `uring-gather`).
    pub name: &'static str,
    /// What it does, in a few words, for `run --mechanism`'s help ("sendmsg over 8 fields").
    pub help: &'static str,
    /// The transports it can send on.
    pub transports: Transports,
    /// The patterns it carries beyond stream and rr, which every mechanism carries.
    pub patterns: Patterns,
    /// Whether this kernel offers what it needs, tried on loopback; `Err` is the reason, in
    /// one line, a point is skipped with (`mechanism::supported` tries each once a process).
    pub probe: fn() -> Result<(), String>,
    /// One flow's sender. Kernel objects it needs (a ring, a pipe, a memfd) are made here, so
    /// a failure is a set-up error of the run, not of a message.
    pub build: fn(FlowContext) -> io::Result<Box<dyn SendMechanism>>,
    /// When a message's memory may be written again: what `--verify` holds it to.
    pub reuse: Reuse,
    /// Messages of memory one flow's sender holds, from (message size, `--queue-depth`): what
    /// the memory check counts before a run.
    pub buffers: fn(usize, u32) -> usize,
    /// SO_ZEROCOPY on the sending socket (MSG_ZEROCOPY needs it; io_uring's SEND_ZC does not).
    pub zerocopy_socket: bool,
    /// TCP_NODELAY on the sending socket whatever the pattern (zero-copy buffers released on
    /// ACK crawl behind Nagle and delayed ACKs, KERNEL-NOTES).
    pub nodelay: bool,
    /// Whether `--queue-depth` shapes it (sends submitted together to io_uring).
    pub uses_queue_depth: bool,
    /// Zero-copy mechanisms: the call whose completions say whether the kernel copied anyway
    /// ("MSG_ZEROCOPY"), as the record's zero-copy summary names it. `None`: the kernel copies.
    pub zero_copy: Option<&'static str>,
    /// What a datagram framing's sends must allow it, given the message size: the kernel
    /// refuses some sends a mechanism could make (a zero-copy send pinning too many pages).
    /// One line naming what is allowed, or `Ok`; checked before a run (`any_send` for most).
    pub datagram_sends: fn(&Framing, usize) -> Result<(), String>,
    /// The crossover question the report asks about it, if any.
    pub crossover: Option<Crossover>,
}

impl MechanismDescriptor {
    /// A mechanism whose call copies the message into the kernel: it sends on any transport
    /// and carries every pattern, needs nothing of the kernel beyond the call, may write its
    /// memory again when the call returns, holds two messages, sets no socket option, keeps no
    /// queue and asks no question of its own. The plain paths are this; a mechanism that
    /// differs says how with `..MechanismDescriptor::copying(…)`.
    pub const fn copying(
        name: &'static str,
        help: &'static str,
        build: fn(FlowContext) -> io::Result<Box<dyn SendMechanism>>,
    ) -> MechanismDescriptor {
        MechanismDescriptor {
            name,
            help,
            transports: Transports::Any,
            patterns: Patterns {
                crr: Ok(()),
                bidir: true,
            },
            probe: || Ok(()),
            build,
            reuse: Reuse::OnReturn,
            buffers: two_messages,
            zerocopy_socket: false,
            nodelay: false,
            uses_queue_depth: false,
            zero_copy: None,
            datagram_sends: any_send,
            crossover: None,
        }
    }
}

/// A mechanism whose datagram sends the kernel takes at any size the framing allows.
pub fn any_send(_: &Framing, _: usize) -> Result<(), String> {
    Ok(())
}

/// The transports a mechanism can send on.
pub enum Transports {
    /// Any: it writes through the transport's endpoint.
    Any,
    /// Only these, `because` (said in the refusal of the others).
    Only {
        transports: &'static [Transport],
        because: &'static str,
    },
}

/// The patterns a mechanism carries beyond stream and rr.
pub struct Patterns {
    /// `--pattern crr`: `Err` says why a connection per transaction cannot carry it.
    pub crr: Result<(), &'static str>,
    /// `--bidir`: whether both directions of one stream flow can use it at once.
    pub bidir: bool,
}

/// When the sender may write a message's memory again. `--verify` checks every byte against
/// the pattern the sender wrote, so memory rewritten while the kernel still reads it shows up
/// as wrong bytes (each lending mechanism has a test knob that makes that bug happen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// The call copied the bytes into the kernel: free when it returns.
    OnReturn,
    /// io_uring reads the memory until the send's result: a batch's buffers wait for all of
    /// its results.
    OnResult,
    /// The kernel sends from the pages themselves until its zero-copy notification: a pool
    /// slot is refilled only after it.
    OnNotification,
    /// A pipe or the socket keeps referencing the pages: each message goes in fresh pages.
    FreshPages,
}

impl Reuse {
    /// Whether the kernel holds the sender's memory past the call (lent memory).
    pub fn lends(self) -> bool {
        self != Reuse::OnReturn
    }
}

/// A crossover question: from which message size does this mechanism beat `against`?
pub struct Crossover {
    /// The path it is set against (the baseline).
    pub against: MechanismKind,
    /// The question, in the report's words.
    pub question: &'static str,
    /// Asked even where the results hold none of it (the answer then says it cannot be said);
    /// otherwise only where they do.
    pub always: bool,
}

/// The memory of a sender that holds two messages at most (one being written, one sent).
pub fn two_messages(_message_size: usize, _queue_depth: u32) -> usize {
    2
}

/// A send mechanism: a handle to its descriptor (compared, written and read back by name).
#[derive(Clone, Copy)]
pub struct MechanismKind(&'static MechanismDescriptor);

impl MechanismKind {
    pub const fn new(descriptor: &'static MechanismDescriptor) -> MechanismKind {
        MechanismKind(descriptor)
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn descriptor(self) -> &'static MechanismDescriptor {
        self.0
    }

    /// The mechanism among `list` called `name`.
    pub fn among(list: &[MechanismKind], name: &str) -> Option<MechanismKind> {
        list.iter().copied().find(|m| m.name() == name)
    }

    /// The mechanism called `name`, if bytepath has one.
    pub fn by_name(name: &str) -> Option<MechanismKind> {
        MechanismKind::among(MechanismKind::ALL, name)
    }
}

impl std::ops::Deref for MechanismKind {
    type Target = MechanismDescriptor;
    fn deref(&self) -> &MechanismDescriptor {
        self.0
    }
}

impl PartialEq for MechanismKind {
    fn eq(&self, other: &MechanismKind) -> bool {
        self.name() == other.name()
    }
}

impl Eq for MechanismKind {}

impl std::fmt::Debug for MechanismKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Records name a mechanism as the CLI does (`uring-gather`).
impl serde::Serialize for MechanismKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for MechanismKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MechanismKind, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        MechanismKind::by_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown mechanism {name:?}; known: {}",
                names(MechanismKind::ALL, |_| true).join(", ")
            ))
        })
    }
}

/// The names of `list`'s mechanisms that `keep` holds for, in list order.
pub fn names(list: &[MechanismKind], keep: impl Fn(&MechanismDescriptor) -> bool) -> Vec<&str> {
    list.iter().filter(|m| keep(m)).map(|m| m.name()).collect()
}

/// "a", "a and b", "a, b and c": names as a sentence says them.
pub fn in_words(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [only] => only.to_string(),
        [first @ .., last] => format!("{} and {last}", first.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::receive::Verifier;
    use crate::mechanism::supported;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::time::{Duration, Instant};

    #[test]
    fn records_name_every_mechanism_as_the_cli_does_and_read_it_back() {
        for &m in MechanismKind::ALL {
            let written = serde_json::to_value(m).unwrap();
            assert_eq!(written, m.name());
            assert_eq!(serde_json::from_value::<MechanismKind>(written).unwrap(), m);
            let kebab = m.name().chars().all(|c| c.is_ascii_lowercase() || c == '-');
            assert!(kebab, "{m:?}: a record name is kebab-case");
        }
        let err = serde_json::from_str::<MechanismKind>("\"zero\"").unwrap_err();
        assert!(
            err.to_string().contains("unknown mechanism \"zero\""),
            "{err}"
        );
    }

    #[test]
    fn every_mechanism_has_one_name_and_a_baseline_listed_before_it() {
        for (i, m) in MechanismKind::ALL.iter().enumerate() {
            let first = MechanismKind::ALL.iter().position(|o| o.name() == m.name());
            assert_eq!(first, Some(i), "{m:?} is listed twice");
            assert!(!m.help.is_empty(), "{m:?} has no help line");
            if let Some(c) = &m.crossover {
                let at = MechanismKind::ALL.iter().position(|o| *o == c.against);
                assert!(at.is_some_and(|at| at < i), "{m:?} against {:?}", c.against);
            }
        }
    }

    #[test]
    fn names_are_listed_as_a_sentence_says_them() {
        assert_eq!(in_words(&[]), "");
        assert_eq!(in_words(&["uring"]), "uring");
        assert_eq!(in_words(&["a", "b", "c"]), "a, b and c");
        let batched = names(MechanismKind::ALL, |d| d.uses_queue_depth);
        assert_eq!(
            in_words(&batched),
            "sendmmsg, uring, uring-gather and uring-zc"
        );
    }

    /// A connected loopback TCP pair with the sending socket's options `m` asks for, whose
    /// receiver takes at most 128 KiB at once, so that a stalled reader leaves the sender's
    /// data queued, still pointing at lent memory.
    fn small_window_pair(m: MechanismKind) -> (crate::transport::Endpoint, TcpStream) {
        use crate::sys::socket;
        use std::os::fd::AsFd;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        socket::set_int_option(
            listener.as_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            128 << 10,
        )
        .unwrap();
        let sender = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        sender.set_nodelay(m.nodelay).unwrap();
        if m.zerocopy_socket {
            socket::enable_zerocopy(sender.as_fd()).unwrap();
        }
        let (receiver, _) = listener.accept().unwrap();
        (crate::transport::Endpoint::socket(sender), receiver)
    }

    /// Every mechanism of the list, as `--verify` runs it: each message carries its pattern
    /// and every byte is checked. One that lends its memory to the kernel (`Reuse::lends`) is
    /// checked while the receiver stalls, when rewriting lent memory too early shows as wrong
    /// bytes; a new mechanism is held to this by being listed.
    #[test]
    fn every_mechanism_delivers_the_pattern_verify_checks_and_lent_memory_survives_a_stall() {
        const SIZE: usize = 64 << 10;
        const MESSAGES: u64 = 48;
        for &m in MechanismKind::ALL {
            if let Err(reason) = supported(m) {
                eprintln!("skipped {}: {reason}", m.name());
                continue;
            }
            // A datagram-only sender (sendmmsg) is held to the same in its own file, over UDP.
            if matches!(m.transports, Transports::Only { transports, .. } if !transports.contains(&Transport::Tcp))
            {
                continue;
            }
            let (ep, mut rx) = small_window_pair(m);
            let stall = if m.reuse.lends() { 150 } else { 0 };
            let reader = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(stall));
                let mut v = Verifier::new(5, SIZE);
                let mut buf = vec![0u8; 256 << 10];
                loop {
                    match rx.read(&mut buf) {
                        Ok(0) => return v,
                        Ok(n) => v.check(&buf[..n]),
                        Err(e) => panic!("reader: {e}"),
                    }
                }
            });
            let ctx = FlowContext {
                flow: 5,
                message_size: SIZE,
                fill_pattern: true,
                send_buffer: SIZE,
                queue_depth: 4,
                flush_each: false,
                framing: None,
            };
            let mut sender = (m.build)(ctx).unwrap();
            for seq in 0..MESSAGES {
                sender.send_message(&ep, seq).unwrap();
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            sender.finish(&ep, deadline).unwrap();
            ep.finish_writing().unwrap();
            let v = reader.join().unwrap();
            assert_eq!(v.checked_bytes, MESSAGES * SIZE as u64, "{}", m.name());
            assert_eq!(v.wrong_bytes, 0, "{}: {:?}", m.name(), v.first);
        }
    }
}
