//! Recognising a `switch` that llc lowered to a tree of compares and
//! branches, so it records one Switch event, as the pass records it.
//!
//! The pass sees the IR's `switch` (SimplifyCFG has already merged chains
//! of equality tests on one value into it) and records its value once.
//! llc lowers a `switch` without a jump table to a binary tree of blocks,
//! each doing nothing but compare the value (or the value plus a constant,
//! for a range of cases, or a bit test) against constants and branch to the
//! next test or to a case. Instrumented branch by branch, each level of the
//! tree is a Branch event (`switch_stmt`: 346 events where the pass records
//! 64, 4.3× the pass's cost).
//!
//! A tree here is a set of conditional branches, each ending a block that
//! only computes (no memory access, call or barrier), each guarded by a
//! `setp` in its block comparing against an immediate a register derived in
//! that block from one and the same value V (through `add`/`sub`/`and`/
//! `shl`/… with immediates), connected by branch or fall-through edges, and
//! entered through one root. The root records V as a Switch event; the
//! other branches of the tree record nothing.

use std::collections::{HashMap, HashSet};

use prlx_ptx::{Instruction, Operand, Statement};

/// A flat statement as the rewrite walks them (`None`: end of a scope).
pub(crate) type Flat<'a> = Option<&'a Statement>;

/// The lowered switches of one function.
#[derive(Debug, Default)]
pub(crate) struct SwitchTrees<'a> {
    /// Root branch (flat index) → (the switched value, the compare's modifiers).
    pub roots: HashMap<usize, (&'a str, &'a [String])>,
    /// Every branch of a tree other than its root: no probe.
    pub inner: HashSet<usize>,
}

/// One conditional branch that tests the value `value`.
struct Test<'a> {
    branch: usize,
    /// The compared register, then each register it was derived from in
    /// the block (the switched value is among them).
    chain: Vec<&'a str>,
    compare_modifiers: &'a [String],
    successors: [Option<usize>; 2],
    /// Whether it tests for one case (a lowered switch has such tests; a
    /// chain of range tests is left as branches).
    equality: bool,
    /// The block does nothing but the test (only such blocks can be inner
    /// nodes; the root's block also computes the value).
    pure: bool,
}

fn instruction<'a>(flat: &Flat<'a>) -> Option<&'a Instruction> {
    match flat {
        Some(Statement::Instruction(i)) => Some(i),
        _ => None,
    }
}

fn is_control(i: &Instruction) -> bool {
    matches!(i.opcode.as_str(), "bra" | "brx" | "ret" | "exit")
}

/// Operations that derive a test register from the switched value with
/// immediates only (range checks subtract, bit tests shift and mask).
fn derives(i: &Instruction) -> bool {
    matches!(
        i.opcode.as_str(),
        "add" | "sub" | "and" | "or" | "xor" | "shl" | "shr" | "mov" | "cvt"
    )
}

/// A plain register operand's name. Not a vector element (`%tid.x` is
/// named `%tid`) nor a special register: neither can be recorded by name.
fn register(op: Option<&Operand>) -> Option<&str> {
    match op {
        Some(Operand::Register(r)) if r.component.is_none() && !r.is_special() => {
            Some(r.name.as_str())
        }
        _ => None,
    }
}

