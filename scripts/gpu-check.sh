#!/usr/bin/env bash
# Checks prlx on a Linux machine with an NVIDIA GPU and its driver, from the
# bundle scripts/gpu-prep.sh built beforehand (no network needed here), and
# prints one table: each row ok, slow (works, misses its speed goal), FAIL,
# or skipped (with the reason). docs/gpu-check.md says how to run it and
# what each row measures.
#   gpu-check.sh [BUNDLE]   (default: the directory holding this script when
#                            it is the bundle's copy, else gpu-bundle/ of the checkout)
# Environment:
#   PRLX_GPU_CHECK_EMULATOR=1  run against prlx's emulator (the checkout's
#       target/release/libcuda.so, as libcuda.so.1) instead of a GPU
#   PRLX_GPU_CHECK_OUT=DIR     outputs (default ./gpu-check-out/<UTC time>)
#   PRLX_GPU_CHECK_BUDGET=S    stop starting corpus programs (run last) S
#                              seconds after the start (default 250; 1800
#                              on the emulator)
#   PRLX_GPU_CHECK_BENCH="collatz:65536 saxpy:1024 ..."  benchmark cases
#   PRLX_GPU_CHECK_TRAIN_SECONDS=S   each training-loop run (default 4)
#   PRLX_GPU_PYTHON=python3    the Python with PyTorch (and Triton)
# Outputs: table.md, each row's logs, and new hardware data in the layout of
# /work/shared/hardware/: the demo's sessions (demo-traces/), the
# control-flow shapes (shapes/) and the function-unit sweep (sweep/). Exit status 0 when
# no row is FAIL or slow, 1 otherwise, 2 without a bundle.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${1:-}" ]; then
    bundle=$(realpath -m "$1")
elif [ -x "$here/bin/prlxctl" ]; then
    bundle=$here
else
    bundle=$(realpath -m "$here/../gpu-bundle")
fi
[ -x "$bundle/bin/prlxctl" ] || { echo "gpu-check: no bundle at $bundle (run scripts/gpu-prep.sh first)" >&2; exit 2; }
out=$(realpath -m "${PRLX_GPU_CHECK_OUT:-gpu-check-out/$(date -u +%Y%m%dT%H%M%SZ)}")
mkdir -p "$out" || exit 2
bin="$bundle/bin"
shim="$bin/libprlx.so"
prlxctl="$bin/prlxctl"
emulator=0
[ "${PRLX_GPU_CHECK_EMULATOR:-}" = 1 ] && emulator=1

if [ "$emulator" = 1 ]; then
    emu=$(realpath -m "${CARGO_TARGET_DIR:-$here/../target}/release")
    [ -f "$emu/libcuda.so" ] || { echo "gpu-check: no emulator at $emu/libcuda.so (cargo build --release -p prlx-libcuda)" >&2; exit 2; }
    ln -sfn libcuda.so "$emu/libcuda.so.1"
    # The corpus and the sweep carry compute_90 PTX: emulate an sm_90 device.
    export LD_LIBRARY_PATH="$emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PRLX_EMU_SM=${PRLX_EMU_SM:-90}
    device="prlx's emulator ($emu/libcuda.so.1), not a GPU"
    budget=${PRLX_GPU_CHECK_BUDGET:-1800}
    bench_cases=${PRLX_GPU_CHECK_BENCH:-"collatz:256 collatz:1024 collatz:4096 saxpy:256 saxpy:1024 saxpy:4096"}
    bench_reps=3
elif command -v nvidia-smi >/dev/null; then
    device=$(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null | head -1)
    device="${device:-nvidia-smi answered nothing}"
    budget=${PRLX_GPU_CHECK_BUDGET:-250}
    bench_cases=${PRLX_GPU_CHECK_BENCH:-"collatz:65536 collatz:1048576 collatz:4194304 saxpy:1024 saxpy:1048576 saxpy:16777216"}
    bench_reps=10
else
    echo "gpu-check: no nvidia-smi here (no NVIDIA driver?); PRLX_GPU_CHECK_EMULATOR=1 runs on prlx's emulator" >&2
    exit 2
