"""Triton on the emulator: tutorial-shaped kernels against NumPy, the
instrumentation hook, and races found at their Python line (under the shim,
the pass's build and the shim's PTX-at-load instrumentation)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import prlx

HERE = Path(__file__).resolve().parent
APPS = HERE / "apps"


def require(condition: bool, why: str) -> None:
    """Skip, or fail under PRLX_REQUIRE_TOOLCHAIN=1 (scripts/test.sh)."""
    if not condition:
        if os.environ.get("PRLX_REQUIRE_TOOLCHAIN") == "1":
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="module")
def emu():
    """The emulator as the driver, prlx.triton enabled; the kernels module."""
    try:
        import triton  # noqa: F401
    except ImportError:
        require(False, "triton is not installed (scripts/setup.sh)")
    import prlx.cuda as pc

    try:
        drv = pc.driver()
    except pc.CudaError as e:
        require(False, f"no CUDA driver: {e}")
    require(drv.is_emulator, f"the driver is {drv.device_name!r}, not prlx's emulator (LD_LIBRARY_PATH)")
    import prlx.triton as pt

    pt.enable(instrument=True)
    sys.path.insert(0, str(HERE))
    import triton_kernels

    return triton_kernels


def need_torch():
    """PyTorch, or skip when setup was told to leave it out (PRLX_NO_TORCH=1)."""
    try:
        import torch
    except ImportError:
        if os.environ.get("PRLX_NO_TORCH") == "1":
            pytest.skip("PRLX_NO_TORCH=1: PyTorch not installed")
        require(False, "PyTorch is not installed (scripts/setup.sh)")
    return torch


def shim() -> str:
    from prlx.run import CaptureError, shim_path

    try:
        return str(shim_path())
    except CaptureError as e:
        require(False, str(e))


def test_vector_add(emu):
    import prlx.cuda as pc
    import triton

    rng = np.random.default_rng(1)
    n = 3000  # not a multiple of the block: the mask matters
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = pc.empty(n)
    emu.add_kernel[(triton.cdiv(n, 1024),)](pc.to_device(x), pc.to_device(y), out, n, BLOCK_SIZE=1024)
    np.testing.assert_array_equal(out.numpy(), x + y)


def test_fused_softmax(emu):
    import prlx.cuda as pc

    rng = np.random.default_rng(2)
    a = rng.standard_normal((37, 100)).astype(np.float32)
    out = pc.empty(a.shape)
    # 8 programs over 37 rows: each loops over rows with a stride.
    emu.softmax_kernel[(8,)](out, pc.to_device(a), a.shape[1], a.shape[1], a.shape[0], a.shape[1], BLOCK_SIZE=128)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_matmul_with_autotune(emu):
    import prlx.cuda as pc
    import triton

    rng = np.random.default_rng(3)
    M, N, K = 64, 48, 40  # K not a multiple of BLOCK_K: the masked tail
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    da, db, c = pc.to_device(a), pc.to_device(b), pc.empty((M, N), np.float16)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    emu.matmul_kernel[grid](da, db, c, M, N, K, da.stride(0), da.stride(1), db.stride(0), db.stride(1), c.stride(0), c.stride(1))
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(c.numpy().astype(np.float32), ref, rtol=2e-2, atol=2e-2)
    # On the emulator every configuration runs once and the first one is
    # kept: two runs choose alike (emulated time would not).
    assert emu.matmul_kernel.best_config.kwargs == emu.matmul_kernel.configs[0].kwargs


def test_layer_norm_forward(emu):
    import prlx.cuda as pc

    rng = np.random.default_rng(4)
    rows, n = 5, 300
    x = rng.standard_normal((rows, n)).astype(np.float32)
    w, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    y, mean, rstd = pc.empty(x.shape), pc.empty(rows), pc.empty(rows)
    emu.layer_norm_fwd_kernel[(rows,)](pc.to_device(x), y, pc.to_device(w), pc.to_device(b), mean, rstd, n, n, 1e-5, BLOCK_SIZE=128)
    mu = x.mean(axis=1, keepdims=True)
    sd = np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y.numpy(), (x - mu) / sd * w + b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean.numpy(), mu[:, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd.numpy(), 1 / sd[:, 0], rtol=1e-4)


def test_reduction_with_atomics(emu):
    import prlx.cuda as pc
    import triton

    rng = np.random.default_rng(5)
    x = rng.integers(-1000, 1000, 5000).astype(np.int32)
    total = pc.zeros(1, np.int32)
    emu.sum_atomic_kernel[(triton.cdiv(x.size, 512),)](pc.to_device(x), total, x.size, BLOCK_SIZE=512)
    assert int(total.numpy()[0]) == int(x.sum())


def tf32(x):
    """float32 values as an mma .tf32 operand reads them: Triton passes the
    f32 bits unconverted and the instruction ignores the low 13 mantissa bits."""
    return (np.ascontiguousarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def test_fp32_dot_uses_tf32(emu):
    import prlx.cuda as pc

    rng = np.random.default_rng(6)
    a = rng.standard_normal((32, 32)).astype(np.float32)
    b = rng.standard_normal((32, 32)).astype(np.float32)
    c = pc.empty((32, 32))
    emu.dot_fp32_kernel[(1,)](pc.to_device(a), pc.to_device(b), c, 32, 32, 32)
    ref = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
    np.testing.assert_allclose(c.numpy(), ref, rtol=1e-5, atol=1e-5)
    # Far from the fp32 product: the inputs really were rounded.
    assert np.abs(c.numpy() - a.astype(np.float64) @ b).max() > 1e-4


def test_int8_dot(emu):
    import prlx.cuda as pc

    rng = np.random.default_rng(8)
    a = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 32)).astype(np.int8)
    c = pc.empty((32, 32), np.int32)
    emu.int8_dot_kernel[(1,)](pc.to_device(a), pc.to_device(b), c, 32, 32, 64)
    np.testing.assert_array_equal(c.numpy(), a.astype(np.int32) @ b.astype(np.int32))


def test_libdevice_math(emu):
    import math

    import prlx.cuda as pc

    x = np.linspace(0.0, 3.0, 100, dtype=np.float32)
    y = pc.empty(100)
    emu.math_kernel[(1,)](pc.to_device(x), y, 100, BLOCK=128)
    erf = np.array([math.erf(v) for v in x.astype(np.float64)])
    ref = np.exp2(x) + np.log(x + 2) + np.sqrt(x + 1) + erf + np.sin(x) + 1 / np.sqrt(x + 1)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5)


def test_attention_block(emu):
    import prlx.cuda as pc

    rng = np.random.default_rng(7)
    S, D = 32, 64
    q, k, v = (rng.standard_normal((S, D)).astype(np.float16) for _ in range(3))
    o = pc.empty((S, D), np.float16)
    emu.attention_kernel[(1,)](pc.to_device(q), pc.to_device(k), pc.to_device(v), o, 0.125, S, D)
    s = q.astype(np.float32) @ k.astype(np.float32).T * 0.125
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    ref = p.astype(np.float16).astype(np.float32) @ v.astype(np.float32)
    np.testing.assert_allclose(o.numpy().astype(np.float32), ref, rtol=1e-2, atol=1e-2)


def test_registered_host_memory_is_used_in_place(emu):
    import prlx.cuda as pc

    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.5, np.float32)
    out = np.zeros(n, np.float32)
    with pc.register(x) as dx, pc.register(y) as dy, pc.register(out) as dout:
        emu.add_kernel[(1,)](dx, dy, dout, n, BLOCK_SIZE=1024)
        pc.synchronize()
    np.testing.assert_array_equal(out, x + y)  # written in place, no copy back
    with pytest.raises(ValueError, match="not C-contiguous"):
        pc.register(np.zeros((4, 4), np.float32)[:, 1])
    with pytest.raises(TypeError):
        pc.register(object())


def test_registered_cpu_tensors_are_triton_arguments(emu):
    torch = need_torch()
    import prlx.cuda as pc

    x, y = torch.randn(3000), torch.randn(3000)
    out = torch.empty(3000)
    handles = [pc.register(t) for t in (x, y, out)]
    emu.add_kernel[(3,)](x, y, out, 3000, BLOCK_SIZE=1024)  # the tensors themselves
    pc.synchronize()
    for h in handles:
        h.close()
    assert torch.equal(out, x + y)


def test_kernels_are_instrumented_with_python_lines(emu):
    import prlx.cuda as pc

    counter, out = pc.zeros(1, np.int32), pc.empty(16, np.int32)
    compiled = emu.ticket_kernel[(16,)](counter, out, 8)
    ptx = compiled.asm["ptx"]
    assert "__prlx_desc" in ptx and "__prlx_sites" in ptx
    # The emulator is handed PTX where a cubin would be.
    assert compiled.asm["cubin"].rstrip(b"\0").decode() == ptx
    import prlx.triton

    lines = {(s["filename"], s["line"], s["kind"]) for s in prlx.triton.sites(compiled)}
    assert ("triton_kernels.py", emu.BRANCH_LINE, "Branch") in lines
    # Triton writes the atomic as predicated inline PTX: the pass records
    # its predicate (the program's lanes that do the atomic) as a branch.
    assert ("triton_kernels.py", emu.ATOMIC_LINE, "Branch") in lines
    # Not capturing (no shim): the kernel still computes the same tickets.
    assert sorted(out.numpy().tolist()) == sorted([t * 10 for t in range(8)] + [-1] * 8)


def run_race(tmp_path, capture_env):
    """ticket_race.py twice under the shim, run b with another schedule; the session diff."""
    from prlx.run import run

    base = {"TRITON_DEFAULT_FP_FUSION": "1", **capture_env}
    a = run([sys.executable, str(APPS / "ticket_race.py")], "a", tmp_path, shim=shim(), extra=base)
    b = run([sys.executable, str(APPS / "ticket_race.py")], "b", tmp_path, shim=shim(), extra={**base, "PRLX_EMU_SCHEDULE": "7"})
    return a, b, prlx.diff_sessions(a, b)


def test_race_is_named_at_its_python_line(emu, tmp_path):
    a, b, result = run_race(tmp_path, {"PRLX_TRITON": "on"})
    assert prlx.open_session(a).launches[0].capture == "pass"
    assert result.status == "diverged"
    (kernel,) = result.kernels
    assert kernel["kernel"] == "ticket_kernel"
    # The branch on the ticket parts; its line in the @triton.jit function.
    assert kernel["first_source_location"].startswith(f"triton_kernels.py:{emu.BRANCH_LINE}:")
    first = result.launches[0]["first_divergence"]
    assert first["kind"] == "Branch" and first["function"] == "ticket_kernel"
    # The launch is named at the Python line that made it (Triton's launch
    # hook hands the shim the Python frames), not at the interpreter's C.
    app = (APPS / "ticket_race.py").read_text().splitlines()
    launch_line = next(i for i, text in enumerate(app, 1) if "K.ticket_kernel[" in text)
    assert result.launches[0]["launched_from"].endswith(f"ticket_race.py:{launch_line})")



def test_pass_build_records_the_inline_asm_atomic(emu, tmp_path):
    # Triton writes tl.atomic_add as guarded inline PTX (`@$3 atom.global...`)
    # and broadcasts the ticket through `st.shared`: the pass records them as
    # Atomic / SharedMemStore sites, in the lanes that execute them.
    import json

    a, b, _ = run_race(tmp_path, {"PRLX_TRITON": "on"})
    launch_a, launch_b = prlx.open_session(a).launches[0], prlx.open_session(b).launches[0]
    assert launch_a.capture == "pass"
    sites = json.loads(launch_a.site_map_path.read_text())
    kinds = {s["site_id"]: (s["line"], s["kind"]) for s in sites}
    assert {(emu.ATOMIC_LINE, "Atomic"), (emu.ATOMIC_LINE, "SharedMemStore")} <= set(kinds.values())

    def tickets(launch):
        """Block -> the value its atomic returned, from the Atomic events."""
        trace = launch.trace()
        per_block = trace.header.warps_per_block
        found = {}
        for w in range(len(trace)):
            warp = trace.warp(w)
            for i in range(len(warp)):
                e = warp.event(i)
                if e.type_name == "Atomic":
                    assert kinds[e.site_id] == (emu.ATOMIC_LINE, "Atomic")
                    # Only thread 0 executes the guarded atom.
                    assert e.active_mask == 0x1 and w % per_block == 0
                    assert w // per_block not in found
                    found[w // per_block] = e.value_a
        return found

    ta, tb = tickets(launch_a), tickets(launch_b)
    # Each of the 16 programs took one ticket; the schedules handed them out
    # in different orders.
    assert sorted(ta.values()) == sorted(tb.values()) == list(range(16))
    assert ta != tb
    # Comparing values, the race is named at the atomic itself.
    result = prlx.diff_sessions(a, b, values=True)
    first = result.launches[0]["first_divergence"]
    assert first["kind"] == "Value" and first["function"] == "ticket_kernel"
    assert first["source_location"].startswith(f"triton_kernels.py:{emu.ATOMIC_LINE}:")
    assert (first["value_a"], first["value_b"]) == (ta[first["block"][0]], tb[first["block"][0]])
    # A program whose ticket changed but stayed on the same side of the
    # threshold takes the same branch: only the atomic's value shows it.
    diff = prlx.diff(launch_a.trace_path, launch_b.trace_path, values=True)
    same_side = [blk for blk in ta if ta[blk] != tb[blk] and (ta[blk] < 8) == (tb[blk] < 8)]
    assert same_side
    for blk in same_side:
        kinds_here = {(d.kind, kinds.get(int(d.data["site_id"], 16))) for d in diff.divergences if d.data["block"][0] == blk}
        assert ("Value", (emu.ATOMIC_LINE, "Atomic")) in kinds_here
        assert not any(kind == "Branch" for kind, _ in kinds_here)

def test_unmodified_triton_kernel_is_captured_by_ptx_instrumentation(emu, tmp_path):
    # PRLX_TRITON=ptx: no pass, only PTX for the emulator; the shim
    # instruments the PTX when the module is loaded.
    a, b, result = run_race(tmp_path, {"PRLX_TRITON": "ptx", "PRLX_CAPTURE": "ptx"})
    session = prlx.open_session(a)
    assert session.launches[0].capture == "ptx"
    assert result.status == "diverged"
    assert result.kernels[0]["first_source_location"].split(":")[-3].endswith("triton_kernels.py")
    assert result.kernels[0]["first_source_location"].split(":")[-2] == str(emu.BRANCH_LINE)
    # The same schedule twice: no divergence.
    from prlx.run import run

    env = {"TRITON_DEFAULT_FP_FUSION": "1", "PRLX_TRITON": "ptx", "PRLX_CAPTURE": "ptx"}
    a2 = run([sys.executable, str(APPS / "ticket_race.py")], "a2", tmp_path, shim=shim(), extra=env)
    assert prlx.diff_sessions(a, a2).status == "identical"


def test_snapshots_show_each_programs_ticket(emu, tmp_path):
    # PRLX_TRITON=snapshots: the pass also records the compare's per-lane
    # operands; the shim keeps PRLX_SNAPSHOT_DEPTH of them per warp.
    a, b, result = run_race(tmp_path, {"PRLX_TRITON": "snapshots", "PRLX_SNAPSHOT_DEPTH": "4"})
    assert result.status == "diverged"
    site = result.launches[0]["first_divergence"]["site_id"]

    def operands(session, block):
        trace = prlx.open_session(session).trace("ticket_kernel")
        warp = next(w for w in trace.warps if tuple(w.block) == (block, 0, 0))
        snap = next(s for s in warp.snapshots if int(s["site_id"]) == int(site, 16))
        return int(snap["lhs"][0]), int(snap["rhs"][0])

    # Run A ran the programs in order: program 5 took ticket 5 (< 8).
    assert operands(a, 5) == (5, 8)
    # Run B's schedule gave program 5 another ticket.
    assert operands(b, 5)[0] != 5 and operands(b, 5)[1] == 8


def test_two_runs_of_an_autotuned_kernel_diff_clean(emu, tmp_path):
    from prlx.run import run

    cmd = [sys.executable, str(APPS / "autotuned_matmul.py")]
    env = {"TRITON_DEFAULT_FP_FUSION": "1"}
    a = run(cmd, "a", tmp_path, shim=shim(), extra=env)
    b = run(cmd, "b", tmp_path, shim=shim(), extra=env)
    # One benchmark launch per configuration, then the chosen one; the same
    # in both runs, so every launch pairs and none diverges.
    kernels = [l.kernel for l in prlx.open_session(a).launches]
    assert kernels == ["matmul_kernel"] * (len(emu.matmul_kernel.configs) + 1)
    result = prlx.diff_sessions(a, b)
    assert result.status == "identical" and not result.unmatched


def test_python_m_prlx_run(emu, tmp_path):
    cmd = [sys.executable, "-m", "prlx", "run", "--session", "cli", "--trace-dir", str(tmp_path), "--shim", shim()]
    # --emulator puts the emulator's directory first (here: the one in use).
    emulator_dir = os.environ.get("TRITON_LIBCUDA_PATH")
    if emulator_dir:
        cmd += ["--emulator", emulator_dir]
    proc = subprocess.run([*cmd, "--", sys.executable, str(APPS / "ticket_race.py")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "10", "20", "30", "40", "50", "60", "70"] + ["-1"] * 8
    session = prlx.open_session(tmp_path / "cli")
    assert session.kernels() == ["ticket_kernel"]
    assert session.launches[0].trace().header.kernel_name == "ticket_kernel"


def test_training_step_of_two_runs(emu, tmp_path):
    need_torch()
    import prlx.training as training

    cmd = [sys.executable, str(APPS / "train.py")]
    extra = {"TRITON_DEFAULT_FP_FUSION": "1"}
    result = training.compare_runs(cmd, 2, tmp_path, env_a=extra, env_b={**extra, "PRLX_EMU_SCHEDULE": "5"})
    assert result.status == "diverged"
    assert [k["kernel"] for k in result.kernels] == ["ticket_kernel"]
    assert result.kernels[0]["first_source_location"].startswith(f"triton_kernels.py:{emu.BRANCH_LINE}:")
    a, b = tmp_path / "run-a", tmp_path / "run-b"
    # The other steps ran the same kernels the same way.
    assert training.diff_step(a, b, 1).status == "identical"
    assert [l["kernel"] for l in training.step_launches(a, 2)] == ["softmax_kernel", "ticket_kernel"]
    session = prlx.open_session(a)
    names = [(m["name"], m["kind"]) for m in session.marks]
    assert names[:2] == [("setup", "begin"), ("setup", "end")]
    assert ("step 3", "end") in names
    assert [l.kernel for l in session.launches_in("step 0")] == ["softmax_kernel"]
    with pytest.raises(prlx.SessionError, match="no mark 'step 9'"):
        training.diff_step(a, b, 9)


def test_race_is_captured_through_ptx_stage_instrumentation(emu, tmp_path):
    # PRLX_TRITON_STAGE=ptx: prlx-ptx-instrument (in prlx._native) rewrites
    # Triton's PTX, no LLVM tools; the module defines __prlx_desc, so the
    # shim captures it as pass-built, and names the branch's Python line.
    import json

    # No LLVM pass plugin: the LLVM-stage route is unavailable.
    no_llvm = {"PRLX_PASS_PLUGIN_22": str(tmp_path / "no-such-plugin.so")}
    env = {"PRLX_TRITON": "on", "PRLX_TRITON_STAGE": "ptx", "PRLX_CAPTURE": "pass", **no_llvm}
    a, b, result = run_race(tmp_path, env)
    launch = prlx.open_session(a).launches[0]
    assert launch.capture == "pass"
    sites = json.loads(launch.site_map_path.read_text())
    assert any(s["filename"].endswith("triton_kernels.py") and s["line"] == emu.BRANCH_LINE for s in sites)
    assert result.status == "diverged"
    location = result.kernels[0]["first_source_location"].split(":")
    assert location[-3].endswith("triton_kernels.py") and location[-2] == str(emu.BRANCH_LINE)


PTXAS_STAGE_APP = r"""
import sys, json
sys.path.insert(0, sys.argv[1])
import numpy as np
import prlx.cuda as pc
import prlx.triton as pt
pt.enable(instrument=True, stage="ptx", ptx=False)
import triton_kernels as K
counter, out = pc.zeros(1, np.int32), pc.empty(16, np.int32)
compiled = K.ticket_kernel.warmup(counter, out, 8, grid=(16,))
sys.stdout.buffer.write(compiled.asm["cubin"])
"""


def elf_defined_symbols(image: bytes) -> set:
    """Names of the defined symbols of a 64-bit little-endian ELF."""
    import struct

    assert image[:4] == b"\x7fELF" and image[4] == 2, "not an ELF64 image"
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for _name, kind, _f, _a, off, size, link, _i, _al, entsize in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link]
        for j in range(size // entsize):
            st_name, _info, _other, shndx = struct.unpack_from("<IBBH", image, off + j * entsize)
            if shndx != 0:
                start = strtab[4] + st_name
                names.add(image[start : image.index(b"\0", start)].decode())
    return names


def test_ptx_stage_cubin_from_tritons_ptxas_defines_the_descriptor(emu, tmp_path):
    # With a real cubin stage (Triton's own ptxas, as on a GPU), the
    # instrumented PTX compiles and the cubin defines __prlx_desc and
    # __prlx_sites: what the shim recognises as pass-built.
    proc = subprocess.run(
        [sys.executable, "-c", PTXAS_STAGE_APP, str(HERE)],
        capture_output=True,
        env={**os.environ, "PRLX_TRITON": "off"},
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    symbols = elf_defined_symbols(proc.stdout)
    assert {"__prlx_desc", "__prlx_sites", "ticket_kernel"} <= symbols


def test_instrumentation_falls_back_to_the_ptx_stage_without_llvm_tools(emu, tmp_path):
    # Where the LLVM-stage tools exist, llir; where they do not (no pass
    # plugin here), the ptx stage, with no warning; llir asked for names them.
    code = (
        "import warnings; warnings.simplefilter('error')\n"
        "import prlx.triton as pt; print(pt.status()['stage'])\n"
        "try:\n    pt.enable(stage='llir')\nexcept pt.TritonHookError as e:\n    print('llir:', e)\n"
    )
    env = {**os.environ, "PRLX_PASS_PLUGIN_22": str(tmp_path / "no-such-plugin.so")}
    env.pop("PRLX_TRITON_STAGE", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stage, llir = proc.stdout.splitlines()
    assert stage == "ptx"
    assert "llir:" in llir and "pass plugin" in llir
