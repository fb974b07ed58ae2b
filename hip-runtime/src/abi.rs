//! The slice of HIP 5.2's `hip_runtime_api.h` this runtime implements, as
//! the shared `prlx-hip-abi` crate defines it for this runtime and for the
//! capture shim: error codes, `hipDeviceProp_t`, `hipFuncAttributes`,
//! `hipPointerAttribute_t`, `dim3` and the enums the exported functions
//! take. The layouts are checked against the C headers by `tests/abi.rs`;
//! the signatures of the entry points the shim calls are checked against
//! this runtime's definitions below, at compile time.

pub use prlx_hip_abi::*;

use crate::api::{device, memory, misc, module, stream};

// Each definition coerces to the shared signature only if it has it.
const _: fns::FnMalloc = memory::hipMalloc;
const _: fns::FnFree = memory::hipFree;
const _: fns::FnMemsetD8 = memory::hipMemsetD8;
const _: fns::FnMemsetD8Async = memory::hipMemsetD8Async;
const _: fns::FnMemcpyHtoD = memory::hipMemcpyHtoD;
const _: fns::FnMemcpyHtoDAsync = memory::hipMemcpyHtoDAsync;
const _: fns::FnMemcpyDtoH = memory::hipMemcpyDtoH;
const _: fns::FnMemcpyDtoHAsync = memory::hipMemcpyDtoHAsync;
const _: fns::FnStreamSynchronize = stream::hipStreamSynchronize;
const _: fns::FnModuleGetGlobal = module::hipModuleGetGlobal;
const _: fns::FnModuleLoad = module::hipModuleLoad;
const _: fns::FnModuleLoadData = module::hipModuleLoadData;
const _: fns::FnModuleLoadDataEx = module::hipModuleLoadDataEx;
const _: fns::FnModuleUnload = module::hipModuleUnload;
const _: fns::FnModuleGetFunction = module::hipModuleGetFunction;
const _: fns::FnModuleLaunchKernel = module::hipModuleLaunchKernel;
const _: fns::FnLaunchKernel = module::hipLaunchKernel;
const _: fns::FnLaunchKernel = misc::hipLaunchKernel_spt;
const _: fns::FnRegisterFatBinary = module::__hipRegisterFatBinary;
const _: fns::FnRegisterFunction = module::__hipRegisterFunction;
const _: fns::FnRegisterVar = module::__hipRegisterVar;
const _: fns::FnGetSymbolAddress = memory::hipGetSymbolAddress;
const _: fns::FnGetSymbolSize = memory::hipGetSymbolSize;
const _: fns::FnLastError = device::hipGetLastError;
const _: fns::FnLastError = device::hipPeekAtLastError;
