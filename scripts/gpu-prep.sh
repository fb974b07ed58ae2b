#!/usr/bin/env bash
# Builds, on a machine without a GPU (after scripts/setup.sh), everything
# scripts/gpu-check.sh needs on a GPU machine that may have no network, into
# one directory to copy there (docs/gpu-check.md):
#   scripts/gpu-prep.sh [OUT]          (default: gpu-bundle/ in the checkout)
# It holds prlxctl, prlxd, libprlx.so; the demo (examples/app) and the race
# (examples/race); the control-flow shapes of the hardware data; the capture-cost benchmark (examples/capture-bench); the
# runtime-API corpus (tests/runtime-api, nvcc 13, sm_90 SASS + compute_90
# PTX, against one shared libcudart.so.13); the function-unit sweep; the
# Python checks and the prlx wheel; gpu-check.sh itself. Kept under 64 MiB.
# A part whose tool is missing here is left out with a note in PREP-NOTES;
# gpu-check.sh then reports its rows as skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$root/gpu-bundle}")
cd "$root"
case "$out" in
"$root" | / | "$HOME") echo "gpu-prep: refusing to use $out as the bundle directory" >&2; exit 2 ;;
esac
rm -rf "$out" && mkdir -p "$out/bin" "$out/corpus" "$out/demo" "$out/race" "$out/bench" "$out/gpu"
note() { echo "gpu-prep: $*"; echo "$*" >>"$out/PREP-NOTES"; }
: >"$out/PREP-NOTES"

echo "gpu-prep: building prlxctl, prlxd, libprlx.so, the emulator's libcuda.so (release)"
cargo build --release --locked -q -p prlxctl -p prlxd -p prlx-preload -p prlx-libcuda
rel="${CARGO_TARGET_DIR:-$root/target}/release"
cp "$rel/prlxctl" "$rel/prlxd" "$rel/libprlx.so" "$out/bin/"
strip "$out/bin/prlxctl" "$out/bin/prlxd"
strip --strip-unneeded "$out/bin/libprlx.so"
cp scripts/gpu-check.sh "$out/"
git rev-parse HEAD >"$out/COMMIT" 2>/dev/null || echo unknown >"$out/COMMIT"

cuda_inc=.tools/cuda12/nvidia/cuda_runtime/include
[ -f "$cuda_inc/cuda.h" ] || { echo "gpu-prep: no $cuda_inc/cuda.h (run scripts/setup.sh)" >&2; exit 1; }
# Driver-API programs link against the emulator's libcuda.so (soname
# libcuda.so.1): on the GPU machine the driver's libcuda.so.1 is loaded.
ccd() { cc -O2 -Wall -I "$cuda_inc" "$@" -L "$rel" -lcuda -lm && strip "${!#}"; }
# Plain clang PTX with line info: what the shim instruments at load.
plain_ptx() { clang-19 -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 \
    -Xclang -target-feature -Xclang +ptx75 -O2 -gline-tables-only -S "$1" -o "$2"; }
have_clang=0
command -v clang-19 >/dev/null && have_clang=1

# The demo: pass-built kernels, plain kernels (PTX at load), the program.
"$out/bin/prlxctl" compile -g --snapshots examples/app/kernels.cu -o "$out/demo/kernels.ptx"
ccd examples/app/energy_hist.c -o "$out/demo/energy_hist"
if [ $have_clang = 1 ]; then
    plain_ptx examples/app/kernels.cu "$out/demo/kernels-plain.ptx"
else
    note "no clang-19: the demo's PTX-at-load row is skipped"
fi

# The race of examples/race (pass-built).
"$out/bin/prlxctl" compile -g examples/race/race.cu -o "$out/race/race.ptx"
ccd examples/race/race.c -o "$out/race/race"

# The capture-cost benchmark: plain and pass-built kernels, the program.
"$out/bin/prlxctl" compile -g examples/capture-bench/kernels.cu -o "$out/bench/bench-pass.ptx"
ccd examples/capture-bench/bench.c -o "$out/bench/capture-bench"
if [ $have_clang = 1 ]; then
    plain_ptx examples/capture-bench/kernels.cu "$out/bench/bench-plain.ptx"
