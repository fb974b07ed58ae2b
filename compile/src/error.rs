//! Every way a compile can fail, each as one line naming the tool or file.

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum CompileError {
    /// The command line could not be understood.
    #[error("{0}")]
    Usage(String),
    /// A program the pipeline needs is not installed.
    #[error("{tool} not found: {hint}")]
    ToolMissing { tool: String, hint: String },
    /// A tool ran and failed; `message` is the most telling line it printed.
    #[error("{tool} failed (exit {status}): {message}")]
    ToolFailed {
        tool: String,
        status: String,
        message: String,
    },
    /// A tool could not be started at all.
    #[error("cannot run {tool} ({path}): {cause}")]
    Spawn {
        tool: String,
        path: PathBuf,
        cause: std::io::Error,
    },
    /// Reading or writing one of our own files failed.
    // The cause is part of the one line, not a chained source, so callers
    // printing `{:#}` do not repeat it.
    #[error("{path}: {what}: {cause}")]
    Io {
        path: PathBuf,
        what: &'static str,
        cause: std::io::Error,
    },
}

impl CompileError {
    pub(crate) fn io(path: impl Into<PathBuf>, what: &'static str, cause: std::io::Error) -> Self {
        CompileError::Io {
            path: path.into(),
            what,
            cause,
        }
    }
}
