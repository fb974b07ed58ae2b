//! The slice of HIP 5.2's `hip_runtime_api.h` that prlx's HIP runtime
//! (`hip-runtime`, `libamdhip64.so.5` over the RDNA3 emulator) implements and
//! the capture shim (`preload`) interposes: error codes, `hipDeviceProp_t`,
//! `hipFuncAttributes`, `hipPointerAttribute_t`, `dim3`, the enums the
//! exported functions take, with the values of Debian's HIP 5.2 headers
//! (`/usr/include/hip`), and the signatures of the entry points the shim
//! calls ([`fns`]), which the runtime's definitions are checked against at
//! compile time. The layouts are checked against the C headers by
//! `hip-runtime/tests/abi.rs`.

#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void};

pub type hipError_t = c_int;
pub type hipDevice_t = c_int;
pub type hipDeviceAttribute_t = c_int;
pub type hipMemcpyKind = c_int;
pub type hipStream_t = *mut c_void;
pub type hipEvent_t = *mut c_void;
pub type hipModule_t = *mut c_void;
pub type hipFunction_t = *mut c_void;
pub type hipDeviceptr_t = *mut c_void;
pub type hipCtx_t = *mut c_void;

pub const hipSuccess: hipError_t = 0;
pub const hipErrorInvalidValue: hipError_t = 1;
pub const hipErrorMemoryAllocation: hipError_t = 2;
pub const hipErrorOutOfMemory: hipError_t = 2;
pub const hipErrorInitializationError: hipError_t = 3;
pub const hipErrorNotInitialized: hipError_t = 3;
pub const hipErrorDeinitialized: hipError_t = 4;
pub const hipErrorProfilerDisabled: hipError_t = 5;
pub const hipErrorProfilerNotInitialized: hipError_t = 6;
pub const hipErrorProfilerAlreadyStarted: hipError_t = 7;
pub const hipErrorProfilerAlreadyStopped: hipError_t = 8;
pub const hipErrorInvalidConfiguration: hipError_t = 9;
pub const hipErrorInvalidPitchValue: hipError_t = 12;
pub const hipErrorInvalidSymbol: hipError_t = 13;
pub const hipErrorInvalidDevicePointer: hipError_t = 17;
pub const hipErrorInvalidMemcpyDirection: hipError_t = 21;
pub const hipErrorInsufficientDriver: hipError_t = 35;
pub const hipErrorMissingConfiguration: hipError_t = 52;
pub const hipErrorPriorLaunchFailure: hipError_t = 53;
pub const hipErrorInvalidDeviceFunction: hipError_t = 98;
pub const hipErrorNoDevice: hipError_t = 100;
pub const hipErrorInvalidDevice: hipError_t = 101;
pub const hipErrorInvalidImage: hipError_t = 200;
pub const hipErrorInvalidContext: hipError_t = 201;
pub const hipErrorContextAlreadyCurrent: hipError_t = 202;
pub const hipErrorMapBufferObjectFailed: hipError_t = 205;
pub const hipErrorMapFailed: hipError_t = 205;
pub const hipErrorUnmapFailed: hipError_t = 206;
pub const hipErrorArrayIsMapped: hipError_t = 207;
pub const hipErrorAlreadyMapped: hipError_t = 208;
pub const hipErrorNoBinaryForGpu: hipError_t = 209;
pub const hipErrorAlreadyAcquired: hipError_t = 210;
pub const hipErrorNotMapped: hipError_t = 211;
pub const hipErrorNotMappedAsArray: hipError_t = 212;
pub const hipErrorNotMappedAsPointer: hipError_t = 213;
pub const hipErrorECCNotCorrectable: hipError_t = 214;
pub const hipErrorUnsupportedLimit: hipError_t = 215;
pub const hipErrorContextAlreadyInUse: hipError_t = 216;
pub const hipErrorPeerAccessUnsupported: hipError_t = 217;
pub const hipErrorInvalidKernelFile: hipError_t = 218;
pub const hipErrorInvalidGraphicsContext: hipError_t = 219;
pub const hipErrorInvalidSource: hipError_t = 300;
pub const hipErrorFileNotFound: hipError_t = 301;
pub const hipErrorSharedObjectSymbolNotFound: hipError_t = 302;
pub const hipErrorSharedObjectInitFailed: hipError_t = 303;
pub const hipErrorOperatingSystem: hipError_t = 304;
pub const hipErrorInvalidHandle: hipError_t = 400;
pub const hipErrorInvalidResourceHandle: hipError_t = 400;
pub const hipErrorIllegalState: hipError_t = 401;
pub const hipErrorNotFound: hipError_t = 500;
pub const hipErrorNotReady: hipError_t = 600;
pub const hipErrorIllegalAddress: hipError_t = 700;
pub const hipErrorLaunchOutOfResources: hipError_t = 701;
pub const hipErrorLaunchTimeOut: hipError_t = 702;
pub const hipErrorPeerAccessAlreadyEnabled: hipError_t = 704;
pub const hipErrorPeerAccessNotEnabled: hipError_t = 705;
pub const hipErrorSetOnActiveProcess: hipError_t = 708;
pub const hipErrorContextIsDestroyed: hipError_t = 709;
pub const hipErrorAssert: hipError_t = 710;
pub const hipErrorHostMemoryAlreadyRegistered: hipError_t = 712;
pub const hipErrorHostMemoryNotRegistered: hipError_t = 713;
pub const hipErrorLaunchFailure: hipError_t = 719;
pub const hipErrorCooperativeLaunchTooLarge: hipError_t = 720;
pub const hipErrorNotSupported: hipError_t = 801;
pub const hipErrorStreamCaptureUnsupported: hipError_t = 900;
pub const hipErrorStreamCaptureInvalidated: hipError_t = 901;
pub const hipErrorStreamCaptureMerge: hipError_t = 902;
pub const hipErrorStreamCaptureUnmatched: hipError_t = 903;
pub const hipErrorStreamCaptureUnjoined: hipError_t = 904;
pub const hipErrorStreamCaptureIsolation: hipError_t = 905;
pub const hipErrorStreamCaptureImplicit: hipError_t = 906;
pub const hipErrorCapturedEvent: hipError_t = 907;
pub const hipErrorStreamCaptureWrongThread: hipError_t = 908;
pub const hipErrorGraphExecUpdateFailure: hipError_t = 910;
pub const hipErrorUnknown: hipError_t = 999;
pub const hipErrorRuntimeMemory: hipError_t = 1052;
pub const hipErrorRuntimeOther: hipError_t = 1053;

