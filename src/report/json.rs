//! The run record as one pretty-printed JSON document.
use super::Exporter;
use crate::record::RunRecord;

pub struct Json;

impl Exporter for Json {
    fn export(&self, record: &RunRecord) -> String {
        serde_json::to_string_pretty(record).expect("the record serializes") + "\n"
    }
}
