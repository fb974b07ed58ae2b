//! Execution of tensor-core operations: `ldmatrix`, `stmatrix` and `mma.sync` (fragments as the PTX ISA lays them out).

use super::arith::canon32;
use super::memory_ops::{addresses, check_align, load, store};
use super::*;

#[inline(always)]
pub(crate) fn execute(
    w: &mut Warp,
    env: &mut Env<'_>,
    op: &Op,
    exec: u32,
) -> Result<(), LaneFault> {
    match op {
        Op::Ldmatrix { n, trans, d, addr } => {
            // A warp-collective load: every lane's address takes part.
            let addrs = addresses(w, addr, Space::Shared, u32::MAX)?;
            let rows = 8 * *n as usize;
            let mut mats = [[[0u16; 8]; 8]; 4];
            for lane in 0..rows {
                let a = addrs[lane] & 0xffff_ffff;
                check_align(a, 16, lane)?;
                for (e, slot) in mats[lane / 8][lane % 8].iter_mut().enumerate() {
                    *slot = load(env, w, Space::Shared, a + 2 * e as u64, 2, lane)? as u16;
                }
            }
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let (row, col) = (l / 4, (l % 4) * 2);
                for (i, dst) in d.iter().enumerate().take(*n as usize) {
                    let (lo, hi) = if *trans {
                        (mats[i][col][row], mats[i][col + 1][row])
                    } else {
                        (mats[i][row][col], mats[i][row][col + 1])
                    };
                    w.values[r(*dst) + l] = lo as u64 | (hi as u64) << 16;
                }
            }
        }
        Op::Stmatrix { n, trans, s, addr } => {
            // Gather the fragments of the executing lanes (the instruction
            // is `.aligned`: the whole warp executes it), then store rows.
            let addrs = addresses(w, addr, Space::Shared, u32::MAX)?;
            let mut mats = [[[0u16; 8]; 8]; 4];
            for l in 0..32 {
                let (row, col) = (l / 4, (l % 4) * 2);
                for (i, src) in s.iter().enumerate().take(*n as usize) {
                    let v = w.values[r(*src) + l];
                    let (lo, hi) = (v as u16, (v >> 16) as u16);
                    if *trans {
                        mats[i][col][row] = lo;
                        mats[i][col + 1][row] = hi;
                    } else {
                        mats[i][row][col] = lo;
                        mats[i][row][col + 1] = hi;
                    }
                }
            }
            env.wrote = true;
            for lane in 0..8 * *n as usize {
                let a = addrs[lane] & 0xffff_ffff;
                check_align(a, 16, lane)?;
                for (e, x) in mats[lane / 8][lane % 8].iter().enumerate() {
                    store(env, w, Space::Shared, a + 2 * e as u64, 2, *x as u64, lane)?;
                }
            }
        }
        Op::Mma {
            k,
            elem,
            c16,
            d16,
            d,
            a,
            b,
            c,
        } => {
            let k = *k as usize;
            if let MmaElem::Int8 {
                a_signed,
                b_signed,
                satfinite,
            } = *elem
            {
                mma_int8(w, k, (a_signed, b_signed, satfinite), (d, a, b, c), exec);
                return Ok(());
            }
            let half = |bits: u64| -> f32 {
                if *elem == MmaElem::Bf16 {
                    half::bf16::from_bits(bits as u16).to_f32()
                } else {
                    half::f16::from_bits(bits as u16).to_f32()
                }
            };
            // Gather the fragments (PTX ISA "Matrix fragments for mma.m16n8k16").
            let mut am = [[0f32; 16]; 16];
            let mut bm = [[0f32; 8]; 16];
            let mut cm = [[0f32; 8]; 16];
            for l in 0..WARP {
                let (g, t) = (l / 4, l % 4);
                let val = |row: Row| w.values[r(row) + l];
                let pair = |x: u64| (half(x), half(x >> 16));
                if *elem == MmaElem::Tf32 {
                    // m16n8k8 .tf32: one element per register (PTX ISA
                    // "Matrix fragments for mma.m16n8k8", .tf32); the low 13
                    // mantissa bits are not part of a tf32.
                    let tf32 = |x: u64| f32::from_bits(x as u32 & !0x1fff);
                    for (i, (row, col)) in [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]
                        .iter()
                        .enumerate()
                    {
                        am[*row][*col] = tf32(val(a[i]));
                    }
                    bm[t][g] = tf32(val(b[0]));
                    bm[t + 4][g] = tf32(val(b[1]));
                    for (i, (row, col)) in accumulator_fragment(g, t).iter().enumerate() {
                        cm[*row][*col] = if *c16 {
                            // f16x2 register i/2: rows g (0) and g + 8 (1).
                            let x = val(c[i / 2]) >> (16 * (i % 2));
                            half::f16::from_bits(x as u16).to_f32()
                        } else {
                            f32::from_bits(val(c[i]) as u32)
                        };
                    }
                    continue;
                }
                let a_regs: &[(usize, usize)] = if k == 16 {
                    &[
                        (g, 2 * t),
                        (g + 8, 2 * t),
                        (g, 2 * t + 8),
                        (g + 8, 2 * t + 8),
                    ]
                } else {
                    &[(g, 2 * t), (g + 8, 2 * t)]
                };
                for (i, (row, col)) in a_regs.iter().enumerate() {
                    let (x0, x1) = pair(val(a[i]));
                    am[*row][*col] = x0;
                    am[*row][*col + 1] = x1;
                }
                let b_regs: &[usize] = if k == 16 {
                    &[2 * t, 2 * t + 8]
                } else {
                    &[2 * t]
                };
                for (i, kk) in b_regs.iter().enumerate() {
                    let (x0, x1) = pair(val(b[i]));
                    bm[*kk][g] = x0;
                    bm[*kk + 1][g] = x1;
                }
                for (i, (row, col)) in accumulator_fragment(g, t).iter().enumerate() {
                    cm[*row][*col] = if *c16 {
                        // f16x2 register i/2: rows g (0) and g + 8 (1).
                        let x = val(c[i / 2]) >> (16 * (i % 2));
                        half::f16::from_bits(x as u16).to_f32()
                    } else {
                        f32::from_bits(val(c[i]) as u32)
                    };
                }
            }
            let mut out = [[0f32; 8]; 16];
            for (row, out_row) in out.iter_mut().enumerate() {
                for (col, o) in out_row.iter_mut().enumerate() {
                    // f16/bf16/tf32 products are exact in f32; accumulate in k order.
                    let mut acc = cm[row][col];
                    for kk in 0..k {
                        acc += am[row][kk] * bm[kk][col];
                    }
                    *o = acc;
                }
            }
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let (g, t) = (l / 4, l % 4);
                if *d16 {
                    for (i, (row, col)) in accumulator_fragment(g, t).iter().enumerate() {
                        let x = f16_bits(out[*row][*col]) << (16 * (i % 2));
                        let slot = &mut w.values[r(d[i / 2]) + l];
                        *slot = if i % 2 == 0 { x } else { *slot | x };
                    }
                    continue;
                }
                for (i, (row, col)) in accumulator_fragment(g, t).iter().enumerate() {
                    w.values[r(d[i]) + l] = canon32(out[*row][*col]);
                }
            }
        }
        Op::Wmma(op) => wmma(w, env, op, exec)?,
        _ => unreachable!("an operation of another family"),
    }
    Ok(())
}

