#!/usr/bin/env bash
# Builds the device runtime to LLVM IR, for linking into instrumented modules:
#   build/prlx_rt_nvptx.bc        NVPTX (sm_80, +ptx75), for clang-built CUDA
#   build/prlx_rt_nvptx.flagfree.ll  the same without module flags, target
#                                  attributes, triple or data layout (Triton)
#   build/prlx_rt_amdgpu.bc       AMDGPU (gfx1100, wave32), for HIP
#   build/prlx_rt_amdgpu_w64.bc   AMDGPU (gfx1100, wave64: -mwavefrontsize64)
# Idempotent: outputs newer than their sources are left alone.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
clang="${PRLX_CLANG:-clang-19}"
llvm_as="${PRLX_LLVM_AS:-llvm-as-19}"
out="$here/build"
mkdir -p "$out"
src="$here/src"
deps=("$src/prlx_layout.h" "$src/prlx_record.inc")

stale() { # stale OUTPUT INPUT...
  local o="$1"; shift
  [[ ! -f "$o" ]] && return 0
  for i in "$@"; do [[ "$i" -nt "$o" ]] && return 0; done
  return 1
}

# Target attributes are dropped so the runtime inlines into kernels built for
# any sm_XX / gfxXXXX (the inliner refuses callees with different target-cpu
# or target-features); the always_inline calls then take the caller's.
strip_target_attrs() {
  sed -E -e 's/ "target-cpu"="[^"]*"//g' -e 's/ "target-features"="[^"]*"//g' \
         -e 's/ "frame-pointer"="[^"]*"//g'
}

# The descriptor never changes while a kernel runs (the host writes it
# between launches; device code only reads it), so its loads are marked
# !invariant.load: once inlined, the optimiser keeps one load of each field
# per kernel and hoists it out of loops, and a site visited while not
# capturing costs a branch on a register instead of a load, a compare and a
# branch (docs/instrumentation-overhead.md).
invariant_desc_loads() {
  sed -E '/= load .*@__prlx_desc( |,|\))/ s/$/, !invariant.load !{}/'
}

nv_ll="$out/prlx_rt_nvptx.ll"
if stale "$out/prlx_rt_nvptx.bc" "$src/prlx_rt_nvptx.cu" "${deps[@]}" "$0"; then
  "$clang" -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 \
    -Xclang -target-feature -Xclang +ptx75 -O2 -S -emit-llvm \
    -I"$src" "$src/prlx_rt_nvptx.cu" -o - | strip_target_attrs | invariant_desc_loads >"$nv_ll"
  "$llvm_as" "$nv_ll" -o "$out/prlx_rt_nvptx.bc"
  # Triton's llir has its own flags (nvvm-reflect-ftz...), no triple, and a
  # newer LLVM: keep only what links cleanly into it.
  sed -E -e '/^!llvm\.module\.flags = /d' -e '/^!llvm\.ident = /d' \
         -e '/^target (triple|datalayout) = /d' "$nv_ll" >"$out/prlx_rt_nvptx.flagfree.ll"
  "$llvm_as" "$out/prlx_rt_nvptx.flagfree.ll" -o /dev/null
fi

if stale "$out/prlx_rt_amdgpu.bc" "$src/prlx_rt_amdgpu.hip" "${deps[@]}" "$0"; then
  "$clang" -x hip --cuda-device-only -nogpulib -nogpuinc --offload-arch=gfx1100 -fgpu-rdc \
    -O2 -S -emit-llvm -I"$src" "$src/prlx_rt_amdgpu.hip" -o - | strip_target_attrs | invariant_desc_loads >"$out/prlx_rt_amdgpu.ll"
  "$llvm_as" "$out/prlx_rt_amdgpu.ll" -o "$out/prlx_rt_amdgpu.bc"
fi

if stale "$out/prlx_rt_amdgpu_w64.bc" "$src/prlx_rt_amdgpu.hip" "${deps[@]}" "$0"; then
  "$clang" -x hip --cuda-device-only -nogpulib -nogpuinc --offload-arch=gfx1100 -mwavefrontsize64 -fgpu-rdc \
    -O2 -S -emit-llvm -I"$src" "$src/prlx_rt_amdgpu.hip" -o - | strip_target_attrs | invariant_desc_loads >"$out/prlx_rt_amdgpu_w64.ll"
  "$llvm_as" "$out/prlx_rt_amdgpu_w64.ll" -o "$out/prlx_rt_amdgpu_w64.bc"
fi
