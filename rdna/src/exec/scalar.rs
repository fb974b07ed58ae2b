//! Scalar ALU (SOP1/SOP2/SOPK/SOPC arithmetic, logic, bit operations,
//! compares). Control-flow and EXEC-mask SALU instructions live in
//! `control.rs`.

use super::{Ctx, Flow, Handler};
use crate::decode::Inst;
use crate::fault::ExecError;

type R = Result<Flow, ExecError>;

fn s0(c: &Ctx<'_>, i: &Inst) -> u32 {
    c.scalar32(i, i.src[0])
}
fn s1(c: &Ctx<'_>, i: &Inst) -> u32 {
    c.scalar32(i, i.src[1])
}
fn s0_64(c: &Ctx<'_>, i: &Inst) -> u64 {
    c.scalar64(i, i.src[0], false)
}
fn s1_64(c: &Ctx<'_>, i: &Inst) -> u64 {
    c.scalar64(i, i.src[1], false)
}

/// 32-bit binary op; `f` returns the result and the new SCC (None = unchanged).
fn bin32(c: &mut Ctx<'_>, i: &Inst, f: fn(u32, u32, bool) -> (u32, Option<bool>)) -> R {
    let (v, scc) = f(s0(c, i), s1(c, i), c.wave.scc);
    c.wave.set_sreg(i.dst, v);
    if let Some(s) = scc {
        c.wave.scc = s;
    }
    Ok(Flow::Next)
}

/// 64-bit binary op whose second operand is 64-bit (`wide`) or 32-bit.
fn bin64(c: &mut Ctx<'_>, i: &Inst, wide: bool, f: fn(u64, u64) -> (u64, Option<bool>)) -> R {
    let b = if wide { s1_64(c, i) } else { s1(c, i) as u64 };
    let (v, scc) = f(s0_64(c, i), b);
    c.wave.set_sreg64(i.dst, v);
    if let Some(s) = scc {
        c.wave.scc = s;
    }
    Ok(Flow::Next)
}

fn un32(c: &mut Ctx<'_>, i: &Inst, f: fn(u32) -> (u32, Option<bool>)) -> R {
    let (v, scc) = f(s0(c, i));
    c.wave.set_sreg(i.dst, v);
    if let Some(s) = scc {
        c.wave.scc = s;
    }
    Ok(Flow::Next)
}

fn un64(c: &mut Ctx<'_>, i: &Inst, f: fn(u64) -> (u64, Option<bool>)) -> R {
    let (v, scc) = f(s0_64(c, i));
    c.wave.set_sreg64(i.dst, v);
    if let Some(s) = scc {
        c.wave.scc = s;
    }
    Ok(Flow::Next)
}

/// 64 -> 32 bit (bit counts of a 64-bit value).
fn un64_32(c: &mut Ctx<'_>, i: &Inst, f: fn(u64) -> (u32, Option<bool>)) -> R {
    let (v, scc) = f(s0_64(c, i));
    c.wave.set_sreg(i.dst, v);
    if let Some(s) = scc {
        c.wave.scc = s;
    }
    Ok(Flow::Next)
}

fn cmp32(c: &mut Ctx<'_>, i: &Inst, f: fn(u32, u32) -> bool) -> R {
    c.wave.scc = f(s0(c, i), s1(c, i));
    Ok(Flow::Next)
}

fn cmp64(c: &mut Ctx<'_>, i: &Inst, f: fn(u64, u64) -> bool) -> R {
    c.wave.scc = f(s0_64(c, i), s1_64(c, i));
    Ok(Flow::Next)
}

fn cmpk(c: &mut Ctx<'_>, i: &Inst, signed: bool, f: fn(i64, i64) -> bool) -> R {
    let a = c.wave.sreg(i.dst);
    let (a, k) = if signed {
        (a as i32 as i64, i.simm16 as i16 as i64)
    } else {
        (a as i64, i.simm16 as i64)
    };
    c.wave.scc = f(a, k);
    Ok(Flow::Next)
}

fn nz(v: u32) -> Option<bool> {
    Some(v != 0)
}
fn nz64(v: u64) -> Option<bool> {
    Some(v != 0)
}

