"""Triton integration: run Triton kernels on prlx's emulator and instrument them.

``import prlx.triton`` installs one hook, Triton's pipeline-stages hook
(``triton.knobs.runtime.add_stages_inspection_hook``, called by the NVIDIA
backend's ``add_stages`` for every kernel compiled afterwards). It changes two
stages of that kernel's compilation. Instrumentation runs at one of two
stages (``stage`` of :func:`enable`, or ``PRLX_TRITON_STAGE=llir|ptx``;
default: ``llir`` where its LLVM tools exist, else ``ptx``):

- ``ptx``: Triton's PTX goes through ``prlx-ptx-instrument`` (the shim's own
  load-time rewrite, built into this package's native module: no LLVM tools
  needed) and its site table is embedded as ``__prlx_sites``; Triton's own
  ptxas then compiles the instrumented PTX, so the cubin defines
  ``__prlx_desc`` and the shim captures it (capture mode ``pass``) on a real
  GPU. Sites are named by Triton's ``.loc`` lines (the Python source).

- ``llir`` (Triton's LLVM IR, with debug locations that point at the Python
  source of the ``@triton.jit`` function): when instrumenting, the IR goes
  through ``opt-22`` with prlx's pass (``-prlx-target=nvptx``: Triton's IR has
  no triple), is linked with the device runtime (``llvm-link-22``) and its
  always-inline recording calls are inlined, so the kernel records the pass's
  events whenever the shim (``libprlx.so``) gives it a buffer, with sites named
  by Python file and line. The site table is also embedded (``__prlx_sites``).
- ``cubin``: when the driver is prlx's emulator, which runs PTX and no
  machine code, the stage returns the PTX text itself (NUL-terminated), and
  Triton's ``cuModuleLoadData`` hands the driver PTX. On a real driver
  ptxas runs as usual.

The hook adds a key to Triton's cache key, so instrumented, emulator and
plain builds never share cache entries.

When PyTorch is imported without a usable CUDA (its CPU wheel, or a CUDA
build on a machine whose driver is the emulator), Triton would find no
active driver; :func:`enable` then makes a torch-free CUDA driver active,
whose benchmarker (for ``@triton.autotune``) times launches on the host.

:func:`enable` / :func:`disable` switch it; :func:`status` says what is on.
A Triton version this hook does not know is warned about once
(:class:`TritonVersionWarning`); one without the stages hook raises
:class:`TritonHookError`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._native import PrlxError

__all__ = [
    "TESTED_TRITON",
    "TritonHookError",
    "TritonVersionWarning",
    "disable",
    "enable",
    "sites",
    "status",
]

#: Triton releases (major.minor) whose stage pipeline this hook was written for.
TESTED_TRITON = ("3.9",)

#: Bumped whenever what the hook does to a kernel changes (it is in the cache key).
HOOK_VERSION = "1"


class TritonHookError(PrlxError):
    """Triton cannot be hooked (not installed, no stages hook) or a stage failed."""


class TritonVersionWarning(UserWarning):
    """The installed Triton is not a version this hook was tested with."""


_lock = threading.Lock()
_state: Dict[str, Any] = {
    "installed": False,
    "instrument": False,
    "ptx": None,  # None: decide from the driver when a kernel is compiled
    "snapshots": False,
    "previous_hook": None,
    "tools": None,
    "stage": None,  # "llir" or "ptx" while instrumenting
}


def _triton():
    try:
        import triton
        from triton import knobs
    except ImportError as e:
        raise TritonHookError(f"prlx.triton needs Triton (pip install triton): {e}") from e
    if not hasattr(knobs, "runtime") or not hasattr(knobs.runtime, "add_stages_inspection_hook"):
        raise TritonHookError(
            f"Triton {getattr(triton, '__version__', '?')} has no knobs.runtime.add_stages_inspection_hook; "
            f"prlx.triton supports Triton {', '.join(TESTED_TRITON)}"
        )
    return triton, knobs


def _check_version(version: str) -> None:
    major_minor = ".".join(version.split(".")[:2])
    if major_minor not in TESTED_TRITON:
        warnings.warn(
            f"prlx.triton was written for Triton {', '.join(TESTED_TRITON)}, not {version}: "
            "kernels may fail to compile or be left uninstrumented",
            TritonVersionWarning,
            stacklevel=3,
        )


# ---------------------------------------------------------------- toolchain


def _repo_root() -> Optional[Path]:
    """The prlx checkout, when the package runs from one ($PRLX_ROOT, else
    upward from this file or the working directory)."""
    env = os.environ.get("PRLX_ROOT")
    if env:
        return Path(env)
    for start in (Path(__file__).resolve(), Path.cwd().resolve()):
        for p in (start, *start.parents):
            if (p / "llvm-pass" / "build.sh").is_file() and (p / "device-rt" / "build.sh").is_file():
                return p
    return None


def _find_tools() -> Dict[str, str]:
    """opt-22, llvm-link-22, the LLVM 22 pass plugin and the flag-free NVPTX
    device runtime; $PRLX_PASS_PLUGIN_22 / $PRLX_DEVICE_RT_TRITON override."""
    missing = []
    tools: Dict[str, str] = {}
    for key, tool in (("opt", "opt"), ("llvm_link", "llvm-link")):
        found = shutil.which(f"{tool}-22")
        if found is None and os.access(f"/usr/lib/llvm-22/bin/{tool}", os.X_OK):
            found = f"/usr/lib/llvm-22/bin/{tool}"
        if found is None:
            missing.append(f"{tool}-22 (install llvm-22; scripts/setup.sh does)")
        else:
            tools[key] = found
    root = _repo_root()
    plugin = os.environ.get("PRLX_PASS_PLUGIN_22") or (
        str(root / "llvm-pass" / "build-22" / "libPrlxPass.so") if root else None
    )
    runtime = os.environ.get("PRLX_DEVICE_RT_TRITON") or (
        str(root / "device-rt" / "build" / "prlx_rt_nvptx.flagfree.ll") if root else None
    )
    if not plugin or not os.path.isfile(plugin):
        missing.append(f"the LLVM 22 pass plugin ({plugin or 'set PRLX_PASS_PLUGIN_22'}; llvm-pass/build.sh 22)")
    else:
        tools["plugin"] = plugin
    if not runtime or not os.path.isfile(runtime):
        missing.append(f"the device runtime ({runtime or 'set PRLX_DEVICE_RT_TRITON'}; device-rt/build.sh)")
    else:
        tools["runtime"] = runtime
    if missing:
        raise TritonHookError("cannot instrument Triton kernels, missing: " + "; ".join(missing))
    return tools


def _file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:16]


# ---------------------------------------------------------------- stages


def _run(cmd: List[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise TritonHookError(f"{what} failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.strip()}")


_HEX_FLOAT = re.compile(r"\bf0x([0-9A-Fa-f]+)\b")
_DEC_FLOAT = re.compile(r"(?<![\w.%@\"$-])(-?\d+\.\d+[eE][+-]?\d+)\b")
_SPECIAL_FLOAT = re.compile(r"(?<![\w.%@\"$])([+-]?)(inf|qnan|snan|nan)(\(0x[0-9A-Fa-f]+\))?(?![\w(])")
_FLOAT_TYPE = re.compile(r"\b(half|bfloat|float|double)\b")


def _float_bits_as_legacy(value: float, ty: str) -> str:
    """``value`` rounded to ``ty``, in LLVM 22's hexadecimal constant form."""
    if ty == "double":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    if ty == "half":
        return "0xH%04X" % struct.unpack("<H", struct.pack("<e", single))[0]
    if ty == "bfloat":
        bits = struct.unpack("<I", struct.pack("<f", single))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even
        return "0xR%04X" % bits
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", single))[0]