fi
deadline=$((SECONDS + budget))
echo "gpu-check: $device; bundle $bundle ($(cat "$bundle/COMMIT" 2>/dev/null)); outputs in $out" >&2

rows=()
row() { # row NAME STATUS DETAIL
    rows+=("$1"$'\t'"$2"$'\t'"$3")
    printf 'gpu-check: %-30s %-7s %s\n' "$1" "$2" "$3" >&2
}
# run_t SECONDS CMD...: a command bounded in time.
run_t() {
    local t=$1
    shift
    timeout -k 5 "$t" "$@"
}
# The first "FILE:LINE:COL" of kernels.cu a diff report names.
named_line() { grep -o 'kernels.cu:[0-9]*:[0-9]*' "$1" | head -1; }

# A prlxd of our own, its state and log under DIR, its socket in a short
# directory of /tmp (a socket's path must fit in 108 bytes): sets
# PRLX_SOCKET and daemon. Stopped on exit.
daemon=""
sockdir=$(mktemp -d /tmp/prlx-gpu-check.XXXXXX) || exit 2
trap 'stop_prlxd; rm -rf "$sockdir"' EXIT
start_prlxd() {
    mkdir -p "$1"
    export PRLX_SOCKET="$sockdir/prlxd.sock"
    "$bin/prlxd" --socket "$PRLX_SOCKET" --state-dir "$1/state" 2>"$1/prlxd.log" &
    daemon=$!
    local _
    for _ in $(seq 100); do
        "$prlxctl" status >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}
stop_prlxd() {
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    daemon=""
    unset PRLX_SOCKET
    rm -f "$sockdir/prlxd.sock"
}

# A session directory's launches by capture mode: "pass:6" or "metadata:2 ptx:9".
modes() {
    python3 - "$1" <<'PY' 2>/dev/null || echo "unreadable session"
import collections, json, os, sys
p = os.path.join(sys.argv[1], "session.json")
if not os.path.exists(p):
    print("no session"); raise SystemExit
c = collections.Counter(l.get("capture", "?") for l in json.load(open(p)).get("launches", []))
print(" ".join(f"{k}:{v}" for k, v in sorted(c.items())) or "no launches")
PY
}
# session_stat DIR launches|bytes: the session's launch count, or the mean
# trace_bytes of its launches.
session_stat() {
    python3 - "$1" "$2" <<'PY' 2>/dev/null || echo 0
import json, os, sys
launches = json.load(open(os.path.join(sys.argv[1], "session.json"))).get("launches", [])
if sys.argv[2] == "launches":
    print(len(launches))
else:
    print(round(sum(l.get("trace_bytes", 0) for l in launches) / max(len(launches), 1)))
PY
}

# ---- the demo: through prlxd (pass-built kernels), the same recorded as
# session directories (demo-traces/), and the plain kernels instrumented at load
demo_prlxd() {
    local d="$bundle/demo" w="$out/demo" ok=1 run base
    mkdir -p "$w"
    if ! start_prlxd "$w"; then
        row demo-prlxd FAIL "prlxd did not answer (see $w/prlxd.log)"
        stop_prlxd
        return
    fi
    for run in clean glitch; do
        base=""
        [ "$run" = glitch ] && base=clean
        LD_PRELOAD="$shim" PRLX_SESSION=$run PRLX_BASELINE="$base" PRLX_SNAPSHOT_DEPTH=8 \
            run_t 60 "$d/energy_hist" "$d/kernels.ptx" "$run" >"$w/$run.out" 2>&1 || ok=0
    done
    if [ "$ok" = 1 ] && run_t 60 "$prlxctl" session diff clean glitch --wait >"$w/session-diff.txt" 2>&1 &&
        [ -n "$(named_line "$w/session-diff.txt")" ]; then
        row demo-prlxd ok "session diff names $(named_line "$w/session-diff.txt")"
    else
        row demo-prlxd FAIL "see $w (session-diff.txt, clean.out, glitch.out, prlxd.log)"
    fi
    stop_prlxd
}

