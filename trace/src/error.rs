//! Every way reading or writing a trace or a site map can fail.
//!
//! Each variant names the file (as the caller spelled it) and, where one is
//! to blame, the field, so a message reads on one line like
//! `a.prlx: header.events_per_warp: 0 is not a valid event count`.

use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened, mapped, read or written.
    #[error("{file}: {action}: {source}")]
    Io {
        file: String,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// The bytes end before a structure the header promises.
    #[error(
        "{file}: {field}: truncated: needs bytes {start}..{end} but the {what} has {len} bytes"
    )]
    Truncated {
        file: String,
        field: String,
        start: u64,
        end: u64,
        len: u64,
        /// "file" or "decompressed trace".
        what: &'static str,
    },

    /// A field holds a value the format forbids or that contradicts another field.
    #[error("{file}: {field}: {problem}")]
    Invalid {
        file: String,
        field: String,
        problem: String,
    },

    /// The zstd frame is corrupt, truncated, or larger than the header allows.
    #[error("{file}: {field}: {problem}")]
    Decompress {
        file: String,
        field: &'static str,
        problem: String,
    },

    /// A site map is not valid JSON or does not match the schema.
    #[error("{file}:{line}:{column}: {message}")]
    SiteMapSyntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },

    /// A site map entry parsed but holds an impossible value.
    #[error("{file}: {field}: {problem}")]
    SiteMapInvalid {
        file: String,
        field: String,
        problem: String,
    },

    /// The writer was asked for something the format cannot represent.
    #[error("{file}: {field}: {problem}")]
    Unrepresentable {
        file: String,
        field: String,
        problem: String,
    },
}

impl TraceError {
    /// The file the error is about.
    pub fn file(&self) -> &str {
        match self {
            TraceError::Io { file, .. }
            | TraceError::Truncated { file, .. }
            | TraceError::Invalid { file, .. }
            | TraceError::Decompress { file, .. }
            | TraceError::SiteMapSyntax { file, .. }
            | TraceError::SiteMapInvalid { file, .. }
            | TraceError::Unrepresentable { file, .. } => file,
        }
    }

    /// The field the error blames, when there is one (e.g. `header.version`).
    pub fn field(&self) -> Option<&str> {
        match self {
            TraceError::Truncated { field, .. }
            | TraceError::Invalid { field, .. }
            | TraceError::SiteMapInvalid { field, .. }
            | TraceError::Unrepresentable { field, .. } => Some(field),
            TraceError::Decompress { field, .. } => Some(field),
            TraceError::Io { .. } | TraceError::SiteMapSyntax { .. } => None,
        }
    }

    pub(crate) fn invalid(
        file: &str,
        field: impl fmt::Display,
        problem: impl Into<String>,
    ) -> Self {
        TraceError::Invalid {
            file: file.to_owned(),
            field: field.to_string(),
            problem: problem.into(),
        }
    }

    pub(crate) fn io(file: &str, action: &'static str, source: std::io::Error) -> Self {
        TraceError::Io {
            file: file.to_owned(),
            action,
            source,
        }
    }
}