/// `hipGetErrorName`'s (and HIP 5.2's `hipGetErrorString`'s) text for each
/// code; where two names share a value, the one HIP 5.2 prints.
pub const ERROR_NAMES: &[(hipError_t, &std::ffi::CStr)] = &[
    (hipSuccess, c"hipSuccess"),
    (hipErrorInvalidValue, c"hipErrorInvalidValue"),
    (hipErrorOutOfMemory, c"hipErrorOutOfMemory"),
    (hipErrorNotInitialized, c"hipErrorNotInitialized"),
    (hipErrorDeinitialized, c"hipErrorDeinitialized"),
    (hipErrorProfilerDisabled, c"hipErrorProfilerDisabled"),
    (
        hipErrorProfilerNotInitialized,
        c"hipErrorProfilerNotInitialized",
    ),
    (
        hipErrorProfilerAlreadyStarted,
        c"hipErrorProfilerAlreadyStarted",
    ),
    (
        hipErrorProfilerAlreadyStopped,
        c"hipErrorProfilerAlreadyStopped",
    ),
    (
        hipErrorInvalidConfiguration,
        c"hipErrorInvalidConfiguration",
    ),
    (hipErrorInvalidPitchValue, c"hipErrorInvalidPitchValue"),
    (hipErrorInvalidSymbol, c"hipErrorInvalidSymbol"),
    (
        hipErrorInvalidDevicePointer,
        c"hipErrorInvalidDevicePointer",
    ),
    (
        hipErrorInvalidMemcpyDirection,
        c"hipErrorInvalidMemcpyDirection",
    ),
    (hipErrorInsufficientDriver, c"hipErrorInsufficientDriver"),
    (
        hipErrorMissingConfiguration,
        c"hipErrorMissingConfiguration",
    ),
    (hipErrorPriorLaunchFailure, c"hipErrorPriorLaunchFailure"),
    (
        hipErrorInvalidDeviceFunction,
        c"hipErrorInvalidDeviceFunction",
    ),
    (hipErrorNoDevice, c"hipErrorNoDevice"),
    (hipErrorInvalidDevice, c"hipErrorInvalidDevice"),
    (hipErrorInvalidImage, c"hipErrorInvalidImage"),
    (hipErrorInvalidContext, c"hipErrorInvalidContext"),
    (
        hipErrorContextAlreadyCurrent,
        c"hipErrorContextAlreadyCurrent",
    ),
    (hipErrorMapFailed, c"hipErrorMapFailed"),
    (hipErrorUnmapFailed, c"hipErrorUnmapFailed"),
    (hipErrorArrayIsMapped, c"hipErrorArrayIsMapped"),
    (hipErrorAlreadyMapped, c"hipErrorAlreadyMapped"),
    (hipErrorNoBinaryForGpu, c"hipErrorNoBinaryForGpu"),
    (hipErrorAlreadyAcquired, c"hipErrorAlreadyAcquired"),
    (hipErrorNotMapped, c"hipErrorNotMapped"),
    (hipErrorNotMappedAsArray, c"hipErrorNotMappedAsArray"),
    (hipErrorNotMappedAsPointer, c"hipErrorNotMappedAsPointer"),
    (hipErrorECCNotCorrectable, c"hipErrorECCNotCorrectable"),
    (hipErrorUnsupportedLimit, c"hipErrorUnsupportedLimit"),
    (hipErrorContextAlreadyInUse, c"hipErrorContextAlreadyInUse"),
    (
        hipErrorPeerAccessUnsupported,
        c"hipErrorPeerAccessUnsupported",
    ),
    (hipErrorInvalidKernelFile, c"hipErrorInvalidKernelFile"),
    (
        hipErrorInvalidGraphicsContext,
        c"hipErrorInvalidGraphicsContext",
    ),
    (hipErrorInvalidSource, c"hipErrorInvalidSource"),
    (hipErrorFileNotFound, c"hipErrorFileNotFound"),
    (
        hipErrorSharedObjectSymbolNotFound,
        c"hipErrorSharedObjectSymbolNotFound",
    ),
    (
        hipErrorSharedObjectInitFailed,
        c"hipErrorSharedObjectInitFailed",
    ),
    (hipErrorOperatingSystem, c"hipErrorOperatingSystem"),
    (hipErrorInvalidHandle, c"hipErrorInvalidHandle"),
    (hipErrorIllegalState, c"hipErrorIllegalState"),
    (hipErrorNotFound, c"hipErrorNotFound"),
    (hipErrorNotReady, c"hipErrorNotReady"),
    (hipErrorIllegalAddress, c"hipErrorIllegalAddress"),
    (
        hipErrorLaunchOutOfResources,
        c"hipErrorLaunchOutOfResources",
    ),
    (hipErrorLaunchTimeOut, c"hipErrorLaunchTimeOut"),
    (
        hipErrorPeerAccessAlreadyEnabled,
        c"hipErrorPeerAccessAlreadyEnabled",
    ),
    (
        hipErrorPeerAccessNotEnabled,
        c"hipErrorPeerAccessNotEnabled",
    ),
    (hipErrorSetOnActiveProcess, c"hipErrorSetOnActiveProcess"),
    (hipErrorContextIsDestroyed, c"hipErrorContextIsDestroyed"),
    (hipErrorAssert, c"hipErrorAssert"),
    (
        hipErrorHostMemoryAlreadyRegistered,
        c"hipErrorHostMemoryAlreadyRegistered",
    ),
    (
        hipErrorHostMemoryNotRegistered,
        c"hipErrorHostMemoryNotRegistered",
    ),
    (hipErrorLaunchFailure, c"hipErrorLaunchFailure"),
    (
        hipErrorCooperativeLaunchTooLarge,
        c"hipErrorCooperativeLaunchTooLarge",
    ),
    (hipErrorNotSupported, c"hipErrorNotSupported"),
    (
        hipErrorStreamCaptureUnsupported,
        c"hipErrorStreamCaptureUnsupported",
    ),
    (
        hipErrorStreamCaptureInvalidated,
        c"hipErrorStreamCaptureInvalidated",
    ),
    (hipErrorStreamCaptureMerge, c"hipErrorStreamCaptureMerge"),
    (
        hipErrorStreamCaptureUnmatched,
        c"hipErrorStreamCaptureUnmatched",
    ),
    (
        hipErrorStreamCaptureUnjoined,
        c"hipErrorStreamCaptureUnjoined",
    ),
    (
        hipErrorStreamCaptureIsolation,
        c"hipErrorStreamCaptureIsolation",
    ),
    (
        hipErrorStreamCaptureImplicit,
        c"hipErrorStreamCaptureImplicit",
    ),
    (hipErrorCapturedEvent, c"hipErrorCapturedEvent"),
    (
        hipErrorStreamCaptureWrongThread,
        c"hipErrorStreamCaptureWrongThread",
    ),
    (
        hipErrorGraphExecUpdateFailure,
        c"hipErrorGraphExecUpdateFailure",
    ),
    (hipErrorUnknown, c"hipErrorUnknown"),
    (hipErrorRuntimeMemory, c"hipErrorRuntimeMemory"),
    (hipErrorRuntimeOther, c"hipErrorRuntimeOther"),
];

