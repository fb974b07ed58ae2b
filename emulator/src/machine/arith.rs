//! Execution of the arithmetic family: the decoded fast paths (`Fast2/Fast3/FastSetp`, whole-warp
//! loops for the hottest 32/64-bit integer and `f32` operations), `mov`, the `Alu*` operations through
//! their decoded function pointers (every integer and float type), comparisons and selection,
//! predicate logic and vector pack/unpack.

use super::*;

#[inline(always)]
pub(crate) fn execute(w: &mut Warp, op: &Op, exec: u32) -> Result<(), LaneFault> {
    let v = &mut w.values;
    match op {
        Op::Fast2 { op, d, a, b } => fast2(v, exec, op, *d, *a, *b),
        Op::Fast3 { op, d, a, b, c } => fast3(v, exec, op, *d, *a, *b, *c),
        Op::FastSetp { kind, cmp, d, a, b } => {
            let bits = fast_setp(v, exec, *kind, *cmp, *a, *b);
            let p = &mut w.preds[*d as usize];
            *p = (*p & !exec) | bits;
        }
        Op::Mov { d, a } => {
            let (d, a) = (r(*d), r(*a));
            for_lanes(exec, |l| v[d + l] = v[a + l]);
        }
        Op::MovVector(pairs) => {
            let mut tmp = [0u64; 8];
            for_lanes(exec, |l| {
                for (t, (_, s)) in tmp.iter_mut().zip(pairs.iter()) {
                    *t = v[r(*s) + l];
                }
                for (t, (d, _)) in tmp.iter().zip(pairs.iter()) {
                    v[r(*d) + l] = *t;
                }
            });
        }
        Op::Alu1 { f, ctx, d, a } => {
            let (d, a) = (r(*d), r(*a));
            for_lanes(exec, |l| v[d + l] = f(ctx, v[a + l]));
        }
        Op::Alu2 { f, ctx, d, a, b } => {
            let (d, a, b) = (r(*d), r(*a), r(*b));
            for_lanes(exec, |l| v[d + l] = f(ctx, v[a + l], v[b + l]));
        }
        Op::Alu3 { f, ctx, d, a, b, c } => {
            let (d, a, b, c) = (r(*d), r(*a), r(*b), r(*c));
            for_lanes(exec, |l| v[d + l] = f(ctx, v[a + l], v[b + l], v[c + l]));
        }
        Op::Setp {
            f,
            ctx,
            d,
            dn,
            a,
            b,
            combine,
        } => {
            let (a, b) = (r(*a), r(*b));
            let mut t = 0u32;
            for_lanes(exec, |l| {
                if f(ctx, v[a + l], v[b + l]) {
                    t |= 1 << l;
                }
            });
            let (pos, neg) = match combine {
                None => (t, !t),
                Some((op, c)) => {
                    let c = pred_bits(&w.preds, *c);
                    match op {
                        BoolOp::And => (t & c, !t & c),
                        BoolOp::Or => (t | c, !t | c),
                        BoolOp::Xor => (t ^ c, !t ^ c),
                    }
                }
            };
            if let Some(d) = d {
                let p = &mut w.preds[*d as usize];
                *p = (*p & !exec) | (pos & exec);
            }
            if let Some(dn) = dn {
                let p = &mut w.preds[*dn as usize];
                *p = (*p & !exec) | (neg & exec);
            }
        }
        Op::Selp { d, a, b, p } => {
            let bits = pred_bits(&w.preds, *p);
            let (d, a, b) = (r(*d), r(*a), r(*b));
            for_lanes(exec, |l| {
                v[d + l] = if bits >> l & 1 != 0 {
                    v[a + l]
                } else {
                    v[b + l]
                }
            });
        }
        Op::PredLogic { op, d, a, b } => {
            let (x, y) = (pred_bits(&w.preds, *a), pred_bits(&w.preds, *b));
            let res = match op {
                None => x,
                Some(BoolOp::And) => x & y,
                Some(BoolOp::Or) => x | y,
                Some(BoolOp::Xor) => x ^ y,
            };
            let p = &mut w.preds[*d as usize];
            *p = (*p & !exec) | (res & exec);
        }
        Op::PredToReg { d, p } => {
            let bits = pred_bits(&w.preds, *p);
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = (bits >> l & 1) as u64);
        }
        Op::Pack { d, s, n, width } => pack(v, exec, *d, s, *n, *width),
        Op::Unpack { d, n, width, a } => unpack(v, exec, d, *n, *width, *a),
        _ => unreachable!("an operation of another family"),
    }
    Ok(())
}

