//! Execution of warp-level operations: `shfl`, `vote`, `activemask`, `match`, `redux`.

use super::*;

#[inline(always)]
pub(crate) fn execute(w: &mut Warp, op: &Op, active: u32, exec: u32) -> Result<(), LaneFault> {
    let v = &mut w.values;
    match op {
        Op::Shfl {
            mode,
            d,
            dp,
            a,
            b,
            c,
            mask,
        } => {
            let (a, b, c, _mask) = (r(*a), r(*b), r(*c), r(*mask));
            let mut out = [0u64; WARP];
            let mut ok = 0u32;
            for_lanes(exec, |l| {
                let lane = l as i32;
                let bval = (v[b + l] & 0x1f) as i32;
                let cval = v[c + l];
                let clamp = (cval & 0x1f) as i32;
                let seg = ((cval >> 8) & 0x1f) as i32;
                let max_lane = (lane & seg) | (clamp & !seg);
                let min_lane = lane & seg;
                let (j, pval) = match mode {
                    ShflMode::Up => (lane - bval, lane - bval >= max_lane),
                    ShflMode::Down => (lane + bval, lane + bval <= max_lane),
                    ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
                    ShflMode::Idx => {
                        let j = min_lane | (bval & !seg);
                        (j, j <= max_lane)
                    }
                };
                let j = if pval && (0..32).contains(&j) {
                    j as usize
                } else {
                    l
                };
                out[l] = v[a + j];
                if pval {
                    ok |= 1 << l;
                }
            });
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = out[l]);
            if let Some(dp) = dp {
                let p = &mut w.preds[*dp as usize];
                *p = (*p & !exec) | (ok & exec);
            }
        }
        Op::Vote {
            mode,
            d,
            dp,
            p,
            mask,
        } => {
            let preds = pred_bits(&w.preds, *p);
            let mut ballots = [0u32; WARP];
            let mut truth = 0u32;
            for_member_groups(v, exec, r(*mask), |members, lanes| {
                let bits = preds & members;
                let t = match mode {
                    VoteMode::Ballot => false,
                    VoteMode::All => bits == members,
                    VoteMode::Any => bits != 0,
                    _ => bits == 0 || bits == members,
                };
                for_lanes(lanes, |l| ballots[l] = bits);
                if t {
                    truth |= lanes;
                }
            });
            match mode {
                VoteMode::Ballot => {
                    if let Some(d) = d {
                        let d = r(*d);
                        for_lanes(exec, |l| v[d + l] = ballots[l] as u64);
                    }
                }
                _ => {
                    if let Some(dp) = dp {
                        let pr = &mut w.preds[*dp as usize];
                        *pr = (*pr & !exec) | truth;
                    }
                }
            }
        }
        Op::Activemask { d } => {
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = active as u64);
        }
        Op::Match {
            all,
            wide,
            d,
            dp,
            a,
            mask,
        } => {
            let a = r(*a);
            let val = |l: usize| {
                if *wide {
                    v[a + l]
                } else {
                    v[a + l] & 0xffff_ffff
                }
            };
            let mut out = [0u64; WARP];
            let mut pbits = 0u32;
            for_member_groups(v, exec, r(*mask), |members, lanes| {
                if *all {
                    let first = val(members.trailing_zeros() as usize);
                    let mut same = true;
                    for_lanes(members, |l| same &= val(l) == first);
                    for_lanes(lanes, |l| out[l] = if same { members as u64 } else { 0 });
                    if same {
                        pbits |= lanes;
                    }
                } else {
                    for_lanes(lanes, |l| {
                        let x = val(l);
                        let mut eq = 0u32;
                        for_lanes(members, |k| {
                            if val(k) == x {
                                eq |= 1 << k;
                            }
                        });
                        out[l] = eq as u64;
                    });
                }
            });
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = out[l]);
            if let Some(dp) = dp {
                let p = &mut w.preds[*dp as usize];
                *p = (*p & !exec) | (pbits & exec);
            }
        }
        Op::Redux {
            op,
            signed,
            d,
            a,
            mask,
        } => {
            let a = r(*a);
            let mut out = [0u64; WARP];
            for_member_groups(v, exec, r(*mask), |members, lanes| {
                let mut acc: Option<u32> = None;
                for_lanes(members, |l| {
                    let x = v[a + l] as u32;
                    acc = Some(match acc {
                        None => x,
                        Some(y) => match op {
                            ReduxOp::Add => y.wrapping_add(x),
                            ReduxOp::Min if *signed => (y as i32).min(x as i32) as u32,
                            ReduxOp::Max if *signed => (y as i32).max(x as i32) as u32,
                            ReduxOp::Min => y.min(x),
                            ReduxOp::Max => y.max(x),
                            ReduxOp::And => y & x,
                            ReduxOp::Or => y | x,
                            ReduxOp::Xor => y ^ x,
                        },
                    });
                });
                let res = acc.unwrap_or(0) as u64;
                for_lanes(lanes, |l| out[l] = res);
            });
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = out[l]);
        }
        _ => unreachable!("an operation of another family"),
    }
    Ok(())
}

/// The lanes one lane's `vote`, `match` or `redux` covers: its own
/// membermask within the active lanes, or all active lanes when that leaves
/// none.
#[inline(always)]
fn lane_members(v: &[u64], exec: u32, mask: usize, lane: usize) -> u32 {
    let members = exec & v[mask + lane] as u32;
    if members == 0 { exec } else { members }
}

/// Calls `f(members, lanes)` once per distinct member set among the
/// executing lanes, `lanes` being the lanes that named it. Lanes of one
/// convergent instruction may name different membermasks (cooperative
/// groups' `binary_partition`/`labeled_partition` then `reduce` or `ballot`
/// do): each lane's result covers the lanes of its own mask.
#[inline(always)]
fn for_member_groups(v: &[u64], exec: u32, mask: usize, mut f: impl FnMut(u32, u32)) {
    let mut left = exec;
    while left != 0 {
        let members = lane_members(v, exec, mask, left.trailing_zeros() as usize);
        let mut lanes = 0u32;
        for_lanes(left, |l| {
            if lane_members(v, exec, mask, l) == members {
                lanes |= 1 << l;
            }
        });
        f(members, lanes);
        left &= !lanes;
    }
}
