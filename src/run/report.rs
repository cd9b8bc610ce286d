//! How `bytepath run` shows its record: a table on stdout, the record as JSON (`--json`), or,
//! with `--json-stream`, the point as the stream's last line and the table on stderr.
use crate::record::RunRecord;
use crate::report::stream::JsonStream;
use crate::report::{json::Json, table::Table, Exporter};

/// Prints `record` as the flags asked.
pub fn show(record: &RunRecord, stream: &JsonStream, json: bool) {
    if stream.is_on() {
        stream.point(&serde_json::to_value(record).expect("JSON"));
        eprint!("{}{}", Table.export(record), limited(record));
    } else if json {
        print!("{}", Json.export(record));
    } else {
        print!("{}{}", Table.export(record), limited(record));
    }
}

/// "What limited each flow?" under the table, for a tcp run (other transports: nothing).
fn limited(record: &RunRecord) -> String {
    let reason = record.tcp.tcp_info_unavailable_reason.as_deref();
    if record.tcp.tcp_info.is_none() && record.config.transport != "tcp" {
        return String::new();
    }
    let answer = crate::analysis::limited::run_answer(record.tcp.tcp_info.as_ref(), reason);
    let mut text = format!("\n{}\n", answer.question);
    let lines = if answer.details.is_empty() {
        vec![answer.finding]
    } else {
        answer.details
    };
    for line in lines {
        text += &format!("  {line}\n");
    }
    text
}