// hipMemcpyKind
pub const hipMemcpyHostToHost: hipMemcpyKind = 0;
pub const hipMemcpyHostToDevice: hipMemcpyKind = 1;
pub const hipMemcpyDeviceToHost: hipMemcpyKind = 2;
pub const hipMemcpyDeviceToDevice: hipMemcpyKind = 3;
pub const hipMemcpyDefault: hipMemcpyKind = 4;

// hipMemoryType
pub const hipMemoryTypeHost: c_int = 0;
pub const hipMemoryTypeDevice: c_int = 1;

// hipModuleLaunchKernel's `extra` array markers.
pub const HIP_LAUNCH_PARAM_BUFFER_POINTER: usize = 0x01;
pub const HIP_LAUNCH_PARAM_BUFFER_SIZE: usize = 0x02;
pub const HIP_LAUNCH_PARAM_END: usize = 0x03;

// hipFunction_attribute (hipFuncGetAttribute).
pub const HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: c_int = 0;
pub const HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: c_int = 1;
pub const HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: c_int = 2;
pub const HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: c_int = 3;
pub const HIP_FUNC_ATTRIBUTE_NUM_REGS: c_int = 4;
pub const HIP_FUNC_ATTRIBUTE_PTX_VERSION: c_int = 5;
pub const HIP_FUNC_ATTRIBUTE_BINARY_VERSION: c_int = 6;
pub const HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA: c_int = 7;
pub const HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;
pub const HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: c_int = 9;

