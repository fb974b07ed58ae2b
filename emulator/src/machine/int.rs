//! Execution of integer-only operations with state beyond one result: `bfi`, the carry chain.

use super::*;

#[inline(always)]
pub(crate) fn execute(w: &mut Warp, op: &Op, exec: u32) -> Result<(), LaneFault> {
    let v = &mut w.values;
    match op {
        Op::Bfi {
            d,
            a,
            b,
            pos,
            len,
            wide,
        } => {
            let (d, a, b, pos, len) = (r(*d), r(*a), r(*b), r(*pos), r(*len));
            let bits: u64 = if *wide { 64 } else { 32 };
            for_lanes(exec, |l| {
                let p = v[pos + l] & 0xff;
                let n = v[len + l] & 0xff;
                let mut x = v[b + l];
                for i in 0..n {
                    if p + i >= bits {
                        break;
                    }
                    let bit = (v[a + l] >> i) & 1;
                    x = (x & !(1 << (p + i))) | (bit << (p + i));
                }
                v[d + l] = if *wide { x } else { x & 0xffff_ffff };
            });
        }
        Op::AddCarry {
            d,
            a,
            b,
            sub,
            cin,
            cout,
            wide,
        } => {
            let (d, a, b, cf) = (r(*d), r(*a), r(*b), r(sreg::CARRY));
            for_lanes(exec, |l| {
                // A subtraction adds the complement, `a + !b + c` with `c`
                // 1 for `sub.cc` and CC.CF for `subc`, and leaves that sum's
                // carry (not a borrow) in CC.CF, as the hardware does: after
                // `sub.cc` of 0x627adf75 - 0x864ccef5 an `addc` reads 0
                // (ZLUDA's hardware-checked subc_cc_s32 case).
                let c = match (*cin, *sub) {
                    (true, _) => v[cf + l] & 1,
                    (false, true) => 1,
                    (false, false) => 0,
                };
                let (x, y) = (v[a + l], v[b + l]);
                let y = if *sub { !y } else { y };
                let (res, carry) = if *wide {
                    let (r1, c1) = x.overflowing_add(y);
                    let (r2, c2) = r1.overflowing_add(c);
                    (r2, (c1 | c2) as u64)
                } else {
                    let t = (x & 0xffff_ffff) + (y & 0xffff_ffff) + c;
                    (t & 0xffff_ffff, t >> 32)
                };
                v[d + l] = res;
                if *cout {
                    v[cf + l] = carry;
                }
            });
        }
        Op::MadCarry {
            d,
            a,
            b,
            c,
            ty,
            hi,
            cin,
            cout,
        } => {
            let (d, a, b, c, cf) = (r(*d), r(*a), r(*b), r(*c), r(sreg::CARRY));
            for_lanes(exec, |l| {
                let p = if *hi {
                    crate::semantics::int::mul_hi(*ty, v[a + l], v[b + l])
                } else {
                    crate::semantics::int::mul_lo(*ty, v[a + l], v[b + l])
                };
                let carry_in = *cin && v[cf + l] & 1 == 1;
                let (sum, carry) = crate::semantics::int::addc(*ty, p, v[c + l], carry_in);
                v[d + l] = sum;
                if *cout {
                    v[cf + l] = carry as u64;
                }
            });
        }
        _ => unreachable!("an operation of another family"),
    }
    Ok(())
}
