#!/usr/bin/env bash
# Builds the prlx wheel with maturin into a temporary directory, installs it
# there (not into the source tree, so the tests import the built package),
# and runs python/tests with pytest. Needs scripts/setup.sh's .tools/pyenv;
# compares against prlxctl's JSON and talks to a prlxd it starts
# ($PRLX_PRLXCTL, $PRLX_PRLXD; default: the debug builds of cargo test), and
# runs Triton kernels on the emulator's libcuda.so.1 of those builds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pyenv="$root/.tools/pyenv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$pyenv/bin/maturin" build --quiet --locked --manifest-path "$root/python/Cargo.toml" --out "$work/wheel"
wheels=("$work"/wheel/prlx-*-abi3-*.whl)
[ -f "${wheels[0]}" ] || { echo "python/test.sh: maturin built no abi3 wheel" >&2; exit 1; }
"$pyenv/bin/pip" install --quiet --disable-pip-version-check --no-deps --target "$work/site" "${wheels[0]}"

target="${CARGO_TARGET_DIR:-$root/target}"
bin="$target/debug"
export PRLX_PRLXCTL="${PRLX_PRLXCTL:-$bin/prlxctl}" PRLX_PRLXD="${PRLX_PRLXD:-$bin/prlxd}"
# Triton on the emulator (tests/test_triton.py): the emulator's libcuda.so.1
# first, the shim, the LLVM 22 pass and device runtime of this checkout
# (llvm-pass/test.sh builds them), compiled kernels cached under the target dir.
# (Built by cargo test already in scripts/test.sh; a no-op then.)
cargo build -q --locked --manifest-path "$root/Cargo.toml" -p prlx-libcuda -p prlx-preload -p prlxctl -p prlxd
ln -sfn libcuda.so "$bin/libcuda.so.1"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TRITON_LIBCUDA_PATH="$bin"
export PRLX_SHIM="${PRLX_SHIM:-$bin/libprlx.so}" PRLX_ROOT="$root"
export TRITON_CACHE_DIR="${TRITON_CACHE_DIR:-$target/triton-cache}" TRITON_DEFAULT_FP_FUSION=1
cd "$work"
# pytest's status is the script's: 1 failed tests, 5 none collected, ...
PYTHONPATH="$work/site" "$pyenv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests" "$@"
