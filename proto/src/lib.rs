//! The prlxd protocol: how the capture shim, `prlxctl` and the daemon talk.
//!
//! Start with [`frame`]: every message is one length-prefixed frame with a
//! magic, a protocol version and a kind, and no frame is larger than
//! [`frame::MAX_FRAME_PAYLOAD`]. [`message`] holds the serde requests and
//! responses carried in `Message` frames; large payloads (a launch's trace
//! and site table, an exported file) follow their request as `Chunk` frames,
//! or — when the daemon offers it — as one sealed memfd passed over the
//! socket ([`memfd`]).
//! [`socket`] finds the daemon (`PRLX_SOCKET`, the user socket, the system
//! socket) and [`client`] is a small blocking client — std only, so the shim
//! can use it without an async runtime.

pub mod client;
pub mod frame;
pub mod memfd;
pub mod message;
pub mod socket;

pub use client::{BatchStored, Client, ClientError};
pub use frame::{Frame, FrameError, FrameHeader, FrameKind, PROTOCOL_VERSION};
pub use message::{
    DiffOptions, ErrorCode, FEATURE_BATCH, FEATURE_MEMFD, FEATURE_PAGED, JobInfo, JobState,
    Request, Response, SessionInfo, StatusInfo, Transfer,
};
pub use socket::discover_socket;
