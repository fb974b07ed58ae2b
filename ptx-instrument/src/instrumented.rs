//! What instrumenting a module gives: the rewritten PTX with its site table
//! and kernels, or why it could not be instrumented.

use crate::sites::SiteTable;

/// A module rewritten to record events.
#[derive(Debug)]
pub struct Instrumented {
    /// The instrumented PTX text.
    pub ptx: String,
    /// Every site, with its id and source location.
    pub sites: SiteTable,
    /// The `.entry` kernels the module defines.
    pub kernels: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Parse(#[from] prlx_ptx::ParseError),
    /// The module defines `__prlx_desc`: it was built with the pass.
    #[error("the module already records events (it defines __prlx_desc: built with the prlx pass)")]
    AlreadyInstrumented,
    #[error("{0}")]
    Unsupported(String),
}
