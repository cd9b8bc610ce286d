//! The client and server loops of `--pattern crr` on a `Worker`: apart from `crr`'s sockets
//! and statistics, so that the worker (which holds a `CrrClient`) and these loops (which run on
//! a worker) do not import each other.
use super::batch::Batch;
use super::control::Phase;
use super::crr::{time_wait_towards, CrrClient, CrrListener, CrrStats};
use super::window::Window;
use super::worker::{Totals, Worker};
use crate::mechanism::receive::Receiver;
use crate::mechanism::SendMechanism;
use crate::transport::Endpoint;
use std::io;
use std::time::Instant;

impl Worker {
    /// The crr client: connect, request, whole response, close; the sample is one
    /// transaction, start to closed, and the split's clock is read five times in it. `ep` is the flow's listener, shut down at the end so the
    /// server's accept returns.
    pub(super) fn crr_client(
        &self,
        (mech, receiver): (&mut Box<dyn SendMechanism>, &mut Receiver),
        client: &CrrClient,
        ep: &Endpoint,
        (window, totals, stats): (&mut Window, &mut Totals, &mut CrrStats),
    ) -> io::Result<()> {
        let size = self.message_size as u64;
        stats.linger_zero = client.linger_zero;
        let mut began = Instant::now();
        let mut batch = Batch::new(1, began);
        let mut phase = self.stamp(window, &mut batch, began);
        let result = (|| {
            while phase != Phase::Stop {
                let conn = client.target.connect(client.linger_zero, client.nodelay)?;
                let connected = Instant::now();
                mech.send_message(&conn, stats.transactions)?;
                totals.bytes += size;
                let first_byte = receiver.receive_answer_timed(&conn)?;
                let answered = Instant::now();
                drop(conn);
                let now = Instant::now();
                stats.transactions += 1;
                totals.messages += 1;
                batch.add(1, size);
                if window.is_open() {
                    stats.timed += 1;
                    stats.connect_ns += (connected - began).as_nanos() as u64;
                    stats.first_byte_ns += (first_byte - connected).as_nanos() as u64;
                    stats.response_ns += (answered - connected).as_nanos() as u64;
                    stats.close_ns += (now - answered).as_nanos() as u64;
                }
                phase = self.stamp(window, &mut batch, now);
                began = now;
            }
            Ok(())
        })();
        ep.abort();
        stats.time_wait_at_end = client
            .target
            .port()
            .and_then(time_wait_towards)
            .map(|end| end.saturating_sub(client.time_wait_before.unwrap_or(0)));
        result
    }

    /// The crr server: accept, read the request, answer, read the client's close. Ends when
    /// the client shuts the listener down after the stop.
    pub(super) fn crr_server(
        &self,
        (receiver, mech): (&mut Receiver, &mut Box<dyn SendMechanism>),
        (listener, nodelay): (&CrrListener, bool),
        (window, totals, stats): (&mut Window, &mut Totals, &mut CrrStats),
    ) -> io::Result<()> {
        let size = self.message_size as u64;
        let mut batch = Batch::new(self.stamp_every, Instant::now());
        loop {
            let conn = match listener.accept(nodelay) {
                Ok(conn) => conn,
                Err(_) if self.control.phase_at(Instant::now()) == Phase::Stop => {
                    self.stamp(window, &mut batch, Instant::now());
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            stats.accepts += 1;
            let got = receiver.receive(&conn)?;
            if got.eof {
                continue;
            }
            mech.send_message(&conn, got.message)?;
            stats.transactions += 1;
            totals.messages += 1;
            totals.bytes += size;
            match receiver.receive(&conn) {
                Ok(end) if end.eof => {}
                Ok(_) => return Err(io::Error::other("a crr client sent a second request")),
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {}
                Err(e) => return Err(e),
            }
            drop(conn);
            if batch.add(1, size) {
                self.stamp(window, &mut batch, Instant::now());
            }
        }
    }
}
