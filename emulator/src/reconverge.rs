//! Where divergent paths rejoin: the immediate post-dominator of every
//! branch, computed per function over the PTX control-flow graph.
//!
//! NVIDIA's compiler (ptxas, Volta and later) brackets each divergent
//! branch with a convergence barrier (`BSSY` before it, `BSYNC` at the
//! branch's immediate post-dominator): lanes that took either side wait
//! there for the others. The machine models that barrier (see
//! `docs/reconvergence.md`); this module supplies where it is.

use crate::instr::{CallTarget, Guard, Inst, Op};

/// No reconvergence point inside the function: the paths only meet at its
/// exit (a `ret`/`exit` on each), or the instruction is not a branch.
pub const NONE: u32 = u32::MAX;

/// Where the lanes of a divergent branch wait for each other, per PC.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// The PC where the paths of a divergent branch there rejoin (the first
    /// instruction of the immediate post-dominator block), or [`NONE`].
    pub rpc: Vec<u32>,
    /// The function that both paths of a two-way branch call first, each
    /// through straight-line code, or [`NONE`]: the GPU runs that call once
    /// for the lanes of both paths (ptxas sinks the two calls into one), so
    /// they also wait for each other at its entry.
    pub shared_call: Vec<u32>,
}

/// The reconvergence table of a program's code.
pub fn table(code: &[Inst]) -> Table {
    let rpc = rpcs(code);
    let mut shared_call = vec![NONE; code.len()];
    for (pc, inst) in code.iter().enumerate() {
        if let (Op::Bra { target }, Guard::If(_) | Guard::IfNot(_)) = (&inst.op, inst.guard) {
            let a = first_call(code, *target as usize, inst.func);
            let b = first_call(code, pc + 1, inst.func);
            if a.is_some() && a == b {
                shared_call[pc] = a.unwrap_or(NONE);
            }
        }
    }
    Table { rpc, shared_call }
}

/// The direct callee of the first instruction that is not straight-line
/// code from `pc` on (following unconditional branches), if it is an
/// unconditional call.
fn first_call(code: &[Inst], mut pc: usize, func: u32) -> Option<u32> {
    for _ in 0..256 {
        let inst = code.get(pc).filter(|i| i.func == func)?;
        let always = matches!(inst.guard, Guard::Always);
        match &inst.op {
            Op::Call(info) => {
                return match info.target {
                    CallTarget::Direct(f) if always => Some(f),
                    _ => None,
                };
            }
            Op::Bra { target } if always => pc = *target as usize,
            Op::Bra { .. } | Op::BrxIdx { .. } | Op::Ret | Op::Exit | Op::Trap | Op::Bar { .. } => {
                return None;
            }
            _ => pc += 1,
        }
    }
    None
}

/// For every PC, the PC where the paths of a divergent branch there rejoin
/// (the first instruction of the immediate post-dominator block), or
/// [`NONE`].
fn rpcs(code: &[Inst]) -> Vec<u32> {
    let mut out = vec![NONE; code.len()];
    let mut start = 0;
    while start < code.len() {
        let func = code[start].func;
        let end = (start..code.len())
            .find(|&p| code[p].func != func)
            .unwrap_or(code.len());
        function(code, start, end, &mut out);
        start = end;
    }
    out
}

/// Successors of the instruction at `pc` inside `start..end`; `end` stands
/// for the function's exit.
fn successors(inst: &Inst, pc: usize, end: usize, out: &mut Vec<usize>) {
    out.clear();
    let guarded = !matches!(inst.guard, Guard::Always);
    let next = pc + 1;
    match &inst.op {
        Op::Bra { target } => {
            out.push((*target as usize).min(end));
            if guarded {
                out.push(next);
            }
        }
        Op::BrxIdx { targets, .. } => {
            out.extend(targets.iter().map(|t| (*t as usize).min(end)));
            if guarded {
                out.push(next);
            }
        }
        Op::Ret | Op::Exit | Op::Trap => {
            out.push(end);
            if guarded {
                out.push(next);
            }
        }
        _ => out.push(next),
    }
    for s in out.iter_mut() {
        if *s > end {
            *s = end;
        }
    }
    out.sort_unstable();
    out.dedup();
}

/// Fills `out[start..end]` for one function.
fn function(code: &[Inst], start: usize, end: usize, out: &mut [u32]) {
    // Basic blocks: leaders are the entry, branch targets and the
    // instructions after a control transfer.
    let n = end - start;
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    leader[n] = true;
    let mut succ = Vec::new();
    for pc in start..end {
        successors(&code[pc], pc, end, &mut succ);
        if succ.len() != 1 || succ[0] != pc + 1 {
            for &s in &succ {
                leader[s - start] = true;
            }
            leader[pc + 1 - start] = true;
        }
    }
    let starts: Vec<usize> = (0..=n).filter(|&i| leader[i]).map(|i| i + start).collect();
    // Block index of a leader PC; the last "block" is the exit.
    let exit = starts.len() - 1;
    let block_of = |pc: usize| starts.partition_point(|&s| s < pc);
    let mut bsucc: Vec<Vec<usize>> = vec![Vec::new(); starts.len()];
    let mut bpred: Vec<Vec<usize>> = vec![Vec::new(); starts.len()];
    for b in 0..exit {
        let last = starts[b + 1] - 1;
        successors(&code[last], last, end, &mut succ);
        for &s in &succ {
            let t = block_of(s);
            if !bsucc[b].contains(&t) {
                bsucc[b].push(t);
                bpred[t].push(b);
            }
        }
    }
    let ipdom = post_dominators(exit, &bsucc, &bpred);
    for b in 0..exit {
        let last = starts[b + 1] - 1;
        let is_branch = matches!(code[last].op, Op::Bra { .. } | Op::BrxIdx { .. })
            || (!matches!(code[last].guard, Guard::Always)
                && matches!(code[last].op, Op::Ret | Op::Exit));
        if is_branch
            && let Some(d) = ipdom[b]
            && d != exit
        {
            out[last] = starts[d] as u32;
        }
    }
}

/// Immediate post-dominators (Cooper, Harvey and Kennedy's iterative
/// algorithm on the reverse graph); `None` for blocks that cannot reach the
/// exit.
fn post_dominators(exit: usize, succ: &[Vec<usize>], pred: &[Vec<usize>]) -> Vec<Option<usize>> {
    let nb = succ.len();
    // Post-order of the reverse graph from the exit (iterative DFS).
    let mut order = Vec::with_capacity(nb);
    let mut seen = vec![false; nb];
    let mut stack = vec![(exit, 0usize)];
    seen[exit] = true;
    while let Some((b, i)) = stack.pop() {
        if let Some(&p) = pred[b].get(i) {
            stack.push((b, i + 1));
            if !seen[p] {
                seen[p] = true;
                stack.push((p, 0));
            }
        } else {
            order.push(b);
        }
    }
    let mut rank = vec![usize::MAX; nb];
    for (i, &b) in order.iter().enumerate() {
        rank[b] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; nb];
    idom[exit] = Some(exit);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().rev() {
            if b == exit {
                continue;
            }
            let mut new: Option<usize> = None;
            for &s in &succ[b] {
                if idom[s].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => s,
                    Some(cur) => intersect(&idom, &rank, cur, s),
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom[exit] = None;
    idom
}

fn intersect(idom: &[Option<usize>], rank: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while rank[a] < rank[b] {
            a = idom[a].unwrap_or(b);
        }
        while rank[b] < rank[a] {
            b = idom[b].unwrap_or(a);
        }
    }
    a
}
