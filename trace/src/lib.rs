//! The `.prlx` v1 trace format.
pub mod layout;
pub use layout::*;
