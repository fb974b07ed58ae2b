//! Every `cuda.h` (CUDA 12.9 and 13.x) entry point the emulator does not
//! implement: each is exported, reachable through `cuGetProcAddress`, and
//! returns `CUDA_ERROR_NOT_SUPPORTED` after one stderr line naming it (once
//! per function per process).
//!
//! Why export them at all: a program linked against a newer `cuda.h` must
//! load even if it never calls them, and the CUDA runtime and frameworks that
//! resolve the whole driver table up front stop when a name is missing.
//!
//! The list below is the one place these names live. It holds every link-time
//! name `cuda.h` can produce (declarations, `#define cuX cuX_vN` targets, the
//! `_ptds`/`_ptsz` names of `__CUDA_API_PTDS`/`__CUDA_API_PTSZ` with
//! `CUDA_API_PER_THREAD_DEFAULT_STREAM`, and the legacy unversioned names)
//! that no other module exports, each with the CUDA version of its
//! `PFN_<name>_v<version>` typedef in `cudaTypedefs.h`.
//! `tests/exports.rs` recomputes that set from both headers and fails when a
//! name is neither here nor implemented. Implementing a function: delete its
//! symbol here (a duplicate `#[no_mangle]` fails to link, so nothing is
//! exported twice) and add it to the `entries()` of the module that implements
//! it.

use crate::cu::*;
use crate::entry::ProcEntry;
use std::sync::atomic::{AtomicBool, Ordering};

/// The body of every refused entry point: one line on stderr the first time
/// `name` is called, then `CUDA_ERROR_NOT_SUPPORTED`. Run through
/// [`crate::entry::guard`] so a failing write to stderr cannot unwind into C.
pub fn refuse(name: &str, logged: &AtomicBool) -> CUresult {
    crate::entry::guard(|| {
        if !logged.swap(true, Ordering::Relaxed) {
            super::logs::error(&format!(
                "prlx libcuda: {name} is not implemented by the emulator; returning CUDA_ERROR_NOT_SUPPORTED"
            ));
        }
        Err(CUDA_ERROR_NOT_SUPPORTED)
    })
}

/// `"name": version => symbol, @ptds version => symbol_ptsz, ...;` (the
/// syntax of `entry::procs!`) defines one exported function per symbol
/// and [`entries`], their `cuGetProcAddress` entries.
macro_rules! unsupported {
    ($( $name:literal : $( $(@$pt:ident)? $ver:literal => $f:ident ),+ ; )*) => {
        $($(
            #[doc = concat!("`", stringify!($f), "`: not supported; see the module documentation.")]
            // ABI: declared without parameters, whatever `cuda.h` gives the
            // function. On x86-64 System V (and AArch64 AAPCS64) arguments
            // travel in caller-saved registers and caller-owned stack slots,
            // and the caller pops them, so a callee that never reads its
            // arguments and only returns an `int` in eax/w0 is ABI-compatible
            // with every prototype that returns `CUresult`.
            #[unsafe(no_mangle)]
            pub extern "C" fn $f() -> CUresult {
                static LOGGED: AtomicBool = AtomicBool::new(false);
                refuse(stringify!($f), &LOGGED)
            }
        )+)*

        /// The `cuGetProcAddress` entries of every refused entry point.
        pub fn entries() -> Vec<ProcEntry> {
            vec![$($(
                ProcEntry {
                    name: $name,
                    symbol: stringify!($f),
                    version: $ver,
                    per_thread: unsupported!(@pt $($pt)?),
                    address: $f as *const () as usize,
                },
            )+)*]
        }
    };
    (@pt ptds) => { true };
    (@pt) => { false };
}

