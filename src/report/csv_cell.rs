//! How a JSON value becomes a CSV cell, and a column of the fixed header: their own file, so the blocks that add columns (crr,
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

/// One column of the fixed header: its name, the JSON pointer into the record it comes from,
/// and how the value becomes a cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub pointer: String,
    pub cell: Cell,
}

pub fn column(name: String, pointer: String, cell: Cell) -> Column {
    Column {
        name,
        pointer,
        cell,
    }
}
