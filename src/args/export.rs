//! `bytepath export DIR --format …`: checks the format and prints the folder's records in it,
//! as the study among `studies::STUDIES` that wrote it gives them.
use crate::cli::ExportArgs;
use crate::error::{Error, Status};
use crate::export::{self, Format};
use std::io::Write;

pub fn command(args: &ExportArgs) -> Result<Status, Error> {
    if args.histogram {
        return histograms(args);
    }
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

/// `--histogram`: the files written, one path a line on stdout; each point without a histogram
/// named on stderr. A folder where no point kept one fails.
fn histograms(args: &ExportArgs) -> Result<Status, Error> {
    let written = export::export_histograms(&crate::studies::STUDIES, &args.dir)?;
    for lacking in &written.lacking {
        eprintln!("bytepath: no histogram for point {lacking}");
    }
    if written.files.is_empty() {
        return Err(Error::Failed(format!(
            "{}: no point kept a latency histogram to export",
            args.dir.display()
        )));
    }
    for path in &written.files {
        println!("{}", path.display());
    }
    Ok(Status::Success)
}