demo_traces() {
    local d="$bundle/demo" w="$out/demo-traces" ok=1 run
    mkdir -p "$w/inputs"
    cp "$d/energy_hist" "$w/inputs/energy_hist"
    cp "$d/kernels.ptx" "$w/inputs/demo.pass.ptx"
    echo "$device; $(date -u +%Y-%m-%dT%H:%MZ); bundle $(cat "$bundle/COMMIT" 2>/dev/null)" >"$w/DEVICE"
    for run in clean glitch; do
        (cd "$w/inputs" && LD_PRELOAD="$shim" PRLX_TRACE_DIR="$w" PRLX_SESSION=$run PRLX_SNAPSHOT_DEPTH=8 \
            run_t 60 ./energy_hist demo.pass.ptx "$run") >"$w/$run.out" 2>&1 || ok=0
    done
    local m
    m=$(modes "$w/clean")
    if [ "$ok" = 1 ] && [ "$m" = "pass:6" ] && [ "$(modes "$w/glitch")" = "pass:6" ] &&
        run_t 60 "$prlxctl" diff --session "$w/clean" "$w/glitch" >"$w/diff.txt" 2>&1 &&
        [ -n "$(named_line "$w/diff.txt")" ]; then
        row demo-traces ok "6 launches pass-captured per run, diff names $(named_line "$w/diff.txt"); in $w"
    else
        row demo-traces FAIL "clean: $m; see $w (*.out, diff.txt)"
    fi
}

demo_ptx_at_load() {
    local d="$bundle/demo" w="$out/demo-plain" ok=1 run
    [ -f "$d/kernels-plain.ptx" ] || { row demo-ptx-at-load skipped "no plain PTX in the bundle (no clang-19 at prep)"; return; }
    mkdir -p "$w"
    for run in clean glitch; do
        LD_PRELOAD="$shim" PRLX_TRACE_DIR="$w" PRLX_SESSION=$run PRLX_SNAPSHOT_DEPTH=8 \
            run_t 60 "$d/energy_hist" "$d/kernels-plain.ptx" "$run" >"$w/$run.out" 2>&1 || ok=0
    done
    if [ "$ok" = 1 ] && run_t 60 "$prlxctl" diff --session "$w/clean" "$w/glitch" >"$w/diff.txt" 2>&1 &&
        [ -n "$(named_line "$w/diff.txt")" ]; then
        row demo-ptx-at-load ok "$(modes "$w/clean") per run, diff names $(named_line "$w/diff.txt")"
    else
        row demo-ptx-at-load FAIL "$(modes "$w/clean"); see $w (*.out, diff.txt)"
    fi
}

# A program's output as compared: without the shim's lines ("[prlx] ..."),
# the emulator's diagnostics ("prlx-emu: ...", which name the PTX line of
# the module as loaded, instrumented or not), the shell's report of a crash
# ("...: line 68:  4352 Segmentation fault ...", whose pid differs), and
# with times ("0.026 ms") blanked.
own_lines_out() {
    grep -Ev '\[prlx\]|prlx-emu:|^CUDA_ERROR_[A-Z_]*: |: line [0-9]+: +[0-9]+ ' "$1" |
        sed -E 's/[0-9]+(\.[0-9]+)? ?(ms|us|s)\b/<time>/g'
}
# The last line of FILE naming an error, else its last non-empty line.
last_error() {
    { grep -E '^[A-Za-z_.]*(Error|Exception)|[Ee]rror: |FAIL' "$1" || grep -v '^[[:space:]]*$' "$1"; } | tail -1 | cut -c1-140
}

