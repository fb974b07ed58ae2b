"""A Triton kernel with a race: every program takes a ticket from one
counter, and the first `limit` tickets claim the slot of that number. Which
program gets which ticket depends on the order programs run in.

    python -m prlx run --session a --trace-dir runs -- python triton_race.py
    PRLX_EMU_SCHEDULE=7 python -m prlx run --session b --trace-dir runs -- python triton_race.py
    prlxctl diff --session runs/a runs/b
"""

import numpy as np
import triton
import triton.language as tl

import prlx.cuda
import prlx.triton  # noqa: F401  (instrument kernels; hand the emulator PTX)


@triton.jit
def claim_slots(counter_ptr, out_ptr, limit):
    pid = tl.program_id(axis=0)
    ticket = tl.atomic_add(counter_ptr, 1)
    if ticket < limit:
        tl.store(out_ptr + ticket, pid)


counter = prlx.cuda.zeros(1, np.int32)
out = prlx.cuda.to_device(np.full(8, -1, np.int32))
claim_slots[(16,)](counter, out, 8)
print(out.numpy())
