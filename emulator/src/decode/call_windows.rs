//! Where each function's registers live, and what a call must save.
//!
//! Registers are rows of one per-warp register file. A caller's rows that
//! a callee (or anything it calls) may write must be saved at the call and
//! restored at the return. When every function started at the same row,
//! every call saved its caller's whole window: an instrumented CUB kernel
//! (thousands of PTX registers) calling a 64-register recording helper at
//! each site spent 94 % of its time copying registers. So functions get
//! their own windows: a function's window starts after the windows of
//! every function that calls it ([`place_windows`], longest path over the
//! direct-call graph, ignoring the edges that close a recursion), and a
//! call saves only the caller's rows inside the callee's reach
//! (`set_clobber_ranges`): none for a call down an acyclic graph, the
//! overlap for recursion and for calls through pointers. Both come from
//! one call graph, read from the module's text before any code is decoded.

use std::collections::HashMap;

use prlx_ptx::ast::{self, Operand, Statement};

use crate::program::FuncInfo;

/// Who calls whom, by index in the module's defined functions.
struct CallGraph {
    /// Each function's direct callees (defined functions), sorted, distinct.
    callees: Vec<Vec<usize>>,
    /// Whether it calls through a register (which may reach any function).
    calls_indirectly: Vec<bool>,
}

/// Sets each function's [`FuncInfo::window_base`], [`FuncInfo::clobber_rows`]
/// and [`FuncInfo::clobber_preds`] (`funcs[i]` is `defined[i]`, its
/// register counts known) and returns the end of the highest window.
/// Kernels start at `first_row`; a callee starts at or after the end of
/// each caller's window, except along a call that closes a cycle.
pub(super) fn place_windows(
    defined: &[&ast::Function],
    funcs: &mut [FuncInfo],
    first_row: u32,
) -> u32 {
    let graph = call_graph(defined);
    let order = callers_first(&graph.callees);
    let mut base = vec![first_row; funcs.len()];
    let mut position = vec![0; funcs.len()];
    for (k, &f) in order.iter().enumerate() {
        position[f] = k;
    }
    for &f in &order {
        let end = base[f] + funcs[f].num_rows;
        for &to in &graph.callees[f] {
            // An edge to a function earlier in the order closes a cycle:
            // the call saves the overlap instead.
            if position[to] > position[f] {
                base[to] = base[to].max(end);
            }
        }
    }
    let mut top = first_row;
    for (info, b) in funcs.iter_mut().zip(base) {
        info.window_base = b;
        top = top.max(b + info.num_rows);
    }
    set_clobber_ranges(funcs, &graph);
    top
}

fn call_graph(defined: &[&ast::Function]) -> CallGraph {
    let index: HashMap<&str, usize> = defined
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut calls_indirectly = vec![false; defined.len()];
    let callees = defined
        .iter()
        .zip(&mut calls_indirectly)
        .map(|(f, indirect)| {
            let mut out = Vec::new();
            direct_callees(f.body.as_deref().unwrap_or(&[]), &index, &mut out, indirect);
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect();
    CallGraph {
        callees,
        calls_indirectly,
    }
}

/// Defined functions a body calls by name, and whether it calls through a
/// register. (A name that is no defined function is an external the
/// decoder builds in or refuses: no callee.)
fn direct_callees(
    body: &[Statement],
    index: &HashMap<&str, usize>,
    out: &mut Vec<usize>,
    indirect: &mut bool,
) {
    for s in body {
        match s {
            Statement::Instruction(inst) => match inst.as_call().map(|c| c.target) {
                Some(Operand::Symbol(name)) => out.extend(index.get(name.as_str())),
                Some(_) => *indirect = true,
                None => {}
            },
            Statement::Scope(scope) => direct_callees(&scope.body, index, out, indirect),
            _ => {}
        }
    }
}

/// The functions in an order where each comes before its callees, apart
/// from calls that close a cycle (reverse post-order of a depth-first walk).
fn callers_first(callees: &[Vec<usize>]) -> Vec<usize> {
    let n = callees.len();
    let mut visited = vec![false; n];
    let mut post = Vec::with_capacity(n);
    for root in 0..n {
        if visited[root] {
            continue;
        }
        visited[root] = true;
        // (function, next callee to look at)
        let mut stack = vec![(root, 0)];
        while let Some((f, next)) = stack.last_mut() {
            if let Some(&to) = callees[*f].get(*next) {
                *next += 1;
                if !visited[to] {
                    visited[to] = true;
                    stack.push((to, 0));
                }
            } else {
                post.push(*f);
                stack.pop();
            }
        }
    }
    post.reverse();
    post
}

/// Sets each function's [`FuncInfo::clobber_rows`] and
/// [`FuncInfo::clobber_preds`]: the rows of every function it can reach by
/// calls, itself included, and the most predicates any of them uses. An
/// indirect call may reach any function.
fn set_clobber_ranges(funcs: &mut [FuncInfo], graph: &CallGraph) {
    let (callees, calls_indirectly) = (&graph.callees, &graph.calls_indirectly);
    let n = funcs.len();
    let window = |f: &FuncInfo| f.window_base..f.window_base + f.num_rows;
    let all_rows = funcs
        .iter()
        .map(window)
        .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end));
    let widest_preds = funcs.iter().map(|f| f.num_preds).max().unwrap_or(0);
    for (f, info) in funcs.iter_mut().enumerate() {
        (info.clobber_rows, info.clobber_preds) = match (&all_rows, calls_indirectly[f]) {
            (Some(all), true) => (all.clone(), widest_preds),
            _ => (window(info), info.num_preds),
        };
    }
    // Propagate callees' ranges to their callers until nothing grows: each
    // pass can only widen a range, bounded by every function's rows.
    let mut changed = true;
    while changed {
        changed = false;
        for f in 0..n {
            for &to in &callees[f] {
                let (rows, preds) = {
                    let callee = &funcs[to];
                    (callee.clobber_rows.clone(), callee.clobber_preds)
                };
                let info = &mut funcs[f];
                let start = info.clobber_rows.start.min(rows.start);
                let end = info.clobber_rows.end.max(rows.end);
                if start < info.clobber_rows.start
                    || end > info.clobber_rows.end
                    || preds > info.clobber_preds
                {
                    info.clobber_rows = start..end;
                    info.clobber_preds = info.clobber_preds.max(preds);
                    changed = true;
                }
            }
        }
    }
}