// hipDeviceAttribute_t
pub const hipDeviceAttributeCudaCompatibleBegin: hipDeviceAttribute_t = 0;
pub const hipDeviceAttributeEccEnabled: hipDeviceAttribute_t = 0;
pub const hipDeviceAttributeAccessPolicyMaxWindowSize: hipDeviceAttribute_t = 1;
pub const hipDeviceAttributeAsyncEngineCount: hipDeviceAttribute_t = 2;
pub const hipDeviceAttributeCanMapHostMemory: hipDeviceAttribute_t = 3;
pub const hipDeviceAttributeCanUseHostPointerForRegisteredMem: hipDeviceAttribute_t = 4;
pub const hipDeviceAttributeClockRate: hipDeviceAttribute_t = 5;
pub const hipDeviceAttributeComputeMode: hipDeviceAttribute_t = 6;
pub const hipDeviceAttributeComputePreemptionSupported: hipDeviceAttribute_t = 7;
pub const hipDeviceAttributeConcurrentKernels: hipDeviceAttribute_t = 8;
pub const hipDeviceAttributeConcurrentManagedAccess: hipDeviceAttribute_t = 9;
pub const hipDeviceAttributeCooperativeLaunch: hipDeviceAttribute_t = 10;
pub const hipDeviceAttributeCooperativeMultiDeviceLaunch: hipDeviceAttribute_t = 11;
pub const hipDeviceAttributeDeviceOverlap: hipDeviceAttribute_t = 12;
pub const hipDeviceAttributeDirectManagedMemAccessFromHost: hipDeviceAttribute_t = 13;
pub const hipDeviceAttributeGlobalL1CacheSupported: hipDeviceAttribute_t = 14;
pub const hipDeviceAttributeHostNativeAtomicSupported: hipDeviceAttribute_t = 15;
pub const hipDeviceAttributeIntegrated: hipDeviceAttribute_t = 16;
pub const hipDeviceAttributeIsMultiGpuBoard: hipDeviceAttribute_t = 17;
pub const hipDeviceAttributeKernelExecTimeout: hipDeviceAttribute_t = 18;
pub const hipDeviceAttributeL2CacheSize: hipDeviceAttribute_t = 19;
pub const hipDeviceAttributeLocalL1CacheSupported: hipDeviceAttribute_t = 20;
pub const hipDeviceAttributeLuid: hipDeviceAttribute_t = 21;
pub const hipDeviceAttributeLuidDeviceNodeMask: hipDeviceAttribute_t = 22;
pub const hipDeviceAttributeComputeCapabilityMajor: hipDeviceAttribute_t = 23;
pub const hipDeviceAttributeManagedMemory: hipDeviceAttribute_t = 24;
pub const hipDeviceAttributeMaxBlocksPerMultiProcessor: hipDeviceAttribute_t = 25;
pub const hipDeviceAttributeMaxBlockDimX: hipDeviceAttribute_t = 26;
pub const hipDeviceAttributeMaxBlockDimY: hipDeviceAttribute_t = 27;
pub const hipDeviceAttributeMaxBlockDimZ: hipDeviceAttribute_t = 28;
pub const hipDeviceAttributeMaxGridDimX: hipDeviceAttribute_t = 29;
pub const hipDeviceAttributeMaxGridDimY: hipDeviceAttribute_t = 30;
pub const hipDeviceAttributeMaxGridDimZ: hipDeviceAttribute_t = 31;
pub const hipDeviceAttributeMaxSurface1D: hipDeviceAttribute_t = 32;
pub const hipDeviceAttributeMaxSurface1DLayered: hipDeviceAttribute_t = 33;
pub const hipDeviceAttributeMaxSurface2D: hipDeviceAttribute_t = 34;
pub const hipDeviceAttributeMaxSurface2DLayered: hipDeviceAttribute_t = 35;
pub const hipDeviceAttributeMaxSurface3D: hipDeviceAttribute_t = 36;
pub const hipDeviceAttributeMaxSurfaceCubemap: hipDeviceAttribute_t = 37;
pub const hipDeviceAttributeMaxSurfaceCubemapLayered: hipDeviceAttribute_t = 38;
pub const hipDeviceAttributeMaxTexture1DWidth: hipDeviceAttribute_t = 39;
pub const hipDeviceAttributeMaxTexture1DLayered: hipDeviceAttribute_t = 40;
pub const hipDeviceAttributeMaxTexture1DLinear: hipDeviceAttribute_t = 41;
pub const hipDeviceAttributeMaxTexture1DMipmap: hipDeviceAttribute_t = 42;
pub const hipDeviceAttributeMaxTexture2DWidth: hipDeviceAttribute_t = 43;
pub const hipDeviceAttributeMaxTexture2DHeight: hipDeviceAttribute_t = 44;
pub const hipDeviceAttributeMaxTexture2DGather: hipDeviceAttribute_t = 45;
pub const hipDeviceAttributeMaxTexture2DLayered: hipDeviceAttribute_t = 46;
pub const hipDeviceAttributeMaxTexture2DLinear: hipDeviceAttribute_t = 47;
pub const hipDeviceAttributeMaxTexture2DMipmap: hipDeviceAttribute_t = 48;
pub const hipDeviceAttributeMaxTexture3DWidth: hipDeviceAttribute_t = 49;
pub const hipDeviceAttributeMaxTexture3DHeight: hipDeviceAttribute_t = 50;
pub const hipDeviceAttributeMaxTexture3DDepth: hipDeviceAttribute_t = 51;
pub const hipDeviceAttributeMaxTexture3DAlt: hipDeviceAttribute_t = 52;
pub const hipDeviceAttributeMaxTextureCubemap: hipDeviceAttribute_t = 53;
pub const hipDeviceAttributeMaxTextureCubemapLayered: hipDeviceAttribute_t = 54;
pub const hipDeviceAttributeMaxThreadsDim: hipDeviceAttribute_t = 55;
pub const hipDeviceAttributeMaxThreadsPerBlock: hipDeviceAttribute_t = 56;
pub const hipDeviceAttributeMaxThreadsPerMultiProcessor: hipDeviceAttribute_t = 57;
pub const hipDeviceAttributeMaxPitch: hipDeviceAttribute_t = 58;
pub const hipDeviceAttributeMemoryBusWidth: hipDeviceAttribute_t = 59;
pub const hipDeviceAttributeMemoryClockRate: hipDeviceAttribute_t = 60;
pub const hipDeviceAttributeComputeCapabilityMinor: hipDeviceAttribute_t = 61;
pub const hipDeviceAttributeMultiGpuBoardGroupID: hipDeviceAttribute_t = 62;
pub const hipDeviceAttributeMultiprocessorCount: hipDeviceAttribute_t = 63;
pub const hipDeviceAttributeName: hipDeviceAttribute_t = 64;
pub const hipDeviceAttributePageableMemoryAccess: hipDeviceAttribute_t = 65;
pub const hipDeviceAttributePageableMemoryAccessUsesHostPageTables: hipDeviceAttribute_t = 66;
pub const hipDeviceAttributePciBusId: hipDeviceAttribute_t = 67;
pub const hipDeviceAttributePciDeviceId: hipDeviceAttribute_t = 68;
pub const hipDeviceAttributePciDomainID: hipDeviceAttribute_t = 69;
pub const hipDeviceAttributePersistingL2CacheMaxSize: hipDeviceAttribute_t = 70;
pub const hipDeviceAttributeMaxRegistersPerBlock: hipDeviceAttribute_t = 71;
pub const hipDeviceAttributeMaxRegistersPerMultiprocessor: hipDeviceAttribute_t = 72;
pub const hipDeviceAttributeReservedSharedMemPerBlock: hipDeviceAttribute_t = 73;
pub const hipDeviceAttributeMaxSharedMemoryPerBlock: hipDeviceAttribute_t = 74;
pub const hipDeviceAttributeSharedMemPerBlockOptin: hipDeviceAttribute_t = 75;
pub const hipDeviceAttributeSharedMemPerMultiprocessor: hipDeviceAttribute_t = 76;
pub const hipDeviceAttributeSingleToDoublePrecisionPerfRatio: hipDeviceAttribute_t = 77;
pub const hipDeviceAttributeStreamPrioritiesSupported: hipDeviceAttribute_t = 78;
pub const hipDeviceAttributeSurfaceAlignment: hipDeviceAttribute_t = 79;
pub const hipDeviceAttributeTccDriver: hipDeviceAttribute_t = 80;
pub const hipDeviceAttributeTextureAlignment: hipDeviceAttribute_t = 81;
pub const hipDeviceAttributeTexturePitchAlignment: hipDeviceAttribute_t = 82;
pub const hipDeviceAttributeTotalConstantMemory: hipDeviceAttribute_t = 83;
pub const hipDeviceAttributeTotalGlobalMem: hipDeviceAttribute_t = 84;
pub const hipDeviceAttributeUnifiedAddressing: hipDeviceAttribute_t = 85;
pub const hipDeviceAttributeUuid: hipDeviceAttribute_t = 86;
pub const hipDeviceAttributeWarpSize: hipDeviceAttribute_t = 87;
pub const hipDeviceAttributeMemoryPoolsSupported: hipDeviceAttribute_t = 88;
pub const hipDeviceAttributeCudaCompatibleEnd: hipDeviceAttribute_t = 9999;
pub const hipDeviceAttributeAmdSpecificBegin: hipDeviceAttribute_t = 10000;
pub const hipDeviceAttributeClockInstructionRate: hipDeviceAttribute_t = 10000;
pub const hipDeviceAttributeArch: hipDeviceAttribute_t = 10001;
pub const hipDeviceAttributeMaxSharedMemoryPerMultiprocessor: hipDeviceAttribute_t = 10002;
pub const hipDeviceAttributeGcnArch: hipDeviceAttribute_t = 10003;
pub const hipDeviceAttributeGcnArchName: hipDeviceAttribute_t = 10004;
pub const hipDeviceAttributeHdpMemFlushCntl: hipDeviceAttribute_t = 10005;
pub const hipDeviceAttributeHdpRegFlushCntl: hipDeviceAttribute_t = 10006;
pub const hipDeviceAttributeCooperativeMultiDeviceUnmatchedFunc: hipDeviceAttribute_t = 10007;
pub const hipDeviceAttributeCooperativeMultiDeviceUnmatchedGridDim: hipDeviceAttribute_t = 10008;
pub const hipDeviceAttributeCooperativeMultiDeviceUnmatchedBlockDim: hipDeviceAttribute_t = 10009;
pub const hipDeviceAttributeCooperativeMultiDeviceUnmatchedSharedMem: hipDeviceAttribute_t = 10010;
pub const hipDeviceAttributeIsLargeBar: hipDeviceAttribute_t = 10011;
pub const hipDeviceAttributeAsicRevision: hipDeviceAttribute_t = 10012;
pub const hipDeviceAttributeCanUseStreamWaitValue: hipDeviceAttribute_t = 10013;
pub const hipDeviceAttributeImageSupport: hipDeviceAttribute_t = 10014;
pub const hipDeviceAttributePhysicalMultiProcessorCount: hipDeviceAttribute_t = 10015;
pub const hipDeviceAttributeFineGrainSupport: hipDeviceAttribute_t = 10016;
pub const hipDeviceAttributeAmdSpecificEnd: hipDeviceAttribute_t = 19999;
pub const hipDeviceAttributeVendorSpecificBegin: hipDeviceAttribute_t = 20000;

