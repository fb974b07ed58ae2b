#!/usr/bin/env bash
# Installs what prlx's build, tests and demo use, idempotently: Debian's LLVM 19
# toolchain and the CUDA headers/compilers from PyPI wheels (into .tools/).
# Safe to run again; it only installs what is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/.tools"
mkdir -p "$tools"

log() { printf '[setup] %s\n' "$*" >&2; }

sudo_if_needed() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# tmux runs `prlxctl tui` in a real terminal and chromium renders `prlxctl
# report` headless, in the tests.
apt_packages=(systemd util-linux clang-19 libclang-rt-19-dev llvm-19-dev llvm-19-tools lld-19 llvm-22 llvm-22-dev llvm-22-tools clang-22 cmake ninja-build zstd tmux chromium)
missing=()
for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    sudo_if_needed apt-get update -qq
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# CUDA headers (cuda.h) for driver-API programs: nvidia-cuda-runtime-cu12.
# nvcc 13 for the nvcc-compiled part of the emulator corpus.
python=${PYTHON:-python3}
pip_target() {  # dir, marker file, packages...
    local dir=$1 marker=$2; shift 2
    if [ ! -e "$dir/$marker" ]; then
        log "pip installing $* into ${dir#"$root"/}"
        rm -rf "$dir.partial"
        "$python" -m pip install -q --disable-pip-version-check --no-deps --target "$dir.partial" "$@"
        rm -rf "$dir"
        mv "$dir.partial" "$dir"
    fi
}
pip_target "$tools/cuda12" nvidia/cuda_runtime/include/cuda.h "nvidia-cuda-runtime-cu12==12.9.*"
# CUDA 12 SDK pieces (crt headers, ptxas, libdevice) for `prlxctl compile --cuda-path`.
pip_target "$tools/cuda12-nvcc" nvidia/cuda_nvcc/include/crt/host_defines.h "nvidia-cuda-nvcc-cu12==12.9.*"
pip_target "$tools/cuda13" nvidia/cu13/bin/nvcc \
    "nvidia-cuda-nvcc==13.*" "nvidia-cuda-runtime==13.*" "nvidia-cuda-crt==13.*" "nvidia-nvvm==13.*" "nvidia-cuda-cccl==13.*"
# cuobjdump -sass (it runs nvdisasm beside it): the NVBit tool's instruction-selection test reads real SASS (tests/e2e/nvbit_tool.rs).
pip_target "$tools/cuobjdump" nvidia/cu13/bin/nvdisasm "nvidia-cuda-cuobjdump==13.*" "nvidia-cuda-nvdisasm==13.*"
# The Python package (python/): maturin builds its wheel, pytest (with NumPy)
# runs its suite, in a virtualenv of their own.
pyenv="$tools/pyenv"
if [ ! -x "$pyenv/bin/maturin" ] || [ ! -x "$pyenv/bin/pytest" ] ||
    ! "$pyenv/bin/python" -c "import numpy" 2>/dev/null; then
    log "installing maturin, pytest and numpy into ${pyenv#"$root"/}"
    if ! "$python" -m venv --clear "$pyenv" 2>/dev/null; then
        # Debian's python3 keeps venv (ensurepip) in a package of its own.
        sudo_if_needed apt-get update -qq
        sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        "$python" -m venv --clear "$pyenv"
    fi
    "$pyenv/bin/pip" install -q --disable-pip-version-check "maturin>=1.5,<2" pytest numpy
fi
# Triton 3.9 (prlx.triton runs its kernels on the emulator in python/tests)
# and PyTorch (the training-loop helpers' tests). PyPI carries only PyTorch's
# CUDA build (about 3 GB with its NVIDIA libraries, which then go unused):
# installed once, kept in the venv; PRLX_NO_TORCH=1 skips it.
# (Checked through the installed metadata: importing torch takes seconds.)
has_dist() {  # name, version prefix
    "$pyenv/bin/python" -c "import sys, importlib.metadata as m; sys.exit(not m.version('$1').startswith('$2'))" 2>/dev/null
}
if ! has_dist triton 3.9.; then
    log "installing triton 3.9 into ${pyenv#"$root"/}"
    "$pyenv/bin/pip" install -q --disable-pip-version-check "triton==3.9.*"
fi
if [ "${PRLX_NO_TORCH:-0}" != 1 ] && ! has_dist torch ""; then
    log "installing torch into ${pyenv#"$root"/} (large: CUDA build)"
    "$pyenv/bin/pip" install -q --disable-pip-version-check "torch>=2.5"
fi
# Triton compiles its launcher against Python.h at first use.
py_include=$("$pyenv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
if [ ! -f "$py_include/Python.h" ]; then
    log "installing python3-dev (Python.h for Triton's launcher)"
    sudo_if_needed apt-get update -qq
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-dev >/dev/null
fi
# ---- AMD (HIP) toolchain: begin ------------------------------------------------
# Debian's HIP 5.2 (headers, libamdhip64 to link against, hipcc) and ROCm device
# libraries. HIP programs are built with clang-19 for gfx1100 and run on prlx's
# own libamdhip64.so.5 (hip-runtime/) over the RDNA3 emulator (rdna/).
amd_packages=(libamdhip64-dev rocm-device-libs hipcc)
amd_missing=()
for p in "${amd_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || amd_missing+=("$p")
done
if [ ${#amd_missing[@]} -gt 0 ]; then
    log "installing ${amd_missing[*]}"
    sudo_if_needed apt-get update -qq
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${amd_missing[@]}" >/dev/null
fi
# ROCm 5.2's device libraries stop at gfx1030; gfx1100 (RDNA3) needs only
# oclc_isa_version_1100.bc, which is the 1030 file with __oclc_ISA_version = 11000.
# Pass this directory as clang's --rocm-device-lib-path. The file is written
# by the oldest LLVM present (Debian's hipcc drives clang-15, which cannot
# read LLVM 19 bitcode; clang-19 reads LLVM 15's).
amd_bitcode=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
amd_libdir="$tools/amdgcn-gfx1100/bitcode"
amd_llvm=19
if command -v llvm-as-15 >/dev/null && command -v llvm-dis-15 >/dev/null; then
    amd_llvm=15
fi
if [ ! -e "$amd_libdir/oclc_isa_version_1100.bc" ] ||
    [ "$(cat "$amd_libdir/.made-by-llvm" 2>/dev/null)" != "$amd_llvm" ]; then
    log "making the gfx1100 device-library directory ${amd_libdir#"$root"/} (LLVM $amd_llvm)"
    rm -rf "$amd_libdir.partial"
    mkdir -p "$amd_libdir.partial"
    cp -a "$amd_bitcode"/. "$amd_libdir.partial"/
    "llvm-dis-$amd_llvm" "$amd_bitcode/oclc_isa_version_1030.bc" -o - |
        sed 's/i32 10300/i32 11000/' |
        "llvm-as-$amd_llvm" -o "$amd_libdir.partial/oclc_isa_version_1100.bc"
    echo "$amd_llvm" >"$amd_libdir.partial/.made-by-llvm"
    rm -rf "$amd_libdir"
    mv "$amd_libdir.partial" "$amd_libdir"
fi
# ---- AMD (HIP) toolchain: end --------------------------------------------------
log "toolchain ready"
