//! Static shared memory, laid out per kernel as ptxas does: a kernel is
//! charged only for the `.shared` variables it (or a function it can call)
//! uses. The code is decoded once with shared offsets baked in and device
//! functions are shared between kernels, so each variable still has one
//! offset module-wide; variables no kernel uses together may share
//! addresses (first fit, in declaration order), variables a kernel uses
//! together never overlap.
//!
//! Which variables a kernel uses is decided conservatively from the PTX:
//! the `.shared` variables declared in the bodies of the kernel and of every
//! function it can reach by `call`, plus the module-scope ones named
//! anywhere in those bodies. An indirect call may reach every function
//! whose address is taken anywhere in the module (named outside a call's
//! target, or in a variable's initializer); a shared variable named in a
//! variable's initializer is used by every kernel.

use std::collections::{HashMap, HashSet};

use prlx_ptx::ast::{self, Operand, Statement};

/// Where a static shared variable is declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SharedKey {
    /// At module scope, by name.
    Module(String),
    /// In the body of the defined function of this index, by name.
    Body(usize, String),
}

/// A static (non-`.extern`) shared variable to place.
#[derive(Debug, Clone)]
pub(super) struct StaticShared {
    pub key: SharedKey,
    pub size: u64,
    pub align: u64,
}

/// The result of [`layout`]: each variable's offset (in the order given)
/// and each defined function's static shared bytes (the end of the highest
/// variable it uses as a kernel; 0 for none, and for `.func`s).
pub(super) struct SharedLayout {
    pub offsets: Vec<u64>,
    pub kernel_bytes: Vec<u64>,
    /// The end of the highest variable placed (used or not).
    pub end: u64,
}

/// What one function body names.
#[derive(Default)]
struct BodyRefs<'b> {
    /// Names used anywhere but as a direct call's target.
    names: HashSet<&'b str>,
    /// Direct call targets.
    calls: HashSet<&'b str>,
    /// Whether it calls through a register (or an unknown name).
    indirect: bool,
}

fn operand_names<'b>(op: &'b Operand, out: &mut HashSet<&'b str>) {
    match op {
        Operand::Symbol(n) => {
            out.insert(n);
        }
        Operand::Register(r) | Operand::Not(r) | Operand::RegisterOffset(r, _) => {
            // A register declared without `%` cannot name a variable, but
            // counting it costs nothing and keeps the analysis conservative.
            out.insert(&r.name);
        }
        Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|o| operand_names(o, out)),
        Operand::Address(a) => {
            if let ast::AddressBase::Symbol(n) = &a.base {
                out.insert(n);
            }
            a.trailing.iter().for_each(|o| operand_names(o, out));
        }
        Operand::PredicatePair(..) | Operand::Immediate(_) | Operand::Sink => {}
    }
}

/// Names a variable initializer refers to (`foo`, `generic(foo)+8`, lists).
pub(super) fn init_names<'b>(init: &'b ast::Initializer, out: &mut HashSet<&'b str>) {
    match init {
        ast::Initializer::Symbol { name, .. } | ast::Initializer::Generic { name, .. } => {
            out.insert(name);
        }
        ast::Initializer::List(l) => l.iter().for_each(|i| init_names(i, out)),
        ast::Initializer::Immediate(_) => {}
    }
}

fn body_refs<'b>(
    body: &'b [Statement],
    functions: &HashSet<&str>,
    refs: &mut BodyRefs<'b>,
    inits: &mut HashSet<&'b str>,
) {
    for s in body {
        match s {
            Statement::Instruction(inst) => match inst.as_call() {
                Some(call) => {
                    match call.target {
                        Operand::Symbol(t) if functions.contains(t.as_str()) => {
                            refs.calls.insert(t);
                        }
                        _ => refs.indirect = true,
                    }
                    for op in call.returns.iter().chain(call.args) {
                        operand_names(op, &mut refs.names);
                    }
                }
                None => inst
                    .operands
                    .iter()
                    .for_each(|o| operand_names(o, &mut refs.names)),
            },
            Statement::Var(v) => {
                if let Some(init) = &v.init {
                    init_names(init, inits);
                }
            }
            Statement::Scope(sc) => body_refs(&sc.body, functions, refs, inits),
            _ => {}
        }
    }
}

