//! Execution of control flow: branches, calls and returns (per-thread frames), `exit`, `trap`,
//! CTA barriers, the built-in `vprintf`/`malloc`/`free`/`__assertfail`, and the timers.

use super::memory_ops::{load, read_cstr};
use super::*;
use crate::program::RegBinding;

/// `bra`: the executing lanes jump to `target`, the other active lanes
/// fall through. Dispatched on its own by `execute`: the hottest control
/// operation.
#[inline(always)]
pub(crate) fn branch(w: &mut Warp, pc: u32, active: u32, exec: u32, target: u32) {
    w.jump(exec, pc, target);
    w.jump(active & !exec, pc, pc + 1);
}

#[inline(always)]
pub(crate) fn execute(
    w: &mut Warp,
    env: &mut Env<'_>,
    op: &Op,
    pc: u32,
    active: u32,
    exec: u32,
) -> Result<Option<StepResult>, LaneFault> {
    let prog = env.prog;
    let next = pc + 1;
    let v = &mut w.values;
    match op {
        Op::BrxIdx { index, targets } => {
            return branch_indexed(w, prog, *index, targets, pc, active, exec);
        }
        Op::Vprintf { fmt, args, ret } => vprintf(w, env, *fmt, *args, *ret, exec)?,
        Op::DeviceMalloc { size, ret } => device_malloc(w, env, *size, *ret, exec),
        Op::DeviceFree { ptr } => device_free(w, env, *ptr, exec)?,
        Op::AssertFail {
            message,
            file,
            line,
        } => assert_fail(w, env, *message, *file, *line, exec)?,
        Op::Call(info) => {
            do_call(w, prog, info, exec, next)?;
            w.jump(active & !exec, pc, next);
            return Ok(Some(StepResult::Continue));
        }
        Op::Ret => {
            do_ret(w, prog, exec);
            w.jump(active & !exec, pc, next);
            return Ok(Some(StepResult::Continue));
        }
        Op::Exit => {
            w.park(exec, next, true);
            *env.live_threads -= exec.count_ones();
            w.jump(active & !exec, pc, next);
            return Ok(if exec != 0 {
                Some(StepResult::Exited)
            } else {
                Some(StepResult::Continue)
            });
        }
        Op::Trap => {
            if exec != 0 {
                return Err(LaneFault {
                    kind: FaultKind::Trap,
                    lane: exec.trailing_zeros(),
                    address: None,
                    message: "trap".into(),
                });
            }
        }
        Op::Bar {
            kind,
            id,
            count,
            d,
            dp,
            p,
        } => {
            if exec == 0 {
                w.jump(active, pc, next);
                return Ok(Some(StepResult::Continue));
            }
            let (bar_id, expected) = barrier_operands(w, *id, *count, exec)?;
            let b = &mut env.barriers[bar_id as usize];
            if expected.is_some() {
                b.expected = expected;
            }
            b.arrived += exec.count_ones();
            let bits = pred_bits(&w.preds, *p) & exec;
            match kind {
                BarKind::RedPopc => b.red_popc += bits.count_ones(),
                BarKind::RedAnd => b.red_and_failed |= bits != exec,
                BarKind::RedOr => b.red_or |= bits != 0,
                _ => {}
            }
            if matches!(kind, BarKind::RedPopc | BarKind::RedAnd | BarKind::RedOr) {
                b.reductions.push((w.index, exec, *kind, *d, *dp));
            }
            w.jump(active & !exec, pc, next);
            if *kind == BarKind::Arrive {
                w.jump(exec, pc, next);
            } else {
                b.waiters.push((w.index, exec));
                w.park(exec, next, false);
            }
            return Ok(Some(StepResult::Arrived(bar_id)));
        }
        Op::ClusterBar { wait } => {
            let c = &mut env.cluster;
            let wi = w.index as usize;
            if *wait {
                // Lanes whose arrival's phase completed already (or that
                // never arrived) go on; the others wait for the phase.
                let parked = exec & c.arrived[wi];
                c.waiting[wi] |= parked;
                w.jump(active & !parked, pc, next);
                w.park(parked, next, false);
            } else {
                c.arrived[wi] |= exec;
                w.jump(active, pc, next);
            }
            return Ok(Some(StepResult::ClusterBarrier));
        }
        Op::Timer { d, which } => {
            let t = match which {
                TimeSource::Clock32 => (w.executed * 4) & 0xffff_ffff,
                TimeSource::Clock64 => w.executed * 4,
                TimeSource::ClockHi => (w.executed * 4) >> 32,
                TimeSource::GlobalTimer => (env.launch_clock + w.executed) * 32,
                TimeSource::GlobalTimerLo => ((env.launch_clock + w.executed) * 32) & 0xffff_ffff,
                TimeSource::GlobalTimerHi => ((env.launch_clock + w.executed) * 32) >> 32,
            };
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = t);
        }
        _ => unreachable!("an operation of another family"),
    }
    Ok(None)
}