fn bfe32(a: u32, b: u32, signed: bool) -> u32 {
    let off = b & 31;
    let width = (b >> 16) & 0x7F;
    if width == 0 {
        return 0;
    }
    let v = a >> off;
    if width >= 32 {
        return v;
    }
    let mask = (1u32 << width) - 1;
    let v = v & mask;
    if signed && (v >> (width - 1)) & 1 == 1 {
        v | !mask
    } else {
        v
    }
}

fn bfe64(a: u64, b: u32, signed: bool) -> u64 {
    let off = b & 63;
    let width = (b >> 16) & 0x7F;
    if width == 0 {
        return 0;
    }
    let v = a >> off;
    if width >= 64 {
        return v;
    }
    let mask = (1u64 << width) - 1;
    let v = v & mask;
    if signed && (v >> (width - 1)) & 1 == 1 {
        v | !mask
    } else {
        v
    }
}

fn setreg_dst(c: &mut Ctx<'_>, i: &Inst, v: u32) -> R {
    c.wave.set_sreg(i.dst, v);
    Ok(Flow::Next)
}

pub static OPS: &[(&str, Handler)] = &[
    // SOP2 arithmetic
    ("s_add_u32", |c, i| {
        bin32(c, i, |a, b, _| {
            let (r, o) = a.overflowing_add(b);
            (r, Some(o))
        })
    }),
    ("s_sub_u32", |c, i| {
        bin32(c, i, |a, b, _| {
            let (r, o) = a.overflowing_sub(b);
            (r, Some(o))
        })
    }),
    ("s_add_i32", |c, i| {
        bin32(c, i, |a, b, _| {
            let (r, o) = (a as i32).overflowing_add(b as i32);
            (r as u32, Some(o))
        })
    }),
    ("s_sub_i32", |c, i| {
        bin32(c, i, |a, b, _| {
            let (r, o) = (a as i32).overflowing_sub(b as i32);
            (r as u32, Some(o))
        })
    }),
    ("s_addc_u32", |c, i| {
        bin32(c, i, |a, b, s| {
            let r = a as u64 + b as u64 + s as u64;
            (r as u32, Some(r >> 32 != 0))
        })
    }),
    ("s_subb_u32", |c, i| {
        bin32(c, i, |a, b, s| {
            let r = (a as u64).wrapping_sub(b as u64).wrapping_sub(s as u64);
            (r as u32, Some((b as u64 + s as u64) > a as u64))
        })
    }),
    ("s_min_i32", |c, i| {
        bin32(c, i, |a, b, _| {
            (
                (a as i32).min(b as i32) as u32,
                Some((a as i32) < (b as i32)),
            )
        })
    }),
    ("s_min_u32", |c, i| {
        bin32(c, i, |a, b, _| (a.min(b), Some(a < b)))
    }),
    ("s_max_i32", |c, i| {
        bin32(c, i, |a, b, _| {
            (
                (a as i32).max(b as i32) as u32,
                Some((a as i32) > (b as i32)),
            )
        })
    }),
    ("s_max_u32", |c, i| {
        bin32(c, i, |a, b, _| (a.max(b), Some(a > b)))
    }),
    ("s_mul_i32", |c, i| {
        bin32(c, i, |a, b, _| (a.wrapping_mul(b), None))
    }),
    ("s_mul_hi_u32", |c, i| {
        bin32(c, i, |a, b, _| (((a as u64 * b as u64) >> 32) as u32, None))
    }),
    ("s_mul_hi_i32", |c, i| {
        bin32(c, i, |a, b, _| {
            (((a as i32 as i64 * b as i32 as i64) >> 32) as u32, None)
        })
    }),
    ("s_absdiff_i32", |c, i| {
        bin32(c, i, |a, b, _| {
            let r = (a as i32).wrapping_sub(b as i32).unsigned_abs();
            (r, nz(r))
        })
    }),
    ("s_lshl1_add_u32", |c, i| {
        bin32(c, i, |a, b, _| {
            let r = ((a as u64) << 1) + b as u64;
            (r as u32, Some(r >> 32 != 0))
        })
    }),
    ("s_lshl2_add_u32", |c, i| {
        bin32(c, i, |a, b, _| {
            let r = ((a as u64) << 2) + b as u64;
            (r as u32, Some(r >> 32 != 0))
        })
    }),
    ("s_lshl3_add_u32", |c, i| {
        bin32(c, i, |a, b, _| {
            let r = ((a as u64) << 3) + b as u64;
            (r as u32, Some(r >> 32 != 0))
        })
    }),
    ("s_lshl4_add_u32", |c, i| {
        bin32(c, i, |a, b, _| {
            let r = ((a as u64) << 4) + b as u64;
            (r as u32, Some(r >> 32 != 0))
        })
    }),
    // shifts
    ("s_lshl_b32", |c, i| {
        bin32(c, i, |a, b, _| {
            let r = a << (b & 31);
            (r, nz(r))
        })
    }),
    ("s_lshr_b32", |c, i| {
        bin32(c, i, |a, b, _| {
            let r = a >> (b & 31);
            (r, nz(r))
        })
    }),
    ("s_ashr_i32", |c, i| {
        bin32(c, i, |a, b, _| {
            let r = ((a as i32) >> (b & 31)) as u32;
            (r, nz(r))
        })
    }),
    ("s_lshl_b64", |c, i| {
        bin64(c, i, false, |a, b| {
            let r = a << (b & 63);
            (r, nz64(r))
        })
    }),
    ("s_lshr_b64", |c, i| {
        bin64(c, i, false, |a, b| {
            let r = a >> (b & 63);
            (r, nz64(r))
        })
    }),
    ("s_ashr_i64", |c, i| {
        bin64(c, i, false, |a, b| {
            let r = ((a as i64) >> (b & 63)) as u64;
            (r, nz64(r))
        })
    }),
    // logic
    ("s_and_b32", |c, i| {
        bin32(c, i, |a, b, _| (a & b, nz(a & b)))
    }),
    ("s_or_b32", |c, i| bin32(c, i, |a, b, _| (a | b, nz(a | b)))),
    ("s_xor_b32", |c, i| {
        bin32(c, i, |a, b, _| (a ^ b, nz(a ^ b)))
    }),
    ("s_nand_b32", |c, i| {
        bin32(c, i, |a, b, _| (!(a & b), nz(!(a & b))))
    }),
    ("s_nor_b32", |c, i| {
        bin32(c, i, |a, b, _| (!(a | b), nz(!(a | b))))
    }),
    ("s_xnor_b32", |c, i| {
        bin32(c, i, |a, b, _| (!(a ^ b), nz(!(a ^ b))))
    }),
    ("s_and_not1_b32", |c, i| {
        bin32(c, i, |a, b, _| (a & !b, nz(a & !b)))
    }),
    ("s_or_not1_b32", |c, i| {
        bin32(c, i, |a, b, _| (a | !b, nz(a | !b)))
    }),
    ("s_and_b64", |c, i| {
        bin64(c, i, true, |a, b| (a & b, nz64(a & b)))
    }),
    ("s_or_b64", |c, i| {
        bin64(c, i, true, |a, b| (a | b, nz64(a | b)))
    }),
    ("s_xor_b64", |c, i| {
        bin64(c, i, true, |a, b| (a ^ b, nz64(a ^ b)))
    }),
    ("s_nand_b64", |c, i| {
        bin64(c, i, true, |a, b| (!(a & b), nz64(!(a & b))))
    }),
    ("s_nor_b64", |c, i| {
        bin64(c, i, true, |a, b| (!(a | b), nz64(!(a | b))))
    }),
    ("s_xnor_b64", |c, i| {
        bin64(c, i, true, |a, b| (!(a ^ b), nz64(!(a ^ b))))
    }),
    ("s_and_not1_b64", |c, i| {
        bin64(c, i, true, |a, b| (a & !b, nz64(a & !b)))
    }),
    ("s_or_not1_b64", |c, i| {
        bin64(c, i, true, |a, b| (a | !b, nz64(a | !b)))
    }),
    // bitfields
    ("s_bfe_u32", |c, i| {
        bin32(c, i, |a, b, _| {
            let r = bfe32(a, b, false);
            (r, nz(r))
        })
    }),
    ("s_bfe_i32", |c, i| {
        bin32(c, i, |a, b, _| {
            let r = bfe32(a, b, true);
            (r, nz(r))
        })
    }),
    ("s_bfe_u64", |c, i| {
        bin64(c, i, false, |a, b| {
            let r = bfe64(a, b as u32, false);
            (r, nz64(r))
        })
    }),
    ("s_bfe_i64", |c, i| {
        bin64(c, i, false, |a, b| {
            let r = bfe64(a, b as u32, true);
            (r, nz64(r))
        })
    }),
    ("s_bfm_b32", |c, i| {
        bin32(c, i, |a, b, _| {
            (
                ((1u64 << (a & 31)) as u32).wrapping_sub(1) << (b & 31),
                None,
            )
        })
    }),
    ("s_bfm_b64", |c, i| {
        let (a, b) = (s0(c, i), s1(c, i));
        let v = ((1u128 << (a & 63)) as u64).wrapping_sub(1) << (b & 63);
        c.wave.set_sreg64(i.dst, v);
        Ok(Flow::Next)
    }),
    ("s_pack_ll_b32_b16", |c, i| {
        bin32(c, i, |a, b, _| ((a & 0xFFFF) | (b << 16), None))
    }),
    ("s_pack_lh_b32_b16", |c, i| {
        bin32(c, i, |a, b, _| ((a & 0xFFFF) | (b & 0xFFFF_0000), None))
    }),
    ("s_pack_hh_b32_b16", |c, i| {
        bin32(c, i, |a, b, _| ((a >> 16) | (b & 0xFFFF_0000), None))
    }),
    ("s_pack_hl_b32_b16", |c, i| {
        bin32(c, i, |a, b, _| ((a >> 16) | (b << 16), None))
    }),
    ("s_cselect_b32", |c, i| {
        bin32(c, i, |a, b, s| (if s { a } else { b }, None))
    }),
    ("s_cselect_b64", |c, i| {
        let v = if c.wave.scc { s0_64(c, i) } else { s1_64(c, i) };
        c.wave.set_sreg64(i.dst, v);
        Ok(Flow::Next)
    }),
    // SOP1
    ("s_mov_b32", |c, i| un32(c, i, |a| (a, None))),
    ("s_mov_b64", |c, i| un64(c, i, |a| (a, None))),
    ("s_cmov_b32", |c, i| {
        if c.wave.scc {
            let v = s0(c, i);
            c.wave.set_sreg(i.dst, v);
        }
        Ok(Flow::Next)
    }),
    ("s_cmov_b64", |c, i| {
        if c.wave.scc {
            let v = s0_64(c, i);
            c.wave.set_sreg64(i.dst, v);
        }
        Ok(Flow::Next)
    }),
    ("s_not_b32", |c, i| un32(c, i, |a| (!a, nz(!a)))),
    ("s_not_b64", |c, i| un64(c, i, |a| (!a, nz64(!a)))),
    ("s_brev_b32", |c, i| {
        un32(c, i, |a| (a.reverse_bits(), None))
    }),
    ("s_brev_b64", |c, i| {
        un64(c, i, |a| (a.reverse_bits(), None))
    }),
    ("s_abs_i32", |c, i| {
        un32(c, i, |a| {
            let r = (a as i32).unsigned_abs();
            (r, nz(r))
        })
    }),
    ("s_sext_i32_i8", |c, i| {
        un32(c, i, |a| (a as i8 as i32 as u32, None))
    }),
    ("s_sext_i32_i16", |c, i| {
        un32(c, i, |a| (a as i16 as i32 as u32, None))
    }),
    ("s_bcnt0_i32_b32", |c, i| {
        un32(c, i, |a| (a.count_zeros(), nz(a.count_zeros())))
    }),
    ("s_bcnt1_i32_b32", |c, i| {
        un32(c, i, |a| (a.count_ones(), nz(a.count_ones())))
    }),
    ("s_bcnt0_i32_b64", |c, i| {
        un64_32(c, i, |a| (a.count_zeros(), nz(a.count_zeros())))
    }),
    ("s_bcnt1_i32_b64", |c, i| {
        un64_32(c, i, |a| (a.count_ones(), nz(a.count_ones())))
    }),
    ("s_ctz_i32_b32", |c, i| {
        un32(c, i, |a| {
            (if a == 0 { u32::MAX } else { a.trailing_zeros() }, None)
        })
    }),
    ("s_ctz_i32_b64", |c, i| {
        un64_32(c, i, |a| {
            (if a == 0 { u32::MAX } else { a.trailing_zeros() }, None)
        })
    }),
    ("s_clz_i32_u32", |c, i| {
        un32(c, i, |a| {
            (if a == 0 { u32::MAX } else { a.leading_zeros() }, None)
        })
    }),
    ("s_clz_i32_u64", |c, i| {
        un64_32(c, i, |a| {
            (if a == 0 { u32::MAX } else { a.leading_zeros() }, None)
        })
    }),
    ("s_cls_i32", |c, i| {
        un32(c, i, |a| {
            let n = if (a as i32) < 0 {
                (!a).leading_zeros()
            } else {
                a.leading_zeros()
            };
            (if n == 32 { u32::MAX } else { n }, None)
        })
    }),
    ("s_cls_i32_i64", |c, i| {
        un64_32(c, i, |a| {
            let n = if (a as i64) < 0 {
                (!a).leading_zeros()
            } else {
                a.leading_zeros()
            };
            (if n == 64 { u32::MAX } else { n }, None)
        })
    }),
    ("s_bitset0_b32", |c, i| {
        let b = s0(c, i) & 31;
        let v = c.wave.sreg(i.dst) & !(1 << b);
        setreg_dst(c, i, v)
    }),
    ("s_bitset1_b32", |c, i| {
        let b = s0(c, i) & 31;
        let v = c.wave.sreg(i.dst) | (1 << b);
        setreg_dst(c, i, v)
    }),
    ("s_bitset0_b64", |c, i| {
        let b = s0(c, i) & 63;
        let v = c.wave.sreg64(i.dst) & !(1u64 << b);
        c.wave.set_sreg64(i.dst, v);
        Ok(Flow::Next)
    }),
    ("s_bitset1_b64", |c, i| {
        let b = s0(c, i) & 63;
        let v = c.wave.sreg64(i.dst) | (1u64 << b);
        c.wave.set_sreg64(i.dst, v);
        Ok(Flow::Next)
    }),
    ("s_quadmask_b32", |c, i| {
        un32(c, i, |a| {
            let mut r = 0;
            for q in 0..8 {
                if (a >> (4 * q)) & 0xF != 0 {
                    r |= 1 << q;
                }
            }
            (r, nz(r))
        })
    }),
    ("s_quadmask_b64", |c, i| {
        un64(c, i, |a| {
            let mut r = 0u64;
            for q in 0..16 {
                if (a >> (4 * q)) & 0xF != 0 {
                    r |= 1 << q;
                }
            }
            (r, nz64(r))
        })
    }),
    ("s_wqm_b32", |c, i| {
        un32(c, i, |a| {
            let mut r = 0;
            for q in 0..8 {
                if (a >> (4 * q)) & 0xF != 0 {
                    r |= 0xF << (4 * q);
                }
            }
            (r, nz(r))
        })
    }),
    ("s_wqm_b64", |c, i| {
        un64(c, i, |a| {
            let mut r = 0u64;
            for q in 0..16 {
                if (a >> (4 * q)) & 0xF != 0 {
                    r |= 0xF << (4 * q);
                }
            }
            (r, nz64(r))
        })
    }),
    ("s_movrels_b32", |c, i| {
        let m0 = c.wave.sreg(crate::decode::src::M0).min(1024) as u16;
        let v = c.wave.sreg(i.src[0].saturating_add(m0));
        setreg_dst(c, i, v)
    }),
    ("s_movrels_b64", |c, i| {
        let m0 = c.wave.sreg(crate::decode::src::M0).min(1024) as u16;
        let v = c.wave.sreg64(i.src[0].saturating_add(m0));
        c.wave.set_sreg64(i.dst, v);
        Ok(Flow::Next)
    }),
    ("s_movreld_b32", |c, i| {
        let m0 = c.wave.sreg(crate::decode::src::M0).min(1024) as u16;
        let v = s0(c, i);
        c.wave.set_sreg(i.dst.saturating_add(m0), v);
        Ok(Flow::Next)
    }),
    ("s_movreld_b64", |c, i| {
        let m0 = c.wave.sreg(crate::decode::src::M0).min(1024) as u16;
        let v = s0_64(c, i);
        c.wave.set_sreg64(i.dst.saturating_add(m0), v);
        Ok(Flow::Next)
    }),
    // SOPK
    ("s_movk_i32", |c, i| {
        setreg_dst(c, i, i.simm16 as i16 as i32 as u32)
    }),
    ("s_cmovk_i32", |c, i| {
        if c.wave.scc {
            c.wave.set_sreg(i.dst, i.simm16 as i16 as i32 as u32);
        }
        Ok(Flow::Next)
    }),
    ("s_addk_i32", |c, i| {
        let a = c.wave.sreg(i.dst) as i32;
        let (r, o) = a.overflowing_add(i.simm16 as i16 as i32);
        c.wave.scc = o;
        setreg_dst(c, i, r as u32)
    }),
    ("s_mulk_i32", |c, i| {
        let a = c.wave.sreg(i.dst) as i32;
        setreg_dst(c, i, a.wrapping_mul(i.simm16 as i16 as i32) as u32)
    }),
    ("s_cmpk_eq_i32", |c, i| cmpk(c, i, true, |a, b| a == b)),
    ("s_cmpk_lg_i32", |c, i| cmpk(c, i, true, |a, b| a != b)),
    ("s_cmpk_gt_i32", |c, i| cmpk(c, i, true, |a, b| a > b)),
    ("s_cmpk_ge_i32", |c, i| cmpk(c, i, true, |a, b| a >= b)),
    ("s_cmpk_lt_i32", |c, i| cmpk(c, i, true, |a, b| a < b)),
    ("s_cmpk_le_i32", |c, i| cmpk(c, i, true, |a, b| a <= b)),
    ("s_cmpk_eq_u32", |c, i| cmpk(c, i, false, |a, b| a == b)),
    ("s_cmpk_lg_u32", |c, i| cmpk(c, i, false, |a, b| a != b)),
    ("s_cmpk_gt_u32", |c, i| cmpk(c, i, false, |a, b| a > b)),
    ("s_cmpk_ge_u32", |c, i| cmpk(c, i, false, |a, b| a >= b)),
    ("s_cmpk_lt_u32", |c, i| cmpk(c, i, false, |a, b| a < b)),
    ("s_cmpk_le_u32", |c, i| cmpk(c, i, false, |a, b| a <= b)),
    // SOPC
    ("s_cmp_eq_i32", |c, i| cmp32(c, i, |a, b| a == b)),
    ("s_cmp_lg_i32", |c, i| cmp32(c, i, |a, b| a != b)),
    ("s_cmp_gt_i32", |c, i| {
        cmp32(c, i, |a, b| (a as i32) > (b as i32))
    }),
    ("s_cmp_ge_i32", |c, i| {
        cmp32(c, i, |a, b| (a as i32) >= (b as i32))
    }),
    ("s_cmp_lt_i32", |c, i| {
        cmp32(c, i, |a, b| (a as i32) < (b as i32))
    }),
    ("s_cmp_le_i32", |c, i| {
        cmp32(c, i, |a, b| (a as i32) <= (b as i32))
    }),
    ("s_cmp_eq_u32", |c, i| cmp32(c, i, |a, b| a == b)),
    ("s_cmp_lg_u32", |c, i| cmp32(c, i, |a, b| a != b)),
    ("s_cmp_gt_u32", |c, i| cmp32(c, i, |a, b| a > b)),
    ("s_cmp_ge_u32", |c, i| cmp32(c, i, |a, b| a >= b)),
    ("s_cmp_lt_u32", |c, i| cmp32(c, i, |a, b| a < b)),
    ("s_cmp_le_u32", |c, i| cmp32(c, i, |a, b| a <= b)),
    ("s_cmp_eq_u64", |c, i| cmp64(c, i, |a, b| a == b)),
    ("s_cmp_lg_u64", |c, i| cmp64(c, i, |a, b| a != b)),
    ("s_bitcmp0_b32", |c, i| {
        cmp32(c, i, |a, b| (a >> (b & 31)) & 1 == 0)
    }),
    ("s_bitcmp1_b32", |c, i| {
        cmp32(c, i, |a, b| (a >> (b & 31)) & 1 == 1)
    }),
    ("s_bitcmp0_b64", |c, i| {
        let (a, b) = (s0_64(c, i), s1(c, i));
        c.wave.scc = (a >> (b & 63)) & 1 == 0;
        Ok(Flow::Next)
    }),
    ("s_bitcmp1_b64", |c, i| {
        let (a, b) = (s0_64(c, i), s1(c, i));
        c.wave.scc = (a >> (b & 63)) & 1 == 1;
        Ok(Flow::Next)
    }),
];
