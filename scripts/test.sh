#!/usr/bin/env bash
# Runs every prlx test on a fresh machine: installs the toolchain it needs
# (idempotent), then formatting, lints and the whole workspace's tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

./scripts/setup.sh
# Tests that compile CUDA with clang-19/nvcc fail instead of skipping when a tool is missing.
export PRLX_REQUIRE_TOOLCHAIN=1

echo "== LLVM pass and device runtime: build (LLVM 19 and 22) and lit tests"
llvm-pass/test.sh

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== structure: no module cycles, packages named after their directories, no function over 200 lines, no #[path] leaving its crate"
if ! cargo run -q --locked -p prlx-structure-check -- --all-acyclic --naming; then
    echo "test.sh: the structure step failed: the report's last line (== failed: ...) says which rule;" \
        "a module cycle (break it by moving the shared item down), a member in directory x not" \
        "named prlx-x (prlx* directories: the directory's name), a function over 200 lines, or a #[path]" \
        "leading outside its crate's directory (share the code through a crate instead)" >&2
    exit 1
fi
echo "== cargo test"
cargo test --workspace --locked --no-fail-fast
echo "== Python package: maturin wheel, installed in a temporary directory, pytest suite"
python/test.sh
