//! prlxd: the always-on daemon that stores capture sessions per user and
//! diffs them in the background.
//!
//! Start at [`server::Daemon`]: it accepts connections on a Unix socket
//! ([`listener`]), speaks the `prlx-proto` protocol one frame at a time
//! ([`connection`]), and answers each request from [`storage`] (sessions on
//! disk, per uid, crash-safe; [`ingest`] validates and compresses what arrives) or [`jobs`] (session diffs on a bounded worker
//! pool, cached). [`recovery`] repairs sessions cut off by a crash at start;
//! [`retention`] removes old sessions; [`config`] holds quotas and limits,
//! [`limits`] the budgets that enforce them while requests are in flight;
//! [`logging`] rate-limits the log lines clients can cause; [`error`] is the
//! error they all answer a failed request with.

pub mod config;
pub mod connection;
pub mod error;
pub mod ingest;
pub mod jobs;
pub mod limits;
pub mod listener;
pub mod logging;
pub mod recovery;
pub mod retention;
pub mod server;
pub mod storage;

pub use config::Config;
pub use server::Daemon;
pub use storage::Store;
