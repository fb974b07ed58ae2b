#!/usr/bin/env bash
# Configure (once) and build libPrlxPass.so against LLVM 19 or 22.
#   llvm-pass/build.sh 19   -> llvm-pass/build-19/libPrlxPass.so
#   llvm-pass/build.sh 22   -> llvm-pass/build-22/libPrlxPass.so
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
major="${1:-19}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$major" in
  19) version=19.1 ;;
  22) version=22.1 ;;
  *) echo "build.sh: unsupported LLVM major '$major' (expected 19 or 22)" >&2; exit 2 ;;
esac
llvm_dir="/usr/lib/llvm-${major}/lib/cmake/llvm"
if [[ ! -f "$llvm_dir/LLVMConfig.cmake" ]]; then
  echo "build.sh: LLVM ${major} CMake package not found at $llvm_dir (install llvm-${major}-dev; see scripts/setup.sh)" >&2
  exit 3
fi
build="$here/build-${major}"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$here" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="${CXX:-clang++-19}" \
    -DPRLX_LLVM_VERSION="$version" \
    -DLLVM_DIR="$llvm_dir" >/dev/null
fi
cmake --build "$build" -- -j"${PRLX_BUILD_JOBS:-2}"