/// `dim3`, passed by value to the launch functions.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct dim3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

/// `hipDeviceProp_t` of HIP 5.2 (no `R0600` suffix yet). `arch` is
/// `hipDeviceArch_t`, 17 one-bit fields in one `unsigned`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipDeviceProp_t {
    pub name: [c_char; 256],
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: c_int,
    pub warpSize: c_int,
    pub maxThreadsPerBlock: c_int,
    pub maxThreadsDim: [c_int; 3],
    pub maxGridSize: [c_int; 3],
    pub clockRate: c_int,
    pub memoryClockRate: c_int,
    pub memoryBusWidth: c_int,
    pub totalConstMem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub multiProcessorCount: c_int,
    pub l2CacheSize: c_int,
    pub maxThreadsPerMultiProcessor: c_int,
    pub computeMode: c_int,
    pub clockInstructionRate: c_int,
    pub arch: c_uint,
    pub concurrentKernels: c_int,
    pub pciDomainID: c_int,
    pub pciBusID: c_int,
    pub pciDeviceID: c_int,
    pub maxSharedMemoryPerMultiProcessor: usize,
    pub isMultiGpuBoard: c_int,
    pub canMapHostMemory: c_int,
    pub gcnArch: c_int,
    pub gcnArchName: [c_char; 256],
    pub integrated: c_int,
    pub cooperativeLaunch: c_int,
    pub cooperativeMultiDeviceLaunch: c_int,
    pub maxTexture1DLinear: c_int,
    pub maxTexture1D: c_int,
    pub maxTexture2D: [c_int; 2],
    pub maxTexture3D: [c_int; 3],
    pub hdpMemFlushCntl: *mut c_uint,
    pub hdpRegFlushCntl: *mut c_uint,
    pub memPitch: usize,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub kernelExecTimeoutEnabled: c_int,
    pub ECCEnabled: c_int,
    pub tccDriver: c_int,
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    pub isLargeBar: c_int,
    pub asicRevision: c_int,
    pub managedMemory: c_int,
    pub directManagedMemAccessFromHost: c_int,
    pub concurrentManagedAccess: c_int,
    pub pageableMemoryAccess: c_int,
    pub pageableMemoryAccessUsesHostPageTables: c_int,
}

