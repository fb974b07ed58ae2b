//! `CUresult` names and descriptions for `cuGetErrorName`/`cuGetErrorString`.
//!
//! The table was generated from the `cudaError_enum` definition in CUDA
//! 12.9's `cuda.h`: every value, its name, and the first sentence of the
//! header's description of it. The strings are NUL-terminated so the C side
//! can borrow them for the life of the process.

use std::ffi::c_char;

/// `(value, name, description)`, ordered by value.
const TABLE: &[(u32, &str, &str)] = &[
    (
        0,
        "CUDA_SUCCESS\0",
        "The API call returned with no errors.\0",
    ),
    (
        1,
        "CUDA_ERROR_INVALID_VALUE\0",
        "This indicates that one or more of the parameters passed to the API call is not within an acceptable range of values.\0",
    ),
    (
        2,
        "CUDA_ERROR_OUT_OF_MEMORY\0",
        "The API call failed because it was unable to allocate enough memory or other resources to perform the requested operation.\0",
    ),
    (
        3,
        "CUDA_ERROR_NOT_INITIALIZED\0",
        "This indicates that the CUDA driver has not been initialized with cuInit() or that initialization has failed.\0",
    ),
    (
        4,
        "CUDA_ERROR_DEINITIALIZED\0",
        "This indicates that the CUDA driver is in the process of shutting down.\0",
    ),
    (
        5,
        "CUDA_ERROR_PROFILER_DISABLED\0",
        "This indicates profiler is not initialized for this run.\0",
    ),
    (
        6,
        "CUDA_ERROR_PROFILER_NOT_INITIALIZED\0",
        "Deprecated: this error return is deprecated as of CUDA 5.0.\0",
    ),
    (
        7,
        "CUDA_ERROR_PROFILER_ALREADY_STARTED\0",
        "Deprecated: this error return is deprecated as of CUDA 5.0.\0",
    ),
    (
        8,
        "CUDA_ERROR_PROFILER_ALREADY_STOPPED\0",
        "Deprecated: this error return is deprecated as of CUDA 5.0.\0",
    ),
    (
        34,
        "CUDA_ERROR_STUB_LIBRARY\0",
        "This indicates that the CUDA driver that the application has loaded is a stub library.\0",
    ),
    (
        46,
        "CUDA_ERROR_DEVICE_UNAVAILABLE\0",
        "This indicates that requested CUDA device is unavailable at the current time.\0",
    ),
    (
        100,
        "CUDA_ERROR_NO_DEVICE\0",
        "This indicates that no CUDA-capable devices were detected by the installed CUDA driver.\0",
    ),
    (
        101,
        "CUDA_ERROR_INVALID_DEVICE\0",
        "This indicates that the device ordinal supplied by the user does not correspond to a valid CUDA device or that the action requested is invalid for the specified device.\0",
    ),
    (
        102,
        "CUDA_ERROR_DEVICE_NOT_LICENSED\0",
        "This error indicates that the Grid license is not applied.\0",
    ),
    (
        200,
        "CUDA_ERROR_INVALID_IMAGE\0",
        "This indicates that the device kernel image is invalid.\0",
    ),
    (
        201,
        "CUDA_ERROR_INVALID_CONTEXT\0",
        "This most frequently indicates that there is no context bound to the current thread.\0",
    ),
    (
        202,
        "CUDA_ERROR_CONTEXT_ALREADY_CURRENT\0",
        "This indicated that the context being supplied as a parameter to the API call was already the active context.\0",
    ),
    (
        205,
        "CUDA_ERROR_MAP_FAILED\0",
        "This indicates that a map or register operation has failed.\0",
    ),
    (
        206,
        "CUDA_ERROR_UNMAP_FAILED\0",
        "This indicates that an unmap or unregister operation has failed.\0",
    ),
    (
        207,
        "CUDA_ERROR_ARRAY_IS_MAPPED\0",
        "This indicates that the specified array is currently mapped and thus cannot be destroyed.\0",
    ),
    (
        208,
        "CUDA_ERROR_ALREADY_MAPPED\0",
        "This indicates that the resource is already mapped.\0",
    ),
    (
        209,
        "CUDA_ERROR_NO_BINARY_FOR_GPU\0",
        "This indicates that there is no kernel image available that is suitable for the device.\0",
    ),
    (
        210,
        "CUDA_ERROR_ALREADY_ACQUIRED\0",
        "This indicates that a resource has already been acquired.\0",
    ),
    (
        211,
        "CUDA_ERROR_NOT_MAPPED\0",
        "This indicates that a resource is not mapped.\0",
    ),
    (
        212,
        "CUDA_ERROR_NOT_MAPPED_AS_ARRAY\0",
        "This indicates that a mapped resource is not available for access as an array.\0",
    ),
    (
        213,
        "CUDA_ERROR_NOT_MAPPED_AS_POINTER\0",
        "This indicates that a mapped resource is not available for access as a pointer.\0",
    ),
    (
        214,
        "CUDA_ERROR_ECC_UNCORRECTABLE\0",
        "This indicates that an uncorrectable ECC error was detected during execution.\0",
    ),
    (
        215,
        "CUDA_ERROR_UNSUPPORTED_LIMIT\0",
        "This indicates that the CUlimit passed to the API call is not supported by the active device.\0",
    ),
    (
        216,
        "CUDA_ERROR_CONTEXT_ALREADY_IN_USE\0",
        "This indicates that the CUcontext passed to the API call can only be bound to a single CPU thread at a time but is already bound to a CPU thread.\0",
    ),
    (
        217,
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED\0",
        "This indicates that peer access is not supported across the given devices.\0",
    ),
    (
        218,
        "CUDA_ERROR_INVALID_PTX\0",
        "This indicates that a PTX JIT compilation failed.\0",
    ),
    (
        219,
        "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT\0",
        "This indicates an error with OpenGL or DirectX context.\0",
    ),
    (
        220,
        "CUDA_ERROR_NVLINK_UNCORRECTABLE\0",
        "This indicates that an uncorrectable NVLink error was detected during the execution.\0",
    ),
    (
        221,
        "CUDA_ERROR_JIT_COMPILER_NOT_FOUND\0",
        "This indicates that the PTX JIT compiler library was not found.\0",
    ),
    (
        222,
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION\0",
        "This indicates that the provided PTX was compiled with an unsupported toolchain.\0",
    ),
    (
        223,
        "CUDA_ERROR_JIT_COMPILATION_DISABLED\0",
        "This indicates that the PTX JIT compilation was disabled.\0",
    ),
    (
        224,
        "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY\0",
        "This indicates that the CUexecAffinityType passed to the API call is not supported by the active device.\0",
    ),
    (
        225,
        "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC\0",
        "This indicates that the code to be compiled by the PTX JIT contains unsupported call to cudaDeviceSynchronize.\0",
    ),
    (
        226,
        "CUDA_ERROR_CONTAINED\0",
        "This indicates that an exception occurred on the device that is now contained by the GPU's error containment capability.\0",
    ),
    (
        300,
        "CUDA_ERROR_INVALID_SOURCE\0",
        "This indicates that the device kernel source is invalid.\0",
    ),
    (
        301,
        "CUDA_ERROR_FILE_NOT_FOUND\0",
        "This indicates that the file specified was not found.\0",
    ),
    (
        302,
        "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND\0",
        "This indicates that a link to a shared object failed to resolve.\0",
    ),
    (
        303,
        "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED\0",
        "This indicates that initialization of a shared object failed.\0",
    ),
    (
        304,
        "CUDA_ERROR_OPERATING_SYSTEM\0",
        "This indicates that an OS call failed.\0",
    ),
    (
        400,
        "CUDA_ERROR_INVALID_HANDLE\0",
        "This indicates that a resource handle passed to the API call was not valid.\0",
    ),
    (
        401,
        "CUDA_ERROR_ILLEGAL_STATE\0",
        "This indicates that a resource required by the API call is not in a valid state to perform the requested operation.\0",
    ),
    (
        402,
        "CUDA_ERROR_LOSSY_QUERY\0",
        "This indicates an attempt was made to introspect an object in a way that would discard semantically important information.\0",
    ),
    (
        500,
        "CUDA_ERROR_NOT_FOUND\0",
        "This indicates that a named symbol was not found.\0",
    ),
    (
        600,
        "CUDA_ERROR_NOT_READY\0",
        "This indicates that asynchronous operations issued previously have not completed yet.\0",
    ),
    (
        700,
        "CUDA_ERROR_ILLEGAL_ADDRESS\0",
        "While executing a kernel, the device encountered a load or store instruction on an invalid memory address.\0",
    ),
    (
        701,
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\0",
        "This indicates that a launch did not occur because it did not have appropriate resources.\0",
    ),
    (
        702,
        "CUDA_ERROR_LAUNCH_TIMEOUT\0",
        "This indicates that the device kernel took too long to execute.\0",
    ),
    (
        703,
        "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING\0",
        "This error indicates a kernel launch that uses an incompatible texturing mode.\0",
    ),
    (
        704,
        "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED\0",
        "This error indicates that a call to cuCtxEnablePeerAccess() is trying to re-enable peer access to a context which has already had peer access to it enabled.\0",
    ),
    (
        705,
        "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED\0",
        "This error indicates that cuCtxDisablePeerAccess() is trying to disable peer access which has not been enabled yet via cuCtxEnablePeerAccess().\0",
    ),
    (
        708,
        "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE\0",
        "This error indicates that the primary context for the specified device has already been initialized.\0",
    ),
    (
        709,
        "CUDA_ERROR_CONTEXT_IS_DESTROYED\0",
        "This error indicates that the context current to the calling thread has been destroyed using cuCtxDestroy, or is a primary context which has not yet been initialized.\0",
    ),
    (
        710,
        "CUDA_ERROR_ASSERT\0",
        "A device-side assert triggered during kernel execution.\0",
    ),
    (
        711,
        "CUDA_ERROR_TOO_MANY_PEERS\0",
        "This error indicates that the hardware resources required to enable peer access have been exhausted for one or more of the devices passed to cuCtxEnablePeerAccess().\0",
    ),
    (
        712,
        "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED\0",
        "This error indicates that the memory range passed to cuMemHostRegister() has already been registered.\0",
    ),
    (
        713,
        "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED\0",
        "This error indicates that the pointer passed to cuMemHostUnregister() does not correspond to any currently registered memory region.\0",
    ),
    (
        714,
        "CUDA_ERROR_HARDWARE_STACK_ERROR\0",
        "While executing a kernel, the device encountered a stack error.\0",
    ),
    (
        715,
        "CUDA_ERROR_ILLEGAL_INSTRUCTION\0",
        "While executing a kernel, the device encountered an illegal instruction.\0",
    ),
    (
        716,
        "CUDA_ERROR_MISALIGNED_ADDRESS\0",
        "While executing a kernel, the device encountered a load or store instruction on a memory address which is not aligned.\0",
    ),
    (
        717,
        "CUDA_ERROR_INVALID_ADDRESS_SPACE\0",
        "While executing a kernel, the device encountered an instruction which can only operate on memory locations in certain address spaces (global, shared, or local), but was supplied a memory address not belonging to an allowed address space.\0",
    ),
    (
        718,
        "CUDA_ERROR_INVALID_PC\0",
        "While executing a kernel, the device program counter wrapped its address space.\0",
    ),
    (
        719,
        "CUDA_ERROR_LAUNCH_FAILED\0",
        "An exception occurred on the device while executing a kernel.\0",
    ),
    (
        720,
        "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE\0",
        "This error indicates that the number of blocks launched per grid for a kernel that was launched via either cuLaunchCooperativeKernel or cuLaunchCooperativeKernelMultiDevice exceeds the maximum number of blocks as allowed by cuOccupancyMaxActiveBlocksPerMultiprocessor or cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags times the number of multiprocessors as specified by the device attribute CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT.\0",
    ),
    (
        721,
        "CUDA_ERROR_TENSOR_MEMORY_LEAK\0",
        "An exception occurred on the device while exiting a kernel using tensor memory: the tensor memory was not completely deallocated.\0",
    ),
    (
        800,
        "CUDA_ERROR_NOT_PERMITTED\0",
        "This error indicates that the attempted operation is not permitted.\0",
    ),
    (
        801,
        "CUDA_ERROR_NOT_SUPPORTED\0",
        "This error indicates that the attempted operation is not supported on the current system or device.\0",
    ),
    (
        802,
        "CUDA_ERROR_SYSTEM_NOT_READY\0",
        "This error indicates that the system is not yet ready to start any CUDA work.\0",
    ),
    (
        803,
        "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH\0",
        "This error indicates that there is a mismatch between the versions of the display driver and the CUDA driver.\0",
    ),
    (
        804,
        "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE\0",
        "This error indicates that the system was upgraded to run with forward compatibility but the visible hardware detected by CUDA does not support this configuration.\0",
    ),
    (
        805,
        "CUDA_ERROR_MPS_CONNECTION_FAILED\0",
        "This error indicates that the MPS client failed to connect to the MPS control daemon or the MPS server.\0",
    ),
    (
        806,
        "CUDA_ERROR_MPS_RPC_FAILURE\0",
        "This error indicates that the remote procedural call between the MPS server and the MPS client failed.\0",
    ),
    (
        807,
        "CUDA_ERROR_MPS_SERVER_NOT_READY\0",
        "This error indicates that the MPS server is not ready to accept new MPS client requests.\0",
    ),
    (
        808,
        "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED\0",
        "This error indicates that the hardware resources required to create MPS client have been exhausted.\0",
    ),
    (
        809,
        "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED\0",
        "This error indicates the the hardware resources required to support device connections have been exhausted.\0",
    ),
    (
        810,
        "CUDA_ERROR_MPS_CLIENT_TERMINATED\0",
        "This error indicates that the MPS client has been terminated by the server.\0",
    ),
    (
        811,
        "CUDA_ERROR_CDP_NOT_SUPPORTED\0",
        "This error indicates that the module is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it.\0",
    ),
    (
        812,
        "CUDA_ERROR_CDP_VERSION_MISMATCH\0",
        "This error indicates that a module contains an unsupported interaction between different versions of CUDA Dynamic Parallelism.\0",
    ),
    (
        900,
        "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\0",
        "This error indicates that the operation is not permitted when the stream is capturing.\0",
    ),
    (
        901,
        "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED\0",
        "This error indicates that the current capture sequence on the stream has been invalidated due to a previous error.\0",
    ),
    (
        902,
        "CUDA_ERROR_STREAM_CAPTURE_MERGE\0",
        "This error indicates that the operation would have resulted in a merge of two independent capture sequences.\0",
    ),
    (
        903,
        "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED\0",
        "This error indicates that the capture was not initiated in this stream.\0",
    ),
    (
        904,
        "CUDA_ERROR_STREAM_CAPTURE_UNJOINED\0",
        "This error indicates that the capture sequence contains a fork that was not joined to the primary stream.\0",
    ),
    (
        905,
        "CUDA_ERROR_STREAM_CAPTURE_ISOLATION\0",
        "This error indicates that a dependency would have been created which crosses the capture sequence boundary.\0",
    ),
    (
        906,
        "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT\0",
        "This error indicates a disallowed implicit dependency on a current capture sequence from cudaStreamLegacy.\0",
    ),
    (
        907,
        "CUDA_ERROR_CAPTURED_EVENT\0",
        "This error indicates that the operation is not permitted on an event which was last recorded in a capturing stream.\0",
    ),
    (
        908,
        "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD\0",
        "A stream capture sequence not initiated with the CU_STREAM_CAPTURE_MODE_RELAXED argument to cuStreamBeginCapture was passed to cuStreamEndCapture in a different thread.\0",
    ),
    (
        909,
        "CUDA_ERROR_TIMEOUT\0",
        "This error indicates that the timeout specified for the wait operation has lapsed.\0",
    ),
    (
        910,
        "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE\0",
        "This error indicates that the graph update was not performed because it included changes which violated constraints specific to instantiated graph update.\0",
    ),
    (
        911,
        "CUDA_ERROR_EXTERNAL_DEVICE\0",
        "This indicates that an async error has occurred in a device outside of CUDA.\0",
    ),
    (
        912,
        "CUDA_ERROR_INVALID_CLUSTER_SIZE\0",
        "Indicates a kernel launch error due to cluster misconfiguration.\0",
    ),
    (
        913,
        "CUDA_ERROR_FUNCTION_NOT_LOADED\0",
        "Indiciates a function handle is not loaded when calling an API that requires a loaded function.\0",
    ),
    (
        914,
        "CUDA_ERROR_INVALID_RESOURCE_TYPE\0",
        "This error indicates one or more resources passed in are not valid resource types for the operation.\0",
    ),
    (
        915,
        "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION\0",
        "This error indicates one or more resources are insufficient or non-applicable for the operation.\0",
    ),
    (
        916,
        "CUDA_ERROR_KEY_ROTATION\0",
        "This error indicates that an error happened during the key rotation sequence.\0",
    ),
    (
        999,
        "CUDA_ERROR_UNKNOWN\0",
        "This indicates that an unknown internal error has occurred.\0",
    ),
];