# ---- the control-flow shapes of the hardware data (shapes/): each kernel,
# pass-built and plain (PTX at load), recorded as the H200's were:
# shapes-pass/KERNEL/, shapes-plain/KERNEL/, KERNEL.out (its output buffer)
shapes() {
    local s="$bundle/shapes" w="$out/shapes" k build bad=""
    [ -x "$s/bench" ] || { row shapes-traces skipped "no shapes in the bundle (no hardware data at prep)"; return; }
    mkdir -p "$w"
    cp "$s/shapes.cu" "$s/bench.c" "$w/"
    local kernels
    kernels=$(grep -o '\.entry [a-z_]*' "$s/shapes.plain.ptx" | cut -d' ' -f2)
    for k in $kernels; do
        for build in pass plain; do
            BENCH_DUMP="$w/$k.$build.out" LD_PRELOAD="$shim" PRLX_TRACE_DIR="$w/shapes-$build" PRLX_SESSION="$k" \
                PRLX_SNAPSHOT_DEPTH=4 run_t 60 "$s/bench" "$s/shapes.$build.ptx" "$k" 8192 1 >"$w/$k.$build.log" 2>&1 ||
                bad="$bad $k.$build(exit)"
            [ "$(modes "$w/shapes-$build/$k")" = "$([ $build = pass ] && echo pass || echo ptx):1" ] ||
                bad="$bad $k.$build($(modes "$w/shapes-$build/$k"))"
        done
        if cmp -s "$w/$k.pass.out" "$w/$k.plain.out"; then
            mv "$w/$k.pass.out" "$w/$k.out" && rm -f "$w/$k.plain.out"
        else
            bad="$bad $k(outputs differ)"
        fi
    done
    if [ -z "$bad" ]; then
        row shapes-traces ok "$(wc -w <<<"$kernels") kernels, pass-built and PTX at load, captured, same outputs; in $w"
    else
        row shapes-traces FAIL "${bad# }; see $w"
    fi
}

