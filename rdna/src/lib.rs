//! prlx-rdna: an RDNA3 (gfx1100) wave-level functional emulator.
//!
//! # Where to start
//!
//! ```no_run
//! use prlx_rdna::{CodeObject, Device, code_object::{fill_hidden_args, LaunchDims}};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let elf = std::fs::read("kernels.co")?;            // an AMDGPU ELF code object
//! let code = CodeObject::parse(&elf)?;               // kernels, descriptors, .args metadata
//! let kernel = code.kernel("vadd").unwrap().clone();
//! let mut dev = Device::new();
//! let module = dev.load(code)?;                      // maps the image into device memory
//! let buf = dev.alloc(4096, 256).unwrap();            // device address (u64)
//! dev.write(buf, &[0u8; 4096]).unwrap();
//! let mut kernarg = vec![0u8; kernel.kernarg_segment_size as usize];
//! kernarg[..8].copy_from_slice(&buf.to_le_bytes());   // explicit args at their .offset
//! let dims = LaunchDims { grid: [4, 1, 1], block: [256, 1, 1], dynamic_lds: 0 };
//! fill_hidden_args(&kernel, &dims, &mut kernarg);    // hidden_block_count_x, group sizes, ...
//! dev.launch(module, "vadd", dims.grid, dims.block, 0, &kernarg)?; // Err(Fault) names wave/lane/PC/address
//! let mut out = vec![0u8; 4096];
//! dev.read(buf, &mut out).unwrap();
//! # Ok(()) }
//! ```
//!
//! * [`code_object`]: ELF + `amdhsa.kernels` msgpack metadata + 64-byte
//!   kernel descriptors; [`code_object::fill_hidden_args`] fills the hidden
//!   kernargs (block counts, group sizes, remainders, offsets, grid dims).
//! * [`device::Device`]: global memory (`alloc`/`free`/`read`/`write`/
//!   `memset`), `load` (maps the image, applies its relocations),
//!   `symbol_address` (`__device__` variables), `launch` / `launch_with`,
//!   [`device::DeviceConfig`] (resident workgroups, instruction budget,
//!   dynamic stack), and a per-instruction hook ([`device::Device::set_hook`])
//!   for tracing and stepping. `Device` is `Send`.
//! * [`decode`]: machine-code decoder and LLVM-syntax printer
//!   ([`decode::format::format`]), tested against `llvm-objdump-19`.
//! * [`exec`]: the handlers, one module per family (scalar, vector, packed,
//!   memory, control); [`wave::Wave`] is the architectural state of one wave.
//! * [`asm`]: the spec's `.s` input files (header + RDNA assembly), assembled
//!   with `llvm-mc-19`, for `prlxctl emu run file.s`.
//!
//! Model and coverage: `docs/rdna-emulator.md`.

// A `Fault` carries the whole location (kernel, workgroup, wave, lane, PC,
// address, instruction text); it is returned once per failed launch, so its
// size does not matter.
#![allow(clippy::result_large_err)]

pub mod asm;
pub mod code_object;
pub mod decode;
pub mod device;
pub mod elf;
pub mod exec;
pub mod fault;
pub mod memory;
pub mod msgpack;
pub mod wave;

pub use code_object::{
    CodeObject, Kernel, KernelArg, KernelDescriptor, LaunchDims, fill_hidden_args,
};
pub use device::{Device, HookAction, HookEvent, LaunchStats, ModuleId, Service};
pub use fault::{CodeObjectError, ExecError, Fault, FaultKind};
pub use wave::Wave;