def _legacy_float_literals(llir: str) -> str:
    """Rewrites float constants that Triton's bundled (newer) LLVM prints and
    LLVM 22's parser refuses: ``f0x<bits>`` literals, ``+inf``/``-inf``/``nan``,
    and decimal literals
    of half/bfloat/float type that are not exact in that type (LLVM 22
    wants them exact; the newer printer rounds). Both become LLVM 22's
    hexadecimal forms (``0x<double bits>``, ``0xH``/``0xR`` + bits). A
    literal's type is the nearest type name before it on its line."""
    if "f0x" not in llir and not _DEC_FLOAT.search(llir) and not _SPECIAL_FLOAT.search(llir):
        return llir

    def type_before(line: str, pos: int, default: str) -> str:
        types = _FLOAT_TYPE.findall(line, 0, pos)
        return types[-1] if types else default

    def fix_line(line: str) -> str:
        if line.startswith("!") or line.lstrip().startswith(";"):
            return line  # metadata and comments carry no IR constants

        def hex_literal(m: "re.Match[str]") -> str:
            bits = m.group(1)
            ty = type_before(line, m.start(), {4: "half", 8: "float", 16: "double"}.get(len(bits), "float"))
            if len(bits) == 16 or ty == "double":
                return "0x" + bits.upper().rjust(16, "0")
            if len(bits) <= 4:
                return ("0xR" if ty == "bfloat" else "0xH") + bits.upper().rjust(4, "0")
            value = struct.unpack("<f", struct.pack("<I", int(bits, 16)))[0]
            return _float_bits_as_legacy(value, "float")

        def decimal_literal(m: "re.Match[str]") -> str:
            ty = type_before(line, m.start(), "double")
            if ty == "double":
                return m.group(1)
            return _float_bits_as_legacy(float(m.group(1)), ty)

        def special_literal(m: "re.Match[str]") -> str:
            ty = type_before(line, m.start(), "")
            if not ty:
                return m.group(0)  # not a float constant (e.g. a name)
            value = float("nan") if "nan" in m.group(2) else float("inf")
            return _float_bits_as_legacy(-value if m.group(1) == "-" else value, ty)

        line = _HEX_FLOAT.sub(hex_literal, line)
        line = _SPECIAL_FLOAT.sub(special_literal, line)
        return _DEC_FLOAT.sub(decimal_literal, line)

    return "\n".join(fix_line(line) for line in llir.split("\n"))


