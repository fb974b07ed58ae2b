//! Execution of `mbarrier.*`: each lane in turn performs one read-modify-write
//! of the barrier object (the state machine is `semantics::mbarrier`). Waits
//! never block: `test_wait` is non-blocking by definition, and `try_wait`
//! may return false before the phase completes (programs retry in a loop),
//! so other warps run between the retries.

use super::memory_ops::{check_align, effective, load, store};
use super::*;
use crate::semantics::mbarrier;

pub(crate) fn execute(
    w: &mut Warp,
    env: &mut Env<'_>,
    op: &Op,
    exec: u32,
) -> Result<(), LaneFault> {
    let Op::Mbarrier {
        kind,
        space,
        addr,
        d,
        dp,
        b,
    } = op
    else {
        return Ok(());
    };
    let mut done_bits = 0u32;
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = effective(&w.values, addr, l, 0);
        check_align(a, 8, l)?;
        let operand = w.values[r(*b) + l];
        let old = load(env, w, *space, a, 8, l)?;
        let new = match *kind {
            MbarrierKind::Init => mbarrier::init(operand),
            MbarrierKind::Inval => 0,
            MbarrierKind::Arrive { drop, expect_tx } => {
                if expect_tx {
                    mbarrier::arrive(old, 1, drop, operand & 0xffff_ffff)
                } else {
                    mbarrier::arrive(old, operand & 0xffff_ffff, drop, 0)
                }
            }
            MbarrierKind::Tx { complete } => {
                let n = (operand & 0xffff_ffff) as i64;
                mbarrier::add_tx(old, if complete { -n } else { n })
            }
            MbarrierKind::Wait { parity } => {
                let done = if parity {
                    mbarrier::parity_done(old, operand)
                } else {
                    mbarrier::phase_done(old, operand)
                };
                done_bits |= (done as u32) << l;
                old
            }
        };
        if new != old {
            env.wrote = true;
            store(env, w, *space, a, 8, new, l)?;
        }
        if let Some(d) = d {
            w.values[r(*d) + l] = old;
        }
    }
    if let Some(p) = dp {
        let p = &mut w.preds[*p as usize];
        *p = (*p & !exec) | (done_bits & exec);
    }
    Ok(())
}
