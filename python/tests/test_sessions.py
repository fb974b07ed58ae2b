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


def test_open_session_lists_launches_and_reads_traces(sessions):
    a, b, _ = sessions
    s = prlx.open_session(a)
    assert s.name == "a" and len(s) == 1 and s.kernels() == ["reduce_clamped"]
    (launch,) = s.launches
    assert launch.kernel == "reduce_clamped" and launch.launch_index == 0
    assert launch.grid == [4, 1, 1] and launch.trace_path == a / "reduce_clamped_0.prlx"
    t = s.trace("reduce_clamped", 0)
    assert t.kernel_name == "reduce_clamped" and t.num_events == 465
    assert prlx.open_session(a / "session.json").name == "a"
    with pytest.raises(KeyError):
        s.launch("reduce_clamped", 1)
    assert s.diff(b).json == prlx.diff_sessions(a, b).json


def test_open_session_errors(tmp_path, sessions):
    with pytest.raises(prlx.SessionError, match="session.json"):
        prlx.open_session(tmp_path)
    a = sessions[0]
    text = (a / "session.json").read_text()
    (a / "session.json").write_text(text.replace('"grid": [4, 1, 1]', '"grid": "wide"'))
    with pytest.raises(prlx.SessionError, match="session.json"):
        prlx.open_session(a)


def test_a_launch_without_a_trace(tmp_path, sessions):
    a = sessions[0]
    text = (a / "session.json").read_text()
    (a / "session.json").write_text(text.replace('"file": "reduce_clamped_0.prlx",', ""))
    launch = prlx.open_session(a).launches[0]
    assert launch.trace_path is None
    with pytest.raises(prlx.SessionError, match="no trace"):
        launch.trace()