/// The block key of a position: the flat index of the label that starts its
/// block, or the index right after the control instruction that ends the
/// previous one. `None` when the block starts at a scope boundary.
fn block_key(flat: &[Flat<'_>], at: usize) -> Option<usize> {
    for i in (0..at).rev() {
        match flat[i] {
            None | Some(Statement::Scope(_)) => return None,
            Some(Statement::Label(_)) => return Some(i),
            Some(Statement::Instruction(inst)) if is_control(inst) => return Some(i + 1),
            _ => {}
        }
    }
    Some(0)
}

/// Where execution goes when the branch at `at` is not taken: the key of
/// the next block (an unconditional `bra` right after leads to its target).
fn fall_through(flat: &[Flat<'_>], labels: &HashMap<&str, usize>, at: usize) -> Option<usize> {
    for (i, stmt) in flat.iter().enumerate().skip(at + 1) {
        match stmt {
            None | Some(Statement::Scope(_)) => return None,
            Some(Statement::Label(_)) => return Some(i),
            Some(Statement::Instruction(inst)) => {
                if inst.opcode == "bra" && inst.guard.is_none() {
                    return branch_target(inst).and_then(|t| labels.get(t).copied());
                }
                return Some(at + 1);
            }
            _ => {}
        }
    }
    None
}

fn branch_target(i: &Instruction) -> Option<&str> {
    match i.operands.first() {
        Some(Operand::Symbol(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// The test the conditional branch at `at` makes, if it is a tree test.
fn test_at<'a>(
    flat: &[Flat<'a>],
    labels: &HashMap<&str, usize>,
    at: usize,
    branch: &'a Instruction,
) -> Option<(usize, Test<'a>)> {
    let guard = branch.guard.as_ref()?;
    let key = block_key(flat, at)?;
    let compare = flat[key..at].iter().filter_map(instruction).rfind(|i| {
        i.opcode == "setp" && register(i.operands.first()) == Some(&guard.register.name)
    })?;
    if !matches!(compare.operands.get(2), Some(Operand::Immediate(_)))
        || compare.operands.len() != 3
    {
        return None;
    }
    // Follow the tested register back through derivations with immediates.
    let mut value = register(compare.operands.get(1))?;
    let mut chain = vec![value];
    let mut derivations: Vec<&Instruction> = Vec::new();
    for i in flat[key..at].iter().rev().filter_map(instruction) {
        if register(i.operands.first()) != Some(value) || std::ptr::eq(i, compare) {
            continue;
        }
        if !derives(i) || i.guard.is_some() {
            break;
        }
        let sources: Vec<&str> = i.operands[1..]
            .iter()
            .filter_map(|o| register(Some(o)))
            .collect();
        let immediates = i.operands[1..]
            .iter()
            .all(|o| matches!(o, Operand::Register(_) | Operand::Immediate(_)));
        match sources.as_slice() {
            [source] if immediates => {
                value = source;
                chain.push(source);
                derivations.push(i);
            }
            _ => break,
        }
    }
    // An inner node of a tree does nothing but its test: the compare, the
    // derivations, and constants llc hoisted into it (a case's result).
    let pure = flat[key..at].iter().filter_map(instruction).all(|i| {
        std::ptr::eq(i, compare)
            || derivations.iter().any(|d| std::ptr::eq(*d, i))
            || (i.opcode == "mov"
                && i.guard.is_none()
                && matches!(i.operands.get(1), Some(Operand::Immediate(_))))
    });
    let target = branch_target(branch).and_then(|t| labels.get(t).copied());
    Some((
        key,
        Test {
            branch: at,
            chain,
            compare_modifiers: &compare.modifiers,
            equality: compare.has_modifier(".eq") || compare.has_modifier(".ne"),
            successors: [target, fall_through(flat, labels, at)],
            pure,
        },
    ))
}

/// How many control transfers reach each label (flat index): branches
/// naming it, jump tables listing it, and falling through into it.
fn predecessor_counts(flat: &[Flat<'_>], labels: &HashMap<&str, usize>) -> HashMap<usize, usize> {
    let mut counts: HashMap<usize, usize> = HashMap::new();
    let mut falls_through = true;
    for (i, stmt) in flat.iter().enumerate() {
        match stmt {
            Some(Statement::Label(_)) => {
                if falls_through {
                    *counts.entry(i).or_default() += 1;
                }
                falls_through = true;
            }
            Some(Statement::Instruction(inst)) => {
                if inst.opcode == "bra" {
                    if let Some(&l) = branch_target(inst).and_then(|t| labels.get(t)) {
                        *counts.entry(l).or_default() += 1;
                    }
                }
                falls_through = !(is_control(inst) && inst.guard.is_none());
            }
            Some(Statement::BranchTargets(targets)) => {
                for name in &targets.labels {
                    if let Some(&l) = labels.get(name.as_str()) {
                        // A jump table: as many ways in as the program likes.
                        *counts.entry(l).or_default() += 2;
                    }
                }
            }
            None => falls_through = true,
            _ => {}
        }
    }
    counts
}

/// Finds the lowered switches among the flat statements of one function.
pub(crate) fn find<'a>(flat: &[Flat<'a>]) -> SwitchTrees<'a> {
    let labels: HashMap<&str, usize> = flat
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Some(Statement::Label(l)) => Some((l.name.as_str(), i)),
            _ => None,
        })
        .collect();
    // Block key → its test.
    let mut tests: HashMap<usize, Test<'a>> = HashMap::new();
    for (at, stmt) in flat.iter().enumerate() {
        if let Some(i) = instruction(stmt)
            && i.opcode == "bra"
            && i.guard.is_some()
            && let Some((key, test)) = test_at(flat, &labels, at, i)
        {
            tests.insert(key, test);
        }
    }
    let predecessors = predecessor_counts(flat, &labels);
    // Edges between tests of the same value into blocks entered from the
    // test alone; trees are the components.
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut has_parent: HashSet<usize> = HashSet::new();
    for (key, test) in &tests {
        for next in test.successors.iter().flatten() {
            if next == key {
                continue;
            }
            let only_from_here = !matches!(flat[*next], Some(Statement::Label(_)))
                || predecessors.get(next) == Some(&1);
            if let Some(child) = tests.get(next)
                && child.chain.iter().any(|r| test.chain.contains(r))
                && child.pure
                && only_from_here
            {
                children.entry(*key).or_default().push(*next);
                has_parent.insert(*next);
            }
        }
    }
    let mut trees = SwitchTrees::default();
    let mut keys: Vec<usize> = tests.keys().copied().collect();
    keys.sort_unstable();
    let mut claimed: HashSet<usize> = HashSet::new();
    for root in keys {
        if has_parent.contains(&root) || !children.contains_key(&root) {
            continue;
        }
        // Every test reachable from the root through tests of its value.
        let mut members = vec![root];
        let mut stack = vec![root];
        let mut seen = HashSet::from([root]);
        while let Some(k) = stack.pop() {
            for &c in children.get(&k).into_iter().flatten() {
                if seen.insert(c) {
                    members.push(c);
                    stack.push(c);
                }
            }
        }
        // A test reachable from two roots is not one tree's: leave it alone.
        if members.iter().any(|m| claimed.contains(m)) {
            continue;
        }
        // The value switched on: the first register of the root's chain
        // every test derives from.
        let root_test = &tests[&root];
        let value = root_test
            .chain
            .iter()
            .find(|r| members.iter().all(|m| tests[m].chain.contains(r)));
        let Some(value) = value else {
            continue;
        };
        if !members.iter().any(|m| tests[m].equality) {
            continue;
        }
        claimed.extend(members.iter().copied());
        trees
            .roots
            .insert(root_test.branch, (*value, root_test.compare_modifiers));
        for m in &members[1..] {
            trees.inner.insert(tests[m].branch);
        }
    }
    trees
}