else
    note "no clang-19: the capture benchmark has no plain PTX (its rows are skipped)"
fi

# The control-flow shapes of the hardware data (shapes/inputs: the program
# and both builds as recorded on the H200, so sites keep their identities).
hw=${PRLX_HARDWARE_DIR:-$root/../shared/hardware}
if [ -d "$hw/shapes/inputs" ]; then
    mkdir -p "$out/shapes"
    cp "$hw/shapes/inputs/"{bench,bench.c,shapes.cu,shapes.pass.ptx,shapes.plain.ptx} "$out/shapes/"
else
    note "no hardware data at $hw (PRLX_HARDWARE_DIR): the shapes row is skipped"
fi

# The runtime-API corpus and the sweep, by nvcc 13 against one shared cudart.
nvcc=.tools/cuda13/nvidia/cu13/bin/nvcc
if [ -x "$nvcc" ]; then
    cp .tools/cuda13/nvidia/cu13/lib/libcudart.so.13 "$out/corpus/"
    # -lcudart wants a libcudart.so, which the wheel does not ship.
    link_dir=$(mktemp -d)
    trap 'rm -rf "$link_dir"' EXIT
    ln -s "$root/.tools/cuda13/nvidia/cu13/lib/libcudart.so.13" "$link_dir/libcudart.so"
    gencode=(-gencode 'arch=compute_90,code=[sm_90,compute_90]')
    # One program as tests/e2e/runtime_api.rs builds it: extra flags from a
    # first line "// nvcc-flags: ...", a folder of its name is separate
    # compilation (-rdc=true).
    corpus_one() {
        local src=$1 name first extra=()
        name=$(basename "$src" .cu)
        IFS= read -r first <"$src" || true
        # shellcheck disable=SC2206 # the flags are words
        [[ "$first" == "// nvcc-flags:"* ]] && extra=(${first#// nvcc-flags:})
        [ -d "tests/runtime-api/$name" ] && extra+=(-rdc=true "tests/runtime-api/$name"/*.cu)
        if "$nvcc" -cudart shared -L"$link_dir" -lineinfo "${gencode[@]}" -I tests/runtime-api "${extra[@]}" \
            "$src" -o "$out/corpus/$name" 2>"$out/corpus/$name.build-errors"; then
            strip "$out/corpus/$name" && rm -f "$out/corpus/$name.build-errors"
        else
            note "corpus: $name did not build (see corpus/$name.build-errors)"
        fi
    }
    echo "gpu-prep: building the runtime-API corpus with nvcc 13 (two at a time)"
    for src in tests/runtime-api/*.cu; do
        [ "$(jobs -rp | wc -l)" -lt 2 ] || wait -n
        corpus_one "$src" &
    done
    wait
    if "$nvcc" -cudart shared -L"$link_dir" -O2 "${gencode[@]}" scripts/gpu/sweep.cu -o "$out/gpu/sweep"; then
        strip "$out/gpu/sweep"
    else
        note "the sweep did not build"
    fi
else
    note "no nvcc 13 (.tools/cuda13): no runtime-API corpus, no sweep binary (the check builds the sweep with a local nvcc if there is one)"
fi
cp scripts/gpu/sweep.cu scripts/gpu/h200-sweep-summary.txt scripts/gpu/*.py "$out/gpu/"

# The prlx wheel (prlx.triton's ptx stage), installed offline there.
if [ -x .tools/pyenv/bin/maturin ]; then
    .tools/pyenv/bin/maturin build --quiet --locked --release --strip \
        --manifest-path python/Cargo.toml --out "$out/wheel" >/dev/null ||
        note "the prlx wheel did not build"
else
    note "no maturin (.tools/pyenv): no prlx wheel, the Triton row runs without prlx.triton"
fi

[ -s "$out/PREP-NOTES" ] || rm -f "$out/PREP-NOTES"
du -sh "$out"/* | sort -h | tail -5 | sed 's/^/gpu-prep:   /'
size=$(du -sm "$out" | cut -f1)
echo "gpu-prep: $out holds ${size} MiB; copy it to the GPU machine and run its gpu-check.sh"
[ "$size" -lt 64 ] || { echo "gpu-prep: the bundle is over 64 MiB" >&2; exit 1; }
