//! Remote placement: `bytepath server` on one host runs the side of every flow the statistics
//! do not follow, `bytepath run --remote HOST[:PORT]` on the other drives the run and measures.
//! `protocol` is the versioned, size-bounded control protocol.
pub mod protocol;
