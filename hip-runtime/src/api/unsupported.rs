//! Every function of Debian's HIP 5.2 library that this runtime does not
//! implement is still exported, so a program that links one (on a path it
//! may never take) loads. Called, each returns `hipErrorNotSupported` (the
//! hiprtc ones `HIPRTC_ERROR_INTERNAL_ERROR`), sets the thread's last error
//! and says so once on stderr: textures and surfaces, arrays, graphs,
//! virtual memory, memory pools, IPC, external memory and semaphores, GL
//! interop, cooperative launches, stream-ordered waits, 3D copies to or
//! from arrays, the
//! `_spt` per-thread-stream variants, hiprtc.
//!
//! The stubs take no parameters whatever the C prototype says: under the
//! x86-64 System V ABI the caller places and removes the arguments, so a
//! callee that ignores them is called correctly; all of these return an
//! `int`-sized enum (checked against the headers when this list was made).

use crate::abi::*;
use std::collections::HashSet;
use std::ffi::c_int;
use std::sync::Mutex;

/// `HIPRTC_ERROR_INTERNAL_ERROR`.
pub const HIPRTC_ERROR_INTERNAL_ERROR: c_int = 11;

/// Says once per function that `name` is not implemented.
pub fn refuse(name: &'static str) {
    static SAID: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    if said.get_or_insert_with(HashSet::new).insert(name) {
        eprintln!("prlx hip: {name} is not supported by prlx's HIP runtime (hipErrorNotSupported)");
    }
}

macro_rules! unsupported {
    ($($name:ident)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: not supported (see the module documentation).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> hipError_t {
            let _ = std::panic::catch_unwind(|| refuse(stringify!($name)));
            crate::entry::record(hipErrorNotSupported)
        }
    )*};
}

macro_rules! unsupported_rtc {
    ($($name:ident)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: hiprtc is not supported.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> c_int {
            let _ = std::panic::catch_unwind(|| refuse(stringify!($name)));
            HIPRTC_ERROR_INTERNAL_ERROR
        }
    )*};
}

