//! `--remote HOST[:PORT]`, `--token-file` and `--reverse` -> where the other side runs, as
//! plain values (`spec::RemoteRun`): the token file is read here, at the top, and handed down.
use crate::cli::RemoteArgs;
use crate::config::remote::parse_remote;
use crate::config::{Network, RemoteRun};
use crate::error::{bad, ConfigError};

/// `--remote` and its companions, parsed once per command (run, sweep, ipc); `None` when
/// both sides run on this host. What only one command refuses is checked by that command.
pub fn remote_run(args: &RemoteArgs, network: &Network) -> Result<Option<RemoteRun>, ConfigError> {
    let Some(text) = &args.remote else {
        if args.token.token_file.is_some() || args.reverse {
            let flag = if args.reverse {
                "--reverse"
            } else {
                "--token-file"
            };
            return Err(bad(format!(
                "{flag}: applies with --remote HOST[:PORT] only"
            )));
        }
        return Ok(None);
    };
    let target = parse_remote(text)?;
    if network.is_netns() {
        return Err(bad(
            "--netns with --remote: two placements at once; the sides are either in two namespaces on this host or on two hosts",
        ));
    }
    if network.is_sink() {
        return Err(bad(
            "--sink with --remote: a sink sends to no receiver at all, and a remote server would be one; give one of them",
        ));
    }
    Ok(Some(RemoteRun {
        target,
        token: args.token.token()?,
        reverse: args.reverse,
    }))
}
