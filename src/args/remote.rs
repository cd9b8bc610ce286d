//! `--remote HOST[:PORT]`, `--token-file`, `--identity`, `--trusted-servers` and `--reverse`
//! -> where the other side runs, as plain values (`spec::RemoteRun`): the token and key files
//! are read here, at the top, and handed down.
use crate::cli::{DriverIdentityArgs, RemoteArgs};
use crate::config::remote::{parse_remote, DriverIdentity};
use crate::config::{Network, RemoteRun};
use crate::error::{bad, ConfigError};

/// `--remote` and its companions, parsed once per command (run, sweep, ipc); `None` when
/// both sides run on this host. What only one command refuses is checked by that command.
pub fn remote_run(args: &RemoteArgs, network: &Network) -> Result<Option<RemoteRun>, ConfigError> {
    let Some(text) = &args.remote else {
        let identity = &args.identity;
        if args.token.token_file.is_some()
            || args.reverse
            || identity.identity.is_some()
            || identity.trusted_servers.is_some()
        {
            let flag = if args.reverse {
                "--reverse"
            } else if args.token.token_file.is_some() {
                "--token-file"
            } else if identity.identity.is_some() {
                "--identity"
            } else {
                "--trusted-servers"
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
        identity: driver_identity(&args.identity)?,
        reverse: args.reverse,
    }))
}

/// `--identity` with `--trusted-servers`: the driver's key pair (its file readable by its
/// owner only) and the server keys it trusts; one without the other is refused.
pub fn driver_identity(args: &DriverIdentityArgs) -> Result<Option<DriverIdentity>, ConfigError> {
    use crate::remote::identity::{read_identity, read_key_list};
    match (&args.identity, &args.trusted_servers) {
        (None, None) => Ok(None),
        (Some(identity), Some(trusted)) => Ok(Some(DriverIdentity {
            keys: read_identity("--identity", identity).map_err(bad)?,
            trusted_servers: read_key_list("--trusted-servers", trusted).map_err(bad)?,
        })),
        (Some(_), None) => Err(bad(
            "--identity without --trusted-servers: allowed: both (the server keys this driver trusts, each server's FILE.pub), or neither",
        )),
        (None, Some(_)) => Err(bad(
            "--trusted-servers without --identity: allowed: both (this driver's key, from `bytepath keygen --identity FILE`), or neither",
        )),
    }
}