unsupported! {
    hipArray3DCreate hipArrayCreate hipArrayDestroy hipBindTexture
    hipBindTexture2D hipBindTextureToArray hipBindTextureToMipmappedArray hipConfigureCall
    hipCreateTextureObject hipDestroyExternalMemory hipDestroyExternalSemaphore hipDestroyTextureObject
    hipDeviceGetDefaultMemPool hipDeviceGetMemPool hipDeviceSetMemPool hipDrvMemcpy2DUnaligned
    hipDrvMemcpy3D hipDrvMemcpy3DAsync hipDrvPointerGetAttributes hipExtGetLinkTypeAndHopCount
    hipExtLaunchMultiKernelMultiDevice hipExtStreamCreateWithCUMask hipExtStreamGetCUMask hipExternalMemoryGetMappedBuffer
    hipFreeArray hipFreeMipmappedArray hipGLGetDevices hipGetChannelDesc
    hipGetMipmappedArrayLevel hipGetTextureAlignmentOffset hipGetTextureObjectResourceDesc hipGetTextureObjectResourceViewDesc
    hipGetTextureObjectTextureDesc hipGetTextureReference hipGraphAddChildGraphNode hipGraphAddDependencies
    hipGraphAddEmptyNode hipGraphAddEventRecordNode hipGraphAddEventWaitNode hipGraphAddHostNode
    hipGraphAddKernelNode hipGraphAddMemcpyNode hipGraphAddMemcpyNode1D hipGraphAddMemcpyNodeFromSymbol
    hipGraphAddMemcpyNodeToSymbol hipGraphAddMemsetNode hipGraphChildGraphNodeGetGraph hipGraphClone
    hipGraphCreate hipGraphDestroy hipGraphDestroyNode hipGraphEventRecordNodeGetEvent
    hipGraphEventRecordNodeSetEvent hipGraphEventWaitNodeGetEvent hipGraphEventWaitNodeSetEvent hipGraphExecChildGraphNodeSetParams
    hipGraphExecDestroy hipGraphExecEventRecordNodeSetEvent hipGraphExecEventWaitNodeSetEvent hipGraphExecHostNodeSetParams
    hipGraphExecKernelNodeSetParams hipGraphExecMemcpyNodeSetParams hipGraphExecMemcpyNodeSetParams1D hipGraphExecMemcpyNodeSetParamsFromSymbol
    hipGraphExecMemcpyNodeSetParamsToSymbol hipGraphExecMemsetNodeSetParams hipGraphExecUpdate hipGraphGetEdges
    hipGraphGetNodes hipGraphGetRootNodes hipGraphHostNodeGetParams hipGraphHostNodeSetParams
    hipGraphInstantiate hipGraphInstantiateWithFlags hipGraphKernelNodeGetParams hipGraphKernelNodeSetParams
    hipGraphLaunch hipGraphMemcpyNodeGetParams hipGraphMemcpyNodeSetParams hipGraphMemcpyNodeSetParams1D
    hipGraphMemcpyNodeSetParamsFromSymbol hipGraphMemcpyNodeSetParamsToSymbol hipGraphMemsetNodeGetParams hipGraphMemsetNodeSetParams
    hipGraphNodeFindInClone hipGraphNodeGetDependencies hipGraphNodeGetDependentNodes hipGraphNodeGetType
    hipGraphRemoveDependencies hipGraphicsGLRegisterBuffer hipGraphicsGLRegisterImage hipGraphicsMapResources
    hipGraphicsResourceGetMappedPointer hipGraphicsSubResourceGetMappedArray hipGraphicsUnmapResources hipGraphicsUnregisterResource
    hipImportExternalMemory hipImportExternalSemaphore hipIpcCloseMemHandle hipIpcGetEventHandle
    hipIpcGetMemHandle hipIpcOpenEventHandle hipIpcOpenMemHandle hipLaunchByPtr
    hipLaunchCooperativeKernel hipLaunchCooperativeKernelMultiDevice hipLaunchCooperativeKernel_spt
    hipMalloc3DArray hipMallocArray hipMallocFromPoolAsync
    hipMallocMipmappedArray hipMemAddressFree hipMemAddressReserve hipMemCreate
    hipMemExportToShareableHandle hipMemGetAccess hipMemGetAllocationGranularity hipMemGetAllocationPropertiesFromHandle
    hipMemImportFromShareableHandle hipMemMap hipMemMapArrayAsync hipMemPoolCreate
    hipMemPoolDestroy hipMemPoolExportPointer hipMemPoolExportToShareableHandle hipMemPoolGetAccess
    hipMemPoolGetAttribute hipMemPoolImportFromShareableHandle hipMemPoolImportPointer hipMemPoolSetAccess
    hipMemPoolSetAttribute hipMemPoolTrimTo hipMemRangeGetAttribute hipMemRangeGetAttributes
    hipMemRelease hipMemRetainAllocationHandle hipMemSetAccess hipMemUnmap
    hipMemcpy2DFromArray hipMemcpy2DFromArrayAsync hipMemcpy2DFromArray_spt hipMemcpy2DToArray
    hipMemcpy2DToArrayAsync hipMemcpy2DToArray_spt
    hipMemcpy3D_spt  hipMemcpyAtoH
    hipMemcpyFromArray  hipMemcpyHtoA hipMemcpyParam2D
    hipMemcpyParam2DAsync hipMemcpyToArray
     hipMemset3D_spt
     hipMipmappedArrayCreate hipMipmappedArrayDestroy hipMipmappedArrayGetLevel
    hipModuleGetTexRef hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags hipModuleOccupancyMaxPotentialBlockSizeWithFlags hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
    hipPointerGetAttribute hipRegisterActivityCallback hipRegisterApiCallback hipRemoveActivityCallback
    hipRemoveApiCallback hipSetupArgument hipSignalExternalSemaphoresAsync hipStreamAttachMemAsync
    hipStreamBeginCapture hipStreamEndCapture hipStreamGetCaptureInfo hipStreamGetCaptureInfo_v2
      hipStreamIsCapturing
     hipStreamUpdateCaptureDependencies  hipStreamWaitValue32
    hipStreamWaitValue64 hipStreamWriteValue32 hipStreamWriteValue64 hipTexObjectCreate
    hipTexObjectDestroy hipTexObjectGetResourceDesc hipTexObjectGetResourceViewDesc hipTexObjectGetTextureDesc
    hipTexRefGetAddress hipTexRefGetAddressMode hipTexRefGetFilterMode hipTexRefGetFlags
    hipTexRefGetFormat hipTexRefGetMaxAnisotropy hipTexRefGetMipmapFilterMode hipTexRefGetMipmapLevelBias
    hipTexRefGetMipmapLevelClamp hipTexRefSetAddress hipTexRefSetAddress2D hipTexRefSetAddressMode
    hipTexRefSetArray hipTexRefSetBorderColor hipTexRefSetFilterMode hipTexRefSetFlags
    hipTexRefSetFormat hipTexRefSetMaxAnisotropy hipTexRefSetMipmapFilterMode hipTexRefSetMipmapLevelBias
    hipTexRefSetMipmapLevelClamp hipTexRefSetMipmappedArray hipThreadExchangeStreamCaptureMode hipUnbindTexture
    hipWaitExternalSemaphoresAsync
}

