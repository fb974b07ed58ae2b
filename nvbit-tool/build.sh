#!/usr/bin/env bash
# Builds libprlx_nvbit.so, prlx's NVBit tool, against an NVBit release.
#
#   NVBIT_PATH=/opt/nvbit_release/core ./nvbit-tool/build.sh [OUT_DIR]
#
# NVBIT_PATH is the release's core/ directory (nvbit.h, nvbit_tool.h,
# libnvbit.a, utils/channel.hpp); nvcc comes from $NVCC, $CUDA_HOME/bin or
# PATH. Without an NVBit release the script says so and exits 0 having built
# nothing, so a machine without one (CI, no GPU) skips cleanly.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build}

core=${NVBIT_PATH:-}
if [ -n "$core" ] && [ ! -f "$core/nvbit.h" ] && [ -f "$core/core/nvbit.h" ]; then
    core=$core/core
fi
if [ -z "$core" ] || [ ! -f "$core/nvbit.h" ] || [ ! -f "$core/libnvbit.a" ]; then
    echo "nvbit-tool: skipped: no NVBit release (set NVBIT_PATH to its core/ directory holding nvbit.h and libnvbit.a)"
    exit 0
fi
nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
    if [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then nvcc=$CUDA_HOME/bin/nvcc
    else nvcc=$(command -v nvcc || true); fi
fi
if [ -z "$nvcc" ]; then
    echo "nvbit-tool: skipped: nvcc not found (set NVCC or CUDA_HOME)"
    exit 0
fi

mkdir -p "$out"
arch=${NVBIT_ARCH:-all-major}
# NVBit's headers are -isystem: their warnings are not ours to fail on.
common=(-std=c++17 -isystem "$core" -I"$here/src" -Xcompiler -fPIC,-Wall,-Wextra,-Werror)
# Host units: plain C++, no NVBit.
"$nvcc" "${common[@]}" -O2 -c "$here/src/select.cpp" -o "$out/select.o"
"$nvcc" "${common[@]}" -O2 -c "$here/src/trace_writer.cpp" -o "$out/trace_writer.o"
# The tool's host side (and the flush kernel).
"$nvcc" "${common[@]}" -O2 -arch="$arch" -Xptxas -cloning=no -dc "$here/src/tool.cu" -o "$out/tool.o"
# Injected functions: NVBit requires these exact flags.
"$nvcc" "${common[@]}" -arch="$arch" -maxrregcount=24 -Xptxas -astoolspatch \
    --keep-device-functions -c "$here/src/inject_funcs.cu" -o "$out/inject_funcs.o"
# nvcc device-links tool.o's relocatable device code itself here.
"$nvcc" -arch="$arch" -shared -Xcompiler -fPIC "$out"/tool.o \
    "$out"/inject_funcs.o "$out"/select.o "$out"/trace_writer.o \
    -L"$core" -lnvbit -lcuda -lcudart_static -o "$out/libprlx_nvbit.so"
echo "nvbit-tool: built $out/libprlx_nvbit.so"