/// `brx.idx`: each executing lane jumps to the target its index selects; a
/// non-uniform choice opens a reconvergence barrier first.
fn branch_indexed(
    w: &mut Warp,
    prog: &Program,
    index: Row,
    targets: &[u32],
    pc: u32,
    active: u32,
    exec: u32,
) -> Result<Option<StepResult>, LaneFault> {
    let index = r(index);
    let first =
        targets.get(w.values[index + exec.trailing_zeros() as usize % WARP] as u32 as usize);
    let mut uniform = exec == active;
    for_lanes(exec, |l| {
        uniform &= targets.get(w.values[index + l] as u32 as usize) == first;
    });
    if !uniform && exec != 0 {
        w.open_barrier(prog.reconverge.rpc[pc as usize], active, 0);
    }
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let i = w.values[index + l] as u32 as usize;
        let Some(t) = targets.get(i) else {
            return Err(LaneFault {
                kind: FaultKind::IllegalInstruction,
                lane: l as u32,
                address: None,
                message: format!("brx.idx index {i} out of range 0..{}", targets.len()),
            });
        };
        w.jump(1 << l, pc, *t);
    }
    w.jump(active & !exec, pc, pc + 1);
    Ok(Some(StepResult::Continue))
}

/// The built-in `vprintf(format, args)`: each executing lane formats its
/// arguments into the launch's output; `ret`, when present, receives the count.
fn vprintf(
    w: &mut Warp,
    env: &mut Env<'_>,
    fmt: u32,
    args: u32,
    ret: Option<u32>,
    exec: u32,
) -> Result<(), LaneFault> {
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let fp = w.param_fp[l] as u64;
        let fmt_ptr = w.param[l].load(fp + fmt as u64, 8).unwrap_or(0);
        let args_ptr = w.param[l].load(fp + args as u64, 8).unwrap_or(0);
        let text = read_cstr(env, w, fmt_ptr, l)?;
        let mut off = 0u64;
        let mut failed = None;
        let (out, count) = crate::printf::format(
            text.as_bytes(),
            |size| {
                off = off.next_multiple_of(size as u64);
                let v = if args_ptr == 0 {
                    0
                } else {
                    match load(env, w, Space::Generic, args_ptr + off, size, l) {
                        Ok(v) => v,
                        Err(e) => {
                            failed.get_or_insert(e);
                            0
                        }
                    }
                };
                off += size as u64;
                v
            },
            |p| read_cstr(env, w, p, l).unwrap_or_else(|_| "(bad string)".into()),
        );
        if let Some(e) = failed {
            return Err(e);
        }
        env.printf.push_str(&out);
        if let Some(ret) = ret {
            let _ = w.param[l].store(fp + ret as u64, 4, count as u64);
        }
    }

    Ok(())
}

/// The built-in `malloc(size)`: a block of the device heap per executing
/// lane, in lane order (NULL when the heap is exhausted).
fn device_malloc(w: &mut Warp, env: &mut Env<'_>, size: u32, ret: u32, exec: u32) {
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let fp = w.param_fp[l] as u64;
        let bytes = w.param[l].load(fp + size as u64, 8).unwrap_or(0);
        let address = env.heap.malloc(bytes);
        env.wrote |= address != 0;
        let _ = w.param[l].store(fp + ret as u64, 8, address);
    }
}

