//! The structs programs share with the runtime have the layout of Debian's
//! HIP 5.2 headers: a C program built against `/usr/include/hip` prints
//! every field's offset and each struct's size, compared with the Rust
//! definitions in `abi.rs`.

use prlx_e2e::{find_tool, missing};
use prlx_hip::abi::*;
use std::mem::{offset_of, size_of};
use std::process::Command;

const PROGRAM: &str = r#"
#include <hip/hip_runtime_api.h>
#include <stddef.h>
#include <stdio.h>
int main(void) {
    printf("hipDeviceProp_t size %zu\n", sizeof(hipDeviceProp_t));
    printf("hipDeviceProp_t.name %zu\n", offsetof(hipDeviceProp_t, name));
    printf("hipDeviceProp_t.totalGlobalMem %zu\n", offsetof(hipDeviceProp_t, totalGlobalMem));
    printf("hipDeviceProp_t.sharedMemPerBlock %zu\n", offsetof(hipDeviceProp_t, sharedMemPerBlock));
    printf("hipDeviceProp_t.regsPerBlock %zu\n", offsetof(hipDeviceProp_t, regsPerBlock));
    printf("hipDeviceProp_t.warpSize %zu\n", offsetof(hipDeviceProp_t, warpSize));
    printf("hipDeviceProp_t.maxThreadsPerBlock %zu\n", offsetof(hipDeviceProp_t, maxThreadsPerBlock));
    printf("hipDeviceProp_t.maxThreadsDim %zu\n", offsetof(hipDeviceProp_t, maxThreadsDim));
    printf("hipDeviceProp_t.maxGridSize %zu\n", offsetof(hipDeviceProp_t, maxGridSize));
    printf("hipDeviceProp_t.clockRate %zu\n", offsetof(hipDeviceProp_t, clockRate));
    printf("hipDeviceProp_t.memoryClockRate %zu\n", offsetof(hipDeviceProp_t, memoryClockRate));
    printf("hipDeviceProp_t.memoryBusWidth %zu\n", offsetof(hipDeviceProp_t, memoryBusWidth));
    printf("hipDeviceProp_t.totalConstMem %zu\n", offsetof(hipDeviceProp_t, totalConstMem));
    printf("hipDeviceProp_t.major %zu\n", offsetof(hipDeviceProp_t, major));
    printf("hipDeviceProp_t.minor %zu\n", offsetof(hipDeviceProp_t, minor));
    printf("hipDeviceProp_t.multiProcessorCount %zu\n", offsetof(hipDeviceProp_t, multiProcessorCount));
    printf("hipDeviceProp_t.l2CacheSize %zu\n", offsetof(hipDeviceProp_t, l2CacheSize));
    printf("hipDeviceProp_t.maxThreadsPerMultiProcessor %zu\n", offsetof(hipDeviceProp_t, maxThreadsPerMultiProcessor));
    printf("hipDeviceProp_t.computeMode %zu\n", offsetof(hipDeviceProp_t, computeMode));
    printf("hipDeviceProp_t.clockInstructionRate %zu\n", offsetof(hipDeviceProp_t, clockInstructionRate));
    printf("hipDeviceProp_t.arch %zu\n", offsetof(hipDeviceProp_t, arch));
    printf("hipDeviceProp_t.concurrentKernels %zu\n", offsetof(hipDeviceProp_t, concurrentKernels));
    printf("hipDeviceProp_t.pciDomainID %zu\n", offsetof(hipDeviceProp_t, pciDomainID));
    printf("hipDeviceProp_t.pciBusID %zu\n", offsetof(hipDeviceProp_t, pciBusID));
    printf("hipDeviceProp_t.pciDeviceID %zu\n", offsetof(hipDeviceProp_t, pciDeviceID));
    printf("hipDeviceProp_t.maxSharedMemoryPerMultiProcessor %zu\n", offsetof(hipDeviceProp_t, maxSharedMemoryPerMultiProcessor));
    printf("hipDeviceProp_t.isMultiGpuBoard %zu\n", offsetof(hipDeviceProp_t, isMultiGpuBoard));
    printf("hipDeviceProp_t.canMapHostMemory %zu\n", offsetof(hipDeviceProp_t, canMapHostMemory));
    printf("hipDeviceProp_t.gcnArch %zu\n", offsetof(hipDeviceProp_t, gcnArch));
    printf("hipDeviceProp_t.gcnArchName %zu\n", offsetof(hipDeviceProp_t, gcnArchName));
    printf("hipDeviceProp_t.integrated %zu\n", offsetof(hipDeviceProp_t, integrated));
    printf("hipDeviceProp_t.cooperativeLaunch %zu\n", offsetof(hipDeviceProp_t, cooperativeLaunch));
    printf("hipDeviceProp_t.cooperativeMultiDeviceLaunch %zu\n", offsetof(hipDeviceProp_t, cooperativeMultiDeviceLaunch));
    printf("hipDeviceProp_t.maxTexture1DLinear %zu\n", offsetof(hipDeviceProp_t, maxTexture1DLinear));
    printf("hipDeviceProp_t.maxTexture1D %zu\n", offsetof(hipDeviceProp_t, maxTexture1D));
    printf("hipDeviceProp_t.maxTexture2D %zu\n", offsetof(hipDeviceProp_t, maxTexture2D));
    printf("hipDeviceProp_t.maxTexture3D %zu\n", offsetof(hipDeviceProp_t, maxTexture3D));
    printf("hipDeviceProp_t.hdpMemFlushCntl %zu\n", offsetof(hipDeviceProp_t, hdpMemFlushCntl));
    printf("hipDeviceProp_t.hdpRegFlushCntl %zu\n", offsetof(hipDeviceProp_t, hdpRegFlushCntl));
    printf("hipDeviceProp_t.memPitch %zu\n", offsetof(hipDeviceProp_t, memPitch));
    printf("hipDeviceProp_t.textureAlignment %zu\n", offsetof(hipDeviceProp_t, textureAlignment));
    printf("hipDeviceProp_t.texturePitchAlignment %zu\n", offsetof(hipDeviceProp_t, texturePitchAlignment));
    printf("hipDeviceProp_t.kernelExecTimeoutEnabled %zu\n", offsetof(hipDeviceProp_t, kernelExecTimeoutEnabled));
    printf("hipDeviceProp_t.ECCEnabled %zu\n", offsetof(hipDeviceProp_t, ECCEnabled));
    printf("hipDeviceProp_t.tccDriver %zu\n", offsetof(hipDeviceProp_t, tccDriver));
    printf("hipDeviceProp_t.cooperativeMultiDeviceUnmatchedFunc %zu\n", offsetof(hipDeviceProp_t, cooperativeMultiDeviceUnmatchedFunc));
    printf("hipDeviceProp_t.cooperativeMultiDeviceUnmatchedGridDim %zu\n", offsetof(hipDeviceProp_t, cooperativeMultiDeviceUnmatchedGridDim));
    printf("hipDeviceProp_t.cooperativeMultiDeviceUnmatchedBlockDim %zu\n", offsetof(hipDeviceProp_t, cooperativeMultiDeviceUnmatchedBlockDim));
    printf("hipDeviceProp_t.cooperativeMultiDeviceUnmatchedSharedMem %zu\n", offsetof(hipDeviceProp_t, cooperativeMultiDeviceUnmatchedSharedMem));
    printf("hipDeviceProp_t.isLargeBar %zu\n", offsetof(hipDeviceProp_t, isLargeBar));
    printf("hipDeviceProp_t.asicRevision %zu\n", offsetof(hipDeviceProp_t, asicRevision));
    printf("hipDeviceProp_t.managedMemory %zu\n", offsetof(hipDeviceProp_t, managedMemory));
    printf("hipDeviceProp_t.directManagedMemAccessFromHost %zu\n", offsetof(hipDeviceProp_t, directManagedMemAccessFromHost));
    printf("hipDeviceProp_t.concurrentManagedAccess %zu\n", offsetof(hipDeviceProp_t, concurrentManagedAccess));
    printf("hipDeviceProp_t.pageableMemoryAccess %zu\n", offsetof(hipDeviceProp_t, pageableMemoryAccess));
    printf("hipDeviceProp_t.pageableMemoryAccessUsesHostPageTables %zu\n", offsetof(hipDeviceProp_t, pageableMemoryAccessUsesHostPageTables));
    printf("hipFuncAttributes size %zu\n", sizeof(hipFuncAttributes));
    printf("hipFuncAttributes.binaryVersion %zu\n", offsetof(hipFuncAttributes, binaryVersion));
    printf("hipFuncAttributes.cacheModeCA %zu\n", offsetof(hipFuncAttributes, cacheModeCA));
    printf("hipFuncAttributes.constSizeBytes %zu\n", offsetof(hipFuncAttributes, constSizeBytes));
    printf("hipFuncAttributes.localSizeBytes %zu\n", offsetof(hipFuncAttributes, localSizeBytes));
    printf("hipFuncAttributes.maxDynamicSharedSizeBytes %zu\n", offsetof(hipFuncAttributes, maxDynamicSharedSizeBytes));
    printf("hipFuncAttributes.maxThreadsPerBlock %zu\n", offsetof(hipFuncAttributes, maxThreadsPerBlock));
    printf("hipFuncAttributes.numRegs %zu\n", offsetof(hipFuncAttributes, numRegs));
    printf("hipFuncAttributes.preferredShmemCarveout %zu\n", offsetof(hipFuncAttributes, preferredShmemCarveout));
    printf("hipFuncAttributes.ptxVersion %zu\n", offsetof(hipFuncAttributes, ptxVersion));
    printf("hipFuncAttributes.sharedSizeBytes %zu\n", offsetof(hipFuncAttributes, sharedSizeBytes));
    printf("hipPointerAttribute_t size %zu\n", sizeof(hipPointerAttribute_t));
    printf("hipPointerAttribute_t.memoryType %zu\n", offsetof(hipPointerAttribute_t, memoryType));
    printf("hipPointerAttribute_t.device %zu\n", offsetof(hipPointerAttribute_t, device));
    printf("hipPointerAttribute_t.devicePointer %zu\n", offsetof(hipPointerAttribute_t, devicePointer));
    printf("hipPointerAttribute_t.hostPointer %zu\n", offsetof(hipPointerAttribute_t, hostPointer));
    printf("hipPointerAttribute_t.isManaged %zu\n", offsetof(hipPointerAttribute_t, isManaged));
    printf("hipPointerAttribute_t.allocationFlags %zu\n", offsetof(hipPointerAttribute_t, allocationFlags));
    printf("dim3 size %zu\n", sizeof(dim3));
    printf("dim3.x %zu\n", offsetof(dim3, x));
    printf("dim3.y %zu\n", offsetof(dim3, y));
    printf("dim3.z %zu\n", offsetof(dim3, z));
    printf("hipMemcpy3DParms size %zu\n", sizeof(hipMemcpy3DParms));
    printf("hipMemcpy3DParms.srcArray %zu\n", offsetof(hipMemcpy3DParms, srcArray));
    printf("hipMemcpy3DParms.srcPos %zu\n", offsetof(hipMemcpy3DParms, srcPos));
    printf("hipMemcpy3DParms.srcPtr %zu\n", offsetof(hipMemcpy3DParms, srcPtr));
    printf("hipMemcpy3DParms.dstArray %zu\n", offsetof(hipMemcpy3DParms, dstArray));
    printf("hipMemcpy3DParms.dstPos %zu\n", offsetof(hipMemcpy3DParms, dstPos));
    printf("hipMemcpy3DParms.dstPtr %zu\n", offsetof(hipMemcpy3DParms, dstPtr));
    printf("hipMemcpy3DParms.extent %zu\n", offsetof(hipMemcpy3DParms, extent));
    printf("hipMemcpy3DParms.kind %zu\n", offsetof(hipMemcpy3DParms, kind));
    printf("hipPitchedPtr size %zu\n", sizeof(hipPitchedPtr));
    printf("hipExtent size %zu\n", sizeof(hipExtent));
    printf("hipPos size %zu\n", sizeof(hipPos));
    return 0;
}
"#;

