"""Fixtures: the repository's committed traces, and session directories built from them."""

import json
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "traces"
CORPUS = ROOT / "trace" / "tests" / "corpus"


@pytest.fixture
def run_a() -> Path:
    return EXAMPLES / "run_a.prlx"


@pytest.fixture
def run_b() -> Path:
    return EXAMPLES / "run_b.prlx"


@pytest.fixture
def sites() -> Path:
    return EXAMPLES / "prlx-sites.json"


@pytest.fixture
def corpus() -> Path:
    return CORPUS


def make_session(root: Path, name: str, trace: Path) -> Path:
    """A session directory as the shim writes it: session.json, one launch's trace, its site map."""
    d = root / name
    d.mkdir()
    shutil.copy(trace, d / "reduce_clamped_0.prlx")
    shutil.copy(EXAMPLES / "prlx-sites.json", d / "prlx-sites.json")
    manifest = {
        "format": "prlx-session/1",
        "session": name,
        "pid": 1,
        "launches": [
            {
                "seq": 0,
                "kernel": "reduce_clamped",
                "launch": 0,
                "grid": [4, 1, 1],
                "block": [128, 1, 1],
                "file": "reduce_clamped_0.prlx",
                "site_map": "prlx-sites.json",
            }
        ],
    }
    (d / "session.json").write_text(json.dumps(manifest))
    return d


@pytest.fixture
def sessions(tmp_path, run_a, run_b):
    """Sessions a and b (one launch each, diverging) and a2 (a copy of a)."""
    return (
        make_session(tmp_path, "a", run_a),
        make_session(tmp_path, "b", run_b),
        make_session(tmp_path, "a2", run_a),
    )


def prlxctl():
    """The prlxctl binary to compare against: $PRLX_PRLXCTL or target/debug/prlxctl.

    None when there is none, which fails under PRLX_REQUIRE_TOOLCHAIN=1
    (scripts/test.sh) instead of skipping the comparison."""
    path = os.environ.get("PRLX_PRLXCTL") or str(ROOT / "target" / "debug" / "prlxctl")
    if os.access(path, os.X_OK):
        return path
    if os.environ.get("PRLX_REQUIRE_TOOLCHAIN") == "1":
        pytest.fail(f"no prlxctl binary at {path} (set PRLX_PRLXCTL)")
    return None
