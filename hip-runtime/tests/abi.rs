//! The structs programs share with the runtime have the layout of Debian's
//! HIP 5.2 headers: a C program built against `/usr/include/hip` prints
//! every field's offset and each struct's size, compared with the Rust
//! definitions in `abi.rs`. One table below names the structs and fields;
//! the C program and the Rust values are both generated from it, so the two
//! sides cannot list different things.

use prlx_hip_runtime::abi::*;
use prlx_tests::{find_tool, missing};
use std::mem::{offset_of, size_of};
use std::process::Command;

/// One compared value: the C program prints `key` and `c_expr`'s value; the
/// Rust side has `rust_value`.
struct Row {
    key: String,
    c_expr: String,
    rust_value: usize,
}

impl Row {
    fn size(ty: &str, rust_value: usize) -> Row {
        Row {
            key: format!("{ty} size"),
            c_expr: format!("sizeof({ty})"),
            rust_value,
        }
    }

    fn offset(ty: &str, field: &str, rust_value: usize) -> Row {
        Row {
            key: format!("{ty}.{field}"),
            c_expr: format!("offsetof({ty}, {field})"),
            rust_value,
        }
    }
}

/// `layout_table! { T { field, ... } ... }` defines `layout_rows()`: per
/// struct its size, then each listed field's offset, in the order given.
macro_rules! layout_table {
    ($($ty:ident { $($field:ident),* $(,)? })*) => {
        fn layout_rows() -> Vec<Row> {
            let mut rows = Vec::new();
            $(
                rows.push(Row::size(stringify!($ty), size_of::<$ty>()));
                $(
                    rows.push(Row::offset(
                        stringify!($ty),
                        stringify!($field),
                        offset_of!($ty, $field),
                    ));
                )*
            )*
            rows
        }
    };
}

layout_table! {
    hipDeviceProp_t {
        name,
        totalGlobalMem,
        sharedMemPerBlock,
        regsPerBlock,
        warpSize,
        maxThreadsPerBlock,
        maxThreadsDim,
        maxGridSize,
        clockRate,
        memoryClockRate,
        memoryBusWidth,
        totalConstMem,
        major,
        minor,
        multiProcessorCount,
        l2CacheSize,
        maxThreadsPerMultiProcessor,
        computeMode,
        clockInstructionRate,
        arch,
        concurrentKernels,
        pciDomainID,
        pciBusID,
        pciDeviceID,
        maxSharedMemoryPerMultiProcessor,
        isMultiGpuBoard,
        canMapHostMemory,
        gcnArch,
        gcnArchName,
        integrated,
        cooperativeLaunch,
        cooperativeMultiDeviceLaunch,
        maxTexture1DLinear,
        maxTexture1D,
        maxTexture2D,
        maxTexture3D,
        hdpMemFlushCntl,
        hdpRegFlushCntl,
        memPitch,
        textureAlignment,
        texturePitchAlignment,
        kernelExecTimeoutEnabled,
        ECCEnabled,
        tccDriver,
        cooperativeMultiDeviceUnmatchedFunc,
        cooperativeMultiDeviceUnmatchedGridDim,
        cooperativeMultiDeviceUnmatchedBlockDim,
        cooperativeMultiDeviceUnmatchedSharedMem,
        isLargeBar,
        asicRevision,
        managedMemory,
        directManagedMemAccessFromHost,
        concurrentManagedAccess,
        pageableMemoryAccess,
        pageableMemoryAccessUsesHostPageTables,
    }
    hipFuncAttributes {
        binaryVersion,
        cacheModeCA,
        constSizeBytes,
        localSizeBytes,
        maxDynamicSharedSizeBytes,
        maxThreadsPerBlock,
        numRegs,
        preferredShmemCarveout,
        ptxVersion,
        sharedSizeBytes,
    }
    hipPointerAttribute_t {
        memoryType,
        device,
        devicePointer,
        hostPointer,
        isManaged,
        allocationFlags,
    }
    dim3 {
        x,
        y,
        z,
    }
    hipMemcpy3DParms {
        srcArray,
        srcPos,
        srcPtr,
        dstArray,
        dstPos,
        dstPtr,
        extent,
        kind,
    }
    hipPitchedPtr {
    }
    hipExtent {
    }
    hipPos {
    }
}

/// A C program printing, for every row, its key and the header's value.
fn c_program(rows: &[Row]) -> String {
    let mut program = String::from(
        "#include <hip/hip_runtime_api.h>\n\
         #include <stddef.h>\n\
         #include <stdio.h>\n\
         int main(void) {\n",
    );
    for row in rows {
        program.push_str(&format!(
            "    printf(\"{} %zu\\n\", {});\n",
            row.key, row.c_expr
        ));
    }
    program.push_str("    return 0;\n}\n");
    program
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
    let rows = layout_rows();
    let dir = tempfile::tempdir().expect("a scratch directory");
    let source = dir.path().join("layout.c");
    let exe = dir.path().join("layout");
    std::fs::write(&source, c_program(&rows)).expect("write layout.c");
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
    let rust: Vec<(String, usize)> = rows
        .into_iter()
        .map(|row| (row.key, row.rust_value))
        .collect();
    assert_eq!(c, rust);
}
