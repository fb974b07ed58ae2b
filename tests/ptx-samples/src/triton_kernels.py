"""Ahead-of-time Triton compiles (no GPU needed) writing PTX for sm_80.

Usage: PYTHONPATH=<triton install> python3 triton_kernels.py OUT_DIR
"""
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + cols, num / den, mask=mask)


def compile_one(fn, signature, constexprs, out_path):
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs)
    compiled = triton.compile(src, target=GPUTarget("cuda", 80, 32))
    with open(out_path, "w") as f:
        f.write(compiled.asm["ptx"])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    compile_one(
        vector_add,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 1024},
        os.path.join(out, "vector_add.ptx"),
    )
    compile_one(
        softmax,
        {
            "out_ptr": "*fp32",
            "in_ptr": "*fp32",
            "in_stride": "i32",
            "out_stride": "i32",
            "n_cols": "i32",
            "BLOCK": "constexpr",
        },
        {"BLOCK": 256},
        os.path.join(out, "softmax.ptx"),
    )


if __name__ == "__main__":
    main()
