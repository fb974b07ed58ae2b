#!/bin/sh
# Builds libamdhip64.so.5 (prlx's HIP runtime over the RDNA3 emulator) and
# the libamdhip64.so -> libamdhip64.so.5 link. Prints the directory to put
# first on LD_LIBRARY_PATH.
#
#   hip-runtime/build.sh            # debug build:   target/debug
#   hip-runtime/build.sh --release  # release build: target/release
#
# The crate builds a static library; this links it into the shared library
# with the soname and the symbol versions of HIP 5.2 (exports.map), which a
# Rust cdylib cannot carry (rustc passes its own unversioned version script).
# -Bsymbolic-functions binds the library's calls to its own functions (an
# `_spt` entry point calling hipLaunchKernel) to its own definitions: an
# LD_PRELOADed shim intercepts the application's calls, not these.
set -eu
cd "$(dirname "$0")/.."
profile=debug
for arg in "$@"; do
    case "$arg" in
        --release) profile=release ;;
        *) echo "usage: $0 [--release]" >&2; exit 2 ;;
    esac
done
cargo build -p prlx-hip-runtime "$@" >&2
target_dir="${CARGO_TARGET_DIR:-target}"
dir="$(cd "$target_dir/$profile" && pwd)"
tmp="$dir/libamdhip64.so.5.tmp$$"
${CC:-cc} -shared -o "$tmp" \
    -Wl,-soname,libamdhip64.so.5 \
    -Wl,--version-script=hip-runtime/exports.map \
    -Wl,--gc-sections \
    -Wl,-Bsymbolic-functions \
    -Wl,--whole-archive "$dir/libprlx_hip_runtime.a" -Wl,--no-whole-archive \
    -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
# Renamed into place: concurrent builds (parallel tests) never see half a file.
mv -f "$tmp" "$dir/libamdhip64.so.5"
ln -sfn libamdhip64.so.5 "$dir/libamdhip64.so"
echo "$dir"