def instrument_llir(llir: str, *, snapshots: bool = False, sites_json: Optional[str] = None) -> str:
    """Triton LLVM IR in, the same IR recording prlx events out (pass, runtime linked and inlined)."""
    tools = _state["tools"] or _find_tools()
    with tempfile.TemporaryDirectory(prefix="prlx-triton-") as tmp:
        src = os.path.join(tmp, "kernel.ll")
        inst = os.path.join(tmp, "kernel.prlx.ll")
        linked = os.path.join(tmp, "kernel.linked.ll")
        out = os.path.join(tmp, "kernel.out.ll")
        Path(src).write_text(_legacy_float_literals(llir))
        cmd = [
            tools["opt"],
            f"-load-pass-plugin={tools['plugin']}",
            "-passes=prlx-instrument",
            "-prlx-target=nvptx",
            f"-prlx-sites-json={sites_json or 'none'}",
            "-S",
            src,
            "-o",
            inst,
        ]
        if snapshots:
            cmd.insert(4, "-prlx-snapshots")
        _run(cmd, "opt-22 with the prlx pass")
        # Triton's data layout is its own; the runtime has none (flag-free build).
        _run([tools["llvm_link"], "--suppress-warnings", "-S", inst, tools["runtime"], "-o", linked], "llvm-link-22")
        # Inline the always-inline recording calls and drop what no kernel uses;
        # nothing else: Triton already optimised its kernel.
        _run([tools["opt"], "-passes=always-inline,globaldce", "-S", linked, "-o", out], "opt-22 (inlining)")
        return Path(out).read_text()


def instrument_ptx(ptx: str, *, snapshots: bool = False, name: Optional[str] = None) -> str:
    """Triton PTX in, the same PTX recording prlx events out, with its site
    table embedded (``__prlx_sites``): prlx-ptx-instrument, in-process."""
    from ._native import instrument_ptx as native

    try:
        return native(ptx, f"<Triton PTX of {name or 'a kernel'}>", snapshots)
    except PrlxError as e:
        raise TritonHookError(f"prlx-ptx-instrument failed: {e}") from None


