"""Bad input from Python: clear exceptions or warnings, never a crash."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import prlx


def test_mark_without_the_shim_warns_once_and_records_nothing():
    import prlx.marks as marks

    if marks.shim_loaded():
        pytest.skip("running under the shim")
    marks._warned = False
    with pytest.warns(prlx.MarkWarning, match="not loaded"):
        assert prlx.mark("step 3") is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with prlx.session("quiet"):  # the warning is said once
            pass
    with pytest.raises(ValueError):
        prlx.mark("")


def test_unknown_triton_version_warns(monkeypatch):
    triton = pytest.importorskip("triton")
    import prlx.triton as pt

    before = pt.status()
    monkeypatch.setattr(triton, "__version__", "9.1.0")
    with pytest.warns(pt.TritonVersionWarning, match="not 9.1.0"):
        pt.enable(instrument=False)
    monkeypatch.undo()
    pt.enable(instrument=before["instrument"] or True)


def test_triton_without_the_stages_hook_is_a_clear_error(monkeypatch):
    pytest.importorskip("triton")
    from triton import knobs

    import prlx.triton as pt

    monkeypatch.delattr(type(knobs.runtime), "add_stages_inspection_hook", raising=False)
    monkeypatch.delattr(knobs.runtime, "add_stages_inspection_hook", raising=False)
    if hasattr(knobs.runtime, "add_stages_inspection_hook"):
        pytest.skip("cannot hide the hook attribute")
    with pytest.raises(pt.TritonHookError, match="add_stages_inspection_hook"):
        pt.enable()


def test_missing_pass_plugin_is_named(monkeypatch):
    pytest.importorskip("triton")
    import prlx.triton as pt

    monkeypatch.setenv("PRLX_PASS_PLUGIN_22", "/nonexistent/libPrlxPass.so")
    with pytest.raises(pt.TritonHookError, match="/nonexistent/libPrlxPass.so"):
        pt._find_tools()


def test_bad_llvm_ir_is_a_hook_error_with_opts_message():
    pytest.importorskip("triton")
    import prlx.triton as pt

    try:
        pt._find_tools()
    except pt.TritonHookError as e:
        pytest.skip(str(e))
    with pytest.raises(pt.TritonHookError, match="opt-22 .*failed"):
        pt.instrument_llir("this is not LLVM IR\n")


def test_legacy_float_literals():
    import prlx.triton as pt

    ir = "%a = fmul float %x, f0x3FB8AA3B\n%b = fadd half %y, f0x3C00\n%c = fadd double %z, f0x3FF0000000000000\n%d = fadd bfloat %w, f0x3F80"
    out = pt._legacy_float_literals(ir).split("\n")
    assert out[0].endswith("0x3FF7154760000000")  # 1.44269502 as a double
    assert out[1].endswith("0xH3C00") and out[2].endswith("0x3FF0000000000000") and out[3].endswith("0xR3F80")
    # Decimal constants not exact in float (LLVM 22 refuses them) are rounded
    # to float and written in hex; doubles stay as they are.
    dec = "%e = call float @f(float %x, float 2.001230e-01)\n%f = fadd double %y, 1.000000e-01\n%g = fmul half %z, 1.000000e-01"
    out = pt._legacy_float_literals(dec).split("\n")
    assert out[0].endswith("float 0x3FC99DA160000000)")
    assert out[1].endswith("1.000000e-01") and out[2].endswith("0xH2E66")


def test_device_array_size_mismatch_is_a_value_error():
    import prlx.cuda as pc

    try:
        a = pc.empty(4)
    except pc.CudaError as e:
        pytest.skip(str(e))
    with pytest.raises(ValueError, match="size mismatch"):
        a.copy_from(np.zeros(5, np.float32))
    np.testing.assert_array_equal(pc.to_device(np.arange(4, dtype=np.float32)).numpy(), np.arange(4))
    assert a.stride() == (1,) and pc.empty((3, 5)).stride(0) == 5


def test_prlx_run_without_a_command_or_shim_fails_cleanly(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "prlx", "run", "--"], capture_output=True, text=True)
    assert proc.returncode == 2 and "no command" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "prlx", "run", "--shim", str(tmp_path / "nope.so"), "--emulator", str(tmp_path), "--", "true"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "libcuda.so.1" in proc.stderr


def test_diff_step_of_a_session_without_marks(tmp_path):
    import json

    import prlx.training as training

    d = tmp_path / "s"
    d.mkdir()
    (d / "session.json").write_text(json.dumps({"format": "prlx-session/1", "session": "s", "launches": []}))
    with pytest.raises(prlx.SessionError, match="no steps marked"):
        training.step_launches(d, 0)
    (d / "session.json").write_text("{not json")
    with pytest.raises(prlx.SessionError, match="not JSON"):
        training.step_launches(d, 0)


def test_a_failing_captured_command_is_a_capture_error(tmp_path):
    from prlx.run import CaptureError, run

    fake_shim = tmp_path / "libprlx.so"
    fake_shim.write_bytes(b"")  # never loaded: the command is not a dynamic program's
    with pytest.raises(CaptureError, match="exited with 3"):
        run([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"], "s", tmp_path, shim=fake_shim)
    with pytest.raises(CaptureError, match="recorded no session"):
        run(["true"], "s2", tmp_path, shim=fake_shim, extra={"LD_PRELOAD": ""})