/// The decoded fast paths of two operands: whole-warp loops for the hottest 32/64-bit
/// integer and `f32` operations.
#[inline(always)]
fn fast2(v: &mut [u64], exec: u32, op: &Fast2, d: Row, a: Row, b: Row) {
    match op {
        Fast2::AddB32 => lanes2(v, exec, d, a, b, |x, y| {
            (x as u32).wrapping_add(y as u32) as u64
        }),
        Fast2::AddB64 => lanes2(v, exec, d, a, b, |x, y| x.wrapping_add(y)),
        Fast2::SubB32 => lanes2(v, exec, d, a, b, |x, y| {
            (x as u32).wrapping_sub(y as u32) as u64
        }),
        Fast2::SubB64 => lanes2(v, exec, d, a, b, |x, y| x.wrapping_sub(y)),
        Fast2::MulLoB32 => lanes2(v, exec, d, a, b, |x, y| {
            (x as u32).wrapping_mul(y as u32) as u64
        }),
        Fast2::MulLoB64 => lanes2(v, exec, d, a, b, |x, y| x.wrapping_mul(y)),
        Fast2::MulWideU32 => lanes2(v, exec, d, a, b, |x, y| {
            (x as u32 as u64) * (y as u32 as u64)
        }),
        Fast2::MulWideS32 => lanes2(v, exec, d, a, b, |x, y| {
            ((x as u32 as i32 as i64) * (y as u32 as i32 as i64)) as u64
        }),
        Fast2::And => lanes2(v, exec, d, a, b, |x, y| x & y),
        Fast2::Or => lanes2(v, exec, d, a, b, |x, y| x | y),
        Fast2::Xor => lanes2(v, exec, d, a, b, |x, y| x ^ y),
        Fast2::ShlB32 => lanes2(v, exec, d, a, b, |x, y| {
            let n = y as u32;
            if n > 31 { 0 } else { ((x as u32) << n) as u64 }
        }),
        Fast2::ShlB64 => lanes2(v, exec, d, a, b, |x, y| {
            let n = y as u32;
            if n > 63 { 0 } else { x << n }
        }),
        Fast2::ShrU32 => lanes2(v, exec, d, a, b, |x, y| {
            let n = y as u32;
            if n > 31 { 0 } else { ((x as u32) >> n) as u64 }
        }),
        Fast2::ShrS32 => lanes2(v, exec, d, a, b, |x, y| {
            ((x as u32 as i32) >> (y as u32).min(31)) as u32 as u64
        }),
        Fast2::ShrU64 => lanes2(v, exec, d, a, b, |x, y| {
            let n = y as u32;
            if n > 63 { 0 } else { x >> n }
        }),
        Fast2::ShrS64 => lanes2(v, exec, d, a, b, |x, y| {
            ((x as i64) >> (y as u32).min(63)) as u64
        }),
        Fast2::MinS32 => lanes2(v, exec, d, a, b, |x, y| {
            (x as u32 as i32).min(y as u32 as i32) as u32 as u64
        }),
        Fast2::MaxS32 => lanes2(v, exec, d, a, b, |x, y| {
            (x as u32 as i32).max(y as u32 as i32) as u32 as u64
        }),
        Fast2::MinU32 => lanes2(v, exec, d, a, b, |x, y| (x as u32).min(y as u32) as u64),
        Fast2::MaxU32 => lanes2(v, exec, d, a, b, |x, y| (x as u32).max(y as u32) as u64),
        Fast2::AddF32 => lanes2(v, exec, d, a, b, |x, y| canon32(f32of(x) + f32of(y))),
        Fast2::SubF32 => lanes2(v, exec, d, a, b, |x, y| canon32(f32of(x) - f32of(y))),
        Fast2::MulF32 => lanes2(v, exec, d, a, b, |x, y| canon32(f32of(x) * f32of(y))),
    }
}

/// The decoded fast paths of three operands (`mad.lo`, `mad.wide`, `fma.rn.f32`).
#[inline(always)]
fn fast3(v: &mut [u64], exec: u32, op: &Fast3, d: Row, a: Row, b: Row, c: Row) {
    match op {
        Fast3::MadLoB32 => lanes3(v, exec, d, a, b, c, |x, y, z| {
            (x as u32).wrapping_mul(y as u32).wrapping_add(z as u32) as u64
        }),
        Fast3::MadLoB64 => lanes3(v, exec, d, a, b, c, |x, y, z| {
            x.wrapping_mul(y).wrapping_add(z)
        }),
        Fast3::MadWideU32 => lanes3(v, exec, d, a, b, c, |x, y, z| {
            ((x as u32 as u64) * (y as u32 as u64)).wrapping_add(z)
        }),
        Fast3::MadWideS32 => lanes3(v, exec, d, a, b, c, |x, y, z| {
            ((x as u32 as i32 as i64) * (y as u32 as i32 as i64)).wrapping_add(z as i64) as u64
        }),
        Fast3::FmaF32 => fma_f32_lanes(v, exec, d, a, b, c),
    }
}

