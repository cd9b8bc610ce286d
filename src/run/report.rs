//! How `bytepath run` shows its record: a table on stdout, the record as JSON (`--json`), or,
//! with `--json-stream`, the point as the stream's last line and the table on stderr.
use crate::record::RunRecord;
use crate::report::stream::JsonStream;
use crate::report::{json::Json, table::Table, Exporter};

/// Prints `record` as the flags asked.
pub fn show(record: &RunRecord, stream: &JsonStream, json: bool) {
    if stream.is_on() {
        stream.point(&serde_json::to_value(record).expect("JSON"));
        eprint!("{}", Table.export(record));
    } else if json {
        print!("{}", Json.export(record));
    } else {
        print!("{}", Table.export(record));
    }
}