/// An f32 accumulator rounded to f16 (to nearest even; NaN canonical).
fn f16_bits(x: f32) -> u64 {
    if x.is_nan() {
        0x7fff
    } else {
        half::f16::from_f32(x).to_bits() as u64
    }
}

/// The (row, column) of the C/D elements that registers 0..4 of lane group
/// `g`, thread `t` in the group hold in every `mma.m16n8k*` shape (PTX ISA
/// "Matrix fragments for mma.m16n8k16", C/D).
#[inline(always)]
fn accumulator_fragment(g: usize, t: usize) -> [(usize, usize); 4] {
    [
        (g, 2 * t),
        (g, 2 * t + 1),
        (g + 8, 2 * t),
        (g + 8, 2 * t + 1),
    ]
}

/// `mma.m16n8k{16,32}` with 8-bit A and B and s32 C/D, fragments as the PTX
/// ISA lays them out ("Matrix Fragments for mma.m16n8k16/k32", .u8/.s8):
/// A register `i` holds row `g` (i even) or `g + 8` (i odd), columns
/// `4t..4t+3` (+16 for registers 2 and 3); B register `i` holds rows
/// `4t..4t+3` (+16 for register 1) of column `g`; C/D as for f32.
fn mma_int8(
    w: &mut Warp,
    k: usize,
    (a_signed, b_signed, satfinite): (bool, bool, bool),
    (d, a, b, c): (&[Row; 4], &[Row; 4], &[Row; 2], &[Row; 4]),
    exec: u32,
) {
    let byte = |word: u64, i: usize, signed: bool| -> i64 {
        let v = (word >> (8 * i)) as u8;
        if signed { v as i8 as i64 } else { v as i64 }
    };
    let mut am = [[0i64; 32]; 16];
    let mut bm = [[0i64; 8]; 32];
    let mut cm = [[0i64; 8]; 16];
    for l in 0..WARP {
        let (g, t) = (l / 4, l % 4);
        let val = |row: Row| w.values[r(row) + l];
        for (i, reg) in a.iter().enumerate().take(k / 8) {
            let (row, col0) = (g + 8 * (i % 2), 4 * t + 16 * (i / 2));
            for e in 0..4 {
                am[row][col0 + e] = byte(val(*reg), e, a_signed);
            }
        }
        for (i, reg) in b.iter().enumerate().take(k / 16) {
            for e in 0..4 {
                bm[4 * t + 16 * i + e][g] = byte(val(*reg), e, b_signed);
            }
        }
        for (i, (row, col)) in accumulator_fragment(g, t).iter().enumerate() {
            cm[*row][*col] = val(c[i]) as u32 as i32 as i64;
        }
    }
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let (g, t) = (l / 4, l % 4);
        for (i, (row, col)) in accumulator_fragment(g, t).iter().enumerate() {
            let sum = cm[*row][*col] + (0..k).map(|kk| am[*row][kk] * bm[kk][*col]).sum::<i64>();
            let out = if satfinite {
                sum.clamp(i32::MIN as i64, i32::MAX as i64) as i32
            } else {
                sum as i32
            };
            w.values[r(d[i]) + l] = out as u32 as u64;
        }
    }
}

