//! Compile-time checks that the exported entry points the capture shim calls
//! have the signatures the shared `prlx-hip-abi` crate gives them
//! (`prlx_hip_abi::fns`). They live here, above both, so that the ABI module
//! stays at the bottom of the crate: a drifted signature fails the build.

use super::{device, memory, misc, module, stream};
use crate::abi::fns;

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
