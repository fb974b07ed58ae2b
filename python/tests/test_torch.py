"""PyTorch's CUDA build on the emulator: torch.cuda starts (its libraries'
SASS-only fatbinaries load), memory, copies, streams and events work, a
Triton kernel runs on torch CUDA tensors, and an op whose kernel exists only
as SASS fails with a RuntimeError while the driver's stderr line names it.

Needs the emulator's libcuda.so.1 first on LD_LIBRARY_PATH (python/test.sh);
skipped by name only when PyTorch is absent (PRLX_NO_TORCH=1 setups)."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent


def require(condition: bool, why: str) -> None:
    """Skip, or fail under PRLX_REQUIRE_TOOLCHAIN=1 (scripts/test.sh)."""
    if not condition:
        if os.environ.get("PRLX_REQUIRE_TOOLCHAIN") == "1":
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="module")
def torch():
    """PyTorch with CUDA on the emulator."""
    try:
        import torch
    except ImportError:
        if os.environ.get("PRLX_NO_TORCH") == "1":
            pytest.skip("PRLX_NO_TORCH=1: PyTorch not installed")
        require(False, "PyTorch is not installed (scripts/setup.sh)")
    if torch.version.cuda is None:
        require(False, f"PyTorch {torch.__version__} is a CPU-only build (scripts/setup.sh installs the CUDA one)")
    import prlx.cuda as pc

    try:
        drv = pc.driver()
    except pc.CudaError as e:
        require(False, f"no CUDA driver: {e}")
    require(drv.is_emulator, f"the driver is {drv.device_name!r}, not prlx's emulator (LD_LIBRARY_PATH)")
    return torch


def test_cuda_starts_on_the_emulator(torch):
    assert torch.cuda.is_available()
    assert torch.cuda.device_count() == 1
    name = torch.cuda.get_device_name(0)
    assert name.startswith("prlx PTX emulator"), name
    props = torch.cuda.get_device_properties(0)
    assert (props.major, props.minor) == torch.cuda.get_device_capability(0)
    assert props.total_memory > 0 and props.multi_processor_count > 0


def test_memory_copies_streams_and_events(torch):
    x = torch.arange(1000, dtype=torch.float32)
    d = x.cuda()
    assert d.is_cuda and d.device.index == 0
    assert torch.equal(d.cpu(), x)
    e = torch.empty(1000, device="cuda")
    e.copy_(d)  # device to device
    back = torch.empty(1000)
    back.copy_(e)  # device to host
    assert torch.equal(back, x)
    torch.cuda.synchronize()

    side = torch.cuda.Stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    with torch.cuda.stream(side):
        f = torch.empty(1000, device="cuda")
        f.copy_(x.flip(0), non_blocking=True)
    side.synchronize()
    end.record()
    end.synchronize()
    assert start.query() and end.query()
    assert start.elapsed_time(end) >= 0.0
    assert torch.equal(f.cpu(), x.flip(0))
    assert torch.cuda.memory_allocated() > 0


def test_triton_kernel_on_torch_tensors(torch):
    try:
        import triton
    except ImportError:
        require(False, "triton is not installed (scripts/setup.sh)")
    import prlx.triton as pt

    pt.enable(instrument=False)  # the emulator runs PTX; no pass needed here
    sys.path.insert(0, str(HERE))
    import triton_kernels

    n = 3000  # not a multiple of the block: the mask matters
    gen = torch.Generator().manual_seed(5)
    x, y = torch.randn(n, generator=gen).cuda(), torch.randn(n, generator=gen).cuda()
    out = torch.empty(n, device="cuda")
    triton_kernels.add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    np.testing.assert_array_equal(out.cpu().numpy(), x.cpu().numpy() + y.cpu().numpy())


def test_sass_only_ops_are_runtime_errors_naming_the_kernel(torch, capfd):
    x = torch.ones(8).cuda()  # a copy: no kernel
    # Zeros are a memset, which the driver does itself.
    assert torch.equal(torch.zeros(8, device="cuda").cpu(), torch.zeros(8))
    for op, kernel in [
        (lambda: torch.full((8,), 3.0, device="cuda"), "FillFunctor<float>"),
        (lambda: x + x, "CUDAFunctor_add<float>"),
        # A kernel in an anonymous namespace: a local symbol of the cubin.
        (lambda: torch.randn(8, device="cuda"), "distribution_elementwise_grid_stride_kernel"),
    ]:
        with pytest.raises(RuntimeError, match="no kernel image is available"):
            op()
            torch.cuda.synchronize()
        err = capfd.readouterr().err
        # The driver's one line names the kernel (demangled) and the fix.
        lines = [line for line in err.splitlines() if "CUDA_ERROR_NO_BINARY_FOR_GPU" in line]
        assert len(lines) == 1, err
        assert kernel in lines[0] and "no PTX" in lines[0], lines[0]
    # A second refusal of the same kernel adds no line; the process goes on.
    with pytest.raises(RuntimeError):
        x + x
    assert "CUDA_ERROR_NO_BINARY_FOR_GPU" not in capfd.readouterr().err
    assert torch.equal(x.cpu(), torch.ones(8))