unsupported_rtc! {
    hiprtcAddNameExpression hiprtcCompileProgram hiprtcCreateProgram hiprtcDestroyProgram
    hiprtcGetCode hiprtcGetCodeSize hiprtcGetLoweredName hiprtcGetProgramLog
    hiprtcGetProgramLogSize hiprtcVersion
}

/// The names above, for the test that each is refused.
pub const NAMES: &[&str] = &[
    "hipArray3DCreate",
    "hipArrayCreate",
    "hipArrayDestroy",
    "hipBindTexture",
    "hipBindTexture2D",
    "hipBindTextureToArray",
    "hipBindTextureToMipmappedArray",
    "hipConfigureCall",
    "hipCreateTextureObject",
    "hipDestroyExternalMemory",
    "hipDestroyExternalSemaphore",
    "hipDestroyTextureObject",
    "hipDeviceGetDefaultMemPool",
    "hipDeviceGetMemPool",
    "hipDeviceSetMemPool",
    "hipDrvMemcpy2DUnaligned",
    "hipDrvMemcpy3D",
    "hipDrvMemcpy3DAsync",
    "hipDrvPointerGetAttributes",
    "hipExtGetLinkTypeAndHopCount",
    "hipExtLaunchMultiKernelMultiDevice",
    "hipExtStreamCreateWithCUMask",
    "hipExtStreamGetCUMask",
    "hipExternalMemoryGetMappedBuffer",
    "hipFreeArray",
    "hipFreeMipmappedArray",
    "hipGLGetDevices",
    "hipGetChannelDesc",
    "hipGetMipmappedArrayLevel",
    "hipGetTextureAlignmentOffset",
    "hipGetTextureObjectResourceDesc",
    "hipGetTextureObjectResourceViewDesc",
    "hipGetTextureObjectTextureDesc",
    "hipGetTextureReference",
    "hipGraphAddChildGraphNode",
    "hipGraphAddDependencies",
    "hipGraphAddEmptyNode",
    "hipGraphAddEventRecordNode",
    "hipGraphAddEventWaitNode",
    "hipGraphAddHostNode",
    "hipGraphAddKernelNode",
    "hipGraphAddMemcpyNode",
    "hipGraphAddMemcpyNode1D",
    "hipGraphAddMemcpyNodeFromSymbol",
    "hipGraphAddMemcpyNodeToSymbol",
    "hipGraphAddMemsetNode",
    "hipGraphChildGraphNodeGetGraph",
    "hipGraphClone",
    "hipGraphCreate",
    "hipGraphDestroy",
    "hipGraphDestroyNode",
    "hipGraphEventRecordNodeGetEvent",
    "hipGraphEventRecordNodeSetEvent",
    "hipGraphEventWaitNodeGetEvent",
    "hipGraphEventWaitNodeSetEvent",
    "hipGraphExecChildGraphNodeSetParams",
    "hipGraphExecDestroy",
    "hipGraphExecEventRecordNodeSetEvent",
    "hipGraphExecEventWaitNodeSetEvent",
    "hipGraphExecHostNodeSetParams",
    "hipGraphExecKernelNodeSetParams",
    "hipGraphExecMemcpyNodeSetParams",
    "hipGraphExecMemcpyNodeSetParams1D",
    "hipGraphExecMemcpyNodeSetParamsFromSymbol",
    "hipGraphExecMemcpyNodeSetParamsToSymbol",
    "hipGraphExecMemsetNodeSetParams",
    "hipGraphExecUpdate",
    "hipGraphGetEdges",
    "hipGraphGetNodes",
    "hipGraphGetRootNodes",
    "hipGraphHostNodeGetParams",
    "hipGraphHostNodeSetParams",
    "hipGraphInstantiate",
    "hipGraphInstantiateWithFlags",
    "hipGraphKernelNodeGetParams",
    "hipGraphKernelNodeSetParams",
    "hipGraphLaunch",
    "hipGraphMemcpyNodeGetParams",
    "hipGraphMemcpyNodeSetParams",
    "hipGraphMemcpyNodeSetParams1D",
    "hipGraphMemcpyNodeSetParamsFromSymbol",
    "hipGraphMemcpyNodeSetParamsToSymbol",
    "hipGraphMemsetNodeGetParams",
    "hipGraphMemsetNodeSetParams",
    "hipGraphNodeFindInClone",
    "hipGraphNodeGetDependencies",
    "hipGraphNodeGetDependentNodes",
    "hipGraphNodeGetType",
    "hipGraphRemoveDependencies",
    "hipGraphicsGLRegisterBuffer",
    "hipGraphicsGLRegisterImage",
    "hipGraphicsMapResources",
    "hipGraphicsResourceGetMappedPointer",
    "hipGraphicsSubResourceGetMappedArray",
    "hipGraphicsUnmapResources",
    "hipGraphicsUnregisterResource",
    "hipImportExternalMemory",
    "hipImportExternalSemaphore",
    "hipIpcCloseMemHandle",
    "hipIpcGetEventHandle",
    "hipIpcGetMemHandle",
    "hipIpcOpenEventHandle",
    "hipIpcOpenMemHandle",
    "hipLaunchByPtr",
    "hipLaunchCooperativeKernel",
    "hipLaunchCooperativeKernelMultiDevice",
    "hipLaunchCooperativeKernel_spt",
    "hipMalloc3DArray",
    "hipMallocArray",
    "hipMallocFromPoolAsync",
    "hipMallocMipmappedArray",
    "hipMemAddressFree",
    "hipMemAddressReserve",
    "hipMemCreate",
    "hipMemExportToShareableHandle",
    "hipMemGetAccess",
    "hipMemGetAllocationGranularity",
    "hipMemGetAllocationPropertiesFromHandle",
    "hipMemImportFromShareableHandle",
    "hipMemMap",
    "hipMemMapArrayAsync",
    "hipMemPoolCreate",
    "hipMemPoolDestroy",
    "hipMemPoolExportPointer",
    "hipMemPoolExportToShareableHandle",
    "hipMemPoolGetAccess",
    "hipMemPoolGetAttribute",
    "hipMemPoolImportFromShareableHandle",
    "hipMemPoolImportPointer",
    "hipMemPoolSetAccess",
    "hipMemPoolSetAttribute",
    "hipMemPoolTrimTo",
    "hipMemRangeGetAttribute",
    "hipMemRangeGetAttributes",
    "hipMemRelease",
    "hipMemRetainAllocationHandle",
    "hipMemSetAccess",
    "hipMemUnmap",
    "hipMemcpy2DFromArray",
    "hipMemcpy2DFromArrayAsync",
    "hipMemcpy2DFromArray_spt",
    "hipMemcpy2DToArray",
    "hipMemcpy2DToArrayAsync",
    "hipMemcpy2DToArray_spt",
    "hipMemcpy3D_spt",
    "hipMemcpyAtoH",
    "hipMemcpyFromArray",
    "hipMemcpyHtoA",
    "hipMemcpyParam2D",
    "hipMemcpyParam2DAsync",
    "hipMemcpyToArray",
    "hipMemset3D_spt",
    "hipMipmappedArrayCreate",
    "hipMipmappedArrayDestroy",
    "hipMipmappedArrayGetLevel",
    "hipModuleGetTexRef",
    "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "hipModuleOccupancyMaxPotentialBlockSizeWithFlags",
    "hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "hipPointerGetAttribute",
    "hipRegisterActivityCallback",
    "hipRegisterApiCallback",
    "hipRemoveActivityCallback",
    "hipRemoveApiCallback",
    "hipSetupArgument",
    "hipSignalExternalSemaphoresAsync",
    "hipStreamAttachMemAsync",
    "hipStreamBeginCapture",
    "hipStreamEndCapture",
    "hipStreamGetCaptureInfo",
    "hipStreamGetCaptureInfo_v2",
    "hipStreamIsCapturing",
    "hipStreamUpdateCaptureDependencies",
    "hipStreamWaitValue32",
    "hipStreamWaitValue64",
    "hipStreamWriteValue32",
    "hipStreamWriteValue64",
    "hipTexObjectCreate",
    "hipTexObjectDestroy",
    "hipTexObjectGetResourceDesc",
    "hipTexObjectGetResourceViewDesc",
    "hipTexObjectGetTextureDesc",
    "hipTexRefGetAddress",
    "hipTexRefGetAddressMode",
    "hipTexRefGetFilterMode",
    "hipTexRefGetFlags",
    "hipTexRefGetFormat",
    "hipTexRefGetMaxAnisotropy",
    "hipTexRefGetMipmapFilterMode",
    "hipTexRefGetMipmapLevelBias",
    "hipTexRefGetMipmapLevelClamp",
    "hipTexRefSetAddress",
    "hipTexRefSetAddress2D",
    "hipTexRefSetAddressMode",
    "hipTexRefSetArray",
    "hipTexRefSetBorderColor",
    "hipTexRefSetFilterMode",
    "hipTexRefSetFlags",
    "hipTexRefSetFormat",
    "hipTexRefSetMaxAnisotropy",
    "hipTexRefSetMipmapFilterMode",
    "hipTexRefSetMipmapLevelBias",
    "hipTexRefSetMipmapLevelClamp",
    "hipTexRefSetMipmappedArray",
    "hipThreadExchangeStreamCaptureMode",
    "hipUnbindTexture",
    "hipWaitExternalSemaphoresAsync",
    "hiprtcAddNameExpression",
    "hiprtcCompileProgram",
    "hiprtcCreateProgram",
    "hiprtcDestroyProgram",
    "hiprtcGetCode",
    "hiprtcGetCodeSize",
    "hiprtcGetLoweredName",
    "hiprtcGetProgramLog",
    "hiprtcGetProgramLogSize",
    "hiprtcVersion",
];

