//! Error values: device-API errors, module-load diagnostics and launch faults.

use std::fmt;

/// An error from a device-level operation (memory, handles, lookups).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EmuError {
    #[error("invalid value: {0}")]
    InvalidValue(String),
    #[error("invalid handle: {0}")]
    InvalidHandle(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("out of memory: requested {requested} bytes, {free} bytes free")]
    OutOfMemory { requested: u64, free: u64 },
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// One diagnostic from loading a module: a parse error or an instruction the
/// emulator cannot execute faithfully. Displays as `file:LINE:COL: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadDiagnostic {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for LoadDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}

/// Why a module failed to load. `file`/`line`/`col`/`message` describe the
/// first problem; `more` holds any further ones (all are printed, one per line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
    pub more: Vec<LoadDiagnostic>,
}

impl LoadError {
    pub fn new(file: &str, line: u32, col: u32, message: impl Into<String>) -> LoadError {
        LoadError {
            file: file.to_string(),
            line,
            col,
            message: message.into(),
            more: Vec::new(),
        }
    }

    /// Builds one error from several diagnostics; `None` when there are none.
    pub fn from_diagnostics(mut all: Vec<LoadDiagnostic>) -> Option<LoadError> {
        if all.is_empty() {
            return None;
        }
        let first = all.remove(0);
        Some(LoadError {
            file: first.file,
            line: first.line,
            col: first.col,
            message: first.message,
            more: all,
        })
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )?;
        for d in &self.more {
            write!(f, "\n{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// Where and why a running kernel stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kernel: String,
    pub block: [u32; 3],
    pub thread: [u32; 3],
    /// Line of the faulting instruction in the PTX source.
    pub ptx_line: u32,
    /// Name of the PTX source (`k.ptx`), for the message.
    pub ptx_file: String,
    pub address: Option<u64>,
    /// What went wrong, then the instruction as printed.
    pub message: String,
    /// `path:line` of the kernel source, from the PTX `.loc` directives.
    pub source: Option<String>,
}

impl Fault {
    fn describe(&self, f: &mut fmt::Formatter<'_>, what: &str) -> fmt::Result {
        write!(f, "{what}")?;
        if let Some(a) = self.address {
            write!(f, " 0x{a:x}")?;
        }
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(
            f,
            " in kernel {}, block ({bx},{by},{bz}), thread ({tx},{ty},{tz}), at {}:{}",
            self.kernel, self.ptx_file, self.ptx_line
        )?;
        if let Some(src) = &self.source {
            write!(f, " ({src})")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.describe(f, "fault")
    }
}

/// Why a launch did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LaunchError {
    /// A bad launch configuration or parameter buffer (CUDA_ERROR_INVALID_VALUE).
    InvalidConfig(String),
    /// Too many threads or too much shared memory (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES).
    OutOfResources(String),
    /// A cluster shape the grid, the kernel or the device does not allow
    /// (CUDA_ERROR_INVALID_CLUSTER_SIZE).
    InvalidClusterSize(String),
    IllegalAddress(Fault),
    MisalignedAddress(Fault),
    IllegalInstruction(Fault),
    Trap(Fault),
    /// A device-side `assert` failed (`__assertfail`; CUDA_ERROR_ASSERT).
    Assert(Fault),
    InvalidHandle(String),
    /// Every remaining warp waits forever (a barrier not all threads reach).
    Deadlock(String),
    /// The observer returned [`crate::Control::Abort`].
    Aborted(String),
    /// The launch exceeded the watchdog's instruction budget
    /// ([`crate::Device::set_watchdog`]; CUDA_ERROR_LAUNCH_TIMEOUT).
    Timeout(String),
    /// A launch the emulator refuses before running anything (a cooperative
    /// launch of several blocks; CUDA_ERROR_NOT_SUPPORTED).
    Unsupported(String),
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::InvalidConfig(m) => write!(f, "invalid launch configuration: {m}"),
            LaunchError::OutOfResources(m) => write!(f, "launch out of resources: {m}"),
            LaunchError::InvalidClusterSize(m) => write!(f, "invalid cluster size: {m}"),
            LaunchError::IllegalAddress(x) => x.describe(f, "illegal address"),
            LaunchError::MisalignedAddress(x) => x.describe(f, "misaligned address"),
            LaunchError::IllegalInstruction(x) => x.describe(f, "illegal instruction"),
            LaunchError::Trap(x) => x.describe(f, "trap"),
            LaunchError::Assert(x) => x.describe(f, "device assertion"),
            LaunchError::InvalidHandle(m) => write!(f, "invalid handle: {m}"),
            LaunchError::Deadlock(m) => write!(f, "deadlock: {m}"),
            LaunchError::Aborted(m) => write!(f, "launch aborted: {m}"),
            LaunchError::Timeout(m) => write!(f, "launch timed out: {m}"),
            LaunchError::Unsupported(m) => write!(f, "launch not supported: {m}"),
        }
    }
}

impl std::error::Error for LaunchError {}