/// `hipFuncAttributes`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hipFuncAttributes {
    pub binaryVersion: c_int,
    pub cacheModeCA: c_int,
    pub constSizeBytes: usize,
    pub localSizeBytes: usize,
    pub maxDynamicSharedSizeBytes: c_int,
    pub maxThreadsPerBlock: c_int,
    pub numRegs: c_int,
    pub preferredShmemCarveout: c_int,
    pub ptxVersion: c_int,
    pub sharedSizeBytes: usize,
}

/// `hipPointerAttribute_t` of HIP 5.2.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipPointerAttribute_t {
    pub memoryType: c_int,
    pub device: c_int,
    pub devicePointer: *mut c_void,
    pub hostPointer: *mut c_void,
    pub isManaged: c_int,
    pub allocationFlags: c_uint,
}

/// The wrapper `__hipRegisterFatBinary` receives (`__CudaFatBinaryWrapper`
/// in clang's CGCUDANV.cpp): magic `HIPF`, version 1, the offload bundle.
#[repr(C)]
pub struct FatbinWrapper {
    pub magic: c_uint,
    pub version: c_uint,
    pub binary: *const c_void,
    pub reserved: *const c_void,
}

/// `__hipFatMAGIC2`, "HIPF" little-endian.
pub const HIP_FATBIN_MAGIC: c_uint = 0x4849_5046;

