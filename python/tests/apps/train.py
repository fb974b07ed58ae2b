"""A small training loop: a PyTorch (CPU) linear model whose per-step
scores go through Triton kernels on the emulator (a fused softmax and the
ticket kernel), each step marked with prlx.training.steps. Run twice under
the shim with different PRLX_EMU_SCHEDULE seeds, step 2's ticket race shows."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import prlx  # noqa: E402
import prlx.cuda as pc  # noqa: E402
import prlx.training  # noqa: E402
import prlx.triton  # noqa: E402,F401
import triton_kernels as K  # noqa: E402

torch.manual_seed(0)
model = torch.nn.Linear(8, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = [torch.randn(4, 8) for _ in range(4)]
with prlx.session("setup"):
    counter = pc.zeros(1, np.int32)
    tickets = pc.empty(16, np.int32)
for n, batch in prlx.training.steps(data):
    scores = model(batch)
    x = pc.to_device(scores)
    probs = pc.empty(tuple(scores.shape))
    K.softmax_kernel[(4,)](probs, x, 16, 16, 4, 16, BLOCK_SIZE=16)
    p = torch.from_numpy(probs.numpy())
    if n == 2:  # the step whose kernels race
        counter.zero_()
        K.ticket_kernel[(16,)](counter, tickets, 8)
    loss = -(p * torch.log_softmax(scores, dim=1)).sum(dim=1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {n}: loss {loss.item():.4f}")