/// The built-in `free(ptr)`: returns each executing lane's block to the
/// device heap; an address that is not a live block faults.
fn device_free(w: &mut Warp, env: &mut Env<'_>, ptr: u32, exec: u32) -> Result<(), LaneFault> {
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let fp = w.param_fp[l] as u64;
        let address = w.param[l].load(fp + ptr as u64, 8).unwrap_or(0);
        env.heap.free(address).map_err(|message| LaneFault {
            kind: FaultKind::IllegalAddress,
            lane: l as u32,
            address: Some(address),
            message,
        })?;
        env.wrote = true;
    }
    Ok(())
}

/// The built-in `__assertfail(message, file, line, …)`: the first executing
/// lane's failure stops the launch.
fn assert_fail(
    w: &mut Warp,
    env: &mut Env<'_>,
    message: u32,
    file: u32,
    line: u32,
    exec: u32,
) -> Result<(), LaneFault> {
    if exec != 0 {
        let l = exec.trailing_zeros() as usize;
        let fp = w.param_fp[l] as u64;
        let msg_ptr = w.param[l].load(fp + message as u64, 8).unwrap_or(0);
        let file_ptr = w.param[l].load(fp + file as u64, 8).unwrap_or(0);
        let line_no = w.param[l].load(fp + line as u64, 4).unwrap_or(0);
        let msg = read_cstr(env, w, msg_ptr, l).unwrap_or_default();
        let file = read_cstr(env, w, file_ptr, l).unwrap_or_default();
        return Err(LaneFault {
            kind: FaultKind::Assert,
            lane: l as u32,
            address: None,
            message: format!("assertion `{msg}` failed ({file}:{line_no})"),
        });
    }

    Ok(())
}

/// A barrier's id and, when given, its thread count, read from the first
/// executing lane and checked: an id in `0..16`, a count a positive multiple of 32.
fn barrier_operands(
    w: &Warp,
    id: Row,
    count: Option<Row>,
    exec: u32,
) -> Result<(u32, Option<u32>), LaneFault> {
    let lane = exec.trailing_zeros() as usize;
    let illegal = |message: String| LaneFault {
        kind: FaultKind::IllegalInstruction,
        lane: lane as u32,
        address: None,
        message,
    };
    let bar_id = w.values[r(id) + lane] as u32;
    if bar_id >= 16 {
        return Err(illegal(format!("barrier id {bar_id} out of range 0..16")));
    }
    let Some(count) = count else {
        return Ok((bar_id, None));
    };
    let c = w.values[r(count) + lane] as u32;
    if c == 0 || c % 32 != 0 {
        return Err(illegal(format!(
            "barrier thread count {c} is not a positive multiple of 32"
        )));
    }
    Ok((bar_id, Some(c)))
}

