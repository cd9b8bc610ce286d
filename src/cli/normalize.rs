//! `compare --normalize canary`, declared once here and flattened into `compare`.
use clap::Args;

#[derive(Debug, Clone, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct NormalizeArgs {
    /// canary: divide out a change of the machine, multiplying each new point's figure by the
    /// new/old canary cost of its component (memcpy for stream, pipe round trip for rr).
    #[arg(long)]
    pub normalize: Option<String>,
}