/// `mov` packing `n` scalars of `width` bits into one register, the first in the low bits.
#[inline(always)]
fn pack(v: &mut [u64], exec: u32, d: Row, s: &[Row; 4], n: u8, width: u8) {
    let d = r(d);
    let (n, width) = (n as usize, width as u32);
    let mask = low_bits(width);
    for_lanes(exec, |l| {
        let mut x = 0u64;
        for (i, row) in s.iter().take(n).enumerate() {
            x |= (v[r(*row) + l] & mask) << (i as u32 * width);
        }
        v[d + l] = x;
    });
}

/// `mov` unpacking one register into `n` scalars of `width` bits, the first from the low bits.
#[inline(always)]
fn unpack(v: &mut [u64], exec: u32, d: &[Row; 4], n: u8, width: u8, a: Row) {
    let a = r(a);
    let (n, width) = (n as usize, width as u32);
    let mask = low_bits(width);
    for_lanes(exec, |l| {
        let x = v[a + l];
        for (i, row) in d.iter().take(n).enumerate() {
            v[r(*row) + l] = (x >> (i as u32 * width)) & mask;
        }
    });
}

/// `d = f(a, b)` for the lanes in `exec`: operands are copied out first, so
/// `d` may alias a source and the full-warp loop vectorises.
#[inline(always)]
fn lanes2(v: &mut [u64], exec: u32, d: Row, a: Row, b: Row, f: impl Fn(u64, u64) -> u64) {
    if exec != u32::MAX {
        // Diverged warps: touch only the active lanes (no row copies).
        let (d, a, b) = (r(d), r(a), r(b));
        for_lanes(exec, |l| v[d + l] = f(v[a + l], v[b + l]));
        return;
    }
    let (xa, xb) = (row(v, a), row(v, b));
    let s = r(d);
    let Some(dst) = v.get_mut(s..s + WARP) else {
        return;
    };
    for l in 0..WARP {
        dst[l] = f(xa[l], xb[l]);
    }
}

#[inline(always)]
fn lanes3(
    v: &mut [u64],
    exec: u32,
    d: Row,
    a: Row,
    b: Row,
    c: Row,
    f: impl Fn(u64, u64, u64) -> u64,
) {
    if exec != u32::MAX {
        let (d, a, b, c) = (r(d), r(a), r(b), r(c));
        for_lanes(exec, |l| v[d + l] = f(v[a + l], v[b + l], v[c + l]));
        return;
    }
    let (xa, xb, xc) = (row(v, a), row(v, b), row(v, c));
    let s = r(d);
    let Some(dst) = v.get_mut(s..s + WARP) else {
        return;
    };
    for l in 0..WARP {
        dst[l] = f(xa[l], xb[l], xc[l]);
    }
}

/// `fma.rn.f32` over a warp. `f32::mul_add` is a libm call unless the
/// build targets FMA hardware, so use the instruction when the CPU has it.
#[inline(always)]
fn fma_f32_lanes(v: &mut [u64], exec: u32, d: Row, a: Row, b: Row, c: Row) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::atomic::{AtomicU8, Ordering};
        static HAS_FMA: AtomicU8 = AtomicU8::new(0);
        let mut has = HAS_FMA.load(Ordering::Relaxed);
        if has == 0 {
            has = if std::arch::is_x86_feature_detected!("fma") {
                2
            } else {
                1
            };
            HAS_FMA.store(has, Ordering::Relaxed);
        }
        if has == 2 {
            // SAFETY: the CPU supports FMA (checked above).
            unsafe { fma_f32_lanes_hw(v, exec, d, a, b, c) };
            return;
        }
    }
    lanes3(v, exec, d, a, b, c, |x, y, z| {
        canon32(f32of(x).mul_add(f32of(y), f32of(z)))
    });
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn fma_f32_lanes_hw(v: &mut [u64], exec: u32, d: Row, a: Row, b: Row, c: Row) {
    lanes3(v, exec, d, a, b, c, |x, y, z| {
        canon32(f32of(x).mul_add(f32of(y), f32of(z)))
    });
}

