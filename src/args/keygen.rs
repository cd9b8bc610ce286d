//! `bytepath keygen PATH`: writes a new shared token (256 random bits in hex) to a file only
//! its owner may read, so a strong token is one command away and never typed on a command line.
use crate::cli::KeygenArgs;
use crate::error::{ConfigError, Error, Status};
use crate::remote::auth::new_token;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

pub fn command(args: &KeygenArgs) -> Result<Status, Error> {
    let path = &args.path;
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
