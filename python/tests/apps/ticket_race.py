"""Launches ticket_kernel once (16 programs taking tickets from one counter)
and prints the tickets; run twice under the shim with different
PRLX_EMU_SCHEDULE seeds to expose the race."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import prlx.cuda as pc  # noqa: E402
import prlx.triton  # noqa: E402,F401  (PRLX_TRITON=ptx: PTX only, no pass)
import triton_kernels as K  # noqa: E402

counter = pc.zeros(1, np.int32)
out = pc.empty(16, np.int32)
K.ticket_kernel[(16,)](counter, out, 8)
print(" ".join(str(v) for v in out.numpy()))
