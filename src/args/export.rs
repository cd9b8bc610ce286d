//! `bytepath export DIR --format …`: checks the format and prints the folder's records in it,
//! as the study among `studies::STUDIES` that wrote it gives them.
use crate::cli::ExportArgs;
use crate::error::{Error, Status};
use crate::export::{self, Format};
use std::io::Write;

pub fn command(args: &ExportArgs) -> Result<Status, Error> {
    let format: Format = args.format.parse()?;
    let text = export::export(&crate::studies::STUDIES, &args.dir, format)?;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Error::Failed(format!("writing to stdout: {e}")))
        }
        _ => Ok(Status::Success),
    }
}
