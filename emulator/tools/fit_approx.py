#!/usr/bin/env python3
"""Fits the emulator's models of the GPU's approximate instructions
(rcp, rsqrt, sqrt, ex2, lg2, sin, cos .approx.f32) to what an NVIDIA H200
returned, and writes them as emulator/src/semantics/approx_tables.rs.

The hardware's function unit looks its argument's leading bits up in a table
of polynomial coefficients and interpolates on the rest. The model has the
same shape: the reduced argument u in [0, 1) (see each op below) selects one
of SEGMENTS segments, and the result is c0 + c1*t + c2*t^2 in f64, t the
position in the segment, rounded to f32. The coefficients of each segment are
the least-squares fit to the hardware's results over that segment, taken
from ../shared/hardware/approx-sweep/OP.i8.gz (README there: for input k,
the hardware result minus the correctly rounded one, in ulps; results off by
127 ulps or more are saturated there and left out of the fit).

sin and cos share one table over a whole turn (fit_sincos below).

Run from the repository root with numpy:  python3 emulator/tools/fit_approx.py
"""
import gzip
import os
import subprocess
import sys

import numpy as np

SEGMENTS = 128
SWEEP = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "hardware", "approx-sweep")
OUT = os.path.join(os.path.dirname(__file__), "..", "src", "semantics", "approx_tables.rs")
N = 1 << 23
K = np.arange(N, dtype=np.int64)


def inputs(op):
    """The sweep's f32 inputs for input index k (sweep.cu's input())."""
    if op in ("rcp", "lg2"):
        return (0x3F800000 | K).astype(np.uint32).view(np.float32)
    if op in ("rsqrt", "sqrt"):
        return (0x3F800000 + 2 * K).astype(np.uint32).view(np.float32)
    return K.astype(np.float32) * np.float32(1.0 / 8388608.0)  # ex2


# The reduced argument u of each sweep input, as approx.rs computes it:
# rcp, lg2: the mantissa fraction; rsqrt, sqrt: half the mantissa fraction,
# plus 1/2 for an odd exponent (inputs in [2, 4)); ex2: the fraction of x.
# Over the sweep that is u = k / 2^23 for every op.
EXACT = {
    "rcp": lambda x: 1.0 / x,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sqrt": np.sqrt,
    "ex2": np.exp2,
    "lg2": np.log2,
}


def ordered(bits):
    b = bits.astype(np.int64)
    return np.where(b < 0, -(b & 0x7FFFFFFF), b)


def from_ordered(i):
    return np.where(i < 0, (-i) | 0x80000000, i).astype(np.uint32).view(np.float32)


def hardware(op):
    with gzip.open(os.path.join(SWEEP, op + ".i8.gz")) as f:
        delta = np.frombuffer(f.read(), dtype=np.int8).astype(np.int64)
    x = inputs(op)
    ref = EXACT[op](x.astype(np.float64)).astype(np.float32)
    hw = from_ordered(ordered(ref.view(np.int32)) + delta)
    return hw.astype(np.float64), np.abs(delta) < 127


def fit(op):
    """Per segment, the least-squares quadratic in t. For lg2 the quadratic
    fits lg2(1 + u) / u, and the model is u times it: results near x = 1 are
    tiny, and only a relative fit keeps them close to the hardware's."""
    hw, good = hardware(op)
    u = K / float(N)
    seg = (u * SEGMENTS).astype(np.int64)
    t = u * SEGMENTS - seg
    target = hw
    if op == "lg2":
        good = good & (u > 0)
        target = np.where(u > 0, hw / np.where(u > 0, u, 1.0), 0.0)
    table = []
    for s in range(SEGMENTS):
        m = (seg == s) & good
        v = np.vstack([np.ones(m.sum()), t[m], t[m] ** 2]).T
        coef, *_ = np.linalg.lstsq(v, target[m], rcond=None)
        if op != "lg2":
            coef[0] += best_shift(v @ coef, hw[m])
        table.append(coef)
    return table


def best_shift(model, hw):
    """The shift of the segment's curve, within half an output ulp, that
    makes the most rounded results equal the hardware's: a least-squares
    fit centres the curve on the results, the hardware rounds its own."""
    ulp = float(np.spacing(np.float32(np.median(np.abs(hw)))))
    best, best_hits = 0.0, -1
    for step in sorted(range(-8, 9), key=abs):
        shift = step * ulp / 16
        hits = int(((model + shift).astype(np.float32) == hw.astype(np.float32)).sum())
        if hits > best_hits:
            best, best_hits = shift, hits
    return best


# sin and cos: the GPU multiplies x by 1/(2 pi) in f32 rounding toward zero
# (ptxas emits FMUL.RZ by 0.15915494 before MUFU.SIN/COS), keeps the
# fraction of a turn in fixed point with SINCOS_FRACTION_BITS bits
# (truncated), and interpolates one table over the turn; cos reads it a
# quarter turn on. Measured on the sweeps: truncating the turn to 2^-25
# makes 72 % of sin results bit-exact against 54 % at f32 precision and
# 7-17 % at 2^-22..2^-24; a quadratic per 1/256 of a turn is as good as
# finer tables (2^-26..2^-28 and 512-1024 segments gain nothing), and one
# table for both ops fits as well as one per op.
SINCOS_SEGMENTS = 256
SINCOS_FRACTION_BITS = 25
INV_2PI_F32 = np.float32(0.15915494)
# Segments held to sin's zeros and peaks at their start or end:
# {segment: value}.
Q = SINCOS_SEGMENTS // 4
HELD_AT_START = {0: 0.0, Q: 1.0, 2 * Q: 0.0, 3 * Q: -1.0}
HELD_AT_END = {Q - 1: 1.0, 2 * Q - 1: 0.0, 3 * Q - 1: -1.0, 4 * Q - 1: 0.0}


