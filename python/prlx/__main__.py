"""``python -m prlx run [--session NAME] [--trace-dir DIR] [--emulator DIR] -- CMD ...``

Re-executes CMD under the capture shim (``LD_PRELOAD=libprlx.so``) with the
session's environment; CMD's exit status is the command's.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

USAGE = "python -m prlx run [--session NAME] [--trace-dir DIR] [--emulator DIR] [--capture MODE] -- CMD [ARGS...]"


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m prlx", usage=USAGE)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a command under the capture shim", usage=USAGE)
    run.add_argument("--session", help="session name (PRLX_SESSION)")
    run.add_argument("--trace-dir", help="write the session directory here (PRLX_TRACE_DIR)")
    run.add_argument("--emulator", help="directory of the emulator's libcuda.so.1, put first on LD_LIBRARY_PATH")
    run.add_argument("--capture", help="capture mode (PRLX_CAPTURE): auto, pass, substitute, ptx, nvbit, metadata")
    run.add_argument("--shim", help="libprlx.so to preload (default: $PRLX_SHIM or the checkout's build)")
    run.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("no command to run (put it after --)")
    from .run import CaptureError, capture_env

    try:
        env = capture_env(
            args.session,
            args.trace_dir,
            shim=args.shim,
            emulator=args.emulator,
            extra={"PRLX_CAPTURE": args.capture} if args.capture else None,
        )
    except CaptureError as e:
        print(f"prlx run: {e}", file=sys.stderr)
        return 2
    try:
        os.execvpe(cmd[0], cmd, env)
    except OSError as e:
        print(f"prlx run: cannot run {cmd[0]}: {e}", file=sys.stderr)
        return 127
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