/// For each variable of `vars`, which kernels (by their index in `defined`)
/// use it.
fn users(
    module: &ast::Module,
    defined: &[&ast::Function],
    vars: &[StaticShared],
) -> Vec<Vec<bool>> {
    let functions: HashSet<&str> = module.functions().map(|f| f.name.as_str()).collect();
    let index: HashMap<&str, usize> = defined
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut inits = HashSet::new();
    for item in &module.items {
        if let ast::Item::Variable(v) = item
            && let Some(init) = &v.init
        {
            init_names(init, &mut inits);
        }
    }
    let refs: Vec<BodyRefs<'_>> = defined
        .iter()
        .map(|f| {
            let mut r = BodyRefs::default();
            body_refs(
                f.body.as_deref().unwrap_or(&[]),
                &functions,
                &mut r,
                &mut inits,
            );
            r
        })
        .collect();
    let address_taken: Vec<usize> = (0..defined.len())
        .filter(|&i| {
            let name = defined[i].name.as_str();
            inits.contains(name) || refs.iter().any(|r| r.names.contains(name))
        })
        .collect();

    let mut used = vec![vec![false; defined.len()]; vars.len()];
    for (k, f) in defined.iter().enumerate() {
        if f.kind != ast::FunctionKind::Entry {
            continue;
        }
        // The functions kernel `k` can reach.
        let mut reached = vec![false; defined.len()];
        let mut stack = vec![k];
        reached[k] = true;
        while let Some(i) = stack.pop() {
            let r = &refs[i];
            let direct = r.calls.iter().chain(&r.names).filter_map(|n| index.get(n));
            let indirect = address_taken.iter().filter(|_| r.indirect);
            for &j in direct.chain(indirect) {
                if !reached[j] {
                    reached[j] = true;
                    stack.push(j);
                }
            }
        }
        for (v, u) in vars.iter().zip(&mut used) {
            u[k] = match &v.key {
                SharedKey::Body(i, _) => reached[*i],
                SharedKey::Module(name) => {
                    inits.contains(name.as_str())
                        || (0..defined.len())
                            .any(|i| reached[i] && refs[i].names.contains(name.as_str()))
                }
            };
        }
    }
    used
}

/// Places `vars` (in order) at the lowest offset, aligned, that overlaps no
/// variable placed before it with which it shares a kernel; see the module
/// documentation.
pub(super) fn layout(
    module: &ast::Module,
    defined: &[&ast::Function],
    vars: &[StaticShared],
) -> SharedLayout {
    let used = users(module, defined, vars);
    let mut offsets: Vec<u64> = Vec::with_capacity(vars.len());
    for (i, v) in vars.iter().enumerate() {
        let conflicts: Vec<(u64, u64)> = (0..i)
            .filter(|&j| used[i].iter().zip(&used[j]).any(|(a, b)| *a && *b))
            .map(|j| (offsets[j], offsets[j].saturating_add(vars[j].size)))
            .filter(|(start, end)| end > start)
            .collect();
        let mut at = 0u64;
        while let Some(&(_, end)) = conflicts.iter().find(|&&(start, end)| {
            start < at.saturating_add(v.size).max(at.saturating_add(1)) && end > at
        }) {
            at = super::align_up(end, v.align);
        }
        offsets.push(at);
    }
    let ends = || {
        vars.iter()
            .zip(&offsets)
            .map(|(v, o)| o.saturating_add(v.size))
    };
    let kernel_bytes = (0..defined.len())
        .map(|k| {
            ends()
                .zip(&used)
                .filter(|(_, u)| u[k])
                .map(|(e, _)| e)
                .max()
                .unwrap_or(0)
        })
        .collect();
    SharedLayout {
        end: ends().max().unwrap_or(0),
        offsets,
        kernel_bytes,
    }
}
