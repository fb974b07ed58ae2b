#!/usr/bin/env bash
# Builds the pass for LLVM 19 and 22 and the device runtime, then runs every
# lit suite against both builds. Exits non-zero on any failure.
# A missing LLVM 22 is a failure under PRLX_REQUIRE_TOOLCHAIN=1, else a skip.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
lit=/usr/lib/llvm-19/build/utils/lit/lit.py
if [[ ! -f "$lit" ]]; then
  echo "llvm-pass/test.sh: lit not found at $lit (install llvm-19-tools; see scripts/setup.sh)" >&2
  exit 1
fi

"$repo/device-rt/build.sh"
status=0
for v in 19 22; do
  if [[ ! -f "/usr/lib/llvm-$v/lib/cmake/llvm/LLVMConfig.cmake" ]]; then
    if [[ "${PRLX_REQUIRE_TOOLCHAIN:-}" == 1 ]]; then
      echo "llvm-pass/test.sh: LLVM $v not installed (llvm-$v-dev)" >&2
      status=1
    else
      echo "skipped: LLVM $v not found, run scripts/setup.sh"
    fi
    continue
  fi
  "$here/build.sh" "$v"
  echo "== lit, LLVM $v"
  python3 "$lit" -sv --param "llvm=$v" "$here/test" || status=1
done
exit $status
