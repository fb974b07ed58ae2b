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
echo "== cargo test"
cargo test --workspace --locked --no-fail-fast
echo "== Python package: maturin wheel, installed in a temporary directory, pytest suite"
python/test.sh
