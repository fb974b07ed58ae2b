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
        sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        "$python" -m venv --clear "$pyenv"
    fi
    "$pyenv/bin/pip" install -q --disable-pip-version-check "maturin>=1.5,<2" pytest numpy
fi
log "toolchain ready"
