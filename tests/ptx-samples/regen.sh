#!/usr/bin/env bash
# Regenerates the PTX samples from src/*.cu (and src/triton_kernels.py).
#   clang/   clang-19, SDK-free (-nocudainc -nocudalib), sm_80, PTX 7.5
#   nvcc/    CUDA 13 nvcc -ptx -arch=sm_80
#   triton/  Triton 3.x ahead-of-time compile for sm_80 (optional:
#            set TRITON_PATH to a `pip install --target` folder)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="$here/src"
clang="${CLANG:-clang-19}"
nvcc="${NVCC:-$root/.tools/cuda13/nvidia/cu13/bin/nvcc}"
mkdir -p "$here/clang" "$here/nvcc" "$here/triton"

clang_ptx() { # out.ptx in.cu [extra flags]
    local out="$1" in="$2"; shift 2
    "$clang" -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 \
        -Xclang -target-feature -Xclang +ptx75 -O2 "$@" -S "$in" -o "$out"
}

kernels=(vector_add reduction atomics device_calls switch half_convert math64 debug_loop globals printf_bounds)
for k in "${kernels[@]}"; do
    clang_ptx "$here/clang/$k.ptx" "$src/$k.cu"
done
clang_ptx "$here/clang/clang_builtins.ptx" "$src/clang_builtins.cu"
clang_ptx "$here/clang/debug_loop-g.ptx" "$src/debug_loop.cu" -g -O0
clang_ptx "$here/clang/debug_loop-line-tables.ptx" "$src/debug_loop.cu" -gline-tables-only

if [ -x "$nvcc" ]; then
    for k in "${kernels[@]}"; do
        "$nvcc" -ptx -arch=sm_80 "$src/$k.cu" -o "$here/nvcc/$k.ptx"
    done
    "$nvcc" -ptx -arch=sm_80 "$src/nvcc_texture_cg.cu" -o "$here/nvcc/nvcc_texture_cg.ptx"
    "$nvcc" -ptx -arch=sm_80 -lineinfo "$src/debug_loop.cu" -o "$here/nvcc/debug_loop-lineinfo.ptx"
    "$nvcc" -ptx -arch=sm_80 -G "$src/debug_loop.cu" -o "$here/nvcc/debug_loop-G.ptx"
else
    echo "regen.sh: nvcc not found at $nvcc, nvcc samples not regenerated" >&2
fi

if [ -n "${TRITON_PATH:-}" ]; then
    PYTHONPATH="$TRITON_PATH" TRITON_DEFAULT_FP_FUSION=1 TRITON_CACHE_DIR="$(mktemp -d)" \
        python3 "$src/triton_kernels.py" "$here/triton"
fi
# Source paths in .file directives and comments differ per machine; make them stable.
sed -i "s#$root/##g" "$here"/clang/*.ptx "$here"/nvcc/*.ptx "$here"/triton/*.ptx
