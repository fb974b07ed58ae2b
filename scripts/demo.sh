#!/usr/bin/env bash
# The main job, end to end on a fresh machine: builds prlxctl and diffs two
# runs of a kernel, naming where they part and why.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

./scripts/setup.sh
cargo build --release --locked -q -p prlxctl
prlxctl=target/release/prlxctl
traces=examples/traces

echo "== prlxctl diff: two runs of the bundled example kernel"
"$prlxctl" diff "$traces/run_a.prlx" "$traces/run_b.prlx" --map "$traces/prlx-sites.json"