def turns(x):
    """The fraction of a turn the unit sees for f32 inputs x >= 0."""
    p = x.astype(np.float64) * np.float64(INV_2PI_F32)
    u = p.astype(np.float32)
    u = np.where(u.astype(np.float64) > p, np.nextafter(u, np.float32(0)), u)
    scale = float(1 << SINCOS_FRACTION_BITS)
    return np.floor(u.astype(np.float64) * scale) % scale / scale


def sincos_hardware(op):
    with gzip.open(os.path.join(SWEEP, op + ".i8.gz")) as f:
        delta = np.frombuffer(f.read(), dtype=np.int8).astype(np.int64)
    x = K.astype(np.float32) * np.float32(1.0 / 2097152.0)
    ref = (np.sin if op == "sin" else np.cos)(x.astype(np.float64)).astype(np.float32)
    hw = from_ordered(ordered(ref.view(np.int32)) + delta)
    return x, hw.astype(np.float64), np.abs(delta) < 127


def fit_sincos():
    """One quadratic per 1/SINCOS_SEGMENTS of a turn, fitted to the sin
    sweep (turns w in [0, 0.64)) and the cos sweep (w + 1/4, in
    [0.25, 0.89)) together. Segments past the data take the mirror image
    of the ones before them, sin(2 pi w) = -sin(2 pi (1 - w)). The
    segments that meet a zero or a peak of sin (w = 0, 1/4, 1/2, 3/4, 1)
    are held to its value there: the H200 returns sin(0) = 0, cos(0) = 1
    and is within a few 1e-9 of the exact value next to the zeros, where
    the sweep saturates, so an unconstrained fit drifts by several 1e-7
    where it has no data."""
    ws, vs = [], []
    for op, shift in (("sin", 0.0), ("cos", 0.25)):
        x, hw, good = sincos_hardware(op)
        ws.append((turns(x)[good] + shift) % 1.0)
        vs.append(hw[good])
    w, v = np.concatenate(ws), np.concatenate(vs)
    seg = np.minimum((w * SINCOS_SEGMENTS).astype(np.int64), SINCOS_SEGMENTS - 1)
    t = w * SINCOS_SEGMENTS - seg
    table = [None] * SINCOS_SEGMENTS
    for s in range(SINCOS_SEGMENTS):
        m = seg == s
        if m.sum() < 64:
            continue
        tm = t[m]
        if s in HELD_AT_START:
            # c0 is the value at the segment's start.
            c0 = HELD_AT_START[s]
            a = np.vstack([tm, tm**2]).T
            (c1, c2), *_ = np.linalg.lstsq(a, v[m] - c0, rcond=None)
            table[s] = np.array([c0, c1, c2])
            continue
        if s in HELD_AT_END:
            # c0 + c1 + c2 is the value at the segment's end.
            y = HELD_AT_END[s]
            a = np.vstack([tm - 1, tm**2 - 1]).T
            (c1, c2), *_ = np.linalg.lstsq(a, v[m] - y, rcond=None)
            table[s] = np.array([y - c1 - c2, c1, c2])
            continue
        a = np.vstack([np.ones(m.sum()), tm, tm**2]).T
        coef, *_ = np.linalg.lstsq(a, v[m], rcond=None)
        coef[0] += best_shift(a @ coef, v[m])
        table[s] = coef
    for s in range(SINCOS_SEGMENTS):
        if table[s] is None:
            c0, c1, c2 = table[SINCOS_SEGMENTS - 1 - s]
            table[s] = -np.array([c0 + c1 + c2, -c1 - 2 * c2, c2])
    return table


def main():
    if not os.path.isdir(SWEEP):
        sys.exit(f"{SWEEP} not found: the sweeps live in ../shared/hardware")
    lines = [
        "// @generated by emulator/tools/fit_approx.py from ../shared/hardware/approx-sweep:",
        "// per-segment quadratic coefficients [c0, c1, c2] of each approximate",
        "// instruction (see approx.rs). Do not edit; rerun the script.",
        "",
        f"pub const SEGMENTS: usize = {SEGMENTS};",
    ]
    for op in ("rcp", "rsqrt", "sqrt", "ex2", "lg2"):
        lines.append("")
        lines.append(f"pub static {op.upper()}: [[f64; 3]; SEGMENTS] = [")
        for c in fit(op):
            lines.append("    [" + ", ".join(repr(float(v)) for v in c) + "],")
        lines.append("];")
    lines.append("")
    lines.append(f"pub const SINCOS_SEGMENTS: usize = {SINCOS_SEGMENTS};")
    lines.append(f"pub const SINCOS_FRACTION_BITS: u32 = {SINCOS_FRACTION_BITS};")
    lines.append("")
    lines.append("pub static SINCOS: [[f64; 3]; SINCOS_SEGMENTS] = [")
    for c in fit_sincos():
        lines.append("    [" + ", ".join(repr(float(v)) for v in c) + "],")
    lines.append("];")
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    # Laid out as `cargo fmt --check` expects.
    subprocess.run(["rustfmt", "--edition", "2024", OUT], check=True)
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