fn do_call(
    w: &mut Warp,
    prog: &Program,
    info: &CallInfo,
    exec: u32,
    next: u32,
) -> Result<(), LaneFault> {
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let callee_index = match info.target {
            CallTarget::Direct(f) => f,
            CallTarget::Indirect {
                row,
                params,
                returns,
            } => {
                let addr = w.values[r(row) + l];
                let f = addr.wrapping_sub(crate::program::FUNC_ADDR_BASE);
                let ok = prog.funcs.get(f as usize).is_some_and(|c| {
                    !c.is_kernel
                        && c.params.len() as u32 == params
                        && c.returns.len() as u32 == returns
                });
                if !ok {
                    return Err(LaneFault {
                        kind: FaultKind::IllegalInstruction,
                        lane: l as u32,
                        address: Some(addr),
                        message: "indirect call to an address that is not a matching function"
                            .into(),
                    });
                }
                f as u32
            }
        };
        let callee = &prog.funcs[callee_index as usize];
        let caller = &prog.funcs[w.func[l] as usize];
        if w.frames[l].len() >= 1024 {
            return Err(LaneFault {
                kind: FaultKind::IllegalInstruction,
                lane: l as u32,
                address: None,
                message: "call stack overflow (1024 frames)".into(),
            });
        }
        // Save the caller's registers the callee (or what it calls) can
        // overwrite: every function's window starts at the same row.
        let save_at = w.saves[l].len();
        let saved_from = caller.window_base.max(callee.clobber_rows.start);
        let saved_to = (caller.window_base + caller.num_rows).min(callee.clobber_rows.end);
        let saved_rows = saved_to.saturating_sub(saved_from);
        let saved_preds = caller.num_preds.min(callee.clobber_preds);
        let values = &w.values;
        let rows = saved_from..saved_from + saved_rows;
        w.saves[l].extend(rows.map(|row| values[r(row) + l]));
        let preds = &w.preds[..saved_preds as usize];
        w.saves[l].extend(preds.iter().map(|p| (p >> l & 1) as u64));
        w.frames[l].push(Frame {
            ret_pc: next,
            caller: w.func[l],
            local_fp: w.local_fp[l],
            param_fp: w.param_fp[l],
            save_at,
            saved_from,
            saved_rows,
            saved_preds,
        });
        let new_param_fp = w.param_fp[l] + caller.param_frame;
        let need = (new_param_fp + callee.param_frame) as usize;
        if w.param[l].bytes.len() < need {
            w.param[l].bytes.resize(need, 0);
        }
        for (from, (to, size)) in info.args.iter().zip(&callee.params) {
            let dst = (new_param_fp + to) as usize;
            let slot = &mut w.param[l].bytes[dst..dst + *size as usize];
            match from {
                CallSlot::Frame(from) => {
                    let src = (w.param_fp[l] + from) as usize;
                    w.param[l].bytes.copy_within(src..src + *size as usize, dst);
                }
                // Read before any `.reg` parameter is written: they share the window.
                CallSlot::Reg(row) => put(slot, 0, 8, w.values[r(*row) + l]),
                CallSlot::Rows { row, n, elem } => {
                    for i in 0..*n as usize {
                        let v = w.values[r(*row + i as u32) + l];
                        put(slot, i * *elem as usize, *elem as usize, v);
                    }
                }
                CallSlot::Pred(p) => put(slot, 0, 1, (w.preds[*p as usize] >> l & 1) as u64),
            }
        }
        // `.reg` parameters: the callee's registers, filled from its frame slots.
        for (binding, (off, size)) in callee.reg_params.iter().zip(&callee.params) {
            if let Some(binding) = binding {
                let at = (new_param_fp + off) as usize;
                let slot = &w.param[l].bytes[at..at + *size as usize];
                unpack_binding(&mut w.values, &mut w.preds, *binding, slot, l);
            }
        }
        let new_local_fp = w.local_fp[l] + caller.local_frame;
        let need = (new_local_fp + callee.local_frame) as usize;
        if w.local[l].bytes.len() < need {
            w.local[l].bytes.resize(need, 0);
        }
        w.param_fp[l] = new_param_fp;
        w.local_fp[l] = new_local_fp;
        w.func[l] = callee_index;
        w.jump(1 << l, next - 1, callee.entry_pc);
    }
    Ok(())
}