/// `hipPitchedPtr`: pitched linear memory (`hipMalloc3D`, `hipMemcpy3D`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipPitchedPtr {
    pub ptr: *mut c_void,
    /// Bytes from one row to the next.
    pub pitch: usize,
    /// Row width, in bytes for linear memory.
    pub xsize: usize,
    /// Rows per slice.
    pub ysize: usize,
}

/// `hipExtent`: width (bytes, for linear memory), height and depth.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipExtent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// `hipPos`: an offset (x in bytes for linear memory).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipPos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

/// `hipMemcpy3DParms`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMemcpy3DParms {
    pub srcArray: *mut c_void,
    pub srcPos: hipPos,
    pub srcPtr: hipPitchedPtr,
    pub dstArray: *mut c_void,
    pub dstPos: hipPos,
    pub dstPtr: hipPitchedPtr,
    pub extent: hipExtent,
    pub kind: hipMemcpyKind,
}

/// The signatures of the HIP entry points the shim wraps or calls, as
/// `hip_runtime_api.h` (and clang's host code, for the registration
/// functions) declares them. `hip-runtime` checks its definitions against
/// these (`hip-runtime/src/abi.rs`), so both sides share one ABI.
pub mod fns {
    use super::*;

    pub type FnMalloc = unsafe extern "C" fn(*mut *mut c_void, usize) -> hipError_t;
    pub type FnFree = unsafe extern "C" fn(*mut c_void) -> hipError_t;
    pub type FnMemsetD8 = unsafe extern "C" fn(hipDeviceptr_t, u8, usize) -> hipError_t;
    pub type FnMemsetD8Async =
        unsafe extern "C" fn(hipDeviceptr_t, u8, usize, hipStream_t) -> hipError_t;
    pub type FnMemcpyHtoD = unsafe extern "C" fn(hipDeviceptr_t, *mut c_void, usize) -> hipError_t;
    pub type FnMemcpyHtoDAsync =
        unsafe extern "C" fn(hipDeviceptr_t, *mut c_void, usize, hipStream_t) -> hipError_t;
    pub type FnMemcpyDtoH = unsafe extern "C" fn(*mut c_void, hipDeviceptr_t, usize) -> hipError_t;
    pub type FnMemcpyDtoHAsync =
        unsafe extern "C" fn(*mut c_void, hipDeviceptr_t, usize, hipStream_t) -> hipError_t;
    pub type FnStreamSynchronize = unsafe extern "C" fn(hipStream_t) -> hipError_t;
    pub type FnModuleGetGlobal = unsafe extern "C" fn(
        *mut hipDeviceptr_t,
        *mut usize,
        hipModule_t,
        *const c_char,
    ) -> hipError_t;
    pub type FnModuleLoad = unsafe extern "C" fn(*mut hipModule_t, *const c_char) -> hipError_t;
    pub type FnModuleLoadData = unsafe extern "C" fn(*mut hipModule_t, *const c_void) -> hipError_t;
    pub type FnModuleLoadDataEx = unsafe extern "C" fn(
        *mut hipModule_t,
        *const c_void,
        c_uint,
        *mut c_int,
        *mut *mut c_void,
    ) -> hipError_t;
    pub type FnModuleUnload = unsafe extern "C" fn(hipModule_t) -> hipError_t;
    pub type FnModuleGetFunction =
        unsafe extern "C" fn(*mut hipFunction_t, hipModule_t, *const c_char) -> hipError_t;
    pub type FnModuleLaunchKernel = unsafe extern "C" fn(
        hipFunction_t,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        hipStream_t,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> hipError_t;
    /// `hipLaunchKernel` and `hipLaunchKernel_spt`.
    pub type FnLaunchKernel = unsafe extern "C" fn(
        *const c_void,
        dim3,
        dim3,
        *mut *mut c_void,
        usize,
        hipStream_t,
    ) -> hipError_t;
    pub type FnRegisterFatBinary = unsafe extern "C" fn(*const c_void) -> *mut *mut c_void;
    /// `__hipRegisterFunction(modules, host function, device function,
    /// device name, thread limit, tid, bid, block dim, grid dim, warp size)`.
    pub type FnRegisterFunction = unsafe extern "C" fn(
        *mut *mut c_void,
        *const c_void,
        *mut c_char,
        *const c_char,
        c_uint,
        *mut c_void,
        *mut c_void,
        *mut dim3,
        *mut dim3,
        *mut c_int,
    );
    /// `__hipRegisterVar(modules, host variable, device variable, device
    /// name, extern, size, constant, global)`.
    pub type FnRegisterVar = unsafe extern "C" fn(
        *mut *mut c_void,
        *mut c_void,
        *mut c_char,
        *const c_char,
        c_int,
        usize,
        c_int,
        c_int,
    );
    pub type FnGetSymbolAddress =
        unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> hipError_t;
    pub type FnGetSymbolSize = unsafe extern "C" fn(*mut usize, *const c_void) -> hipError_t;
    /// `hipGetLastError`, `hipPeekAtLastError`.
    pub type FnLastError = unsafe extern "C" fn() -> hipError_t;
}
