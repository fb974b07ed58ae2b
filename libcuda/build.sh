#!/bin/sh
# Builds libcuda.so (the prlx driver-API emulator) and adds the
# libcuda.so.1 -> libcuda.so link that programs linked with -lcuda load.
# Prints the directory to put on LD_LIBRARY_PATH.
#
#   libcuda/build.sh            # debug build:   target/debug
#   libcuda/build.sh --release  # release build: target/release
set -eu
cd "$(dirname "$0")/.."
profile=debug
for arg in "$@"; do
    case "$arg" in
        --release) profile=release ;;
        *) echo "usage: $0 [--release]" >&2; exit 2 ;;
    esac
done
cargo build -p prlx-libcuda "$@" >&2
target_dir="${CARGO_TARGET_DIR:-target}"
dir="$(cd "$target_dir/$profile" && pwd)"
ln -sfn libcuda.so "$dir/libcuda.so.1"
echo "$dir"