fn do_ret(w: &mut Warp, prog: &Program, exec: u32) {
    let mut m = exec;
    w.diverge();
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let Some(frame) = w.frames[l].pop() else {
            // `ret` from the kernel's outermost function retires the thread.
            w.exited |= 1 << l;
            continue;
        };
        // Return values: a `.reg` return is first spilled from the callee's
        // registers into its frame slot; register destinations are written
        // after the caller's registers are restored.
        let mut into_regs = [(0 as Row, 0u64); MAX_RETURNED_REGS];
        let mut n_into = 0;
        let mut into_preds = [(0u32, false); MAX_RETURNED_REGS];
        let mut n_preds = 0;
        if let Op::Call(info) = &prog.code[frame.ret_pc as usize - 1].op {
            let callee = &prog.funcs[w.func[l] as usize];
            for (k, (to, (from, size))) in info.rets.iter().zip(&callee.returns).enumerate() {
                let src = (w.param_fp[l] + from) as usize;
                let size = *size as usize;
                if let Some(Some(binding)) = callee.reg_returns.get(k) {
                    let slot = &mut w.param[l].bytes[src..src + size];
                    pack_binding(&w.values, &w.preds, *binding, slot, l);
                }
                let slot = &w.param[l].bytes[src..src + size];
                match *to {
                    CallSlot::Frame(to) => {
                        let dst = (frame.param_fp + to) as usize;
                        w.param[l].bytes.copy_within(src..src + size, dst);
                    }
                    CallSlot::Reg(row) if n_into < MAX_RETURNED_REGS => {
                        into_regs[n_into] = (row, get(slot, 0, 8));
                        n_into += 1;
                    }
                    CallSlot::Rows { row, n, elem } => {
                        for i in 0..n as usize {
                            if n_into < MAX_RETURNED_REGS {
                                let v = get(slot, i * elem as usize, elem as usize);
                                into_regs[n_into] = (row + i as u32, v);
                                n_into += 1;
                            }
                        }
                    }
                    CallSlot::Pred(p) if n_preds < MAX_RETURNED_REGS => {
                        into_preds[n_preds] = (p, get(slot, 0, 1) & 1 == 1);
                        n_preds += 1;
                    }
                    CallSlot::Reg(_) | CallSlot::Pred(_) => {}
                }
            }
        }
        let saved = &w.saves[l][frame.save_at..];
        let (rows, preds) = saved.split_at(frame.saved_rows as usize);
        for (row, &value) in (frame.saved_from..).zip(rows) {
            w.values[r(row) + l] = value;
        }
        for (p, &bit) in w.preds.iter_mut().zip(&preds[..frame.saved_preds as usize]) {
            *p = (*p & !(1 << l)) | ((bit as u32) << l);
        }
        for (row, value) in &into_regs[..n_into] {
            w.values[r(*row) + l] = *value;
        }
        for &(p, bit) in &into_preds[..n_preds] {
            w.preds[p as usize] = (w.preds[p as usize] & !(1 << l)) | ((bit as u32) << l);
        }
        w.saves[l].truncate(frame.save_at);
        w.local_fp[l] = frame.local_fp;
        w.param_fp[l] = frame.param_fp;
        w.func[l] = frame.caller;
        w.pcs[l] = frame.ret_pc;
    }
    w.maybe_reconverge();
}

/// Writes the low `n` bytes of `v` at `at` of a frame slot (clipped to it).
fn put(slot: &mut [u8], at: usize, n: usize, v: u64) {
    let n = n.min(8).min(slot.len().saturating_sub(at));
    slot[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
}

/// Reads `n` bytes at `at` of a frame slot as a little-endian value (bytes
/// past the slot read as zero).
fn get(slot: &[u8], at: usize, n: usize) -> u64 {
    let mut bytes = [0u8; 8];
    let n = n.min(8).min(slot.len().saturating_sub(at));
    bytes[..n].copy_from_slice(&slot[at..at + n]);
    u64::from_le_bytes(bytes)
}

/// Fills a `.reg` parameter's registers (lane `l`) from its frame slot.
fn unpack_binding(values: &mut [u64], preds: &mut [u32], b: RegBinding, slot: &[u8], l: usize) {
    match b {
        RegBinding::Rows { row, n, elem } => {
            for i in 0..n as u32 {
                values[r(row + i) + l] = get(slot, i as usize * elem as usize, elem as usize);
            }
        }
        RegBinding::Pred(p) => {
            let bit = (get(slot, 0, 1) & 1) as u32;
            preds[p as usize] = (preds[p as usize] & !(1 << l)) | (bit << l);
        }
    }
}

/// Writes a `.reg` return value's registers (lane `l`) into its frame slot.
fn pack_binding(values: &[u64], preds: &[u32], b: RegBinding, slot: &mut [u8], l: usize) {
    match b {
        RegBinding::Rows { row, n, elem } => {
            for i in 0..n as u32 {
                let v = values[r(row + i) + l];
                put(slot, i as usize * elem as usize, elem as usize, v);
            }
        }
        RegBinding::Pred(p) => put(slot, 0, 1, (preds[p as usize] >> l & 1) as u64),
    }
}
