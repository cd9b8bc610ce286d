//! `sendmmsg`: datagrams handed to the kernel a batch per system call (sendmmsg(2)), as QUIC
//! stacks and DNS servers send. A batch is `--queue-depth` messages (default 16), the knob
//! io_uring's senders use for the same trade: system calls per datagram against datagrams
//! held back in user space; a sweep can vary it and the record states it. Every datagram is
//! one entry of the vector (with `--gso`, every GSO send), its gather list its sequence number
//! and its bytes of the message, as `send` sends it, so `sendmmsg − send` is the batching
//! alone. The kernel copies the bytes during the call: the batch's buffers are free again when
//! it returns. rr flushes every message at once (`FlowContext::flush_each`).
use super::buffer::MessageBuffer;
use super::descriptor::{MechanismDescriptor, MechanismKind, Patterns, Reuse, Transports};
use super::{pattern, FlowContext, SendMechanism};
use crate::sys::mmsg::MessageVector;
use crate::transport::datagram::{DatagramSocket, Framing, SEQ_BYTES};
use crate::transport::{Endpoint, Transport};
use std::io;
use std::net::{Ipv4Addr, UdpSocket};
use std::os::fd::AsFd;
use std::time::Instant;

static DESCRIPTOR: MechanismDescriptor = MechanismDescriptor {
    name: "sendmmsg",
    help: "sendmmsg, --queue-depth messages a call",
    transports: Transports::Only {
        transports: &[Transport::Udp, Transport::UnixDgram],
        because: "sendmmsg hands the kernel a batch of datagrams",
    },
    patterns: Patterns {
        crr: Err("a crr transaction carries one message per connection: nothing to batch"),
        bidir: false,
    },
    probe: two_datagrams_in_one_call,
    build: |ctx| Ok(Box::new(Sendmmsg::new(ctx)?)),
    reuse: Reuse::OnReturn,
    buffers: |_, queue_depth| queue_depth as usize,
    zerocopy_socket: false,
    nodelay: false,
    uses_queue_depth: true,
    zero_copy: None,
    datagram_sends: crate::mechanism::descriptor::any_send,
    crossover: None,
};

impl MechanismKind {
    /// `sendmmsg`: a batch of datagrams per system call.
    pub const SENDMMSG: MechanismKind = MechanismKind::new(&DESCRIPTOR);
}

/// One flow's batching sender.
pub struct Sendmmsg {
    /// One buffer per message of a batch.
    messages: Vec<MessageBuffer>,
    /// The numbers of the batch's datagrams, `framing.parts` per message.
    headers: Vec<[u8; SEQ_BYTES]>,
    framing: Framing,
    /// Messages waiting in the batch.
    in_batch: usize,
    vector: MessageVector,
    ctx: FlowContext,
}

impl Sendmmsg {
    /// A batch of `--queue-depth` messages, and a vector with room for all their sends.
    pub fn new(ctx: FlowContext) -> io::Result<Sendmmsg> {
        let framing = ctx.framing.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "sendmmsg sends on a datagram transport, whose framing it needs",
            )
        })?;
        let batch = ctx.queue_depth.max(1) as usize;
        let parts = framing.parts as usize;
        let messages = (0..batch)
            .map(|_| {
                let mut buf = MessageBuffer::new(ctx.message_size);
                pattern::fill(pattern::message_seed(ctx.flow, 0), 0, &mut buf);
                buf
            })
            .collect();
        Ok(Sendmmsg {
            messages,
            headers: vec![[0; SEQ_BYTES]; batch * parts],
            framing,
            in_batch: 0,
            vector: MessageVector::with_capacity(
                batch * framing.sends() as usize,
                2 * batch * parts,
            ),
            ctx,
        })
    }

    /// Hands the batch to the kernel, every datagram in order, and counts its datagrams.
    fn flush(&mut self, socket: &DatagramSocket) -> io::Result<()> {
        if self.in_batch == 0 {
            return Ok(());
        }
        let Sendmmsg {
            messages,
            headers,
            framing,
            in_batch,
            vector,
            ..
        } = self;
        let parts = framing.parts as usize;
        vector.send_all(socket.fd(), 0, |m| {
            for (message, numbers) in messages[..*in_batch].iter().zip(headers.chunks(parts)) {
                for send in 0..framing.sends() {
                    for part in framing.send_parts(send) {
                        let range = framing.part_range(part);
                        m.slice(&numbers[part as usize]);
                        m.slice(&message[range.start + SEQ_BYTES..range.end]);
                    }
                    m.end_message();
                }
            }
        })?;
        socket.count_sent((*in_batch * parts) as u32);
        *in_batch = 0;
        Ok(())
    }
}

impl SendMechanism for Sendmmsg {
    fn send_message(&mut self, ep: &Endpoint, seq: u64) -> io::Result<()> {
        let socket = datagram_socket(ep)?;
        let slot = self.in_batch;
        if self.ctx.fill_pattern {
            let seed = pattern::message_seed(self.ctx.flow, seq);
            pattern::fill(seed, 0, &mut self.messages[slot]);
        }
        let first = socket.number_message();
        let parts = self.framing.parts as usize;
        let numbers = &mut self.headers[slot * parts..(slot + 1) * parts];
        for (number, seq) in numbers.iter_mut().zip(0..) {
            *number = first.wrapping_add(seq).to_le_bytes();
        }
        self.in_batch += 1;
        if self.ctx.flush_each || self.in_batch == self.messages.len() {
            self.flush(socket)?;
        }
        Ok(())
    }

