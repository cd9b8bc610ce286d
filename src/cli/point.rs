//! How one point is carried and counted: the flags `run` shares with the studies that measure
//! the same kind of point (sweep: the io_uring queue, the receive path, the counters and the
//! copies count; ipc:
//! the pipe size, datagram splitting and processes; file: the counters). Each is declared
//! once, with its help and its parse, and flattened into every command that takes it.
use super::mechanisms::queue_depth_help;
use crate::config::{parse_counters, parse_recv_size, Pattern};
use crate::error::ConfigError;
use crate::measure::counters::CounterSelection;
use crate::mechanism::receive::path::RecvPath;
use crate::mechanism::MechanismKind;
use clap::Args;

/// `--counters`: run, sweep and file.
#[derive(Debug, Clone, Args, serde::Serialize, serde::Deserialize)]
pub struct CountersArgs {
    /// perf counters each thread opens: all, software, hardware, none, or auto (all, except
    /// none for run's rr and crr). They open in a run (run), a visit (sweep) or a transfer
    /// (file) of their own after the measured ones, never in those the figures come from.
    #[arg(long, default_value = "auto")]
    pub counters: String,
}

impl CountersArgs {
    /// The counters a point of `pattern` opens (`auto` depends on the pattern).
    pub fn selection(&self, pattern: Pattern) -> Result<CounterSelection, ConfigError> {
        parse_counters(&self.counters, pattern)
    }
}

/// `--count-copies`: run and sweep.
#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct CountCopiesArgs {
    /// Count what the kernel copied, dropped and sent (root): its tracepoints
    /// skb:skb_copy_datagram_iovec, skb:kfree_skb and net:net_dev_xmit, opened with
    /// perf_event_open (tracefs mounted for the moment if it is not), in a run (run) or a
    /// visit of every point (sweep) of its own after the measured ones: bytes copied to user
    /// space per byte delivered, drops by reason, bytes per device. Without root or
    /// tracepoints the counts are unavailable, with the reason.
    #[arg(long)]
    #[serde(default)]
    pub count_copies: bool,
}

/// `--queue-depth`: run and sweep.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct QueueDepthArgs {
    // Its help names the mechanisms whose descriptors use a queue.
    #[arg(long, help = queue_depth_help(MechanismKind::ALL))]
    pub queue_depth: Option<String>,
}

/// `--recv` and `--recv-size`, how the receiving side takes bytes: run and sweep.
#[derive(Debug, Clone, Args, serde::Serialize, serde::Deserialize)]
pub struct ReceiveArgs {
    /// How the receiving side takes bytes (in sweep, every point's): recv, uring-recv
    /// (io_uring, provided buffers), zc-recv (TCP_ZEROCOPY_RECEIVE mapping), trunc (MSG_TRUNC:
    /// discards, delivers nothing).
    #[arg(long, default_value = "recv")]
    pub recv: String,
    /// Bytes per recv() call on the receiving side. Default: the message size, read until the
    /// whole message has arrived.
    #[arg(long)]
    pub recv_size: Option<String>,
}

impl ReceiveArgs {
    /// `--recv`: the receive path.
    pub fn path(&self) -> Result<RecvPath, ConfigError> {
        self.recv.parse()
    }

    /// `--recv-size`: bytes per call, or `None` for whole messages.
    pub fn size(&self) -> Result<Option<usize>, ConfigError> {
        self.recv_size.as_deref().map(parse_recv_size).transpose()
    }
}

/// `--pipe-size`: run and ipc.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct PipeSizeArgs {
    /// Bytes each direction holds: the pipe buffer of pipe (F_SETPIPE_SZ, 4 KiB up to
    /// /proc/sys/fs/pipe-max-size; default the kernel's) or the ring size of shm (default
    /// 64 KiB). run refuses it with another transport; ipc gives it to its pipe and shm points
    /// (--pipe-sizes measures several).
    #[arg(long)]
    pub pipe_size: Option<String>,
}

/// `--udp-split`: run and ipc.
#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct UdpSplitArgs {
    /// udp, unix-dgram: send a message larger than one datagram as several equal datagrams,
    /// each numbered; without it such a size is refused (ipc: skipped, unless --transports
    /// names the transport).
    #[arg(long)]
    pub udp_split: bool,
}

/// `--processes`: run and ipc.
#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct ProcessesArgs {
    /// Run the two sides in two processes (fork) instead of two threads of one process: the
    /// measuring side (stream receiver, rr client) stays in this process, the other side of
    /// every flow goes to one child.
    #[arg(long)]
    pub processes: bool,
}

/// `--gso`: run and sweep.
#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct GsoArgs {
    /// udp: UDP GSO (UDP_SEGMENT), the segment size in bytes: every send of a message (up to
    /// 64 KiB) is cut by the kernel into datagrams of this size, each numbered, the last one
    /// shorter. With a message above one send, add --udp-split.
    #[arg(long)]
    pub gso: Option<String>,
}

impl GsoArgs {
    /// Whether `--gso` was given (the defaults that differ with GSO read this).
    pub fn given(&self) -> bool {
        self.gso.is_some()
    }
}