fn entry(code: u32) -> Option<&'static (u32, &'static str, &'static str)> {
    TABLE.iter().find(|(v, _, _)| *v == code)
}

/// The NUL-terminated name of `code` (`"CUDA_ERROR_INVALID_VALUE"`), or
/// `None` for a value that is not a `CUresult`.
pub fn name(code: u32) -> Option<*const c_char> {
    entry(code).map(|(_, n, _)| n.as_ptr().cast())
}

/// The NUL-terminated description of `code`, or `None` for a value that is not
/// a `CUresult`.
pub fn description(code: u32) -> Option<*const c_char> {
    entry(code).map(|(_, _, d)| d.as_ptr().cast())
}

/// The name without its terminator, for messages written from Rust.
pub fn name_str(code: u32) -> &'static str {
    entry(code).map_or("CUDA_ERROR_UNKNOWN", |(_, n, _)| n.trim_end_matches('\0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn names_and_descriptions_are_nul_terminated_and_sorted() {
        let mut last = None;
        for (v, n, d) in TABLE {
            assert!(n.ends_with('\0') && d.ends_with('\0'), "{n}");
            assert!(n.starts_with("CUDA_"), "{n}");
            assert!(last < Some(*v), "table out of order at {n}");
            last = Some(*v);
        }
    }

    #[test]
    fn lookups_match_the_header() {
        let name_of = |c| {
            // SAFETY: `name` returns pointers into the static, NUL-terminated name table.
            unsafe { CStr::from_ptr(name(c).unwrap()) }
                .to_str()
                .unwrap()
        };
        assert_eq!(name_of(0), "CUDA_SUCCESS");
        assert_eq!(name_of(1), "CUDA_ERROR_INVALID_VALUE");
        assert_eq!(name_of(218), "CUDA_ERROR_INVALID_PTX");
        assert_eq!(name_of(700), "CUDA_ERROR_ILLEGAL_ADDRESS");
        assert_eq!(name_of(999), "CUDA_ERROR_UNKNOWN");
        assert_eq!(name_str(400), "CUDA_ERROR_INVALID_HANDLE");
        assert!(name(12345).is_none());
        assert!(description(12345).is_none());
        // SAFETY: `description` returns a pointer into the static, NUL-terminated description table.
        let d = unsafe { CStr::from_ptr(description(700).unwrap()) };
        assert!(d.to_str().unwrap().contains("invalid memory address"));
    }
}