# ---- the runtime-API corpus, plainly and under the shim: same exit status,
# same stdout and stderr (own_lines_out)
corpus() {
    local c="$bundle/corpus" w="$out/corpus" p n a b m
    mkdir -p "$w"
    local progs=()
    for p in "$c"/*; do [ -f "$p" ] && [ -x "$p" ] && [[ "$p" != *.so* ]] && progs+=("$p"); done
    [ ${#progs[@]} -gt 0 ] || { row runtime-api-corpus skipped "no corpus in the bundle (no nvcc 13 at prep)"; return; }
    local same=0 differ=0 late=0 captured=0
    for p in "${progs[@]}"; do
        n=$(basename "$p")
        if [ "$SECONDS" -ge "$deadline" ]; then late=$((late + 1)); continue; fi
        (cd "$w" && LD_LIBRARY_PATH="$c${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" run_t 60 "$p" >"$n.plain.out" 2>"$n.plain.err")
        a=$?
        (cd "$w" && LD_LIBRARY_PATH="$c${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$shim" \
            PRLX_TRACE_DIR="$w/sessions" PRLX_SESSION="$n" run_t 120 "$p" >"$n.shim.out" 2>"$n.shim.err")
        b=$?
        m=$(modes "$w/sessions/$n")
        if [ "$a" = "$b" ] && cmp -s <(own_lines_out "$w/$n.plain.out") <(own_lines_out "$w/$n.shim.out") &&
            cmp -s <(own_lines_out "$w/$n.plain.err") <(own_lines_out "$w/$n.shim.err"); then
            same=$((same + 1))
            row "corpus/$n" ok "exit $a both; $m"
        else
            differ=$((differ + 1))
            row "corpus/$n" FAIL "exit $a plainly, $b under the shim; $m; see $w/$n.*"
        fi
        case " $m" in *" pass:"* | *" ptx:"* | *" substitute:"*) captured=$((captured + 1)) ;; esac
    done
    local st=ok detail="${same} of ${#progs[@]} same under the shim, ${differ} differ, ${captured} with captured launches"
    [ "$differ" -gt 0 ] && st=FAIL
    [ "$late" -gt 0 ] && detail="$detail; $late not run (past the ${budget}s budget)"
    [ "$late" -gt 0 ] && [ "$st" = ok ] && st=skipped
    row runtime-api-corpus "$st" "$detail"
}

# ---- PyTorch: cuBLAS and Triton, plainly and under the shim. A program
# that fails plainly on this device is skipped, saying why.
# py_row NAME TIMEOUT SCRIPT [ENV...]: runs SCRIPT plainly (no prlx at all),
# then under the shim with ENV.
py_row() {
    local name=$1 t=$2 script=$3 w="$out/python"
    shift 3
    if ! PRLX_TRITON=off TRITON_CACHE_DIR="$w/$name-plain-cache" \
        timeout -k 5 "$t" "$py" "$script" >"$w/$name.plain.out" 2>&1; then
        row "torch-$name" skipped "fails without the shim too on this device: $(last_error "$w/$name.plain.out")"
        return
    fi
    if env "$@" LD_PRELOAD="$shim" PRLX_TRACE_DIR="$w/sessions" PRLX_SESSION="$name" \
        timeout -k 5 "$t" "$py" "$script" >"$w/$name.out" 2>&1; then
        row "torch-$name" ok "${how:+$how; }$(tail -1 "$w/$name.out"); $(modes "$w/sessions/$name")"
    else
        row "torch-$name" FAIL "${how:+$how; }$(last_error "$w/$name.out") (works without the shim)"
    fi
}
py=${PRLX_GPU_PYTHON:-python3}
torch_rows() {
    local w="$out/python" how=""
    mkdir -p "$w"
    if ! "$py" -c "import torch; assert torch.cuda.is_available()" >"$w/torch-probe.txt" 2>&1; then
        row torch-cublas skipped "no PyTorch with CUDA for $py"
        row torch-triton skipped "no PyTorch with CUDA for $py"
        row train-loop skipped "no PyTorch with CUDA for $py"
        return 1
    fi
    py_row cublas 120 "$bundle/gpu/torch_cublas.py"
    if ! "$py" -c "import triton" >/dev/null 2>&1; then
        row torch-triton skipped "no triton for $py"
        return 0
    fi
    local whl env=(PRLX_TRITON=off "TRITON_CACHE_DIR=$w/triton-cache")
    how="without prlx.triton (no prlx wheel)"
    whl=$(find "$bundle/wheel" -name 'prlx-*.whl' 2>/dev/null | head -1)
    if [ -n "$whl" ] && "$py" -m pip install -q --no-index --no-deps --target "$w/site" "$whl" >"$w/pip.log" 2>&1; then
        env=(PRLX_TRITON=on "PYTHONPATH=$w/site${PYTHONPATH:+:$PYTHONPATH}" "TRITON_CACHE_DIR=$w/triton-cache")
        how="prlx.triton on"
    fi
    py_row triton 180 "$bundle/gpu/triton_add.py" "${env[@]}"
}

# ---- a PyTorch training loop's steps/s: without the shim, with the shim
# recording metadata (always-on) to a directory, and sending it to prlxd.
# Two rounds, interleaved; the best of each. Goal: >= 0.95x without.
train_loop() {
    local w="$out/train" secs=${PRLX_GPU_CHECK_TRAIN_SECONDS:-4}
    mkdir -p "$w"
    local -A best=([plain]=0 [dir]=0 [prlxd]=0)
    local round cfg rate
    for round in 1 2; do
        for cfg in plain dir prlxd; do
            local env=()
            case "$cfg" in
            dir) env=(LD_PRELOAD="$shim" PRLX_CAPTURE=metadata PRLX_TRACE_DIR="$w/sessions" PRLX_SESSION="dir$round") ;;
            prlxd)
                start_prlxd "$w/prlxd" || { row train-loop FAIL "prlxd did not answer"; stop_prlxd; return; }
                env=(LD_PRELOAD="$shim" PRLX_CAPTURE=metadata PRLX_SESSION="prlxd$round")
                ;;
            esac
            env "${env[@]}" timeout -k 5 $((secs + 90)) "$py" "$bundle/gpu/train_loop.py" "$secs" >"$w/$cfg$round.out" 2>&1
            local st=$?
            [ "$cfg" = prlxd ] && stop_prlxd
            if [ "$st" != 0 ]; then
                local last
                last=$(last_error "$w/$cfg$round.out")
                if [ "$cfg" = plain ]; then
                    row train-loop skipped "fails without the shim too on this device: $last"
                else
                    row train-loop FAIL "$cfg: $last (works without the shim)"
                fi
                return
            fi
            rate=$(grep -o 'steps_per_s=[0-9.]*' "$w/$cfg$round.out" | cut -d= -f2)
            best[$cfg]=$(python3 -c "print(max(${best[$cfg]}, ${rate:-0}))")
        done
    done
    local steps launches
    steps=$(grep -o 'steps=[0-9]*' "$w/dir2.out" | cut -d= -f2)
    launches=$(session_stat "$w/sessions/dir2" launches)
    local verdict
    verdict=$(python3 - "${best[plain]}" "${best[dir]}" "${best[prlxd]}" "$launches" "${steps:-0}" <<'PY'
import sys
plain, d, p, launches, steps = map(float, sys.argv[1:])
rd, rp = d / plain, p / plain
per_step = launches / (steps + 50) if steps else 0  # 50 warm-up steps
status = "ok" if min(rd, rp) >= 0.95 else "slow"
print(f"{status}\t{plain:.0f} steps/s plainly ({plain * per_step:.0f} launches/s, {per_step:.1f} a step); "
      f"to a directory {d:.0f} ({rd:.2f}x), to prlxd {p:.0f} ({rp:.2f}x); goal >= 0.95x")
PY
)
    row train-loop "${verdict%%$'\t'*}" "${verdict#*$'\t'}"
}

# ---- the ticket race of examples/race, two runs diffed (PRLX_EMU_SCHEDULE
# perturbs the emulator's schedule; the driver ignores it)
race() {
    local r="$bundle/race" w="$out/race" s seed
    mkdir -p "$w"
    for s in a b; do
        seed=1
        [ "$s" = b ] && seed=3
        PRLX_EMU_SCHEDULE=$seed LD_PRELOAD="$shim" PRLX_TRACE_DIR="$w" PRLX_SESSION=$s \
            run_t 60 "$r/race" "$r/race.ptx" >"$w/$s.out" 2>"$w/$s.err" ||
            { row race FAIL "run $s: $(last_error "$w/$s.err")"; return; }
    done
    run_t 60 "$prlxctl" diff --session "$w/a" "$w/b" >"$w/diff.txt" 2>&1
    local st=$? outputs="outputs differ"
    cmp -s "$w/a.out" "$w/b.out" && outputs="outputs identical (this schedule did not race)"
    if [ "$st" -le 1 ] && [ "$(modes "$w/a")" = "pass:1" ]; then
        row race ok "$outputs; diff: $(grep -m1 'matched launches' "$w/diff.txt" | cut -c1-80)"
    else
        row race FAIL "$(modes "$w/a"); diff exit $st; see $w"
    fi
}

# ---- the function-unit sweep (emulator-fidelity data, as approx-sweep/)
sweep() {
    local w="$out/sweep" exe="$bundle/gpu/sweep"
    if [ "$emulator" = 1 ]; then
        row fu-sweep skipped "7 launches of 2^23 threads: hardware data, too slow on the emulator"
        return
    fi
    mkdir -p "$w"
    cp "$bundle/gpu/sweep.cu" "$w/"
    if [ ! -x "$exe" ] && command -v nvcc >/dev/null; then
        nvcc -O2 -o "$w/sweep" "$bundle/gpu/sweep.cu" >"$w/build.log" 2>&1 && exe="$w/sweep"
    fi
    [ -x "$exe" ] || { row fu-sweep skipped "no sweep binary in the bundle and no nvcc here"; return; }
    if LD_LIBRARY_PATH="$bundle/corpus${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" run_t 60 "$exe" "$w" >"$w/summary.txt" 2>&1; then
        gzip -f "$w"/*.i8
        local same="differs from the H200's (approx-sweep/summary.txt)"
        cmp -s "$w/summary.txt" "$bundle/gpu/h200-sweep-summary.txt" && same="identical to the H200's"
        row fu-sweep ok "$(wc -l <"$w/summary.txt") ops; summary $same; in $w"
    else
        row fu-sweep FAIL "$(tail -1 "$w/summary.txt")"
    fi
}

# ---- the capture-cost benchmark (examples/capture-bench): each kernel and
# size alone (plain PTX, no shim) and captured (PTX at load; pass-built).
# Goal: captured (host clock around launch + sync) <= 3 x the kernel alone
# (CUDA events) + the bytes it recorded / 20 GB/s.
bench_run() { # bench_run NAME PTX KERNEL THREADS [shim]: prints the result line
    local w="$out/bench" env=()
    [ "${5:-}" = shim ] && env=(LD_PRELOAD="$shim" PRLX_TRACE_DIR="$w/sessions" PRLX_SESSION="$1")
    env "${env[@]}" timeout -k 5 120 "$bundle/bench/capture-bench" "$2" "$3" "$4" "$bench_reps" >"$w/$1.out" 2>"$w/$1.err"
    local st=$?
    [ "$st" = 0 ] && grep -m1 '^capture-bench:' "$w/$1.out" && return 0
    echo "exit $st: $(last_error "$w/$1.err")"
    return 1
}
field() { grep -o "$1=[0-9.]*" <<<"$2" | cut -d= -f2; }
capture_bench() {
    local b="$bundle/bench" w="$out/bench" case kernel n
    [ -f "$b/bench-plain.ptx" ] || { row capture-bench skipped "no plain PTX in the bundle (no clang-19 at prep)"; return; }
    mkdir -p "$w"
    for case in $bench_cases; do
        kernel=${case%%:*} n=${case#*:}
        local name="bench/$kernel-$n" alone
        if ! alone=$(bench_run "$kernel-$n-alone" "$b/bench-plain.ptx" "$kernel" "$n"); then
            row "$name" FAIL "alone: $alone"
            continue
        fi
        local kernel_ms detail status=ok mode line
        kernel_ms=$(field event_ms "$alone")
        detail="alone $kernel_ms ms by events ($(field wall_ms "$alone") ms launch+sync)"
        for mode in ptx pass; do
            local ptx="$b/bench-plain.ptx" session="$kernel-$n-$mode"
            [ "$mode" = pass ] && ptx="$b/bench-pass.ptx"
            if ! line=$(bench_run "$session" "$ptx" "$kernel" "$n" shim); then
                status=FAIL detail="$detail; $mode: $line"
                continue
            fi
            local m bytes verdict
            m=$(modes "$w/sessions/$session")
            bytes=$(session_stat "$w/sessions/$session" bytes)
            verdict=$(python3 - "$kernel_ms" "$(field wall_ms "$alone")" "$(field wall_ms "$line")" "$bytes" "$emulator" <<'PY'
import sys
alone, alone_wall, captured = map(float, sys.argv[1:4])
recorded, emulator = int(sys.argv[4]), sys.argv[5] == "1"
goal = 3 * alone + recorded / 20e9 * 1e3
# The emulator runs a kernel inside the launch call, which its events do not
# time: there the ratio is to the kernel's launch + sync.
base = alone_wall if emulator else alone
ratio = f"{captured / base:.0f}x{' launch+sync' if emulator else ''}" if base > 0 else "-"
met = "emulator: not judged" if emulator else ("met" if captured <= goal else "MISSED")
print(f"{'slow' if met == 'MISSED' else 'ok'}\t{captured:.3f} ms ({ratio}, {recorded / 1e3:.1f} kB/launch, goal <= {goal:.3f} ms {met})")
PY
)
            if [ "$m" != "$mode:$((bench_reps + 1))" ]; then
                status=FAIL detail="$detail; $mode: not captured as $mode ($m)"
                continue
            fi
            [ "${verdict%%$'\t'*}" = slow ] && [ "$status" = ok ] && status=slow
            detail="$detail; $mode ${verdict#*$'\t'}"
        done
        row "$name" "$status" "$detail"
    done
}

demo_prlxd
demo_traces
demo_ptx_at_load
shapes
race
sweep
capture_bench
torch_rows && train_loop
# Last: the corpus stops starting programs at the deadline, which bounds the run.
corpus

{
    echo
    echo "prlx gpu-check: $device; $(date -u +%Y-%m-%dT%H:%MZ); ${SECONDS}s; bundle $(cat "$bundle/COMMIT" 2>/dev/null); outputs in $out"
    echo
    echo "| check | status | detail |"
    echo "|---|---|---|"
    for r in "${rows[@]}"; do
        IFS=$'\t' read -r n s d <<<"$r"
        echo "| $n | $s | $d |"
    done
} | tee "$out/table.md"
printf '%s\n' "${rows[@]}" | grep -qE $'\t(FAIL|slow)\t' && exit 1
exit 0
