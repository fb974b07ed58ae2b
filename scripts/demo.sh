#!/usr/bin/env bash
# The main job, end to end on a fresh machine with no GPU:
#   1. compile the example kernels with the prlx pass (prlxctl compile),
#   2. build an ordinary driver-API application against the real cuda.h,
#   3. start a user-mode prlxd on a private socket,
#   4. run the application twice — clean input, then a glitching detector
#      channel — on the PTX emulator (libcuda.so.1) under LD_PRELOAD=libprlx.so,
#      which hands every launch to prlxd,
#   5. ask prlxd for the session diff: which kernel, which launch, which
#      source line; then one launch in detail: which lane, which operands;
#   6. write both sessions as one HTML report (prlxctl report) and say where;
#   7. no recompile: the same kernels built by plain clang, instrumented at
#      load by the shim, and the same session diff;
#   8. AMD: the histogram kernel in HIP, pass-built for gfx1100, two runs on
#      the RDNA3 emulator's libamdhip64.so.5 under the shim, the session diff.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

./scripts/setup.sh
echo "== building prlxctl, prlxd, libprlx.so and the emulator's libcuda.so.1"
cargo build --release --locked -q -p prlxctl -p prlxd -p prlx-preload -p prlx-libcuda
target_dir=${CARGO_TARGET_DIR:-$root/target}
lib="$target_dir/release"
ln -sf libcuda.so "$lib/libcuda.so.1"
prlxctl="$lib/prlxctl"

work=$(mktemp -d "${TMPDIR:-/tmp}/prlx-demo.XXXXXX")
daemon=""
cleanup() {
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

echo "== prlxctl compile: examples/app/kernels.cu with the instrumentation pass"
"$prlxctl" compile -g --snapshots examples/app/kernels.cu -o "$work/kernels.ptx"
cc -g -O1 -Wall -I .tools/cuda12/nvidia/cuda_runtime/include examples/app/energy_hist.c \
    -L "$lib" -lcuda -o "$work/energy_hist"

echo "== starting a user-mode prlxd"
export PRLX_SOCKET="$work/prlxd.sock"
"$lib/prlxd" --socket "$PRLX_SOCKET" --state-dir "$work/state" 2>"$work/prlxd.log" &
daemon=$!
for _ in $(seq 100); do
    "$prlxctl" status >/dev/null 2>&1 && break
    sleep 0.1
done
"$prlxctl" status

for run in clean glitch; do
    echo "== run '$run' on the emulator, captured by libprlx.so into prlxd"
    baseline=""
    [ "$run" = glitch ] && baseline=clean
    LD_LIBRARY_PATH="$lib" LD_PRELOAD="$lib/libprlx.so" \
        PRLX_SESSION="$run" PRLX_BASELINE="$baseline" PRLX_SNAPSHOT_DEPTH=8 \
        "$work/energy_hist" "$work/kernels.ptx" "$run"
done

echo
"$prlxctl" session list
echo
echo "== prlxctl session diff clean glitch --wait"
"$prlxctl" session diff clean glitch --wait

echo
echo "== the first diverging launch in detail"
for run in clean glitch; do
    "$prlxctl" session export "$run" "$work/export/$run" >/dev/null
done
# The first diverging launch's trace in each export, and run A's site map.
read -r trace_a trace_b sites < <(
    "$prlxctl" diff --session --json "$work/export/clean" "$work/export/glitch" |
        python3 -c '
import json, os, sys
a, b = sys.argv[1:3]
first = json.load(sys.stdin)["kernels"][0]
def launch(d):
    m = json.load(open(os.path.join(d, "session.json")))
    return next(l for l in m["launches"]
                if l["kernel"] == first["kernel"] and l["launch"] == first["first_diverging_launch"])
la, lb = launch(a), launch(b)
print(os.path.join(a, la["file"]), os.path.join(b, lb["file"]), os.path.join(a, la["site_map"]))
' "$work/export/clean" "$work/export/glitch")
"$prlxctl" diff "$trace_a" "$trace_b" --map "$sites" -n 6

echo
echo "== prlxctl report clean glitch: both sessions, fetched from prlxd, as one self-contained HTML page"
report=${PRLX_DEMO_REPORT:-$target_dir/prlx-demo-report.html}
mkdir -p "$(dirname "$report")"
"$prlxctl" report clean glitch --source-dir "$root" -o "$report"
echo "the HTML report is at $report (opens offline in any browser)"

echo
echo "== no recompile: the same kernels built by plain clang (line info, no pass),"
echo "   instrumented at load by libprlx.so, the same two runs into session directories"
clang-19 -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 \
    -Xclang -target-feature -Xclang +ptx75 -O2 -gline-tables-only \
    -S examples/app/kernels.cu -o "$work/kernels-plain.ptx"
for run in clean glitch; do
    LD_LIBRARY_PATH="$lib" LD_PRELOAD="$lib/libprlx.so" \
        PRLX_TRACE_DIR="$work/plain" PRLX_SESSION="$run" PRLX_SNAPSHOT_DEPTH=8 \
        "$work/energy_hist" "$work/kernels-plain.ptx" "$run" >/dev/null
done
"$prlxctl" diff --session "$work/plain/clean" "$work/plain/glitch"

echo
echo "== AMD: the same histogram kernel in HIP, built for gfx1100 with the pass,"
echo "   run twice by an unmodified module-API program on the RDNA3 emulator"
echo "   (libamdhip64.so.5) under libprlx.so"
hip_lib=$(hip-runtime/build.sh --release 2>/dev/null)
"$prlxctl" compile --offload-arch=gfx1100 -g --snapshots \
    tests/e2e/hip_app/kernels.hip -o "$work/kernels.co"
clang++-19 -D__HIP_PLATFORM_AMD__ -O1 -Wall tests/e2e/hip_app/hip_app.cpp \
    -Wl,--push-state,--no-as-needed -lamdhip64 -Wl,--pop-state -o "$work/hip_app"
for run in clean glitch; do
    LD_LIBRARY_PATH="$hip_lib:$lib" LD_PRELOAD="$lib/libprlx.so" \
        PRLX_TRACE_DIR="$work/hip" PRLX_SESSION="$run" PRLX_SNAPSHOT_DEPTH=8 \
        "$work/hip_app" "$work/kernels.co" "$run" >/dev/null
done
"$prlxctl" diff --session "$work/hip/clean" "$work/hip/glitch"
