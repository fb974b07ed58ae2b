//! Per-subsystem state the driver (`driver::Driver`) owns, below the API
//! modules that use it: nothing here knows the driver or `api`, so each
//! piece is bookkeeping with its own invariants, and the driver-wide
//! operations (which take `&mut Driver`) live with their entry points in
//! `api::*`.
//!
//! - [`vmm`]: reservations, physical allocations and mappings, and the
//!   memfd and mapping helpers IPC and pools share.
//! - [`pool`]: stream-ordered allocator pools.
//! - [`ipc`]: handles exported to and opened from other processes.

pub mod ipc;
pub mod pool;
pub mod vmm;
