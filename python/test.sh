#!/usr/bin/env bash
# Builds the prlx wheel with maturin into a temporary directory, installs it
# there (not into the source tree, so the tests import the built package),
# and runs python/tests with pytest. Needs scripts/setup.sh's .tools/pyenv;
# compares against prlxctl's JSON and talks to a prlxd it starts
# ($PRLX_PRLXCTL, $PRLX_PRLXD; default: the debug builds of cargo test).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pyenv="$root/.tools/pyenv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$pyenv/bin/maturin" build --quiet --locked --manifest-path "$root/python/Cargo.toml" --out "$work/wheel"
wheels=("$work"/wheel/prlx-*-abi3-*.whl)
[ -f "${wheels[0]}" ] || { echo "python/test.sh: maturin built no abi3 wheel" >&2; exit 1; }
"$pyenv/bin/pip" install --quiet --disable-pip-version-check --no-deps --target "$work/site" "${wheels[0]}"

bin="${CARGO_TARGET_DIR:-$root/target}/debug"
export PRLX_PRLXCTL="${PRLX_PRLXCTL:-$bin/prlxctl}" PRLX_PRLXD="${PRLX_PRLXD:-$bin/prlxd}"
cd "$work"
# pytest's status is the script's: 1 failed tests, 5 none collected, ...
PYTHONPATH="$work/site" "$pyenv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests"
