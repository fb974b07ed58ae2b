"""Triton kernels in the shapes of Triton's tutorials, for the emulator tests.

Kept in a module of their own so the Python lines the tests expect in a
diff (``ATOMIC_LINE``) do not move when the tests change.
"""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step):
        row_ptr = in_ptr + row_idx * in_row_stride
        col = tl.arange(0, BLOCK_SIZE)
        mask = col < n_cols
        row = tl.load(row_ptr + col, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        tl.store(out_ptr + row_idx * out_row_stride + col, numerator / denominator, mask=mask)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2}, num_warps=4),
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 4}, num_warps=2),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def sum_atomic_kernel(x_ptr, total_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """A reduction with atomics: each program adds its block's sum to one total."""
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0)
    tl.atomic_add(total_ptr, tl.sum(x, axis=0))


@triton.jit
def ticket_kernel(counter_ptr, out_ptr, threshold):
    """A seeded race: each program takes a ticket from one counter; which
    program gets which ticket depends on the order blocks run in, and the
    branch on the ticket then goes another way."""
    pid = tl.program_id(axis=0)
    ticket = tl.atomic_add(counter_ptr, 1)  # ATOMIC_LINE
    if ticket < threshold:  # BRANCH_LINE
        tl.store(out_ptr + pid, ticket * 10)
    else:
        tl.store(out_ptr + pid, -1)


@triton.jit
def dot_fp32_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """An fp32 tl.dot at Triton's default precision (tf32 on sm_80)."""
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + i[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + j[None, :])
    tl.store(c_ptr + i[:, None] * N + j[None, :], tl.dot(a, b))


@triton.jit
def int8_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """An int8 tl.dot with int32 accumulation (integer mma on sm_80)."""
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + i[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + j[None, :])
    tl.store(c_ptr + i[:, None] * N + j[None, :], tl.dot(a, b, out_dtype=tl.int32))


@triton.jit
def math_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """libdevice and approximate math: exp2, log, sqrt, erf, sin, rsqrt."""
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.exp2(x) + tl.log(x + 2) + tl.sqrt(x + 1) + tl.math.erf(x) + tl.sin(x) + tl.math.rsqrt(x + 1)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, scale, S: tl.constexpr, D: tl.constexpr):
    """One block of attention (fp16 in, fp32 softmax, fp16 out): dot, softmax, dot."""
    i = tl.arange(0, S)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + i[:, None] * D + d[None, :])
    kt = tl.load(k_ptr + i[None, :] * D + d[:, None])
    v = tl.load(v_ptr + i[:, None] * D + d[None, :])
    s = tl.dot(q, kt) * scale
    p = tl.exp(s - tl.max(s, 1)[:, None])
    p = p / tl.sum(p, 1)[:, None]
    tl.store(o_ptr + i[:, None] * D + d[None, :], tl.dot(p.to(tl.float16), v).to(tl.float16))


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        for number, text in enumerate(f, start=1):
            if text.rstrip().endswith(f"# {marker}"):
                return number
    raise LookupError(marker)


ATOMIC_LINE = _line_of("ATOMIC_LINE")
BRANCH_LINE = _line_of("BRANCH_LINE")
