"""prlx.diff_sessions over session directories, as prlxctl diff --session --json."""

import subprocess

import pytest

import prlx
from conftest import prlxctl


def test_session_diff_names_the_launch_and_line(sessions):
    a, b, _ = sessions
    r = prlx.diff_sessions(a, b)
    assert r.status == "diverged" and r.diverged
    assert r.data["launches_compared"] == 1 and r.data["launches_diverged"] == 1
    (launch,) = r.launches
    assert launch["kernel"] == "reduce_clamped" and launch["launch_index"] == 0
    assert launch["status"] == "diverged"
    first = launch["first_divergence"]
    assert first["kind"] == "Branch" and first["warp_idx"] == 13
    assert first["source_location"] == "reduce.cu:16:15"
    assert r.kernels[0]["kernel"] == "reduce_clamped"
    assert r.total_divergences == 4 and r.unmatched == []


def test_identical_sessions(sessions):
    a, _, a2 = sessions
    r = prlx.diff_sessions(a, a2)
    assert r.status == "identical" and r.total_divergences == 0


def test_missing_session_raises_session_error(tmp_path, sessions):
    with pytest.raises(prlx.SessionError, match="nowhere"):
        prlx.diff_sessions(sessions[0], tmp_path / "nowhere")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "session.json").write_text("{ not json")
    with pytest.raises(prlx.SessionError, match="session.json"):
        prlx.diff_sessions(sessions[0], bad)


def test_same_json_as_prlxctl(sessions):
    binary = prlxctl()
    if binary is None:
        pytest.skip("no prlxctl binary (set PRLX_PRLXCTL)")
    a, b, _ = sessions
    cli = subprocess.run(
        [binary, "diff", "--session", str(a), str(b), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert prlx.diff_sessions(str(a), str(b)).json.strip() == cli.strip()