/// Bits of the lanes in `exec` for which `f(a, b)` holds.
#[inline(always)]
fn cmp_lanes(v: &[u64], exec: u32, a: Row, b: Row, f: impl Fn(u64, u64) -> bool) -> u32 {
    let mut bits = 0u32;
    if exec != u32::MAX {
        let (a, b) = (r(a), r(b));
        for_lanes(exec, |l| bits |= (f(v[a + l], v[b + l]) as u32) << l);
        return bits;
    }
    let (xa, xb) = (row(v, a), row(v, b));
    for l in 0..WARP {
        bits |= (f(xa[l], xb[l]) as u32) << l;
    }
    bits
}

#[inline(always)]
pub(super) fn canon32(x: f32) -> u64 {
    if x.is_nan() {
        crate::semantics::FloatFormat::F32.canonical_nan()
    } else {
        x.to_bits() as u64
    }
}

#[inline(always)]
pub(super) fn f32of(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

fn fast_setp(v: &[u64], exec: u32, kind: CmpKind, cmp: CmpOp, a: Row, b: Row) -> u32 {
    macro_rules! by_op {
        ($conv:expr) => {{
            let conv = $conv;
            match cmp {
                CmpOp::Eq => cmp_lanes(v, exec, a, b, |x, y| conv(x) == conv(y)),
                CmpOp::Ne => cmp_lanes(v, exec, a, b, |x, y| conv(x) != conv(y)),
                CmpOp::Lt | CmpOp::Lo => cmp_lanes(v, exec, a, b, |x, y| conv(x) < conv(y)),
                CmpOp::Le | CmpOp::Ls => cmp_lanes(v, exec, a, b, |x, y| conv(x) <= conv(y)),
                CmpOp::Gt | CmpOp::Hi => cmp_lanes(v, exec, a, b, |x, y| conv(x) > conv(y)),
                CmpOp::Ge | CmpOp::Hs => cmp_lanes(v, exec, a, b, |x, y| conv(x) >= conv(y)),
                _ => unreachable_cmp(v, exec, kind, cmp, a, b),
            }
        }};
    }
    let unsigned = matches!(cmp, CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs);
    match kind {
        CmpKind::S32 if !unsigned => by_op!(|x: u64| x as u32 as i32),
        CmpKind::S32 | CmpKind::U32 => by_op!(|x: u64| x as u32),
        CmpKind::S64 if !unsigned => by_op!(|x: u64| x as i64),
        CmpKind::S64 | CmpKind::U64 => by_op!(|x: u64| x),
        CmpKind::F32 => {
            let f = |x: u64| f32::from_bits(x as u32);
            match cmp {
                CmpOp::Eq => cmp_lanes(v, exec, a, b, |x, y| f(x) == f(y)),
                CmpOp::Ne => cmp_lanes(v, exec, a, b, |x, y| {
                    let (x, y) = (f(x), f(y));
                    !x.is_nan() && !y.is_nan() && x != y
                }),
                CmpOp::Lt => cmp_lanes(v, exec, a, b, |x, y| f(x) < f(y)),
                CmpOp::Le => cmp_lanes(v, exec, a, b, |x, y| f(x) <= f(y)),
                CmpOp::Gt => cmp_lanes(v, exec, a, b, |x, y| f(x) > f(y)),
                CmpOp::Ge => cmp_lanes(v, exec, a, b, |x, y| f(x) >= f(y)),
                _ => unreachable_cmp(v, exec, kind, cmp, a, b),
            }
        }
    }
}

/// Comparisons without a fast form (unordered floats): the general path.
fn unreachable_cmp(v: &[u64], exec: u32, kind: CmpKind, cmp: CmpOp, a: Row, b: Row) -> u32 {
    let ty = match kind {
        CmpKind::S32 => crate::semantics::ScalarType::S32,
        CmpKind::U32 => crate::semantics::ScalarType::U32,
        CmpKind::S64 => crate::semantics::ScalarType::S64,
        CmpKind::U64 => crate::semantics::ScalarType::U64,
        CmpKind::F32 => crate::semantics::ScalarType::F32,
    };
    cmp_lanes(v, exec, a, b, |x, y| {
        crate::semantics::compare(cmp, ty, x, y)
    })
}

/// The mask of the low `width` bits (1..=64) of a register.
#[inline(always)]
fn low_bits(width: u32) -> u64 {
    if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}