def _choose_stage(stage: Optional[str]) -> Tuple[str, Optional[Dict[str, str]]]:
    """The instrumentation stage and, for ``llir``, its tools."""
    stage = stage or os.environ.get("PRLX_TRITON_STAGE", "").strip().lower() or None
    if stage not in (None, "llir", "ptx"):
        raise TritonHookError(f"instrumentation stage {stage!r} is not llir or ptx (PRLX_TRITON_STAGE)")
    if stage == "ptx":
        return "ptx", None
    try:
        tools = _find_tools()
    except TritonHookError:
        if stage == "llir":
            raise
        return "ptx", None
    # In the cache key: a rebuilt pass or runtime recompiles kernels.
    # (Hashed once here: the key is asked for at every launch.)
    tools["digest"] = _file_digest(tools["plugin"]) + _file_digest(tools["runtime"])
    return "llir", tools


def _driver_is_emulator() -> bool:
    from . import cuda

    try:
        return cuda.driver().is_emulator
    except cuda.CudaError:
        return False


def _want_ptx() -> bool:
    ptx = _state["ptx"]
    if ptx is None:
        ptx = _driver_is_emulator()
        _state["ptx"] = ptx
    return bool(ptx)


def _hook(*args: Any) -> Optional[Tuple[str, str]]:
    """Triton's add_stages_inspection_hook: with no arguments, the cache key;
    with (backend, stages, options, language, capability), edits the stages."""
    previous = _state["previous_hook"]
    if not args:
        key = f"prlx-{HOOK_VERSION}-i{int(_state['instrument'])}-s{int(_state['snapshots'])}-p{int(_want_ptx())}"
        key += f"-{_state['stage']}"
        if _state["instrument"] and _state["stage"] == "llir" and _state["tools"]:
            key += "-" + _state["tools"]["digest"]
        if previous is not None:
            prev_key, prev_hash = previous()
            key = f"{prev_key}|{key}"
        return key, hashlib.sha256(key.encode()).hexdigest()
    if previous is not None:
        previous(*args)
    _backend, stages, _options, _language, _capability = args
    if _state["instrument"] and _state["stage"] == "ptx" and "ptx" in stages:
        make_ptx = stages["ptx"]
        snapshots = _state["snapshots"]

        def ptx_then_prlx(src: Any, metadata: Dict[str, Any]) -> str:
            # As for llir: a failure fails the compilation, never a plain
            # kernel cached under the instrumented key.
            return instrument_ptx(make_ptx(src, metadata), snapshots=snapshots, name=metadata.get("name"))

        stages["ptx"] = ptx_then_prlx
    if _state["instrument"] and _state["stage"] == "llir" and "llir" in stages:
        make_llir = stages["llir"]
        snapshots = _state["snapshots"]

        def llir_then_prlx(src: Any, metadata: Dict[str, Any]) -> str:
            # A failure fails the compilation (a TritonHookError naming the
            # tool and its message) rather than falling back to plain IR:
            # Triton would cache the plain kernel under the instrumented key.
            return instrument_llir(make_llir(src, metadata), snapshots=snapshots)

        stages["llir"] = llir_then_prlx
    if _want_ptx() and "cubin" in stages:

        def ptx_image(src: str, metadata: Dict[str, Any]) -> bytes:
            # The emulator JIT-compiles PTX in cuModuleLoadData; it needs the NUL.
            return src.encode() + b"\0"

        stages["cubin"] = ptx_image
    return None


