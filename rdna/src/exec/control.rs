//! Control and system instructions: branches, calls, EXEC-mask management
//! (`s_*_saveexec`, `s_*_wrexec`), `s_waitcnt*`, `s_barrier`, `s_endpgm`,
//! messages, hardware registers, and the scheduling hints that do nothing
//! functionally (`s_nop`, `s_delay_alu`, `s_clause`, ...).

use super::{Ctx, Flow, Handler};
use crate::decode::{Inst, src};
use crate::fault::{ExecError, FaultKind};
use crate::wave::Counter;

type R = Result<Flow, ExecError>;

fn nop(_c: &mut Ctx<'_>, _i: &Inst) -> R {
    Ok(Flow::Next)
}

fn branch_if(c: &mut Ctx<'_>, i: &Inst, taken: bool) -> R {
    if taken {
        c.next_pc = i.branch_target(c.pc);
    }
    Ok(Flow::Next)
}

/// `s_waitcnt`: gfx11 packs vmcnt[15:10], lgkmcnt[9:4], expcnt[2:0].
fn waitcnt(c: &mut Ctx<'_>, i: &Inst) -> R {
    let v = i.simm16 as u32;
    c.wave.retire(Counter::Vm, ((v >> 10) & 0x3F) as usize);
    c.wave.retire(Counter::Lgkm, ((v >> 4) & 0x3F) as usize);
    Ok(Flow::Next)
}

/// SOPK waits: the count is `simm16` (the SGPR operand is `null` in practice).
fn waitcnt_k(c: &mut Ctx<'_>, i: &Inst, counter: Counter) -> R {
    let n = if i.dst == src::NULL {
        i.simm16 as u32
    } else {
        c.wave.sreg(i.dst).min(i.simm16 as u32)
    };
    c.wave.retire(counter, n as usize);
    Ok(Flow::Next)
}

/// EXEC <- f(S0, EXEC); D <- old EXEC; SCC <- EXEC != 0.
fn saveexec(c: &mut Ctx<'_>, i: &Inst, f: fn(u64, u64) -> u64) -> R {
    let old = c.wave.exec();
    let s = if c.wave.wave64() {
        c.scalar64(i, i.src[0], false)
    } else {
        c.scalar32(i, i.src[0]) as u64
    };
    let new = f(s, old) & c.wave.lane_mask();
    c.wave.write_mask(i.dst, old);
    c.wave.set_exec(new);
    c.wave.scc = new != 0;
    Ok(Flow::Next)
}

/// EXEC <- f(S0, EXEC); D <- new EXEC; SCC <- EXEC != 0.
fn wrexec(c: &mut Ctx<'_>, i: &Inst, f: fn(u64, u64) -> u64) -> R {
    let old = c.wave.exec();
    let s = if c.wave.wave64() {
        c.scalar64(i, i.src[0], false)
    } else {
        c.scalar32(i, i.src[0]) as u64
    };
    let new = f(s, old) & c.wave.lane_mask();
    c.wave.set_exec(new);
    c.wave.write_mask(i.dst, new);
    c.wave.scc = new != 0;
    Ok(Flow::Next)
}

/// simm16 of s_getreg/s_setreg: id[5:0], offset[10:6], size-1[15:11].
fn hwreg_field(simm16: u16) -> (usize, u32, u32) {
    let id = (simm16 & 0x3F) as usize;
    let off = ((simm16 >> 6) & 0x1F) as u32;
    let size = ((simm16 >> 11) & 0x1F) as u32 + 1;
    (id, off, size)
}

fn setreg(c: &mut Ctx<'_>, simm16: u16, value: u32) {
    let (id, off, size) = hwreg_field(simm16);
    let mask = (((1u64 << size) - 1) as u32) << off;
    let r = &mut c.wave.hwregs[id];
    *r = (*r & !mask) | ((value << off) & mask);
}

