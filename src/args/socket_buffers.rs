//! `--rcvbuf` / `--sndbuf` on run and sweep: parsed by their shared group, and refused where
//! no tcp socket would carry them. With `--remote` the server sets them on its side too.
use crate::cli::SocketBufferArgs;
use crate::error::{bad, ConfigError};
use crate::transport::buffers::SocketBuffers;
use crate::transport::Transport;

/// The buffers asked for, refused off tcp. With `--remote` the run request carries them and the
/// server sets them on its data sockets (a server that cannot is refused when it answers).
pub fn socket_buffers(
    args: &SocketBufferArgs,
    transport: Transport,
) -> Result<SocketBuffers, ConfigError> {
    let buffers = args.buffers()?;
    let Some(flag) = flag_given(&buffers) else {
        return Ok(buffers);
    };
    if transport != Transport::Tcp {
        return Err(bad(format!(
            "{flag} with --transport {}: allowed with tcp only (the socket buffers of a tcp flow)",
            transport.name()
        )));
    }
    Ok(buffers)
}

/// The first of the two flags given, for a refusal to name.
fn flag_given(buffers: &SocketBuffers) -> Option<&'static str> {
    match (buffers.rcvbuf, buffers.sndbuf) {
        (Some(_), _) => Some("--rcvbuf"),
        (None, Some(_)) => Some("--sndbuf"),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(rcvbuf: &str) -> SocketBufferArgs {
        SocketBufferArgs {
            rcvbuf: Some(rcvbuf.into()),
            sndbuf: None,
        }
    }

    #[test]
    fn a_buffer_outside_its_bounds_or_off_tcp_is_refused_by_name() {
        let ok = socket_buffers(&given("16K"), Transport::Tcp).unwrap();
        assert_eq!(ok.rcvbuf, Some(16 << 10));
        for text in ["0", "garbage", "512", "2G", "-4K"] {
            let e = socket_buffers(&given(text), Transport::Tcp).unwrap_err().0;
            assert_eq!(
                e,
                format!(
                    "--rcvbuf {text:?}: allowed: a size from 1 KiB to 1 GiB, such as 16K or 4M"
                )
            );
        }
        let e = socket_buffers(&given("16K"), Transport::Unix)
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("--rcvbuf with --transport unix: allowed with tcp only"),
            "{e}"
        );
        let none = SocketBufferArgs::default();
        assert!(!socket_buffers(&none, Transport::Udp).unwrap().is_set());
    }
}
