"""cuBLAS through PyTorch: a matmul checked against the CPU (gpu-check.sh)."""
import torch

x = torch.arange(64 * 64, dtype=torch.float32).reshape(64, 64) / 4096
y = (x.cuda() @ x.cuda()).cpu()
err = (y - x @ x).abs().max().item()
print(f"matmul max error {err:.3g}")
raise SystemExit(0 if err < 1e-3 else 1)
