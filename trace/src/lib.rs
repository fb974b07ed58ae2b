//! The `.prlx` v1 trace format: PRLX's byte layout, a validating zero-copy
//! reader, a writer, and the `prlx-sites.json` site map.
//!
//! Start at [`TraceFile::open`]: it maps (or decompresses) a trace, checks
//! every field and byte range once, and then hands out views that cannot
//! fail: [`TraceFile::warp`] gives a warp's [`WarpBufferHeader`] and events,
//! [`TraceFile::history`] / [`TraceFile::snapshots`] its [`Ring`]s.
//! [`TraceBuilder`] writes traces (plain, `FLAG_COMPRESS`, or `.prlx.zst`);
//! [`SiteMap`] resolves site ids to source locations.
//!
//! Modules, one job each:
//! - [`layout`]: the on-disk structs, field for field (`trace_format.h`).
//! - [`geometry`]: header → section byte ranges, every size checked.
//! - `reader`: encoding detection, validation, views; `inflate`: capped zstd.
//! - `validate`: [`TraceValidator`], the same checks on borrowed bytes with a
//!   reused decompression buffer (for daemons).
//! - [`limits`]: each `PRLX_*` capture setting's default and bounds (the
//!   shim's and the NVBit tool's, whose C header is generated from it).
//! - [`writer`]: the builder; [`sitemap`]: the site map; [`error`]: [`TraceError`].

pub mod error;
pub mod geometry;
mod inflate;
pub mod layout;
pub mod limits;
mod reader;
pub mod sitemap;
mod storage;
mod validate;
mod views;
pub mod writer;

pub use error::TraceError;
pub use geometry::{Section, SectionLayout, WarpLocation};
pub use inflate::ZSTD_MAGIC;
pub use layout::*;
pub use reader::{Encoding, TraceFile};
pub use sitemap::{Inserted, SiteInfo, SiteMap};
pub use validate::{TraceValidator, ValidTrace};
pub use views::{Ring, Warp};
pub use writer::{Compression, TraceBuilder, TraceWriter};
