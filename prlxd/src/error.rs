//! The error a storage request, an upload's budget or an ingest fails with:
//! what went wrong, and the protocol's [`ErrorCode`] the client is sent.

use prlx_proto::ErrorCode;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no session {0:?}")]
    NotFound(String),
    #[error("session {0:?}: permission denied")]
    PermissionDenied(String),
    #[error("quota exceeded: {0}")]
    Quota(String),
    #[error("busy: {0}")]
    Busy(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    BadName(String),
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

impl StoreError {
    pub fn code(&self) -> ErrorCode {
        match self {
            StoreError::NotFound(_) => ErrorCode::NotFound,
            StoreError::PermissionDenied(_) => ErrorCode::PermissionDenied,
            StoreError::Quota(_) => ErrorCode::QuotaExceeded,
            StoreError::Busy(_) => ErrorCode::Busy,
            StoreError::Invalid(_) => ErrorCode::InvalidData,
            StoreError::BadName(_) => ErrorCode::Protocol,
            StoreError::Io { .. } => ErrorCode::Internal,
        }
    }
}

pub(crate) fn io_error(path: &Path, what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        message: format!("{what}: {e}"),
    }
}