def sites(compiled: Any) -> List[Dict[str, Any]]:
    """The site table embedded in an instrumented kernel: ``compiled`` is
    what a launch returns (``k = kernel[grid](...)``) or its PTX text. Each
    site: ``site_id``, ``filename``, ``function``, ``line``, ``column``,
    ``kind``, ... (the pass's ``prlx-sites.json`` entries), with the Python
    lines of the ``@triton.jit`` function. Empty for a plain kernel."""
    import json

    ptx = compiled if isinstance(compiled, str) else compiled.asm["ptx"]
    m = re.search(r"__prlx_sites\[\d+\]\s*=\s*\{([^}]*)\}", ptx)
    if m is None:
        return []
    raw = bytes(int(v) for v in m.group(1).split(",")).split(b"\0", 1)[0]
    try:
        return list(json.loads(raw))
    except ValueError as e:
        raise TritonHookError(f"the kernel's embedded site table is not JSON: {e}") from None


# ---------------------------------------------------------------- driver


def _activate_torch_free_driver() -> None:
    """Triton's CUDA driver asks PyTorch for devices and streams once torch
    is imported; a CPU torch (or the emulator under a CUDA torch) has none.
    Make a driver active that talks to libcuda alone."""
    import sys

    from triton.backends.nvidia.driver import CudaDriver
    from triton.runtime import driver as triton_driver

    if not _want_ptx():
        torch = sys.modules.get("torch")
        if torch is None:
            return  # Triton's own driver is torch-free then
        try:
            if torch.cuda.is_available():
                return  # a real GPU under torch: Triton's own driver is right
        except Exception:
            pass

    class TorchFreeCudaDriver(CudaDriver):
        def __init__(self) -> None:
            # CudaDriver.__init__'s torch-free branch, whatever is imported.
            from triton.backends.nvidia.driver import CudaLauncher, CudaUtils

            self.utils = CudaUtils()
            self.launcher_cls = CudaLauncher
            self.get_device_capability = self._get_device_capability
            self.get_current_stream = self._get_current_stream
            self.get_current_device = self._get_current_device
            self.set_current_device = self._set_current_device

        @staticmethod
        def is_active() -> bool:
            from triton.backends.nvidia.driver import _cuda_driver_is_active

            return _cuda_driver_is_active()

        def get_benchmarker(self) -> Callable[..., Any]:
            return emulator_bench if _want_ptx() else host_timed_bench

    triton_driver.set_active(TorchFreeCudaDriver())


def emulator_bench(
    kernel_call: Callable[[], Any], quantiles: Any = None, warmup: int = 0, rep: int = 0, return_mode: str = "mean"
) -> Any:
    """The benchmarker on the emulator: runs the configuration once (so one
    that fails to compile or launch is still ruled out) and reports the same
    time for every one. Emulated time says nothing about a GPU, and a choice
    made on it would differ between two runs, which would then launch
    different kernels and not diff; with equal times ``@triton.autotune``
    keeps its first configuration that runs."""
    from . import cuda

    kernel_call()
    cuda.synchronize()
    if quantiles is not None:
        return [1.0] * len(quantiles) if len(quantiles) != 1 else 1.0
    return 1.0


