//! `bytepath keygen PATH`: writes a new shared token (256 random bits in hex) to a file only
//! its owner may read, so a strong token is one command away and never typed on a command line.
//! `bytepath keygen --identity FILE`: writes a host's key pair instead (`remote::identity`).
use crate::cli::KeygenArgs;
use crate::error::{ConfigError, Error, Status};
use crate::remote::auth::new_token;
use crate::remote::identity;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub fn command(args: &KeygenArgs) -> Result<Status, Error> {
    match (&args.path, &args.identity) {
        (_, Some(path)) => key_pair(path, args.name.as_deref()),
        (Some(path), None) => token(path),
        (None, None) => Err(ConfigError(
            "keygen: allowed: PATH (a new token file) or --identity FILE (a new key pair)".into(),
        )
        .into()),
    }
}

fn token(path: &Path) -> Result<Status, Error> {
    let token = new_token().map_err(Error::Setup)?;
    // create_new: never replace a token other hosts may already hold; 0600 from the start, so
    // the token is never readable by others, not even for a moment.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| {
            ConfigError(format!(
                "keygen {}: cannot be created ({e}); allowed: a path to a new file",
                path.display()
            ))
        })?;
    file.write_all(format!("{token}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(Error::Setup)?;
    println!("wrote a 256-bit token to {} (mode 0600)", path.display());
    Ok(Status::Success)
}

/// `--identity FILE [--name NAME]`: the key pair, and what to do with its public half.
fn key_pair(path: &Path, name: Option<&str>) -> Result<Status, Error> {
    let name = name.map_or_else(identity::host_name, str::to_string);
    identity::check_name(&name).map_err(|why| ConfigError(format!("keygen --{why}")))?;
    let (keys, public) = identity::write_identity(path, &name)
        .map_err(|why| ConfigError(format!("keygen --identity: {why}")))?;
    println!(
        "wrote the key pair of {name}: {} (private, mode 0600) and {} (public key {}); list the line of {} in the other hosts' --authorized-drivers or --trusted-servers",
        path.display(),
        public.display(),
        identity::fingerprint(&keys.public),
        public.display()
    );
    Ok(Status::Success)
}