/// `hipCreateSurfaceObject` (exported C++-mangled by HIP 5.2): not supported.
#[unsafe(export_name = "_Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc")]
pub extern "C" fn hipCreateSurfaceObject() -> hipError_t {
    let _ = std::panic::catch_unwind(|| refuse("hipCreateSurfaceObject"));
    crate::entry::record(hipErrorNotSupported)
}

/// `hipDestroySurfaceObject` (exported C++-mangled by HIP 5.2): not supported.
#[unsafe(export_name = "_Z23hipDestroySurfaceObjectP13__hip_surface")]
pub extern "C" fn hipDestroySurfaceObject() -> hipError_t {
    let _ = std::panic::catch_unwind(|| refuse("hipDestroySurfaceObject"));
    crate::entry::record(hipErrorNotSupported)
}

/// `__hipRegisterTexture`/`__hipRegisterSurface`: texture and surface
/// references are registered by clang's host code before `main`; accepted
/// (so the program starts) and unusable (their API is refused above).
#[unsafe(no_mangle)]
pub extern "C" fn __hipRegisterTexture() {}

/// See [`__hipRegisterTexture`].
#[unsafe(no_mangle)]
pub extern "C" fn __hipRegisterSurface() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_functions_return_not_supported_and_set_the_last_error() {
        assert!(NAMES.len() > 200, "{} names", NAMES.len());
        crate::entry::last_error(true);
        assert_eq!(hipGraphCreate(), hipErrorNotSupported);
        assert_eq!(crate::entry::last_error(true), hipErrorNotSupported);
        assert_eq!(hipMallocArray(), hipErrorNotSupported);
        assert_eq!(hiprtcCreateProgram(), HIPRTC_ERROR_INTERNAL_ERROR);
        crate::entry::last_error(true);
    }
}
