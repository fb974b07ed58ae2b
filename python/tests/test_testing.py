"""prlx.testing.assert_no_divergence: prlxctl assert's verdict as a pytest failure."""

import pytest

from prlx.testing import assert_no_divergence


def test_identical_runs_pass(run_a):
    result = assert_no_divergence(run_a, run_a)
    assert result.identical


def test_diverging_runs_fail_naming_the_first_divergence(run_a, run_b, sites):
    with pytest.raises(AssertionError) as info:
        assert_no_divergence(run_a, run_b, map=sites)
    message = str(info.value)
    assert "4 divergence(s)" in message
    assert "Branch, warp 13" in message and "reduce.cu:16:15" in message


def test_threshold(run_a, run_b):
    assert_no_divergence(run_a, run_b, max_divergences=4)
    with pytest.raises(AssertionError):
        assert_no_divergence(run_a, run_b, max_divergences=3)
    with pytest.raises(AssertionError):
        assert_no_divergence(run_a, run_b, kinds="Branch")  # options reach prlx.diff


def test_overflow_fails_unless_allowed(corpus):
    trace = corpus / "ok-minimal-overflowed.prlx"
    with pytest.raises(AssertionError, match="PRLX_EVENTS_PER_WARP"):
        assert_no_divergence(trace, trace)
    assert_no_divergence(trace, trace, allow_overflow=True)


def test_sessions(sessions):
    a, b, a2 = sessions
    assert_no_divergence(a, a2)
    with pytest.raises(AssertionError, match="reduce_clamped launch 0: 4 divergence"):
        assert_no_divergence(a, b)
    assert_no_divergence(a, b, max_divergences=4)


def test_a_session_with_a_missing_launch_fails(sessions):
    a, _, a2 = sessions
    manifest = (a2 / "session.json").read_text()
    (a2 / "session.json").write_text(manifest.replace('"launch": 0', '"launch": 1'))
    with pytest.raises(AssertionError, match="ran in A only"):
        assert_no_divergence(a, a2)


def test_prlx_original_names(run_a, run_b, sites):
    """PRLX's Python names keep working: diff_traces, pytorch_trace, enable*."""
    import prlx

    assert prlx.diff_traces(run_a, run_b, map=sites).json == prlx.diff(run_a, run_b, map=sites).json
    assert callable(prlx.enable) and callable(prlx.enable_pytorch) and callable(prlx.disable)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with prlx.pytorch_trace("outside the shim"):
            pass