def host_timed_bench(
    kernel_call: Callable[[], Any], quantiles: Any = None, warmup: int = 0, rep: int = 0, return_mode: str = "mean"
) -> Any:
    """``triton.testing.do_bench``'s contract, timed on the host (ms): what
    ``@triton.autotune`` uses on the emulator, where no CUDA events exist
    through PyTorch. Runs the call once to compile, then three times."""
    from . import cuda

    kernel_call()
    cuda.synchronize()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        kernel_call()
        cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    if quantiles is not None:
        n = len(times)
        ret = [times[min(n - 1, int(q * n))] for q in quantiles]
        return ret[0] if len(ret) == 1 else ret
    return {"mean": sum(times) / len(times), "min": times[0], "max": times[-1], "median": times[len(times) // 2]}.get(
        return_mode, sum(times) / len(times)
    )


# ---------------------------------------------------------------- launch sites

_SKIP_DIRS: Tuple[str, ...] = ()


def _launch_site_hook(_metadata: Any) -> None:
    """Triton's launch-enter hook, under the shim: hands the shim the Python
    frames that made this launch (innermost first, Triton's and prlx's own
    frames left out), so the launch's recorded stack starts at a Python line."""
    import sys

    from . import marks

    frame = sys._getframe(1)
    lines = []
    while frame is not None and len(lines) < 8:
        path = frame.f_code.co_filename
        if not path.startswith(_SKIP_DIRS) and not path.startswith("<frozen"):
            name = frame.f_code.co_name.replace("\t", " ")
            lines.append(f"{name}\t{path}\t{frame.f_lineno}")
        frame = frame.f_back
    if lines:
        marks.launch_site("\n".join(lines))


def _install_launch_site_hook(knobs: Any) -> None:
    global _SKIP_DIRS
    from . import marks

    if not marks.shim_loaded() or not hasattr(knobs.runtime, "launch_enter_hook"):
        return
    import triton

    _SKIP_DIRS = (os.path.dirname(triton.__file__) + os.sep, os.path.dirname(__file__) + os.sep)
    hooks = knobs.runtime.launch_enter_hook
    if hasattr(hooks, "add"):
        hooks.add(_launch_site_hook)


# ---------------------------------------------------------------- switches


def enable(
    instrument: bool = True, *, snapshots: bool = False, ptx: Optional[bool] = None, stage: Optional[str] = None
) -> None:
    """Installs the hook for every Triton kernel compiled from now on.

    ``instrument``: record prlx's events. ``stage``: ``"llir"`` runs prlx's
    pass on Triton's LLVM IR (needs opt-22, llvm-link-22, the LLVM 22 plugin
    and the device runtime: a :class:`TritonHookError` names what is
    missing); ``"ptx"`` runs prlx-ptx-instrument on its PTX (nothing
    needed); default ``$PRLX_TRITON_STAGE``, else ``llir`` where its tools
    exist, else ``ptx``. ``snapshots``: also
    record each branch's per-lane compare operands. ``ptx``: hand the driver
    PTX instead of a cubin; default: when the driver is prlx's emulator.
    """
    triton, knobs = _triton()
    _check_version(getattr(triton, "__version__", "0"))
    with _lock:
        chosen, tools = _choose_stage(stage) if instrument else (None, None)
        current = knobs.runtime.add_stages_inspection_hook
        if not _state["installed"]:
            _state["previous_hook"] = current if current is not _hook else None
        _state.update(installed=True, instrument=instrument, snapshots=snapshots, ptx=ptx, tools=tools, stage=chosen)
        knobs.runtime.add_stages_inspection_hook = _hook
    _activate_torch_free_driver()
    _install_launch_site_hook(knobs)


def disable() -> None:
    """Removes the hook (kernels compiled afterwards are plain again)."""
    try:
        _, knobs = _triton()
    except TritonHookError:
        return
    with _lock:
        if _state["installed"] and knobs.runtime.add_stages_inspection_hook is _hook:
            knobs.runtime.add_stages_inspection_hook = _state["previous_hook"]
        _state.update(installed=False, instrument=False, previous_hook=None)


def status() -> Dict[str, Any]:
    """What the hook does now: installed, instrument, stage (llir/ptx), snapshots, ptx (None = not decided yet)."""
    return {k: _state[k] for k in ("installed", "instrument", "stage", "snapshots", "ptx")}


def _enable_on_import() -> None:
    """``import prlx.triton`` enables the hook; ``PRLX_TRITON=off`` keeps it
    off, ``ptx`` only hands the emulator PTX (no pass), ``snapshots`` also
    records each branch's per-lane compare operands (with the shim's
    ``PRLX_SNAPSHOT_DEPTH``); ``on`` (the default) instruments."""
    mode = os.environ.get("PRLX_TRITON", "on").strip().lower()
    if mode in ("off", "0", "no", "false"):
        return
    if mode not in ("on", "1", "yes", "true", "ptx", "snapshots"):
        warnings.warn(f"PRLX_TRITON={mode!r} is not off, on, ptx or snapshots: using on", RuntimeWarning, stacklevel=3)
    try:
        enable(instrument=mode != "ptx", snapshots=mode == "snapshots")
    except TritonHookError as e:
        warnings.warn(f"prlx.triton not enabled: {e}", RuntimeWarning, stacklevel=3)


_enable_on_import()
