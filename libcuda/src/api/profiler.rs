//! The profiler control API: `cuProfilerStart`, `cuProfilerStop`.
//!
//! On NVIDIA's driver they turn data collection by an attached profiler
//! (Nsight, CUPTI) on and off for the current context. No profiler attaches
//! to the emulator, so both only check that a context is current, as the
//! driver does (`CUDA_ERROR_INVALID_CONTEXT` otherwise). cudart's
//! `cudaProfilerStart`/`Stop` reach them through `cuGetProcAddress`; without
//! them it returned `cudaErrorCallRequiresNewerDriver`, which stopped two of
//! NVIDIA's runtime samples.

use crate::driver::with_context;
use crate::entry::exports;
use crate::entry::{ProcEntry, procs};

exports! {
    fn cuProfilerStart() {
        with_context(|_, _| Ok(()))
    }

    fn cuProfilerStop() {
        with_context(|_, _| Ok(()))
    }
}

pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuProfilerStart": 4000 => cuProfilerStart;
        "cuProfilerStop": 4000 => cuProfilerStop;
    }
}
