"""A small PyTorch training loop run for a fixed time (gpu-check.sh): an MLP
on random data, about 17 kernel launches a step (forward, loss, backward,
SGD), so its steps/s is bound by the launch rate, as the always-on shim's
cost is measured in issue 21 item 6.

    python3 train_loop.py [SECONDS (default 5)]

Prints one line: ``train-loop: steps=N seconds=S steps_per_s=R loss=L``.
The loss is read back every 100 steps, as a training loop logging it would.
"""
import math
import sys
import time

import torch


def main() -> int:
    try:
        seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    except ValueError:
        print(f"train-loop: SECONDS {sys.argv[1]!r} is not a number", file=sys.stderr)
        return 2
    if not seconds > 0:
        print("train-loop: SECONDS must be more than 0", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    ).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, foreach=True)
    x = torch.randn(256, 64, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()

    def step() -> torch.Tensor:
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(50):  # warm-up: cuBLAS handles, the allocator's pools
        step()
    torch.cuda.synchronize()
    steps, first = 0, None
    start = time.perf_counter()
    while True:
        loss = step()
        steps += 1
        if steps % 100 == 0:
            value = loss.item()
            first = value if first is None else first
            if time.perf_counter() - start >= seconds:
                break
    elapsed = time.perf_counter() - start
    print(
        f"train-loop: steps={steps} seconds={elapsed:.2f} "
        f"steps_per_s={steps / elapsed:.1f} loss={value:.4f}"
    )
    if not math.isfinite(value) or value > first:
        print(f"train-loop: the loss went from {first} to {value}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
