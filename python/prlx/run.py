"""Running a program under the capture shim (``python -m prlx run``).

:func:`shim_path` finds ``libprlx.so``; :func:`capture_env` is the
environment that records a session (``LD_PRELOAD``, ``PRLX_TRACE_DIR``,
``PRLX_SESSION``, and with ``emulator=`` the emulator's ``libcuda.so.1``
first on ``LD_LIBRARY_PATH`` and as ``TRITON_LIBCUDA_PATH``); :func:`run`
runs a command with it and returns the session directory.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Union

from ._native import PrlxError

__all__ = ["CaptureError", "capture_env", "run", "shim_path"]

PathLike = Union[str, "os.PathLike[str]"]


class CaptureError(PrlxError):
    """The shim could not be found, or the captured command failed."""


def _target_dirs() -> List[Path]:
    dirs = []
    if os.environ.get("CARGO_TARGET_DIR"):
        dirs.append(Path(os.environ["CARGO_TARGET_DIR"]))
    here = Path(__file__).resolve()
    for start in (here, Path.cwd().resolve()):
        for p in (start, *start.parents):
            if (p / "Cargo.toml").is_file() and (p / "preload").is_dir():
                dirs.append(p / "target")
                break
    return dirs


def shim_path() -> Path:
    """``$PRLX_SHIM``, else ``libprlx.so`` of a release or debug build of the checkout."""
    env = os.environ.get("PRLX_SHIM")
    if env:
        if not os.path.isfile(env):
            raise CaptureError(f"PRLX_SHIM={env} is not a file")
        return Path(env)
    looked = []
    for d in _target_dirs():
        for profile in ("release", "debug"):
            cand = d / profile / "libprlx.so"
            looked.append(str(cand))
            if cand.is_file():
                return cand
    raise CaptureError(
        "libprlx.so not found (build it with `cargo build -p prlx-preload` or set PRLX_SHIM); looked at: "
        + ", ".join(looked or ["no prlx checkout or CARGO_TARGET_DIR"])
    )


def capture_env(
    session: Optional[str] = None,
    trace_dir: Optional[PathLike] = None,
    *,
    shim: Optional[PathLike] = None,
    emulator: Optional[PathLike] = None,
    base: Optional[Mapping[str, str]] = None,
    extra: Optional[Mapping[str, str]] = None,
) -> Dict[str, str]:
    """The environment that runs a program under the shim.

    ``emulator``: a directory holding the emulator's ``libcuda.so.1``, put
    first on ``LD_LIBRARY_PATH``. ``extra``: more variables (``PRLX_CAPTURE``,
    ``PRLX_EMU_SCHEDULE``...)."""
    env = dict(os.environ if base is None else base)
    lib = os.fspath(shim) if shim else str(shim_path())
    preload = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = lib + (":" + preload if preload and lib not in preload.split(":") else "")
    if session:
        env["PRLX_SESSION"] = session
    if trace_dir is not None:
        env["PRLX_TRACE_DIR"] = os.fspath(trace_dir)
    if emulator is not None:
        d = os.fspath(emulator)
        if not os.path.exists(os.path.join(d, "libcuda.so.1")):
            raise CaptureError(f"{d} holds no libcuda.so.1 (run libcuda/build.sh)")
        env["LD_LIBRARY_PATH"] = d + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        env["TRITON_LIBCUDA_PATH"] = d
    env.update(extra or {})
    return env


def run(
    command: Sequence[str],
    session: str,
    trace_dir: PathLike,
    *,
    check: bool = True,
    **env_options,
) -> Path:
    """Runs ``command`` under the shim, recording session ``session`` into
    ``trace_dir``; returns the session directory. ``check``: raise
    :class:`CaptureError` (with the command's stderr) when it fails."""
    env = capture_env(session, trace_dir, **env_options)
    proc = subprocess.run(list(command), env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise CaptureError(
            f"{' '.join(command)} exited with {proc.returncode} under the shim:\n{proc.stderr.strip()[-4000:]}"
        )
    out = Path(os.fspath(trace_dir)) / session
    if check and not (out / "session.json").is_file():
        raise CaptureError(f"{' '.join(command)} recorded no session at {out} (did it launch any kernel?)")
    return out