unsupported! {
    "cuArray3DCreate": 2000 => cuArray3DCreate;
    "cuArray3DGetDescriptor": 2000 => cuArray3DGetDescriptor;
    "cuArrayCreate": 2000 => cuArrayCreate;
    "cuArrayGetDescriptor": 2000 => cuArrayGetDescriptor;
    "cuArrayGetMemoryRequirements": 11060 => cuArrayGetMemoryRequirements;
    "cuArrayGetPlane": 11020 => cuArrayGetPlane;
    "cuArrayGetSparseProperties": 11010 => cuArrayGetSparseProperties;
    "cuCheckpointOperationComplete": 13040 => cuCheckpointOperationComplete;
    "cuCheckpointProcessCheckpoint": 12080 => cuCheckpointProcessCheckpoint;
    "cuCheckpointProcessGetRestoreThreadId": 12080 => cuCheckpointProcessGetRestoreThreadId;
    "cuCheckpointProcessGetState": 12080 => cuCheckpointProcessGetState;
    "cuCheckpointProcessLock": 12080 => cuCheckpointProcessLock;
    "cuCheckpointProcessRestore": 12080 => cuCheckpointProcessRestore;
    "cuCheckpointProcessUnlock": 12080 => cuCheckpointProcessUnlock;
    "cuCoredumpDeregisterCompleteCallback": 13020 => cuCoredumpDeregisterCompleteCallback;
    "cuCoredumpDeregisterStartCallback": 13020 => cuCoredumpDeregisterStartCallback;
    "cuCoredumpGetAttribute": 12010 => cuCoredumpGetAttribute;
    "cuCoredumpGetAttributeGlobal": 12010 => cuCoredumpGetAttributeGlobal;
    "cuCoredumpRegisterCompleteCallback": 13020 => cuCoredumpRegisterCompleteCallback;
    "cuCoredumpRegisterStartCallback": 13020 => cuCoredumpRegisterStartCallback;
    "cuCoredumpSetAttribute": 12010 => cuCoredumpSetAttribute;
    "cuCoredumpSetAttributeGlobal": 12010 => cuCoredumpSetAttributeGlobal;
    "cuCtxAttach": 2000 => cuCtxAttach;
    "cuCtxDetach": 2000 => cuCtxDetach;
    "cuCtxFromGreenCtx": 12040 => cuCtxFromGreenCtx;
    "cuCtxGetDevResource": 12040 => cuCtxGetDevResource;
    "cuCtxGetExecAffinity": 11040 => cuCtxGetExecAffinity;
    "cuCtxGetSharedMemConfig": 4020 => cuCtxGetSharedMemConfig;
    "cuCtxRecordEvent": 12050 => cuCtxRecordEvent;
    "cuCtxResetPersistingL2Cache": 11000 => cuCtxResetPersistingL2Cache;
    "cuCtxSetFlags": 12010 => cuCtxSetFlags;
    "cuCtxSetSharedMemConfig": 4020 => cuCtxSetSharedMemConfig;
    "cuCtxWaitEvent": 12050 => cuCtxWaitEvent;
    "cuDestroyExternalMemory": 10000 => cuDestroyExternalMemory;
    "cuDestroyExternalSemaphore": 10000 => cuDestroyExternalSemaphore;
    "cuDevResourceGenerateDesc": 12040 => cuDevResourceGenerateDesc;
    "cuDevSmResourceSplit": 13010 => cuDevSmResourceSplit;
    "cuDevSmResourceSplitByCount": 12040 => cuDevSmResourceSplitByCount;
    "cuDeviceGetCliqueCount": 13040 => cuDeviceGetCliqueCount;
    "cuDeviceGetCliqueInfo": 13040 => cuDeviceGetCliqueInfo;
    "cuDeviceGetDevResource": 12040 => cuDeviceGetDevResource;
    "cuDeviceGetExecAffinitySupport": 11040 => cuDeviceGetExecAffinitySupport;
    "cuDeviceGetFabricClusterUuid": 13040 => cuDeviceGetFabricClusterUuid;
    "cuDeviceGetHostAtomicCapabilities": 13000 => cuDeviceGetHostAtomicCapabilities;
    "cuDeviceGetLuid": 10000 => cuDeviceGetLuid;
    "cuDeviceGetNvSciSyncAttributes": 10020 => cuDeviceGetNvSciSyncAttributes;
    "cuDeviceGetP2PAtomicCapabilities": 13000 => cuDeviceGetP2PAtomicCapabilities;
    "cuDeviceRegisterAsyncNotification": 12040 => cuDeviceRegisterAsyncNotification;
    "cuDeviceUnregisterAsyncNotification": 12040 => cuDeviceUnregisterAsyncNotification;
    "cuExternalMemoryGetMappedBuffer": 10000 => cuExternalMemoryGetMappedBuffer;
    "cuExternalMemoryGetMappedMipmappedArray": 10000 => cuExternalMemoryGetMappedMipmappedArray;
    "cuFabricCpyBatchAsync":
        13050 => cuFabricCpyBatchAsync,
        @ptds 13050 => cuFabricCpyBatchAsync_ptsz;
    "cuFlushGPUDirectRDMAWrites": 11030 => cuFlushGPUDirectRDMAWrites;
    "cuFuncGetParamCount": 13020 => cuFuncGetParamCount;
    "cuFuncIsLoaded": 12040 => cuFuncIsLoaded;
    "cuFuncLoad": 12040 => cuFuncLoad;
    "cuFuncSetBlockShape": 2000 => cuFuncSetBlockShape;
    "cuFuncSetSharedMemConfig": 4020 => cuFuncSetSharedMemConfig;
    "cuFuncSetSharedSize": 2000 => cuFuncSetSharedSize;
    "cuGraphAddBatchMemOpNode": 11070 => cuGraphAddBatchMemOpNode;
    "cuGraphAddExternalSemaphoresSignalNode": 11020 => cuGraphAddExternalSemaphoresSignalNode;
    "cuGraphAddExternalSemaphoresWaitNode": 11020 => cuGraphAddExternalSemaphoresWaitNode;
    "cuGraphBatchMemOpNodeGetParams": 11070 => cuGraphBatchMemOpNodeGetParams;
    "cuGraphBatchMemOpNodeSetParams": 11070 => cuGraphBatchMemOpNodeSetParams;
    "cuGraphConditionalHandleCreate": 12030 => cuGraphConditionalHandleCreate;
    "cuGraphExecBatchMemOpNodeSetParams": 11070 => cuGraphExecBatchMemOpNodeSetParams;
    "cuGraphExecExternalSemaphoresSignalNodeSetParams":
        11020 => cuGraphExecExternalSemaphoresSignalNodeSetParams;
    "cuGraphExecExternalSemaphoresWaitNodeSetParams":
        11020 => cuGraphExecExternalSemaphoresWaitNodeSetParams;
    "cuGraphExternalSemaphoresSignalNodeGetParams":
        11020 => cuGraphExternalSemaphoresSignalNodeGetParams;
    "cuGraphExternalSemaphoresSignalNodeSetParams":
        11020 => cuGraphExternalSemaphoresSignalNodeSetParams;
    "cuGraphExternalSemaphoresWaitNodeGetParams":
        11020 => cuGraphExternalSemaphoresWaitNodeGetParams;
    "cuGraphExternalSemaphoresWaitNodeSetParams":
        11020 => cuGraphExternalSemaphoresWaitNodeSetParams;
    "cuGraphicsMapResources":
        3000 => cuGraphicsMapResources,
        @ptds 7000 => cuGraphicsMapResources_ptsz;
    "cuGraphicsResourceGetMappedMipmappedArray": 5000 => cuGraphicsResourceGetMappedMipmappedArray;
    "cuGraphicsResourceGetMappedPointer":
        3000 => cuGraphicsResourceGetMappedPointer,
        3020 => cuGraphicsResourceGetMappedPointer_v2;
    "cuGraphicsResourceSetMapFlags":
        3000 => cuGraphicsResourceSetMapFlags,
        6050 => cuGraphicsResourceSetMapFlags_v2;
    "cuGraphicsSubResourceGetMappedArray": 3000 => cuGraphicsSubResourceGetMappedArray;
    "cuGraphicsUnmapResources":
        3000 => cuGraphicsUnmapResources,
        @ptds 7000 => cuGraphicsUnmapResources_ptsz;
    "cuGraphicsUnregisterResource": 3000 => cuGraphicsUnregisterResource;
    "cuGreenCtxCreate": 12040 => cuGreenCtxCreate;
    "cuGreenCtxDestroy": 12040 => cuGreenCtxDestroy;
    "cuGreenCtxGetDevResource": 12040 => cuGreenCtxGetDevResource;
    "cuGreenCtxGetId": 12090 => cuGreenCtxGetId;
    "cuGreenCtxRecordEvent": 12040 => cuGreenCtxRecordEvent;
    "cuGreenCtxStreamCreate": 12050 => cuGreenCtxStreamCreate;
    "cuGreenCtxWaitEvent": 12040 => cuGreenCtxWaitEvent;
    "cuImportExternalMemory": 10000 => cuImportExternalMemory;
    "cuImportExternalSemaphore": 10000 => cuImportExternalSemaphore;
    "cuKernelGetParamCount": 13020 => cuKernelGetParamCount;
    "cuLaunch": 2000 => cuLaunch;
    "cuLaunchCooperativeKernelMultiDevice": 9000 => cuLaunchCooperativeKernelMultiDevice;
    "cuLaunchGrid": 2000 => cuLaunchGrid;
    "cuLaunchGridAsync": 2000 => cuLaunchGridAsync;
    "cuLaunchHostFunc": 13010 => cuLaunchHostFunc_v2, @ptds 13010 => cuLaunchHostFunc_v2_ptsz;
    "cuLibraryEnumerateKernels": 12040 => cuLibraryEnumerateKernels;
    "cuLibraryGetKernelCount": 12040 => cuLibraryGetKernelCount;
    "cuLibraryGetUnifiedFunction": 12000 => cuLibraryGetUnifiedFunction;
    "cuLogicalEndpointAddDevice": 13030 => cuLogicalEndpointAddDevice;
    "cuLogicalEndpointBindAddr": 13030 => cuLogicalEndpointBindAddr;
    "cuLogicalEndpointBindMem": 13030 => cuLogicalEndpointBindMem;
    "cuLogicalEndpointCreate": 13030 => cuLogicalEndpointCreate;
    "cuLogicalEndpointDestroy": 13030 => cuLogicalEndpointDestroy;
    "cuLogicalEndpointExport": 13030 => cuLogicalEndpointExport;
    "cuLogicalEndpointGetLimits": 13030 => cuLogicalEndpointGetLimits;
    "cuLogicalEndpointIdRelease": 13030 => cuLogicalEndpointIdRelease;
    "cuLogicalEndpointIdReserve": 13030 => cuLogicalEndpointIdReserve;
    "cuLogicalEndpointImport": 13030 => cuLogicalEndpointImport;
    "cuLogicalEndpointQuery": 13030 => cuLogicalEndpointQuery;
    "cuLogicalEndpointUnbind": 13030 => cuLogicalEndpointUnbind;
    "cuMemAllocPitch": 2000 => cuMemAllocPitch;
    "cuMemBatchDecompressAsync":
        12060 => cuMemBatchDecompressAsync,
        @ptds 12060 => cuMemBatchDecompressAsync_ptsz;
    "cuMemDiscardAndPrefetchBatchAsync":
        13000 => cuMemDiscardAndPrefetchBatchAsync,
        @ptds 13000 => cuMemDiscardAndPrefetchBatchAsync_ptsz;
    "cuMemDiscardBatchAsync":
        13000 => cuMemDiscardBatchAsync,
        @ptds 13000 => cuMemDiscardBatchAsync_ptsz;
    "cuMemGetHandleForAddressRange": 11070 => cuMemGetHandleForAddressRange;
    "cuMemGetLocationInfo": 13040 => cuMemGetLocationInfo;
    "cuMemMapArrayAsync": 11010 => cuMemMapArrayAsync, @ptds 11010 => cuMemMapArrayAsync_ptsz;
    "cuMemPrefetchBatchAsync":
        13000 => cuMemPrefetchBatchAsync,
        @ptds 13000 => cuMemPrefetchBatchAsync_ptsz;
    "cuMemcpy2D": 2000 => cuMemcpy2D;
    "cuMemcpy2DAsync": 2000 => cuMemcpy2DAsync;
    "cuMemcpy2DUnaligned": 2000 => cuMemcpy2DUnaligned;
    "cuMemcpy3D": 2000 => cuMemcpy3D;
    "cuMemcpy3DAsync": 2000 => cuMemcpy3DAsync;
    "cuMemcpy3DBatchAsync":
        12080 => cuMemcpy3DBatchAsync,
        13000 => cuMemcpy3DBatchAsync_v2,
        @ptds 12080 => cuMemcpy3DBatchAsync_ptsz,
        @ptds 13000 => cuMemcpy3DBatchAsync_v2_ptsz;
    "cuMemcpy3DWithAttributesAsync":
        13020 => cuMemcpy3DWithAttributesAsync,
        @ptds 13020 => cuMemcpy3DWithAttributesAsync_ptsz;
    "cuMemcpyAtoA": 2000 => cuMemcpyAtoA;
    "cuMemcpyAtoD": 2000 => cuMemcpyAtoD;
    "cuMemcpyAtoH": 2000 => cuMemcpyAtoH;
    "cuMemcpyAtoHAsync": 2000 => cuMemcpyAtoHAsync;
    "cuMemcpyBatchAsync":
        12080 => cuMemcpyBatchAsync,
        13000 => cuMemcpyBatchAsync_v2,
        @ptds 12080 => cuMemcpyBatchAsync_ptsz,
        @ptds 13000 => cuMemcpyBatchAsync_v2_ptsz;
    "cuMemcpyDtoA": 2000 => cuMemcpyDtoA;
    "cuMemcpyHtoA": 2000 => cuMemcpyHtoA;
    "cuMemcpyHtoAAsync": 2000 => cuMemcpyHtoAAsync;
    "cuMemcpyWithAttributesAsync":
        13020 => cuMemcpyWithAttributesAsync,
        @ptds 13020 => cuMemcpyWithAttributesAsync_ptsz;
    "cuMemsetD2D16": 2000 => cuMemsetD2D16;
    "cuMemsetD2D32": 2000 => cuMemsetD2D32;
    "cuMemsetD2D8": 2000 => cuMemsetD2D8;
    "cuMipmappedArrayGetMemoryRequirements": 11060 => cuMipmappedArrayGetMemoryRequirements;
    "cuMipmappedArrayGetSparseProperties": 11010 => cuMipmappedArrayGetSparseProperties;
    "cuModuleEnumerateFunctions": 12040 => cuModuleEnumerateFunctions;
    "cuModuleGetFunctionCount": 12040 => cuModuleGetFunctionCount;
    "cuMulticastAddDevice": 12010 => cuMulticastAddDevice;
    "cuMulticastBindAddr": 12010 => cuMulticastBindAddr, 13010 => cuMulticastBindAddr_v2;
    "cuMulticastBindMem": 12010 => cuMulticastBindMem, 13010 => cuMulticastBindMem_v2;
    "cuMulticastCreate": 12010 => cuMulticastCreate;
    "cuMulticastGetGranularity": 12010 => cuMulticastGetGranularity;
    "cuMulticastUnbind": 12010 => cuMulticastUnbind;
    "cuParamSetSize": 2000 => cuParamSetSize;
    "cuParamSetf": 2000 => cuParamSetf;
    "cuParamSeti": 2000 => cuParamSeti;
    "cuParamSetv": 2000 => cuParamSetv;
    "cuPointerSetAttribute": 6000 => cuPointerSetAttribute;
    "cuSignalExternalSemaphoresAsync":
        10000 => cuSignalExternalSemaphoresAsync,
        @ptds 10000 => cuSignalExternalSemaphoresAsync_ptsz;
    "cuStreamBatchMemOp":
        8000 => cuStreamBatchMemOp,
        11070 => cuStreamBatchMemOp_v2,
        @ptds 8000 => cuStreamBatchMemOp_ptsz,
        @ptds 11070 => cuStreamBatchMemOp_v2_ptsz;
    "cuStreamBeginCaptureToCig":
        13010 => cuStreamBeginCaptureToCig,
        @ptds 13010 => cuStreamBeginCaptureToCig_ptsz;
    "cuStreamBeginRecaptureToGraph":
        13030 => cuStreamBeginRecaptureToGraph,
        @ptds 13030 => cuStreamBeginRecaptureToGraph_ptsz;
    "cuStreamCopyAttributes":
        11000 => cuStreamCopyAttributes,
        @ptds 11000 => cuStreamCopyAttributes_ptsz;
    "cuStreamEndCaptureToCig":
        13010 => cuStreamEndCaptureToCig,
        @ptds 13010 => cuStreamEndCaptureToCig_ptsz;
    "cuStreamGetAttribute": 11000 => cuStreamGetAttribute, @ptds 11000 => cuStreamGetAttribute_ptsz;
    "cuStreamGetDevResource":
        13010 => cuStreamGetDevResource,
        @ptds 13010 => cuStreamGetDevResource_ptsz;
    "cuStreamGetDevice": 12080 => cuStreamGetDevice, @ptds 12080 => cuStreamGetDevice_ptsz;
    "cuStreamGetGreenCtx": 12040 => cuStreamGetGreenCtx;
    "cuStreamGetId": 12000 => cuStreamGetId, @ptds 12000 => cuStreamGetId_ptsz;
    "cuStreamSetAttribute": 11000 => cuStreamSetAttribute, @ptds 11000 => cuStreamSetAttribute_ptsz;
    "cuStreamWaitValue32":
        8000 => cuStreamWaitValue32,
        11070 => cuStreamWaitValue32_v2,
        @ptds 8000 => cuStreamWaitValue32_ptsz,
        @ptds 11070 => cuStreamWaitValue32_v2_ptsz;
    "cuStreamWaitValue64":
        9000 => cuStreamWaitValue64,
        11070 => cuStreamWaitValue64_v2,
        @ptds 9000 => cuStreamWaitValue64_ptsz,
        @ptds 11070 => cuStreamWaitValue64_v2_ptsz;
    "cuStreamWriteValue32":
        8000 => cuStreamWriteValue32,
        11070 => cuStreamWriteValue32_v2,
        @ptds 8000 => cuStreamWriteValue32_ptsz,
        @ptds 11070 => cuStreamWriteValue32_v2_ptsz;
    "cuStreamWriteValue64":
        9000 => cuStreamWriteValue64,
        11070 => cuStreamWriteValue64_v2,
        @ptds 9000 => cuStreamWriteValue64_ptsz,
        @ptds 11070 => cuStreamWriteValue64_v2_ptsz;
    "cuTensorMapEncodeIm2col": 12000 => cuTensorMapEncodeIm2col;
    "cuTensorMapEncodeIm2colWide": 12080 => cuTensorMapEncodeIm2colWide;
    "cuTensorMapEncodeTiled": 12000 => cuTensorMapEncodeTiled;
    "cuTensorMapReplaceAddress": 12000 => cuTensorMapReplaceAddress;
    "cuTensorMapSetAllocationClass": 13050 => cuTensorMapSetAllocationClass;
    "cuTexRefGetAddress": 2000 => cuTexRefGetAddress;
    "cuTexRefSetAddress": 2000 => cuTexRefSetAddress;
    "cuTexRefSetAddress2D": 2020 => cuTexRefSetAddress2D, 3020 => cuTexRefSetAddress2D_v2;
    "cuWaitExternalSemaphoresAsync":
        10000 => cuWaitExternalSemaphoresAsync,
        @ptds 10000 => cuWaitExternalSemaphoresAsync_ptsz;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_calls_return_not_supported_every_time() {
        assert_eq!(cuArrayCreate(), CUDA_ERROR_NOT_SUPPORTED);
        assert_eq!(cuArrayCreate(), CUDA_ERROR_NOT_SUPPORTED);
        assert_eq!(cuCheckpointProcessLock(), CUDA_ERROR_NOT_SUPPORTED);
    }

    #[test]
    fn every_listed_entry_point_refuses_when_called_through_its_address() {
        let entries = entries();
        assert!(entries.len() > 100, "{} entries", entries.len());
        for e in &entries {
            // SAFETY: every address in the list is one of the argument-less
            // `extern "C" fn() -> CUresult` functions defined above.
            let f: extern "C" fn() -> CUresult = unsafe { std::mem::transmute(e.address) };
            assert_eq!(f(), CUDA_ERROR_NOT_SUPPORTED, "{}", e.symbol);
            assert!(
                e.symbol.starts_with(e.name),
                "{} under {}",
                e.symbol,
                e.name
            );
        }
    }

    #[test]
    fn the_first_call_marks_the_function_logged() {
        let logged = AtomicBool::new(false);
        assert_eq!(refuse("cuTest", &logged), CUDA_ERROR_NOT_SUPPORTED);
        assert!(logged.load(Ordering::Relaxed));
        assert_eq!(refuse("cuTest", &logged), CUDA_ERROR_NOT_SUPPORTED);
    }
}