fn rust_layout() -> Vec<(String, usize)> {
    vec![
        (
            "hipDeviceProp_t size".to_string(),
            size_of::<hipDeviceProp_t>(),
        ),
        (
            "hipDeviceProp_t.name".to_string(),
            offset_of!(hipDeviceProp_t, name),
        ),
        (
            "hipDeviceProp_t.totalGlobalMem".to_string(),
            offset_of!(hipDeviceProp_t, totalGlobalMem),
        ),
        (
            "hipDeviceProp_t.sharedMemPerBlock".to_string(),
            offset_of!(hipDeviceProp_t, sharedMemPerBlock),
        ),
        (
            "hipDeviceProp_t.regsPerBlock".to_string(),
            offset_of!(hipDeviceProp_t, regsPerBlock),
        ),
        (
            "hipDeviceProp_t.warpSize".to_string(),
            offset_of!(hipDeviceProp_t, warpSize),
        ),
        (
            "hipDeviceProp_t.maxThreadsPerBlock".to_string(),
            offset_of!(hipDeviceProp_t, maxThreadsPerBlock),
        ),
        (
            "hipDeviceProp_t.maxThreadsDim".to_string(),
            offset_of!(hipDeviceProp_t, maxThreadsDim),
        ),
        (
            "hipDeviceProp_t.maxGridSize".to_string(),
            offset_of!(hipDeviceProp_t, maxGridSize),
        ),
        (
            "hipDeviceProp_t.clockRate".to_string(),
            offset_of!(hipDeviceProp_t, clockRate),
        ),
        (
            "hipDeviceProp_t.memoryClockRate".to_string(),
            offset_of!(hipDeviceProp_t, memoryClockRate),
        ),
        (
            "hipDeviceProp_t.memoryBusWidth".to_string(),
            offset_of!(hipDeviceProp_t, memoryBusWidth),
        ),
        (
            "hipDeviceProp_t.totalConstMem".to_string(),
            offset_of!(hipDeviceProp_t, totalConstMem),
        ),
        (
            "hipDeviceProp_t.major".to_string(),
            offset_of!(hipDeviceProp_t, major),
        ),
        (
            "hipDeviceProp_t.minor".to_string(),
            offset_of!(hipDeviceProp_t, minor),
        ),
        (
            "hipDeviceProp_t.multiProcessorCount".to_string(),
            offset_of!(hipDeviceProp_t, multiProcessorCount),
        ),
        (
            "hipDeviceProp_t.l2CacheSize".to_string(),
            offset_of!(hipDeviceProp_t, l2CacheSize),
        ),
        (
            "hipDeviceProp_t.maxThreadsPerMultiProcessor".to_string(),
            offset_of!(hipDeviceProp_t, maxThreadsPerMultiProcessor),
        ),
        (
            "hipDeviceProp_t.computeMode".to_string(),
            offset_of!(hipDeviceProp_t, computeMode),
        ),
        (
            "hipDeviceProp_t.clockInstructionRate".to_string(),
            offset_of!(hipDeviceProp_t, clockInstructionRate),
        ),
        (
            "hipDeviceProp_t.arch".to_string(),
            offset_of!(hipDeviceProp_t, arch),
        ),
        (
            "hipDeviceProp_t.concurrentKernels".to_string(),
            offset_of!(hipDeviceProp_t, concurrentKernels),
        ),
        (
            "hipDeviceProp_t.pciDomainID".to_string(),
            offset_of!(hipDeviceProp_t, pciDomainID),
        ),
        (
            "hipDeviceProp_t.pciBusID".to_string(),
            offset_of!(hipDeviceProp_t, pciBusID),
        ),
        (
            "hipDeviceProp_t.pciDeviceID".to_string(),
            offset_of!(hipDeviceProp_t, pciDeviceID),
        ),
        (
            "hipDeviceProp_t.maxSharedMemoryPerMultiProcessor".to_string(),
            offset_of!(hipDeviceProp_t, maxSharedMemoryPerMultiProcessor),
        ),
        (
            "hipDeviceProp_t.isMultiGpuBoard".to_string(),
            offset_of!(hipDeviceProp_t, isMultiGpuBoard),
        ),
        (
            "hipDeviceProp_t.canMapHostMemory".to_string(),
            offset_of!(hipDeviceProp_t, canMapHostMemory),
        ),
        (
            "hipDeviceProp_t.gcnArch".to_string(),
            offset_of!(hipDeviceProp_t, gcnArch),
        ),
        (
            "hipDeviceProp_t.gcnArchName".to_string(),
            offset_of!(hipDeviceProp_t, gcnArchName),
        ),
        (
            "hipDeviceProp_t.integrated".to_string(),
            offset_of!(hipDeviceProp_t, integrated),
        ),
        (
            "hipDeviceProp_t.cooperativeLaunch".to_string(),
            offset_of!(hipDeviceProp_t, cooperativeLaunch),
        ),
        (
            "hipDeviceProp_t.cooperativeMultiDeviceLaunch".to_string(),
            offset_of!(hipDeviceProp_t, cooperativeMultiDeviceLaunch),
        ),
        (
            "hipDeviceProp_t.maxTexture1DLinear".to_string(),
            offset_of!(hipDeviceProp_t, maxTexture1DLinear),
        ),
        (
            "hipDeviceProp_t.maxTexture1D".to_string(),
            offset_of!(hipDeviceProp_t, maxTexture1D),
        ),
        (
            "hipDeviceProp_t.maxTexture2D".to_string(),
            offset_of!(hipDeviceProp_t, maxTexture2D),
        ),
        (
            "hipDeviceProp_t.maxTexture3D".to_string(),
            offset_of!(hipDeviceProp_t, maxTexture3D),
        ),
        (
            "hipDeviceProp_t.hdpMemFlushCntl".to_string(),
            offset_of!(hipDeviceProp_t, hdpMemFlushCntl),
        ),
        (
            "hipDeviceProp_t.hdpRegFlushCntl".to_string(),
            offset_of!(hipDeviceProp_t, hdpRegFlushCntl),
        ),
        (
            "hipDeviceProp_t.memPitch".to_string(),
            offset_of!(hipDeviceProp_t, memPitch),
        ),
        (
            "hipDeviceProp_t.textureAlignment".to_string(),
            offset_of!(hipDeviceProp_t, textureAlignment),
        ),
        (
            "hipDeviceProp_t.texturePitchAlignment".to_string(),
            offset_of!(hipDeviceProp_t, texturePitchAlignment),
        ),
        (
            "hipDeviceProp_t.kernelExecTimeoutEnabled".to_string(),
            offset_of!(hipDeviceProp_t, kernelExecTimeoutEnabled),
        ),
        (
            "hipDeviceProp_t.ECCEnabled".to_string(),
            offset_of!(hipDeviceProp_t, ECCEnabled),
        ),
        (
            "hipDeviceProp_t.tccDriver".to_string(),
            offset_of!(hipDeviceProp_t, tccDriver),
        ),
        (
            "hipDeviceProp_t.cooperativeMultiDeviceUnmatchedFunc".to_string(),
            offset_of!(hipDeviceProp_t, cooperativeMultiDeviceUnmatchedFunc),
        ),
        (
            "hipDeviceProp_t.cooperativeMultiDeviceUnmatchedGridDim".to_string(),
            offset_of!(hipDeviceProp_t, cooperativeMultiDeviceUnmatchedGridDim),
        ),
        (
            "hipDeviceProp_t.cooperativeMultiDeviceUnmatchedBlockDim".to_string(),
            offset_of!(hipDeviceProp_t, cooperativeMultiDeviceUnmatchedBlockDim),
        ),
        (
            "hipDeviceProp_t.cooperativeMultiDeviceUnmatchedSharedMem".to_string(),
            offset_of!(hipDeviceProp_t, cooperativeMultiDeviceUnmatchedSharedMem),
        ),
        (
            "hipDeviceProp_t.isLargeBar".to_string(),
            offset_of!(hipDeviceProp_t, isLargeBar),
        ),
        (
            "hipDeviceProp_t.asicRevision".to_string(),
            offset_of!(hipDeviceProp_t, asicRevision),
        ),
        (
            "hipDeviceProp_t.managedMemory".to_string(),
            offset_of!(hipDeviceProp_t, managedMemory),
        ),
        (
            "hipDeviceProp_t.directManagedMemAccessFromHost".to_string(),
            offset_of!(hipDeviceProp_t, directManagedMemAccessFromHost),
        ),
        (
            "hipDeviceProp_t.concurrentManagedAccess".to_string(),
            offset_of!(hipDeviceProp_t, concurrentManagedAccess),
        ),
        (
            "hipDeviceProp_t.pageableMemoryAccess".to_string(),
            offset_of!(hipDeviceProp_t, pageableMemoryAccess),
        ),
        (
            "hipDeviceProp_t.pageableMemoryAccessUsesHostPageTables".to_string(),
            offset_of!(hipDeviceProp_t, pageableMemoryAccessUsesHostPageTables),
        ),
        (
            "hipFuncAttributes size".to_string(),
            size_of::<hipFuncAttributes>(),
        ),
        (
            "hipFuncAttributes.binaryVersion".to_string(),
            offset_of!(hipFuncAttributes, binaryVersion),
        ),
        (
            "hipFuncAttributes.cacheModeCA".to_string(),
            offset_of!(hipFuncAttributes, cacheModeCA),
        ),
        (
            "hipFuncAttributes.constSizeBytes".to_string(),
            offset_of!(hipFuncAttributes, constSizeBytes),
        ),
        (
            "hipFuncAttributes.localSizeBytes".to_string(),
            offset_of!(hipFuncAttributes, localSizeBytes),
        ),
        (
            "hipFuncAttributes.maxDynamicSharedSizeBytes".to_string(),
            offset_of!(hipFuncAttributes, maxDynamicSharedSizeBytes),
        ),
        (
            "hipFuncAttributes.maxThreadsPerBlock".to_string(),
            offset_of!(hipFuncAttributes, maxThreadsPerBlock),
        ),
        (
            "hipFuncAttributes.numRegs".to_string(),
            offset_of!(hipFuncAttributes, numRegs),
        ),
        (
            "hipFuncAttributes.preferredShmemCarveout".to_string(),
            offset_of!(hipFuncAttributes, preferredShmemCarveout),
        ),
        (
            "hipFuncAttributes.ptxVersion".to_string(),
            offset_of!(hipFuncAttributes, ptxVersion),
        ),
        (
            "hipFuncAttributes.sharedSizeBytes".to_string(),
            offset_of!(hipFuncAttributes, sharedSizeBytes),
        ),
        (
            "hipPointerAttribute_t size".to_string(),
            size_of::<hipPointerAttribute_t>(),
        ),
        (
            "hipPointerAttribute_t.memoryType".to_string(),
            offset_of!(hipPointerAttribute_t, memoryType),
        ),
        (
            "hipPointerAttribute_t.device".to_string(),
            offset_of!(hipPointerAttribute_t, device),
        ),
        (
            "hipPointerAttribute_t.devicePointer".to_string(),
            offset_of!(hipPointerAttribute_t, devicePointer),
        ),
        (
            "hipPointerAttribute_t.hostPointer".to_string(),
            offset_of!(hipPointerAttribute_t, hostPointer),
        ),
        (
            "hipPointerAttribute_t.isManaged".to_string(),
            offset_of!(hipPointerAttribute_t, isManaged),
        ),
        (
            "hipPointerAttribute_t.allocationFlags".to_string(),
            offset_of!(hipPointerAttribute_t, allocationFlags),
        ),
        ("dim3 size".to_string(), size_of::<dim3>()),
        ("dim3.x".to_string(), offset_of!(dim3, x)),
        ("dim3.y".to_string(), offset_of!(dim3, y)),
        ("dim3.z".to_string(), offset_of!(dim3, z)),
        (
            "hipMemcpy3DParms size".to_string(),
            size_of::<hipMemcpy3DParms>(),
        ),
        (
            "hipMemcpy3DParms.srcArray".to_string(),
            offset_of!(hipMemcpy3DParms, srcArray),
        ),
        (
            "hipMemcpy3DParms.srcPos".to_string(),
            offset_of!(hipMemcpy3DParms, srcPos),
        ),
        (
            "hipMemcpy3DParms.srcPtr".to_string(),
            offset_of!(hipMemcpy3DParms, srcPtr),
        ),
        (
            "hipMemcpy3DParms.dstArray".to_string(),
            offset_of!(hipMemcpy3DParms, dstArray),
        ),
        (
            "hipMemcpy3DParms.dstPos".to_string(),
            offset_of!(hipMemcpy3DParms, dstPos),
        ),
        (
            "hipMemcpy3DParms.dstPtr".to_string(),
            offset_of!(hipMemcpy3DParms, dstPtr),
        ),
        (
            "hipMemcpy3DParms.extent".to_string(),
            offset_of!(hipMemcpy3DParms, extent),
        ),
        (
            "hipMemcpy3DParms.kind".to_string(),
            offset_of!(hipMemcpy3DParms, kind),
        ),
        ("hipPitchedPtr size".to_string(), size_of::<hipPitchedPtr>()),
        ("hipExtent size".to_string(), size_of::<hipExtent>()),
        ("hipPos size".to_string(), size_of::<hipPos>()),
    ]
}

#[test]
fn layouts_match_the_hip_5_2_headers() {
    let Some(clang) = find_tool("clang-19") else {
        missing("clang-19");
        return;
    };
    if !std::path::Path::new("/usr/include/hip/hip_runtime_api.h").is_file() {
        missing("Debian's HIP 5.2 headers (libamdhip64-dev)");
        return;
    }
    let dir = tempfile::tempdir().expect("a scratch directory");
    let source = dir.path().join("layout.c");
    let exe = dir.path().join("layout");
    std::fs::write(&source, PROGRAM).expect("write layout.c");
    let status = Command::new(clang)
        .args(["-D__HIP_PLATFORM_AMD__", "-Wall", "-Werror"])
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("run clang-19");
    assert!(status.success(), "layout.c did not compile");
    let out = Command::new(&exe).output().expect("run layout");
    let c: Vec<(String, usize)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let (name, value) = l.rsplit_once(' ').expect("NAME VALUE");
            (name.to_string(), value.parse().expect("a number"))
        })
        .collect();
    assert_eq!(c, rust_layout());
}