/// `s_sendmsg_rtn_*`: the message id is the raw source field. REALTIME
/// returns a clock that advances with every executed wave-instruction
/// (monotonic, not wall time); the others (doorbell, DDID, TMA, TBA) read 0.
fn sendmsg_rtn(c: &mut Ctx<'_>, i: &Inst, wide: bool) -> R {
    const MSG_RTN_GET_REALTIME: u16 = 131;
    let v = if i.src[0] == MSG_RTN_GET_REALTIME {
        c.wave.executed
    } else {
        0
    };
    if wide {
        c.wave.set_sreg64(i.dst, v);
    } else {
        c.wave.set_sreg(i.dst, v as u32);
    }
    // The result returns like a scalar load: lgkmcnt counts it.
    Ok(Flow::Next)
}

pub static OPS: &[(&str, Handler)] = &[
    ("s_nop", nop),
    ("s_delay_alu", nop),
    ("s_clause", nop),
    ("s_set_inst_prefetch_distance", nop),
    ("s_waitcnt_depctr", nop),
    ("s_sleep", nop),
    ("s_setprio", nop),
    ("s_icache_inv", nop),
    ("s_inst_prefetch", nop),
    ("s_ttracedata", nop),
    ("s_ttracedata_imm", nop),
    ("s_code_end", nop),
    ("s_version", nop),
    ("s_round_mode", nop),
    ("s_denorm_mode", nop),
    ("s_wait_idle", nop),
    ("s_incperflevel", nop),
    ("s_decperflevel", nop),
    ("s_endpgm", |_c, _i| Ok(Flow::End)),
    ("s_endpgm_saved", |_c, _i| Ok(Flow::End)),
    ("s_barrier", |c, _i| {
        // A barrier orders LDS: outstanding LDS results land first.
        c.wave.retire(Counter::Lgkm, 0);
        Ok(Flow::Barrier)
    }),
    ("s_sendmsg", nop),
    ("s_sendmsghalt", nop),
    ("s_trap", |_c, i| {
        Err(ExecError {
            kind: FaultKind::Trap(format!("s_trap {}", i.simm16 & 0xFF)),
            lane: None,
            addr: None,
        })
    }),
    ("s_sethalt", |_c, i| {
        if i.simm16 & 1 == 0 {
            return Ok(Flow::Next);
        }
        Err(ExecError {
            kind: FaultKind::Trap(format!("s_sethalt {}: the wave halted", i.simm16)),
            lane: None,
            addr: None,
        })
    }),
    ("s_sendmsg_rtn_b32", |c, i| sendmsg_rtn(c, i, false)),
    ("s_sendmsg_rtn_b64", |c, i| sendmsg_rtn(c, i, true)),
    ("s_waitcnt", waitcnt),
    ("s_waitcnt_vmcnt", |c, i| waitcnt_k(c, i, Counter::Vm)),
    ("s_waitcnt_vscnt", |c, i| waitcnt_k(c, i, Counter::Vs)),
    ("s_waitcnt_lgkmcnt", |c, i| waitcnt_k(c, i, Counter::Lgkm)),
    ("s_waitcnt_expcnt", nop),
    ("s_branch", |c, i| branch_if(c, i, true)),
    ("s_cbranch_scc0", |c, i| {
        let t = !c.wave.scc;
        branch_if(c, i, t)
    }),
    ("s_cbranch_scc1", |c, i| {
        let t = c.wave.scc;
        branch_if(c, i, t)
    }),
    ("s_cbranch_vccz", |c, i| {
        let t = c.wave.vcc() == 0;
        branch_if(c, i, t)
    }),
    ("s_cbranch_vccnz", |c, i| {
        let t = c.wave.vcc() != 0;
        branch_if(c, i, t)
    }),
    ("s_cbranch_execz", |c, i| {
        let t = c.wave.exec() == 0;
        branch_if(c, i, t)
    }),
    ("s_cbranch_execnz", |c, i| {
        let t = c.wave.exec() != 0;
        branch_if(c, i, t)
    }),
    ("s_getpc_b64", |c, i| {
        // The address of the next instruction.
        c.wave.set_sreg64(i.dst, c.pc + 4);
        Ok(Flow::Next)
    }),
    ("s_setpc_b64", |c, i| {
        c.next_pc = c.scalar64(i, i.src[0], false);
        Ok(Flow::Next)
    }),
    ("s_swappc_b64", |c, i| {
        let target = c.scalar64(i, i.src[0], false);
        c.wave.set_sreg64(i.dst, c.pc + 4);
        c.next_pc = target;
        Ok(Flow::Next)
    }),
    ("s_call_b64", |c, i| {
        c.wave.set_sreg64(i.dst, c.pc + 4);
        c.next_pc = i.branch_target(c.pc);
        Ok(Flow::Next)
    }),
    ("s_getreg_b32", |c, i| {
        let (id, off, size) = hwreg_field(i.simm16);
        // HW_REG_SHADER_CYCLES (29): a 20-bit cycle counter; instructions stand in for cycles.
        if id == 29 {
            c.wave.hwregs[29] = (c.wave.executed & 0xF_FFFF) as u32;
        }
        let v = (c.wave.hwregs[id] >> off) & (((1u64 << size) - 1) as u32);
        c.wave.set_sreg(i.dst, v);
        Ok(Flow::Next)
    }),
    ("s_setreg_b32", |c, i| {
        let v = c.wave.sreg(i.dst);
        setreg(c, i.simm16, v);
        Ok(Flow::Next)
    }),
    ("s_setreg_imm32_b32", |c, i| {
        setreg(c, i.simm16, i.literal.unwrap_or(0));
        Ok(Flow::Next)
    }),
    ("s_and_saveexec_b32", |c, i| saveexec(c, i, |s, e| s & e)),
    ("s_or_saveexec_b32", |c, i| saveexec(c, i, |s, e| s | e)),
    ("s_xor_saveexec_b32", |c, i| saveexec(c, i, |s, e| s ^ e)),
    ("s_nand_saveexec_b32", |c, i| {
        saveexec(c, i, |s, e| !(s & e))
    }),
    ("s_nor_saveexec_b32", |c, i| saveexec(c, i, |s, e| !(s | e))),
    ("s_xnor_saveexec_b32", |c, i| {
        saveexec(c, i, |s, e| !(s ^ e))
    }),
    ("s_and_not0_saveexec_b32", |c, i| {
        saveexec(c, i, |s, e| !s & e)
    }),
    ("s_and_not1_saveexec_b32", |c, i| {
        saveexec(c, i, |s, e| s & !e)
    }),
    ("s_or_not0_saveexec_b32", |c, i| {
        saveexec(c, i, |s, e| !s | e)
    }),
    ("s_or_not1_saveexec_b32", |c, i| {
        saveexec(c, i, |s, e| s | !e)
    }),
    ("s_and_saveexec_b64", |c, i| saveexec(c, i, |s, e| s & e)),
    ("s_or_saveexec_b64", |c, i| saveexec(c, i, |s, e| s | e)),
    ("s_xor_saveexec_b64", |c, i| saveexec(c, i, |s, e| s ^ e)),
    ("s_nand_saveexec_b64", |c, i| {
        saveexec(c, i, |s, e| !(s & e))
    }),
    ("s_nor_saveexec_b64", |c, i| saveexec(c, i, |s, e| !(s | e))),
    ("s_xnor_saveexec_b64", |c, i| {
        saveexec(c, i, |s, e| !(s ^ e))
    }),
    ("s_and_not0_saveexec_b64", |c, i| {
        saveexec(c, i, |s, e| !s & e)
    }),
    ("s_and_not1_saveexec_b64", |c, i| {
        saveexec(c, i, |s, e| s & !e)
    }),
    ("s_or_not0_saveexec_b64", |c, i| {
        saveexec(c, i, |s, e| !s | e)
    }),
    ("s_or_not1_saveexec_b64", |c, i| {
        saveexec(c, i, |s, e| s | !e)
    }),
    ("s_and_not0_wrexec_b32", |c, i| wrexec(c, i, |s, e| !s & e)),
    ("s_and_not1_wrexec_b32", |c, i| wrexec(c, i, |s, e| s & !e)),
    ("s_and_not0_wrexec_b64", |c, i| wrexec(c, i, |s, e| !s & e)),
    ("s_and_not1_wrexec_b64", |c, i| wrexec(c, i, |s, e| s & !e)),
];