/// Where element `j` of a lane's share of a fragment sits: (register
/// index, bit shift); 8/16/32-bit elements pack low-first into 32-bit
/// registers, f64 take a register each.
#[inline]
fn wmma_slot(elem: WmmaElem, j: usize) -> (usize, u32) {
    let bits = elem.bits();
    if bits == 64 {
        (j, 0)
    } else {
        let per_reg = (32 / bits) as usize;
        (j / per_reg, bits * (j % per_reg) as u32)
    }
}

/// Raw bits of element `j` of lane `l`'s share of a fragment.
#[inline]
fn wmma_raw(w: &Warp, regs: &[Row; 8], elem: WmmaElem, l: usize, j: usize) -> u64 {
    let (reg, shift) = wmma_slot(elem, j);
    let bits = elem.bits();
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    (w.values[r(regs[reg]) + l] >> shift) & mask
}

/// An element's value; exact in f64 for every type (s32 and products of
/// 8-bit integers included).
fn wmma_value(elem: WmmaElem, x: u64) -> f64 {
    match elem {
        WmmaElem::F16 => half::f16::from_bits(x as u16).to_f64(),
        WmmaElem::Bf16 => half::bf16::from_bits(x as u16).to_f64(),
        // As `mma ... .tf32`: the low 13 mantissa bits are not part of a tf32.
        WmmaElem::Tf32 => f32::from_bits(x as u32 & !0x1fff) as f64,
        WmmaElem::F32 => f32::from_bits(x as u32) as f64,
        WmmaElem::S8 => x as u8 as i8 as f64,
        WmmaElem::U8 => x as u8 as f64,
        WmmaElem::S32 => x as u32 as i32 as f64,
        WmmaElem::F64 => f64::from_bits(x),
    }
}

