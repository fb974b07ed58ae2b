//! Which runtime a launch came through: CUDA's driver API or HIP. The
//! launch path asks the backend, not a flag, how to name the kernel, hash
//! its arguments, find its device and stream state, and which driver table
//! its capture goes through.

use crate::driver::{self, Cuda};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The CUDA driver API (`cuLaunchKernel` and its kin).
    Cuda,
    /// The HIP runtime: the launch handle means nothing to the CUDA driver.
    Hip,
}

impl Backend {
    /// The driver table captures of this backend's launches go through:
    /// the real CUDA driver, or the HIP runtime behind the same table.
    pub fn table(self) -> &'static Cuda {
        match self {
            Backend::Cuda => driver::cuda(),
            Backend::Hip => crate::hip_driver::as_cuda(),
        }
    }
}