    fn finish(&mut self, ep: &Endpoint, _deadline: Instant) -> io::Result<()> {
        self.flush(datagram_socket(ep)?)
    }
}

/// sendmmsg sends datagrams; config refuses the other transports.
fn datagram_socket(ep: &Endpoint) -> io::Result<&DatagramSocket> {
    ep.datagram_socket().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::Unsupported,
            "sendmmsg needs a datagram socket",
        )
    })
}

/// Whether this kernel's sendmmsg(2) delivers: two datagrams in one call over loopback UDP.
fn two_datagrams_in_one_call() -> Result<(), String> {
    let tried = || -> io::Result<Vec<usize>> {
        let sender = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
        let receiver = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
        sender.connect(receiver.local_addr()?)?;
        receiver.set_read_timeout(Some(std::time::Duration::from_secs(1)))?;
        let mut vector = MessageVector::with_capacity(2, 2);
        vector.send_all(sender.as_fd(), 0, |m| {
            m.slice(b"1");
            m.end_message();
            m.slice(b"22");
            m.end_message();
        })?;
        let mut buf = [0u8; 4];
        Ok(vec![receiver.recv(&mut buf)?, receiver.recv(&mut buf)?])
    };
    match tried() {
        Ok(lengths) if lengths == [1, 2] => Ok(()),
        Ok(lengths) => Err(format!(
            "sendmmsg(2) of datagrams of 1 and 2 B on loopback UDP delivered {lengths:?} B"
        )),
        Err(e) => Err(format!("sendmmsg(2) of two datagrams on loopback UDP: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::receive::path::RecvPath;
    use crate::mechanism::receive::{Receiver, RecvMode};
    use crate::transport::datagram::udp_options;
    use crate::transport::framing::gso_max_segments;
    use crate::transport::{connector, FlowEnds, SocketOptions};

    /// `count` messages through sendmmsg at `depth` over loopback UDP, few enough for the
    /// receive buffer to hold, checked by a verifying datagram receiver: the datagrams the
    /// sender counted and the receiver.
    fn deliver(depth: u32, count: u64, framing: Framing) -> (u64, Receiver) {
        let options = SocketOptions {
            framing: Some(framing),
            ..SocketOptions::default()
        };
        let FlowEnds {
            sender,
            receiver,
            send_buffer,
        } = connector(Transport::Udp)
            .connect(1, options)
            .unwrap()
            .remove(0);
        udp_options(sender.socket_fd().unwrap(), &options, false).unwrap();
        let size = framing.message_size;
        let ctx = FlowContext {
            flow: 2,
            message_size: size,
            fill_pattern: true,
            send_buffer,
            queue_depth: depth,
            flush_each: false,
            framing: Some(framing),
        };
        let mut mech = Sendmmsg::new(ctx).unwrap();
        let receiving = std::thread::spawn(move || {
            let mode = RecvMode::Datagrams(framing);
            let mut rx = Receiver::new(2, size, mode, false, true, RecvPath::Recv);
            while !rx.receive(&receiver).unwrap().eof {}
            rx
        });
        for seq in 0..count {
            mech.send_message(&sender, seq).unwrap();
        }
        mech.finish(&sender, Instant::now()).unwrap();
        sender.finish_writing().unwrap();
        (sender.datagrams_sent().unwrap(), receiving.join().unwrap())
    }

    fn assert_delivered(what: &str, count: u64, framing: Framing, (sent, rx): (u64, Receiver)) {
        let datagrams = count * u64::from(framing.parts);
        let stats = rx.datagram_stats().unwrap();
        assert_eq!((sent, stats.received), (datagrams, datagrams), "{what}");
        assert_eq!(
            (stats.reordered, stats.incomplete_messages),
            (0, 0),
            "{what}"
        );
        let v = rx.verifier.as_ref().unwrap();
        let payload = framing.message_size - framing.parts as usize * SEQ_BYTES;
        assert_eq!(v.checked_bytes, count * payload as u64, "{what}");
        assert_eq!(v.wrong_bytes, 0, "{what}: {:?}", v.first);
    }

    /// Ten messages of four datagrams at a batch of four: two full batches and the rest sent
    /// by `finish`, every datagram counted once on each side and every byte right.
    #[test]
    fn sendmmsg_sends_exactly_the_datagrams_it_counts() {
        let framing = Framing::new(Transport::Udp, 1000, 300, true).unwrap();
        assert_eq!(framing.parts, 4);
        assert_delivered("split", 10, framing, deliver(4, 10, framing));
        assert_delivered("one a call", 3, framing, deliver(1, 3, framing));
    }

    /// With GSO each entry of the vector is one send the kernel cuts into segments, each
    /// carrying the number the sender wrote.
    #[test]
    fn sendmmsg_with_gso_delivers_numbered_segments() {
        let framing = Framing::segmented(4000, 1000, gso_max_segments(), false).unwrap();
        assert_eq!((framing.parts, framing.sends()), (4, 1));
        assert_delivered("gso", 7, framing, deliver(3, 7, framing));
    }
}