/// `wmma.*` (layout in [`WmmaOp`]).
fn wmma(w: &mut Warp, env: &mut Env<'_>, op: &WmmaOp, exec: u32) -> Result<(), LaneFault> {
    match op {
        WmmaOp::Access {
            store: is_store,
            space,
            addr,
            stride,
            col_major,
            rows,
            cols,
            elem,
            regs,
            count,
        } => {
            let (rows, cols) = (*rows as usize, *cols as usize);
            let bits = elem.bits();
            let size = bits / 8;
            let per_lane = rows * cols / 32;
            // Registers the packed elements fill; the rest repeat them.
            let packed = wmma_slot(*elem, per_lane - 1).0 + 1;
            let default_ld = if *col_major { rows } else { cols } as u64;
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let addrs = addresses(w, addr, *space, exec)?;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let ld = stride.map_or(default_ld, |s| w.values[r(s) + l] & 0xffff_ffff);
                for j in 0..per_lane {
                    let e = per_lane * l + j;
                    let (row, col) = ((e / cols) as u64, (e % cols) as u64);
                    let index = if *col_major {
                        col * ld + row
                    } else {
                        row * ld + col
                    };
                    let a = addrs[l].wrapping_add(index * size as u64);
                    check_align(a, size as u64, l)?;
                    let (reg, shift) = wmma_slot(*elem, j);
                    let slot = r(regs[reg]) + l;
                    if *is_store {
                        let x = (w.values[slot] >> shift) & mask;
                        env.wrote = true;
                        store(env, w, *space, a, size, x, l)?;
                    } else {
                        let x = load(env, w, *space, a, size, l)? & mask;
                        let v = &mut w.values[slot];
                        *v = if shift == 0 { x } else { *v | x << shift };
                    }
                }
                if !*is_store {
                    for i in packed..*count as usize {
                        w.values[r(regs[i]) + l] = w.values[r(regs[i % packed]) + l];
                    }
                }
            }
        }
        WmmaOp::Mma {
            shape,
            elems,
            satfinite,
            d,
            a,
            b,
            c,
        } => {
            let (mm, nn, kk) = (shape.0 as usize, shape.1 as usize, shape.2 as usize);
            let [ea, eb, ec, ed] = *elems;
            // Gathers a rows x cols matrix from every lane's share.
            let gather = |regs: &[Row; 8], elem: WmmaElem, rows: usize, cols: usize| {
                let per_lane = rows * cols / 32;
                let mut out = vec![0f64; rows * cols];
                for (e, v) in out.iter_mut().enumerate() {
                    *v = wmma_value(elem, wmma_raw(w, regs, elem, e / per_lane, e % per_lane));
                }
                out
            };
            let am = gather(a, ea, mm, kk);
            let bm = gather(b, eb, kk, nn);
            let cm = gather(c, ec, mm, nn);
            let per_lane = mm * nn / 32;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for j in 0..per_lane {
                    let e = per_lane * l + j;
                    let (row, col) = (e / nn, e % nn);
                    let terms = (0..kk).map(|k| (am[row * kk + k], bm[k * nn + col]));
                    let x = match ed {
                        WmmaElem::F64 => {
                            let acc = terms.fold(cm[e], |acc, (x, y)| x.mul_add(y, acc));
                            acc.to_bits()
                        }
                        WmmaElem::S32 => {
                            let sum =
                                terms.fold(cm[e] as i64, |acc, (x, y)| acc + x as i64 * y as i64);
                            let out = if *satfinite {
                                sum.clamp(i32::MIN as i64, i32::MAX as i64) as i32
                            } else {
                                sum as i32
                            };
                            out as u32 as u64
                        }
                        _ => {
                            // f16/bf16/tf32 products are exact in f32; accumulate in k order.
                            let acc =
                                terms.fold(cm[e] as f32, |acc, (x, y)| acc + x as f32 * y as f32);
                            if ed == WmmaElem::F16 {
                                f16_bits(acc)
                            } else {
                                canon32(acc)
                            }
                        }
                    };
                    let (reg, shift) = wmma_slot(ed, j);
                    let slot = &mut w.values[r(d[reg]) + l];
                    *slot = if shift == 0 { x } else { *slot | x << shift };
                }
            }
        }
    }
    Ok(())
}
