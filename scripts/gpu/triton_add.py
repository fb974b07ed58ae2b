"""A Triton kernel with PyTorch tensors (gpu-check.sh); with the prlx wheel on
sys.path, ``import prlx.triton`` instruments it first (PRLX_TRITON)."""
import os

import torch
import triton
import triton.language as tl

if os.environ.get("PRLX_TRITON", "off") != "off":
    import prlx.triton as pt

    print("prlx.triton:", pt.status())


@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m) + tl.load(y + i, mask=m)
    tl.store(out + i, tl.where(v > 1.0, v, -v), mask=m)


n = 4097
x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
out = torch.empty_like(x)
add[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
v = x + y
ok = torch.equal(out, torch.where(v > 1.0, v, -v))
print("triton add", "ok" if ok else "WRONG")
raise SystemExit(0 if ok else 1)
