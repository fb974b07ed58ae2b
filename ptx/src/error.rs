//! Parse diagnostics.

use std::fmt;

/// A parse failure at a precise position.
///
/// Displays as `file.ptx:LINE:COL: message`, the form editors and
/// terminals recognise.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    /// The file name given to the parser (`<input>` for anonymous text).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in bytes).
    pub col: u32,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}
