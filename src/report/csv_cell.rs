//! How a JSON value becomes a CSV cell: its own file, so the blocks that add columns (crr,
//! bidir) name it without importing the CSV writer that lists their columns.
/// How a JSON value becomes a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// A number, string or bool as is; `null` or absent is empty.
    Scalar,
    /// An array of strings joined with "; ".
    Joined,
    /// Compact JSON text (structured configuration such as the placement).
    Json,
}
