"""Runs the autotuned matmul once (autotuning included) and checks it."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import triton  # noqa: E402

import prlx.cuda as pc  # noqa: E402
import prlx.triton  # noqa: E402,F401
import triton_kernels as K  # noqa: E402

rng = np.random.default_rng(0)
M, N, KD = 48, 32, 32
a = rng.standard_normal((M, KD)).astype(np.float16)
b = rng.standard_normal((KD, N)).astype(np.float16)
da, db, c = pc.to_device(a), pc.to_device(b), pc.empty((M, N), np.float16)
K.matmul_kernel[lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)](
    da, db, c, M, N, KD, da.stride(0), da.stride(1), db.stride(0), db.stride(1), c.stride(0), c.stride(1)
)
ref = a.astype(np.float32) @ b.astype(np.float32)
assert np.allclose(c.numpy().astype(np.float32), ref, atol=2e-2), "matmul mismatch"
print(K.matmul_kernel.best_config)
