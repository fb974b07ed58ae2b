//! The exported driver-API functions, grouped as `cuda.h` groups them.

pub mod array;
pub mod context;
pub mod device;
pub mod export_table;
pub mod graph;
pub mod ipc;
pub mod launch;
pub mod library;
pub mod logs;
pub mod memory;
pub mod memory2d;
pub mod module;
pub mod occupancy;
pub mod peer;
pub mod pointer;
pub mod pool;
pub mod proc_address;
pub mod profiler;
pub mod stream;
pub mod surface;
pub mod texture;
pub mod unsupported;
pub mod vmm;
