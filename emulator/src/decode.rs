//! The decoder: PTX AST → [`Program`]. Runs once per module load and
//! rejects anything the machine cannot execute faithfully, naming the
//! instruction and its line.

mod bitfield;
mod compare;
mod convert;

use std::collections::HashMap;

use prlx_ptx::ast::{self, Operand, StateSpace, Statement};

use crate::alu::{self, Alu1Fn, Alu2Fn, Alu3Fn, AluCtx};
use crate::config::DeviceConfig;
use crate::device::{KernelInfo, ParamInfo};
use crate::error::LoadDiagnostic;
use crate::instr::*;
use crate::memory::{GlobalMemory, SHARED_WINDOW};
use crate::observer::RegSlot;
use crate::program::{FuncInfo, Program, diag, sreg};
use crate::semantics::{CmpOp, FloatMode, FloatRounding, ScalarType};

/// Local memory a thread may use (`.local` variables and one frame), as on
/// NVIDIA GPUs.
const MAX_LOCAL_BYTES: u64 = 512 * 1024;

/// Fake addresses of functions, for function pointers and indirect calls.
pub const FUNC_ADDR_BASE: u64 = 0x0000_4000_0000_0000;

/// What a name refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sym {
    /// A `.global`/`.const` variable at a device address.
    Global(u64),
    Shared(u32),
    /// A module-level `.local` variable at a fixed local offset.
    LocalStatic(u32),
    Func(u32),
    KernelParam(u32),
    /// Offset in the current function's `.param` frame.
    FrameParam(u32),
    /// Offset in the current function's `.local` frame.
    LocalFrame(u32),
    Label(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RegKind {
    Value(Row, ScalarType),
    Pred(PredIx),
    /// `.reg .v4 .f32 v;`: `n` consecutive rows, read and written by
    /// component (`v.x`, `v.a`) or whole in vector operands.
    Vector(Row, ScalarType, u8),
}

struct ModuleCtx<'a> {
    file: &'a str,
    syms: HashMap<String, Sym>,
    /// `.shared` variables declared inside function bodies: `(function, name)`.
    body_shared: HashMap<(String, String), u32>,
    /// `.global`/`.const` variables declared inside function bodies, by
    /// `(function, name)`: their device addresses.
    body_globals: HashMap<(String, String), u64>,
    window_base: u32,
    /// A predicate no instruction reads: the target of `_` predicate results.
    pred_sink: PredIx,
    const_base: u32,
    const_values: Vec<u64>,
    const_index: HashMap<u64, u32>,
    funcs: Vec<FuncInfo>,
    code: Vec<Inst>,
    text: Vec<String>,
    diags: Vec<LoadDiagnostic>,
}

fn ast_ty(t: ast::ScalarType) -> Option<ScalarType> {
    ScalarType::parse(t.as_str())
}

fn var_size(ty: ast::ScalarType, vector: Option<u32>, dims: &[Option<u64>]) -> u64 {
    let el = ty.size_bytes().unwrap_or(1) as u64 * vector.unwrap_or(1) as u64;
    dims.iter()
        .fold(el, |acc, d| acc.saturating_mul(d.unwrap_or(0)))
}

fn var_align(ty: ast::ScalarType, vector: Option<u32>, align: Option<u32>) -> u32 {
    align
        .unwrap_or(ty.size_bytes().unwrap_or(1) * vector.unwrap_or(1))
        .max(1)
}

fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a.max(1)) * a.max(1)
}

fn param_size_align(p: &ast::Param) -> (u32, u32) {
    let size = var_size(p.ty, p.vector, &p.array_dims) as u32;
    let natural = p.ty.size_bytes().unwrap_or(1) * p.vector.unwrap_or(1);
    (size, p.align.unwrap_or(natural).max(1))
}

/// Counts register rows and predicates declared anywhere in a body.
fn count_regs(body: &[Statement], rows: &mut u32, preds: &mut u32) {
    for s in body {
        match s {
            Statement::Reg(r) => {
                for n in &r.names {
                    let k = n.range.unwrap_or(1) * r.vector.unwrap_or(1);
                    if r.ty == ast::ScalarType::Pred {
                        *preds += k;
                    } else {
                        *rows += k;
                    }
                }
            }
            Statement::Scope(sc) => count_regs(&sc.body, rows, preds),
            _ => {}
        }
    }
}

/// `.shared`, `.global` and `.const` variables declared inside a body: they
/// live for the whole launch (shared) or module (global, const), like
/// module-level ones, but only the function sees them.
fn collect_body_shared<'b>(body: &'b [Statement], out: &mut Vec<&'b ast::VarDecl>) {
    for s in body {
        match s {
            Statement::Var(v)
                if matches!(
                    v.space,
                    StateSpace::Shared | StateSpace::Global | StateSpace::Const
                ) =>
            {
                out.push(v)
            }
            Statement::Scope(sc) => collect_body_shared(&sc.body, out),
            _ => {}
        }
    }
}

pub fn decode_module(
    module: &ast::Module,
    file: &str,
    config: &DeviceConfig,
    memory: &mut GlobalMemory,
    allocations: &mut Vec<u64>,
) -> Result<Program, Vec<LoadDiagnostic>> {
    let mut m = ModuleCtx {
        file,
        syms: HashMap::new(),
        body_shared: HashMap::new(),
        body_globals: HashMap::new(),
        window_base: sreg::COUNT,
        pred_sink: 0,
        const_base: 0,
        const_values: Vec::new(),
        const_index: HashMap::new(),
        funcs: Vec::new(),
        code: Vec::new(),
        text: Vec::new(),
        diags: Vec::new(),
    };
    if module.address_size == Some(32) {
        return Err(vec![diag(
            file,
            ast::Span::new(1, 1),
            "unsupported: .address_size 32 (only 64-bit PTX is emulated)",
        )]);
    }
    let target_sm = module
        .target
        .iter()
        .find_map(|t| t.strip_prefix("sm_"))
        .and_then(|s| {
            s.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse()
                .ok()
        })
        .unwrap_or(0);
    let (major, minor) = config.compute_capability;
    let device_sm = major * 10 + minor;
    if target_sm > device_sm {
        return Err(vec![diag(
            file,
            ast::Span::new(1, 1),
            format!(
                "module targets sm_{target_sm}, but the device is sm_{device_sm} (set PRLX_EMU_SM to emulate a newer one)"
            ),
        )]);
    }

    // Functions: indices and signatures first, so calls can refer forward.
    let defined: Vec<&ast::Function> = module.functions().filter(|f| f.body.is_some()).collect();
    let mut max_rows = 0;
    let mut max_preds = 0;
    for (i, f) in defined.iter().enumerate() {
        m.syms.insert(f.name.clone(), Sym::Func(i as u32));
        let (mut rows, mut preds) = (0, 0);
        count_regs(f.body.as_deref().unwrap_or(&[]), &mut rows, &mut preds);
        // `.reg` parameters and return values are registers of the function.
        rows += f
            .params
            .iter()
            .chain(&f.returns)
            .filter(|p| p.space == ast::ParamSpace::Reg)
            .count() as u32;
        max_rows = u32::max(max_rows, rows);
        max_preds = u32::max(max_preds, preds);
        let mut frame = 0u64;
        let mut layout = |ps: &[ast::Param]| -> Vec<(u32, u32)> {
            ps.iter()
                .map(|p| {
                    let (size, align) = param_size_align(p);
                    frame = align_up(frame, align as u64);
                    let off = frame as u32;
                    frame += size as u64;
                    (off, size)
                })
                .collect()
        };
        let is_kernel = f.kind == ast::FunctionKind::Entry;
        let (returns, params) = if is_kernel {
            (Vec::new(), Vec::new())
        } else {
            let r = layout(&f.returns);
            let p = layout(&f.params);
            (r, p)
        };
        m.funcs.push(FuncInfo {
            name: f.name.clone(),
            is_kernel,
            entry_pc: 0,
            num_rows: rows,
            num_preds: preds,
            param_frame: align_up(frame, 8) as u32,
            local_frame: 0,
            params,
            returns,
            reg_params: Vec::new(),
            reg_returns: Vec::new(),
            slots: Vec::new(),
        });
    }
    for f in module.functions().filter(|f| f.body.is_none()) {
        m.syms.entry(f.name.clone()).or_insert(Sym::Func(u32::MAX));
    }
    m.const_base = m.window_base + max_rows;
    m.pred_sink = max_preds;

    // Variables: shared and local layouts, global allocations.
    let mut shared_end = 0u64;
    let mut local_end = 0u64;
    let mut extern_shared = Vec::new();
    let mut dyn_align = 16u64;
    let mut inits: Vec<(&ast::VarDecl, u64)> = Vec::new();
    let mut globals = HashMap::new();
    for item in &module.items {
        let ast::Item::Variable(v) = item else {
            continue;
        };
        let size = var_size(v.ty, v.vector, &v.array_dims);
        let align = var_align(v.ty, v.vector, v.align) as u64;
        match v.space {
            StateSpace::Shared => {
                if v.linkage == ast::Linkage::Extern
                    || v.array_dims.iter().any(|d| d.is_none()) && v.init.is_none()
                {
                    dyn_align = dyn_align.max(align);
                    extern_shared.push(v.name.clone());
                } else {
                    shared_end = align_up(shared_end, align);
                    m.syms
                        .insert(v.name.clone(), Sym::Shared(shared_end as u32));
                    shared_end = shared_end.saturating_add(size);
                }
            }
            StateSpace::Local => {
                local_end = align_up(local_end, align);
                m.syms
                    .insert(v.name.clone(), Sym::LocalStatic(local_end as u32));
                local_end = local_end.saturating_add(size);
            }
            StateSpace::Global | StateSpace::Const => {
                if v.linkage == ast::Linkage::Extern {
                    m.diags.push(diag(
                        file,
                        v.span,
                        format!(
                            "unsupported: external variable `{}` (modules are not linked)",
                            v.name
                        ),
                    ));
                    continue;
                }
                // `__managed__` variables live at their host address, so
                // the host can use the pointer cuLibraryGetManaged returns.
                let managed = v.attributes.iter().any(|a| a == "managed");
                let addr = if managed {
                    memory.alloc_host_addressed(size.max(1))
                } else {
                    memory.alloc(size.max(1))
                };
                let Some(addr) = addr else {
                    m.diags.push(diag(
                        file,
                        v.span,
                        format!("out of device memory for `{}`", v.name),
                    ));
                    continue;
                };
                allocations.push(addr);
                m.syms.insert(v.name.clone(), Sym::Global(addr));
                globals.insert(v.name.clone(), (addr, size));
                if v.init.is_some() {
                    inits.push((v, addr));
                }
            }
            _ => m.diags.push(diag(
                file,
                v.span,
                format!("unsupported: module variable in {} space", v.space.as_str()),
            )),
        }
    }
    for f in &defined {
        let mut vars = Vec::new();
        collect_body_shared(f.body.as_deref().unwrap_or(&[]), &mut vars);
        for v in vars {
            let size = var_size(v.ty, v.vector, &v.array_dims);
            let align = var_align(v.ty, v.vector, v.align) as u64;
            if v.space != StateSpace::Shared {
                if v.linkage == ast::Linkage::Extern {
                    m.diags.push(diag(
                        file,
                        v.span,
                        format!(
                            "unsupported: external variable `{}` (modules are not linked)",
                            v.name
                        ),
                    ));
                    continue;
                }
                let Some(addr) = memory.alloc(size.max(1)) else {
                    m.diags.push(diag(
                        file,
                        v.span,
                        format!("out of device memory for `{}`", v.name),
                    ));
                    continue;
                };
                allocations.push(addr);
                m.body_globals
                    .insert((f.name.clone(), v.name.clone()), addr);
                if v.init.is_some() {
                    inits.push((v, addr));
                }
                continue;
            }
            if v.linkage == ast::Linkage::Extern {
                dyn_align = dyn_align.max(align);
                extern_shared.push(format!("{}\u{0}{}", f.name, v.name));
                continue;
            }
            shared_end = align_up(shared_end, align);
            m.body_shared
                .insert((f.name.clone(), v.name.clone()), shared_end as u32);
            shared_end = shared_end.saturating_add(size);
        }
    }
    if shared_end > u32::MAX as u64 / 2 || local_end > MAX_LOCAL_BYTES {
        m.diags.push(diag(
            file,
            ast::Span::new(1, 1),
            "unsupported: module shared or local variables are larger than any device allows",
        ));
        return Err(m.diags);
    }
    let dyn_base = align_up(shared_end, dyn_align) as u32;
    for name in extern_shared {
        if let Some((f, v)) = name.split_once('\u{0}') {
            m.body_shared
                .insert((f.to_string(), v.to_string()), dyn_base);
        } else {
            m.syms.insert(name, Sym::Shared(dyn_base));
        }
    }
    for (v, addr) in inits {
        if let Err(msg) = apply_initializer(&m, v, addr, memory) {
            m.diags.push(diag(file, v.span, msg));
        }
    }

    // Code.
    for (i, f) in defined.iter().enumerate() {
        decode_function(&mut m, i as u32, f);
    }

    // Kernels.
    let mut kernels = Vec::new();
    for (i, f) in defined.iter().enumerate() {
        if f.kind != ast::FunctionKind::Entry {
            continue;
        }
        let mut params = Vec::new();
        let mut off = 0u64;
        for p in &f.params {
            let (size, align) = param_size_align(p);
            off = align_up(off, align as u64);
            params.push(ParamInfo {
                name: p.name.clone(),
                offset: off as u32,
                size,
                align,
            });
            off += size as u64;
        }
        let mut reqntid = None;
        let mut maxntid = None;
        for d in &f.directives {
            match d {
                ast::FunctionDirective::ReqNTid(v) => reqntid = Some(dims3(v)),
                ast::FunctionDirective::MaxNTid(v) => maxntid = Some(dims3(v)),
                _ => {}
            }
        }
        let limit = reqntid
            .or(maxntid)
            .map(|d| d[0].saturating_mul(d[1]).saturating_mul(d[2]))
            .unwrap_or(config.max_threads_per_block)
            .min(config.max_threads_per_block);
        let fi = &m.funcs[i];
        kernels.push((
            i as u32,
            KernelInfo {
                name: f.name.clone(),
                params,
                param_bytes: off as u32,
                static_shared_bytes: shared_end as u32,
                local_bytes_per_thread: local_end as u32 + fi.local_frame,
                num_regs: fi.num_rows + fi.num_preds.div_ceil(32),
                max_threads_per_block: limit,
                reqntid,
                ptx_version: (module.version.major, module.version.minor),
                target_sm,
            },
        ));
    }

    if !m.diags.is_empty() {
        return Err(m.diags);
    }
    let num_rows = m.const_base + m.const_values.len() as u32;
    Ok(Program {
        file: file.to_string(),
        code: m.code,
        text: m.text,
        funcs: m.funcs,
        kernels,
        window_base: m.window_base,
        const_base: m.const_base,
        const_values: m.const_values,
        num_rows,
        num_preds: max_preds + 1,
        static_shared: dyn_base,
        static_local: align_up(local_end, 16) as u32,
        globals,
        variable_allocations: Vec::new(),
        files: module
            .items
            .iter()
            .filter_map(|i| match i {
                ast::Item::File(f) => Some((f.index, f.path.clone())),
                _ => None,
            })
            .collect(),
    })
}

fn dims3(v: &[u32]) -> [u32; 3] {
    [
        v.first().copied().unwrap_or(1),
        v.get(1).copied().unwrap_or(1),
        v.get(2).copied().unwrap_or(1),
    ]
}

fn apply_initializer(
    m: &ModuleCtx<'_>,
    v: &ast::VarDecl,
    addr: u64,
    memory: &mut GlobalMemory,
) -> Result<(), String> {
    let Some(init) = &v.init else { return Ok(()) };
    let el_size = v.ty.size_bytes().unwrap_or(1) as u64;
    let ty = ast_ty(v.ty).ok_or_else(|| format!("unsupported initializer type {}", v.ty))?;
    let mut values = Vec::new();
    flatten_init(init, &mut values);
    let total = var_size(v.ty, v.vector, &v.array_dims);
    for (i, value) in values.iter().enumerate() {
        let off = i as u64 * el_size;
        if off + el_size > total {
            return Err(format!(
                "initializer of `{}` has more elements than the variable",
                v.name
            ));
        }
        let bits = match value {
            ast::Initializer::Immediate(imm) => imm_bits(*imm, ty),
            ast::Initializer::Symbol { name, offset }
            | ast::Initializer::Generic { name, offset } => {
                let base = match m.syms.get(name) {
                    Some(Sym::Global(a)) => *a,
                    Some(Sym::Shared(o)) => SHARED_WINDOW + *o as u64,
                    Some(Sym::Func(i)) => FUNC_ADDR_BASE + *i as u64,
                    _ => return Err(format!("initializer refers to unknown symbol `{name}`")),
                };
                base.wrapping_add(*offset as u64)
            }
            ast::Initializer::List(_) => 0,
        };
        memory
            .store(addr + off, el_size.min(8) as u32, bits)
            .map_err(|_| format!("initializer of `{}` does not fit", v.name))?;
    }
    Ok(())
}

fn flatten_init<'a>(init: &'a ast::Initializer, out: &mut Vec<&'a ast::Initializer>) {
    match init {
        ast::Initializer::List(items) => items.iter().for_each(|i| flatten_init(i, out)),
        other => out.push(other),
    }
}

/// The bit pattern of a literal used with an instruction of type `ty`.
pub fn imm_bits(imm: ast::Immediate, ty: ScalarType) -> u64 {
    use ast::Immediate::*;
    let from_f64 = |x: f64| -> u64 {
        match ty {
            ScalarType::F32 => (x as f32).to_bits() as u64,
            ScalarType::F64 => x.to_bits(),
            ScalarType::F16 => half::f16::from_f64(x).to_bits() as u64,
            ScalarType::BF16 => half::bf16::from_f64(x).to_bits() as u64,
            _ => (x as i64 as u64) & ty.mask(),
        }
    };
    match imm {
        Int(i) if ty.is_float() && !ty.is_packed() => from_f64(i as f64),
        Int(i) => (i as u64) & ty.mask(),
        UInt(u) => u & ty.mask(),
        F32Bits(b) => match ty {
            ScalarType::F64 => (f32::from_bits(b) as f64).to_bits(),
            _ => b as u64 & ty.mask(),
        },
        F64Bits(b) => match ty {
            ScalarType::F64 | ScalarType::B64 | ScalarType::U64 | ScalarType::S64 => b,
            _ => from_f64(f64::from_bits(b)),
        },
        Decimal(x) => from_f64(x),
    }
}

/// The decoder's view of one function body.
struct FnCtx<'f> {
    index: u32,
    name: &'f str,
    is_kernel: bool,
    scopes: Vec<HashMap<String, RegKind>>,
    sym_scopes: Vec<HashMap<String, Sym>>,
    labels: HashMap<String, u32>,
    /// `.branchtargets` lists, by name.
    branch_tables: HashMap<String, Box<[u32]>>,
    /// The current `.loc`: `(file index, line)`.
    loc: (u32, u32),
    next_row: u32,
    next_pred: u32,
    param_frame: u64,
    local_frame: u64,
    slots: Vec<RegSlot>,
}

fn assign_labels(body: &[Statement], pc: &mut u32, labels: &mut HashMap<String, u32>) {
    for s in body {
        match s {
            Statement::Label(l) => {
                labels.entry(l.name.clone()).or_insert(*pc);
            }
            Statement::Instruction(_) => *pc += 1,
            Statement::Scope(sc) => assign_labels(&sc.body, pc, labels),
            _ => {}
        }
    }
}

fn decode_function(m: &mut ModuleCtx<'_>, index: u32, f: &ast::Function) {
    let body = f.body.as_deref().unwrap_or(&[]);
    let entry_pc = m.code.len() as u32;
    let mut labels = HashMap::new();
    let mut pc = entry_pc;
    assign_labels(body, &mut pc, &mut labels);
    let info = m.funcs[index as usize].clone();
    let mut params = HashMap::new();
    if info.is_kernel {
        let mut off = 0u64;
        for p in &f.params {
            let (size, align) = param_size_align(p);
            off = align_up(off, align as u64);
            params.insert(p.name.clone(), Sym::KernelParam(off as u32));
            off += size as u64;
        }
    } else {
        for (p, (off, _)) in f.returns.iter().zip(&info.returns) {
            if p.space == ast::ParamSpace::Param {
                params.insert(p.name.clone(), Sym::FrameParam(*off));
            }
        }
        for (p, (off, _)) in f.params.iter().zip(&info.params) {
            if p.space == ast::ParamSpace::Param {
                params.insert(p.name.clone(), Sym::FrameParam(*off));
            }
        }
    }
    let mut fc = FnCtx {
        index,
        name: &f.name,
        is_kernel: info.is_kernel,
        scopes: vec![HashMap::new()],
        sym_scopes: vec![params],
        labels,
        branch_tables: HashMap::new(),
        loc: (0, 0),
        next_row: m.window_base,
        next_pred: 0,
        param_frame: info.param_frame as u64,
        local_frame: 0,
        slots: Vec::new(),
    };
    // `.reg` parameters and return values: registers the call fills and reads.
    let mut reg_rows = |ps: &[ast::Param], fc: &mut FnCtx<'_>| -> Vec<Option<u32>> {
        ps.iter()
            .map(|p| {
                if p.space != ast::ParamSpace::Reg {
                    return None;
                }
                let ty = ast_ty(p.ty).filter(|t| {
                    p.vector.is_none() && p.array_dims.is_empty() && *t != ScalarType::Pred
                });
                let Some(ty) = ty else {
                    m.diags.push(diag(
                        m.file,
                        p.span,
                        format!("unsupported: .reg parameter `{}` of this type", p.name),
                    ));
                    return None;
                };
                let row = fc.next_row;
                fc.next_row += 1;
                fc.slots.push(RegSlot {
                    name: p.name.clone(),
                    ty,
                    index: row,
                });
                if let Some(scope) = fc.scopes.last_mut() {
                    scope.insert(p.name.clone(), RegKind::Value(row, ty));
                }
                Some(row)
            })
            .collect()
    };
    let reg_returns = if info.is_kernel {
        Vec::new()
    } else {
        reg_rows(&f.returns, &mut fc)
    };
    let reg_params = if info.is_kernel {
        Vec::new()
    } else {
        reg_rows(&f.params, &mut fc)
    };
    decode_body(m, &mut fc, body);
    // Falling off the end of a body returns (ptxas does the same); a label
    // after the last instruction also lands here.
    let line = m
        .code
        .last()
        .filter(|i| i.func == index)
        .map_or(f.span.line, |i| i.line);
    m.code.push(Inst {
        op: if info.is_kernel { Op::Exit } else { Op::Ret },
        guard: Guard::Always,
        line,
        func: index,
        loc: fc.loc,
    });
    m.text.push("ret; // implicit, end of function".to_string());
    if fc.local_frame > MAX_LOCAL_BYTES || fc.param_frame > MAX_LOCAL_BYTES {
        m.diags.push(diag(
            m.file,
            f.span,
            format!(
                "unsupported: `{}` needs more than 512 KiB of local or parameter memory per thread",
                f.name
            ),
        ));
    }
    let fi = &mut m.funcs[index as usize];
    fi.entry_pc = entry_pc;
    fi.param_frame = align_up(fc.param_frame, 16) as u32;
    fi.local_frame = align_up(fc.local_frame, 16) as u32;
    fi.slots = fc.slots;
    fi.reg_params = reg_params;
    fi.reg_returns = reg_returns;
}

fn decode_body(m: &mut ModuleCtx<'_>, fc: &mut FnCtx<'_>, body: &[Statement]) {
    for s in body {
        match s {
            Statement::Reg(r) => declare_regs(m, fc, r),
            Statement::Var(v) => declare_var(m, fc, v),
            Statement::Scope(sc) => {
                fc.scopes.push(HashMap::new());
                fc.sym_scopes.push(HashMap::new());
                decode_body(m, fc, &sc.body);
                fc.scopes.pop();
                fc.sym_scopes.pop();
            }
            Statement::Instruction(inst) => {
                let func = fc.index;
                let (op, guard) = match decode_instruction(m, fc, inst) {
                    Ok(x) => x,
                    Err(msg) => {
                        m.diags.push(diag(m.file, inst.span, msg));
                        (Op::Trap, Guard::Always)
                    }
                };
                m.code.push(Inst {
                    op,
                    guard,
                    line: inst.span.line,
                    func,
                    loc: fc.loc,
                });
                m.text.push(crate::text::instruction(inst));
            }
            Statement::CallPrototype(_) => {}
            Statement::BranchTargets(b) => {
                let mut pcs = Vec::new();
                for l in &b.labels {
                    match fc.labels.get(l) {
                        Some(pc) => pcs.push(*pc),
                        None => m
                            .diags
                            .push(diag(m.file, b.span, format!("unknown label `{l}`"))),
                    }
                }
                fc.branch_tables
                    .insert(b.name.clone(), pcs.into_boxed_slice());
            }
            Statement::Loc(l) => fc.loc = (l.file, l.line),
            Statement::Label(_) | Statement::Pragma(_) => {}
        }
    }
}

fn declare_regs(m: &mut ModuleCtx<'_>, fc: &mut FnCtx<'_>, r: &ast::RegDecl) {
    let Some(ty) = ast_ty(r.ty) else {
        m.diags.push(diag(
            m.file,
            r.span,
            format!("unsupported register type {}", r.ty),
        ));
        return;
    };
    let lanes = r.vector.unwrap_or(1);
    if ty == ScalarType::B128
        || !matches!(lanes, 1 | 2 | 4)
        || (lanes > 1 && ty == ScalarType::Pred)
    {
        m.diags.push(diag(
            m.file,
            r.span,
            "unsupported: 128-bit registers or this vector register type",
        ));
        return;
    }
    for n in &r.names {
        let names: Vec<String> = match n.range {
            Some(k) => (0..k).map(|i| format!("{}{}", n.name, i)).collect(),
            None => vec![n.name.clone()],
        };
        for name in names {
            if lanes > 1 {
                let base = fc.next_row;
                fc.next_row += lanes;
                for (i, c) in ["x", "y", "z", "w"].iter().take(lanes as usize).enumerate() {
                    fc.slots.push(RegSlot {
                        name: format!("{name}.{c}"),
                        ty,
                        index: base + i as u32,
                    });
                }
                if let Some(scope) = fc.scopes.last_mut() {
                    scope.insert(name, RegKind::Vector(base, ty, lanes as u8));
                }
                continue;
            }
            let kind = if ty == ScalarType::Pred {
                fc.next_pred += 1;
                RegKind::Pred(fc.next_pred - 1)
            } else {
                fc.next_row += 1;
                RegKind::Value(fc.next_row - 1, ty)
            };
            let index = match kind {
                RegKind::Pred(i) => i,
                RegKind::Value(r, _) | RegKind::Vector(r, _, _) => r,
            };
            fc.slots.push(RegSlot {
                name: name.clone(),
                ty,
                index,
            });
            if let Some(scope) = fc.scopes.last_mut() {
                scope.insert(name, kind);
            }
        }
    }
}

fn declare_var(m: &mut ModuleCtx<'_>, fc: &mut FnCtx<'_>, v: &ast::VarDecl) {
    let size = var_size(v.ty, v.vector, &v.array_dims);
    let align = var_align(v.ty, v.vector, v.align) as u64;
    let sym = match v.space {
        StateSpace::Param => {
            fc.param_frame = align_up(fc.param_frame, align);
            let s = Sym::FrameParam(fc.param_frame as u32);
            fc.param_frame = fc.param_frame.saturating_add(size);
            s
        }
        StateSpace::Local => {
            fc.local_frame = align_up(fc.local_frame, align);
            let s = Sym::LocalFrame(fc.local_frame as u32);
            fc.local_frame = fc.local_frame.saturating_add(size);
            s
        }
        StateSpace::Shared => match m.body_shared.get(&(fc.name.to_string(), v.name.clone())) {
            Some(off) => Sym::Shared(*off),
            None => return,
        },
        StateSpace::Global | StateSpace::Const => {
            match m.body_globals.get(&(fc.name.to_string(), v.name.clone())) {
                Some(addr) => Sym::Global(*addr),
                None => return,
            }
        }
        _ => {
            m.diags.push(diag(
                m.file,
                v.span,
                format!(
                    "unsupported: {} variable inside a function",
                    v.space.as_str()
                ),
            ));
            return;
        }
    };
    if v.init.is_some()
        && !matches!(
            v.space,
            StateSpace::Shared | StateSpace::Global | StateSpace::Const
        )
    {
        m.diags.push(diag(
            m.file,
            v.span,
            "unsupported: initialized function-local variable",
        ));
    }
    if let Some(s) = fc.sym_scopes.last_mut() {
        s.insert(v.name.clone(), sym);
    }
}

/// Modifiers of one instruction, consumed as the decoder recognises them;
/// any left over make the instruction unsupported.
struct Mods<'a> {
    list: Vec<&'a str>,
    used: Vec<bool>,
}

impl<'a> Mods<'a> {
    fn new(inst: &'a ast::Instruction) -> Self {
        let list: Vec<&str> = inst.modifiers.iter().map(String::as_str).collect();
        let used = vec![false; list.len()];
        Mods { list, used }
    }
    fn take(&mut self, m: &str) -> bool {
        for (i, x) in self.list.iter().enumerate() {
            if !self.used[i] && *x == m {
                self.used[i] = true;
                return true;
            }
        }
        false
    }
    fn take_any(&mut self, options: &[&'static str]) -> Option<&'static str> {
        options.iter().copied().find(|o| self.take(o))
    }
    fn take_where(&mut self, f: impl Fn(&str) -> bool) -> Option<&'a str> {
        for (i, x) in self.list.iter().enumerate() {
            if !self.used[i] && f(x) {
                self.used[i] = true;
                return Some(x);
            }
        }
        None
    }
    fn take_type(&mut self) -> Option<ScalarType> {
        self.take_where(|m| ScalarType::parse(m).is_some() && m.starts_with('.'))
            .and_then(ScalarType::parse)
    }
    fn take_rounding(&mut self) -> Option<FloatRounding> {
        self.take_where(|m| FloatRounding::parse(m).is_some() && m.starts_with('.'))
            .and_then(FloatRounding::parse)
    }
    fn take_cmp(&mut self) -> Option<CmpOp> {
        self.take_where(|m| CmpOp::parse(m).is_some() && m.starts_with('.'))
            .and_then(CmpOp::parse)
    }
    /// Cache, ordering and scope qualifiers: no effect when warps run one at a time.
    fn take_memory_qualifiers(&mut self) {
        for (i, x) in self.list.iter().enumerate() {
            let ignorable = matches!(
                *x,
                ".nc"
                    | ".ca"
                    | ".cg"
                    | ".cs"
                    | ".lu"
                    | ".cv"
                    | ".wb"
                    | ".wt"
                    | ".volatile"
                    | ".relaxed"
                    | ".acquire"
                    | ".release"
                    | ".acq_rel"
                    | ".weak"
                    | ".gpu"
                    | ".cta"
                    | ".sys"
                    | ".sc"
                    | ".mmio"
            ) || ((x.starts_with(".L1::") || x.starts_with(".L2::"))
                && *x != ".L2::cache_hint");
            if ignorable {
                self.used[i] = true;
            }
        }
    }
    fn leftover(&self) -> Option<&'a str> {
        self.list
            .iter()
            .zip(&self.used)
            .find(|(_, u)| !**u)
            .map(|(m, _)| *m)
    }
}

type Decoded = (Op, Guard);

fn unsupported(inst: &ast::Instruction) -> String {
    format!(
        "unsupported instruction `{}{}`",
        inst.opcode,
        inst.modifiers.concat()
    )
}

fn decode_instruction(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
) -> Result<Decoded, String> {
    let guard = match &inst.guard {
        None => Guard::Always,
        Some(g) => match lookup_reg(fc, &g.register.name) {
            Some(RegKind::Pred(i)) => {
                if g.negated {
                    Guard::IfNot(i)
                } else {
                    Guard::If(i)
                }
            }
            _ => {
                return Err(format!(
                    "guard `{}` is not a declared predicate",
                    g.register.name
                ));
            }
        },
    };
    let mut mods = Mods::new(inst);
    let op = specialise(inst, decode_op(m, fc, inst, &mut mods)?);
    if let Some(extra) = mods.leftover() {
        return Err(format!(
            "{} (modifier `{extra}` is not supported)",
            unsupported(inst)
        ));
    }
    Ok((op, guard))
}

fn lookup_reg(fc: &FnCtx<'_>, name: &str) -> Option<RegKind> {
    fc.scopes.iter().rev().find_map(|s| s.get(name).copied())
}

/// A value register's row and type: a scalar register, or one component of
/// a vector register (`v.y`).
fn value_reg(fc: &FnCtx<'_>, r: &ast::Register) -> Option<(Row, ScalarType)> {
    match (lookup_reg(fc, &r.name)?, r.component) {
        (RegKind::Value(row, ty), None) => Some((row, ty)),
        (RegKind::Vector(base, ty, n), Some(c)) if c.index() < n as usize => {
            Some((base + c.index() as u32, ty))
        }
        _ => None,
    }
}

/// A whole vector register used as a vector operand (`ld.v4.f32 v, [a]`),
/// as the list of its components.
fn vector_components(fc: &FnCtx<'_>, op: &Operand) -> Option<Vec<Operand>> {
    let Operand::Register(r) = op else {
        return None;
    };
    match (lookup_reg(fc, &r.name)?, r.component) {
        (RegKind::Vector(_, _, n), None) => Some(
            [
                ast::Component::X,
                ast::Component::Y,
                ast::Component::Z,
                ast::Component::W,
            ]
            .iter()
            .take(n as usize)
            .map(|c| {
                Operand::Register(ast::Register {
                    name: r.name.clone(),
                    component: Some(*c),
                })
            })
            .collect(),
        ),
        _ => None,
    }
}

fn lookup_sym(m: &ModuleCtx<'_>, fc: &FnCtx<'_>, name: &str) -> Option<Sym> {
    if let Some(s) = fc
        .sym_scopes
        .iter()
        .rev()
        .find_map(|s| s.get(name).copied())
    {
        return Some(s);
    }
    if let Some(pc) = fc.labels.get(name) {
        return Some(Sym::Label(*pc));
    }
    m.syms.get(name).copied()
}

fn const_row(m: &mut ModuleCtx<'_>, bits: u64) -> Row {
    if let Some(i) = m.const_index.get(&bits) {
        return m.const_base + i;
    }
    let i = m.const_values.len() as u32;
    m.const_values.push(bits);
    m.const_index.insert(bits, i);
    m.const_base + i
}

fn special_row(reg: &ast::Register) -> Option<Row> {
    let c = reg.component.map(|c| c.index() as u32);
    let xyz = |base: u32| c.filter(|i| *i < 3).map(|i| base + i);
    Some(match reg.name.as_str() {
        "%tid" => xyz(sreg::TID)?,
        "%ntid" => xyz(sreg::NTID)?,
        "%ctaid" => xyz(sreg::CTAID)?,
        "%nctaid" => xyz(sreg::NCTAID)?,
        "%laneid" => sreg::LANEID,
        "%warpid" => sreg::WARPID,
        "%nwarpid" => sreg::NWARPID,
        "%smid" => sreg::SMID,
        "%nsmid" => sreg::NSMID,
        "%gridid" => sreg::GRIDID,
        "%lanemask_eq" => sreg::LANEMASK_EQ,
        "%lanemask_le" => sreg::LANEMASK_LE,
        "%lanemask_lt" => sreg::LANEMASK_LT,
        "%lanemask_ge" => sreg::LANEMASK_GE,
        "%lanemask_gt" => sreg::LANEMASK_GT,
        "%dynamic_smem_size" => sreg::DYNAMIC_SMEM_SIZE,
        "%total_smem_size" => sreg::TOTAL_SMEM_SIZE,
        n if n.starts_with("%envreg") || n.starts_with("%pm") => sreg::ZERO,
        _ => return None,
    })
}

fn timer_of(reg: &ast::Register) -> Option<TimeSource> {
    match reg.name.as_str() {
        "%clock" => Some(TimeSource::Clock32),
        "%clock64" => Some(TimeSource::Clock64),
        "%globaltimer" => Some(TimeSource::GlobalTimer),
        "%globaltimer_lo" => Some(TimeSource::GlobalTimerLo),
        "%globaltimer_hi" => Some(TimeSource::GlobalTimerHi),
        _ => None,
    }
}

/// A source operand as a row.
fn src(m: &mut ModuleCtx<'_>, fc: &FnCtx<'_>, op: &Operand, ty: ScalarType) -> Result<Row, String> {
    match op {
        Operand::Register(r) => match (value_reg(fc, r), lookup_reg(fc, &r.name)) {
            (Some((row, _)), _) => Ok(row),
            (_, Some(RegKind::Pred(_))) => Err(format!("predicate `{}` used as a value", r.name)),
            (_, Some(RegKind::Vector(..))) => Err(format!(
                "vector register `{}` needs a component (.x .y .z .w) here",
                r.name
            )),
            _ => special_row(r).ok_or_else(|| format!("unknown register `{}`", r.name)),
        },
        Operand::Immediate(imm) => Ok(const_row(m, imm_bits(*imm, ty))),
        Operand::Symbol(name) if name == "WARP_SZ" && lookup_sym(m, fc, name).is_none() => {
            // The predefined constant of the PTX ISA (warp size, 32).
            Ok(const_row(m, 32))
        }
        Operand::Symbol(name) => {
            let bits = match lookup_sym(m, fc, name) {
                Some(Sym::Global(a)) => a,
                Some(Sym::Shared(o)) => o as u64,
                Some(Sym::LocalStatic(o)) => o as u64,
                Some(Sym::Func(i)) if i != u32::MAX => FUNC_ADDR_BASE + i as u64,
                Some(Sym::KernelParam(o)) => crate::memory::PARAM_WINDOW + o as u64,
                Some(_) => return Err(format!("unsupported use of symbol `{name}` as a value")),
                None => return Err(format!("unknown symbol `{name}`")),
            };
            Ok(const_row(m, bits))
        }
        _ => Err("unsupported operand form".to_string()),
    }
}

fn dst(fc: &FnCtx<'_>, op: &Operand) -> Result<Row, String> {
    match op {
        Operand::Register(r) => match (value_reg(fc, r), lookup_reg(fc, &r.name)) {
            (Some((row, _)), _) => Ok(row),
            (_, Some(RegKind::Vector(..))) => Err(format!(
                "vector register `{}` needs a component (.x .y .z .w) here",
                r.name
            )),
            (_, Some(RegKind::Value(..))) => Err(format!("`{}` has no components", r.name)),
            (_, Some(RegKind::Pred(_))) => Err(format!(
                "predicate `{}` used as a value destination",
                r.name
            )),
            (_, None) => Err(format!("unknown destination register `{}`", r.name)),
        },
        Operand::Sink => Ok(sreg::SINK),
        _ => Err("unsupported destination operand".to_string()),
    }
}

fn reg_width(fc: &FnCtx<'_>, op: &Operand) -> Option<u32> {
    match op {
        Operand::Register(r) => match lookup_reg(fc, &r.name)? {
            RegKind::Value(_, ty) | RegKind::Vector(_, ty, _) => Some(ty.bits()),
            RegKind::Pred(_) => Some(1),
        },
        _ => None,
    }
}

fn pred_dst(fc: &FnCtx<'_>, op: &Operand) -> Result<Option<PredIx>, String> {
    match op {
        Operand::Register(r) => match lookup_reg(fc, &r.name) {
            Some(RegKind::Pred(i)) => Ok(Some(i)),
            _ => Err(format!("`{}` is not a predicate", r.name)),
        },
        Operand::Sink => Ok(None),
        _ => Err("expected a predicate destination".to_string()),
    }
}

fn pred_src(fc: &FnCtx<'_>, op: &Operand) -> Result<PredSrc, String> {
    match op {
        Operand::Register(r) => match lookup_reg(fc, &r.name) {
            Some(RegKind::Pred(i)) => Ok(PredSrc::Reg(i, false)),
            _ => Err(format!("`{}` is not a predicate", r.name)),
        },
        Operand::Not(r) => match lookup_reg(fc, &r.name) {
            Some(RegKind::Pred(i)) => Ok(PredSrc::Reg(i, true)),
            _ => Err(format!("`{}` is not a predicate", r.name)),
        },
        Operand::Immediate(ast::Immediate::Int(v)) => Ok(PredSrc::Const(*v != 0)),
        _ => Err("expected a predicate operand".to_string()),
    }
}

fn is_pred_operand(fc: &FnCtx<'_>, op: &Operand) -> bool {
    match op {
        Operand::Register(r) | Operand::Not(r) => {
            matches!(lookup_reg(fc, &r.name), Some(RegKind::Pred(_)))
        }
        _ => false,
    }
}

fn operands(inst: &ast::Instruction, n: usize) -> Result<&[Operand], String> {
    if inst.operands.len() != n {
        return Err(format!(
            "`{}` expects {n} operands, found {}",
            inst.opcode,
            inst.operands.len()
        ));
    }
    Ok(&inst.operands)
}

fn space_of(mods: &mut Mods<'_>) -> Result<Option<StateSpace>, String> {
    let s = match mods.take_any(&[
        ".global",
        ".shared",
        ".shared::cta",
        ".local",
        ".const",
        ".param",
        ".param::entry",
        ".param::func",
    ]) {
        Some(".global") => Some(StateSpace::Global),
        Some(".shared" | ".shared::cta") => Some(StateSpace::Shared),
        Some(".local") => Some(StateSpace::Local),
        Some(".const") => Some(StateSpace::Const),
        Some(_) => Some(StateSpace::Param),
        None => None,
    };
    if mods.take(".shared::cluster") {
        return Err("unsupported: .shared::cluster".into());
    }
    Ok(s)
}

/// An address operand in `space` (`None`: generic).
fn address(
    m: &mut ModuleCtx<'_>,
    fc: &FnCtx<'_>,
    op: &Operand,
    space: Option<StateSpace>,
) -> Result<(Space, Addr), String> {
    let ast::Operand::Address(a) = op else {
        return Err("expected an address operand `[…]`".into());
    };
    let mut sp = match space {
        None => Space::Generic,
        Some(StateSpace::Global) => Space::Global,
        Some(StateSpace::Const) => Space::Const,
        Some(StateSpace::Shared) => Space::Shared,
        Some(StateSpace::Local) => Space::Local,
        Some(StateSpace::Param) => {
            if fc.is_kernel {
                Space::KernelParam
            } else {
                Space::FrameParam
            }
        }
        Some(other) => return Err(format!("unsupported state space {}", other.as_str())),
    };
    let addr = match &a.base {
        ast::AddressBase::Register(r) => {
            let row = match value_reg(fc, r) {
                Some((row, _)) => row,
                _ => {
                    return Err(format!(
                        "address register `{}` is not a value register",
                        r.name
                    ));
                }
            };
            let base32 = reg_width(fc, &Operand::Register(r.clone())) == Some(32);
            Addr {
                base: Some(row),
                offset: a.offset,
                base32,
                frame: false,
            }
        }
        ast::AddressBase::Immediate(v) => Addr {
            base: None,
            offset: (*v as i64).wrapping_add(a.offset),
            base32: false,
            frame: false,
        },
        ast::AddressBase::Symbol(name) => {
            let sym = lookup_sym(m, fc, name).ok_or_else(|| format!("unknown symbol `{name}`"))?;
            let (abs, frame, implied) = match sym {
                Sym::Global(a) => (a as i64, false, None),
                Sym::Shared(o) => (o as i64, false, Some(Space::Shared)),
                Sym::LocalStatic(o) => (o as i64, false, Some(Space::Local)),
                Sym::LocalFrame(o) => (o as i64, true, Some(Space::Local)),
                Sym::KernelParam(o) => (o as i64, false, Some(Space::KernelParam)),
                Sym::FrameParam(o) => (o as i64, true, Some(Space::FrameParam)),
                Sym::Func(_) | Sym::Label(_) => return Err(format!("`{name}` is not a variable")),
            };
            if let Some(implied) = implied {
                // A `.param` symbol of the call sequence inside a kernel lives in the frame.
                if sp == Space::KernelParam && implied == Space::FrameParam {
                    sp = Space::FrameParam;
                } else if sp == Space::Generic {
                    return Err(format!(
                        "generic access to non-global symbol `{name}` is not supported"
                    ));
                } else if sp != implied {
                    return Err(format!("symbol `{name}` is not in the {} space", sp.name()));
                }
            }
            Addr {
                base: None,
                offset: abs.wrapping_add(a.offset),
                base32: false,
                frame,
            }
        }
    };
    if sp == Space::FrameParam && addr.base.is_some() {
        return Err("register-based .param addresses inside functions are not supported".into());
    }
    Ok((sp, addr))
}

fn fmode(mods: &mut Mods<'_>) -> FloatMode {
    let rounding = mods.take_rounding().unwrap_or_default();
    FloatMode {
        rounding,
        ftz: mods.take(".ftz"),
        sat: mods.take(".sat"),
        ..FloatMode::RN
    }
}

fn need_type(mods: &mut Mods<'_>, inst: &ast::Instruction) -> Result<ScalarType, String> {
    mods.take_type()
        .ok_or_else(|| format!("{}: missing type", unsupported(inst)))
}

fn decode_op(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    match inst.opcode.as_str() {
        "mov" => decode_mov(m, fc, inst, mods),
        "add" | "sub" if mods.list.contains(&".cc") => {
            mods.take(".cc");
            let ty = need_type(mods, inst)?;
            if ty.bits() < 32 || ty.is_float() {
                return Err(un());
            }
            let o = operands(inst, 3)?;
            Ok(Op::AddCarry {
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ty)?,
                sub: inst.opcode == "sub",
                cin: false,
                cout: true,
                wide: ty.bits() == 64,
            })
        }
        "addc" | "subc" => {
            let cout = mods.take(".cc");
            let ty = need_type(mods, inst)?;
            if ty.bits() < 32 || ty.is_float() {
                return Err(un());
            }
            let o = operands(inst, 3)?;
            Ok(Op::AddCarry {
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ty)?,
                sub: inst.opcode == "subc",
                cin: true,
                cout,
                wide: ty.bits() == 64,
            })
        }
        "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl"
        | "shr" | "copysign" => {
            let is_mul = inst.opcode == "mul";
            let wide = is_mul && mods.take(".wide");
            let hi = is_mul && mods.take(".hi");
            if is_mul {
                mods.take(".lo");
            }
            let approx = mods.take(".approx");
            let full = mods.take(".full");
            let propagate_nan = matches!(inst.opcode.as_str(), "min" | "max") && mods.take(".NaN");
            let mode = fmode(mods);
            let ty = need_type(mods, inst)?;
            if propagate_nan
                && !matches!(
                    ty,
                    ScalarType::F32
                        | ScalarType::F16
                        | ScalarType::F16x2
                        | ScalarType::BF16
                        | ScalarType::BF16x2
                )
            {
                return Err(un());
            }
            if ty == ScalarType::Pred {
                let o = operands(inst, 3)?;
                let op = match inst.opcode.as_str() {
                    "and" => BoolOp::And,
                    "or" => BoolOp::Or,
                    "xor" => BoolOp::Xor,
                    _ => return Err(un()),
                };
                return Ok(Op::PredLogic {
                    op: Some(op),
                    d: pred_dst(fc, &o[0])?.unwrap_or(m.pred_sink),
                    a: pred_src(fc, &o[1])?,
                    b: pred_src(fc, &o[2])?,
                });
            }
            if (approx || full) && !(inst.opcode == "div" && ty == ScalarType::F32) {
                return Err(un());
            }
            let f =
                select_binary(&inst.opcode, ty, mode, wide, hi, approx || full).ok_or_else(un)?;
            let o = operands(inst, 3)?;
            let mut ctx = AluCtx::new(ty);
            ctx.mode = mode;
            ctx.aux = propagate_nan as u32;
            ctx.div = if approx {
                crate::semantics::DivKind::Approx
            } else if full {
                crate::semantics::DivKind::Full
            } else {
                crate::semantics::DivKind::Ieee
            };
            let bty = if matches!(inst.opcode.as_str(), "shl" | "shr") {
                ScalarType::U32
            } else {
                ty
            };
            Ok(Op::Alu2 {
                f,
                ctx,
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], bty)?,
            })
        }
        "mad" | "madc" if inst.opcode == "madc" || mods.list.contains(&".cc") => {
            let cout = mods.take(".cc");
            let hi = mods.take(".hi");
            mods.take(".lo");
            let ty = need_type(mods, inst)?;
            if !matches!(
                ty,
                ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::S64
            ) {
                return Err(un());
            }
            let o = operands(inst, 4)?;
            Ok(Op::MadCarry {
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ty)?,
                c: src(m, fc, &o[3], ty)?,
                ty,
                hi,
                cin: inst.opcode == "madc",
                cout,
            })
        }
        "mul24" | "mad24" => {
            let hi = mods.take(".hi");
            mods.take(".lo");
            let ty = need_type(mods, inst)?;
            if !matches!(ty, ScalarType::U32 | ScalarType::S32) {
                return Err(un());
            }
            let ctx = AluCtx::new(ty);
            if inst.opcode == "mul24" {
                let o = operands(inst, 3)?;
                Ok(Op::Alu2 {
                    f: if hi { alu::mul24_hi } else { alu::mul24_lo },
                    ctx,
                    d: dst(fc, &o[0])?,
                    a: src(m, fc, &o[1], ty)?,
                    b: src(m, fc, &o[2], ty)?,
                })
            } else {
                let o = operands(inst, 4)?;
                Ok(Op::Alu3 {
                    f: if hi { alu::mad24_hi } else { alu::mad24_lo },
                    ctx,
                    d: dst(fc, &o[0])?,
                    a: src(m, fc, &o[1], ty)?,
                    b: src(m, fc, &o[2], ty)?,
                    c: src(m, fc, &o[3], ty)?,
                })
            }
        }
        "cp" => {
            if !mods.take(".async") {
                return Err(un());
            }
            if mods.take(".wait_all") || mods.take(".commit_group") {
                return Ok(Op::Nop);
            }
            if mods.take(".wait_group") {
                let _ = operands(inst, 1)?;
                return Ok(Op::Nop);
            }
            if mods.take_any(&[".ca", ".cg"]).is_none() {
                return Err(un());
            }
            let to_shared = mods.take(".shared") || mods.take(".shared::cta");
            if !to_shared || !mods.take(".global") {
                return Err(un());
            }
            mods.take_memory_qualifiers();
            if inst.operands.len() != 3 && inst.operands.len() != 4 {
                return Err(format!("{}: expects 3 or 4 operands", un()));
            }
            let o = &inst.operands;
            let (_, dst_addr) = address(m, fc, &o[0], Some(StateSpace::Shared))?;
            let (_, src_addr) = address(m, fc, &o[1], Some(StateSpace::Global))?;
            let size = match &o[2] {
                Operand::Immediate(ast::Immediate::Int(v)) if matches!(v, 4 | 8 | 16) => *v as u8,
                _ => return Err("cp.async size must be 4, 8 or 16".into()),
            };
            let src_size = match o.get(3) {
                Some(op) => Some(src(m, fc, op, ScalarType::U32)?),
                None => None,
            };
            Ok(Op::CpAsync {
                dst: dst_addr,
                src: src_addr,
                size,
                src_size,
            })
        }
        "ldmatrix" => {
            for m in [".sync", ".aligned", ".m8n8", ".b16"] {
                if !mods.take(m) {
                    return Err(un());
                }
            }
            let n = match mods.take_any(&[".x1", ".x2", ".x4"]) {
                Some(".x1") => 1,
                Some(".x2") => 2,
                Some(_) => 4,
                None => return Err(un()),
            };
            let trans = mods.take(".trans");
            if space_of(mods)? != Some(StateSpace::Shared) {
                return Err(un());
            }
            let o = operands(inst, 2)?;
            let (_, addr) = address(m, fc, &o[1], Some(StateSpace::Shared))?;
            let d = vector_rows(fc, &o[0], n, dst)?;
            Ok(Op::Ldmatrix { n, trans, d, addr })
        }
        "mma" => {
            for m in [".sync", ".aligned", ".row", ".col"] {
                if !mods.take(m) {
                    return Err(un());
                }
            }
            let k = match mods.take_any(&[".m16n8k16", ".m16n8k8"]) {
                Some(".m16n8k16") => 16,
                Some(_) => 8,
                None => return Err(un()),
            };
            let types: Vec<ScalarType> = (0..4).filter_map(|_| mods.take_type()).collect();
            let bf16 = match types.as_slice() {
                [
                    ScalarType::F32,
                    ScalarType::F16,
                    ScalarType::F16,
                    ScalarType::F32,
                ] => false,
                [
                    ScalarType::F32,
                    ScalarType::BF16,
                    ScalarType::BF16,
                    ScalarType::F32,
                ] => true,
                _ => return Err(un()),
            };
            let o = operands(inst, 4)?;
            let (na, nb) = if k == 16 { (4, 2) } else { (2, 1) };
            let d = vector_rows(fc, &o[0], 4, dst)?;
            let mut regs = |op: &Operand, n: usize| -> Result<[Row; 4], String> {
                let Operand::Vector(items) = op else {
                    return Err("mma operands must be register vectors".into());
                };
                if items.len() != n {
                    return Err("mma operand vector has the wrong length".into());
                }
                let mut rows = [sreg::ZERO; 4];
                for (i, it) in items.iter().enumerate() {
                    rows[i] = src(m, fc, it, ScalarType::B32)?;
                }
                Ok(rows)
            };
            let a = regs(&o[1], na)?;
            let b4 = regs(&o[2], nb)?;
            let c = regs(&o[3], 4)?;
            Ok(Op::Mma {
                k,
                bf16,
                d,
                a,
                b: [b4[0], b4[1]],
                c,
            })
        }
        "dp4a" | "dp2a" => {
            let hi = match (inst.opcode.as_str(), mods.take_any(&[".lo", ".hi"])) {
                ("dp2a", Some(".hi")) => 1,
                ("dp2a", Some(_)) => 0,
                ("dp4a", None) => 0,
                _ => return Err(un()),
            };
            let aty = need_type(mods, inst)?;
            let bty = need_type(mods, inst)?;
            let int32 = |t: ScalarType| matches!(t, ScalarType::U32 | ScalarType::S32);
            if !int32(aty) || !int32(bty) {
                return Err(un());
            }
            let o = operands(inst, 4)?;
            let mut ctx = AluCtx::new(aty);
            ctx.ty2 = bty;
            ctx.aux = hi;
            let cty = if aty == ScalarType::S32 || bty == ScalarType::S32 {
                ScalarType::S32
            } else {
                ScalarType::U32
            };
            Ok(Op::Alu3 {
                f: if inst.opcode == "dp4a" {
                    alu::dp4a
                } else {
                    alu::dp2a
                },
                ctx,
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], aty)?,
                b: src(m, fc, &o[2], bty)?,
                c: src(m, fc, &o[3], cty)?,
            })
        }
        "mad" | "fma" => {
            let wide = mods.take(".wide");
            let hi = mods.take(".hi");
            mods.take(".lo");
            let mode = fmode(mods);
            let ty = need_type(mods, inst)?;
            let f: Alu3Fn = match ty {
                ScalarType::F32
                | ScalarType::F64
                | ScalarType::F16
                | ScalarType::F16x2
                | ScalarType::BF16
                | ScalarType::BF16x2 => alu::fma_f,
                t if t.is_int() && inst.opcode == "mad" && !mode.sat => {
                    if wide {
                        if t.bits() > 32 {
                            return Err(un());
                        }
                        alu::mad_wide
                    } else if hi {
                        alu::mad_hi
                    } else if t.bits() == 32 {
                        alu::mad_lo_b32
                    } else {
                        alu::mad_lo
                    }
                }
                _ => return Err(un()),
            };
            let o = operands(inst, 4)?;
            let cty = if wide { wide_of(ty) } else { ty };
            let mut ctx = AluCtx::new(ty);
            ctx.mode = mode;
            Ok(Op::Alu3 {
                f,
                ctx,
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ty)?,
                c: src(m, fc, &o[3], cty)?,
            })
        }
        "neg" | "abs" | "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" | "sqrt" | "rcp"
        | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" => {
            let approx = mods.take(".approx");
            let full = mods.take(".full");
            let shiftamt = mods.take(".shiftamt");
            let mode = fmode(mods);
            let ty = need_type(mods, inst)?;
            if ty == ScalarType::Pred && inst.opcode == "not" {
                let o = operands(inst, 2)?;
                return Ok(Op::PredLogic {
                    op: None,
                    d: pred_dst(fc, &o[0])?.unwrap_or(m.pred_sink),
                    a: match pred_src(fc, &o[1])? {
                        PredSrc::Reg(i, n) => PredSrc::Reg(i, !n),
                        PredSrc::Const(c) => PredSrc::Const(!c),
                    },
                    b: PredSrc::Const(false),
                });
            }
            let f = select_unary(&inst.opcode, ty, mode, approx, full).ok_or_else(un)?;
            let o = operands(inst, 2)?;
            let mut ctx = AluCtx::new(ty);
            ctx.mode = mode;
            ctx.aux = shiftamt as u32;
            if approx {
                ctx.div = crate::semantics::DivKind::Approx;
            }
            Ok(Op::Alu1 {
                f,
                ctx,
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
            })
        }
        "bfe" => {
            let ty = need_type(mods, inst)?;
            if !ty.is_int() || ty.bits() < 32 {
                return Err(un());
            }
            let o = operands(inst, 4)?;
            Ok(Op::Alu3 {
                f: alu::bfe,
                ctx: AluCtx::new(ty),
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ScalarType::U32)?,
                c: src(m, fc, &o[3], ScalarType::U32)?,
            })
        }
        "bfi" => {
            let ty = need_type(mods, inst)?;
            if ty.bits() < 32 || ty.is_float() {
                return Err(un());
            }
            let o = operands(inst, 5)?;
            Ok(Op::Bfi {
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ty)?,
                pos: src(m, fc, &o[3], ScalarType::U32)?,
                len: src(m, fc, &o[4], ScalarType::U32)?,
                wide: ty.bits() == 64,
            })
        }
        "prmt" => {
            let mode = mods
                .take_any(&[".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"])
                .and_then(crate::semantics::PrmtMode::parse)
                .unwrap_or(crate::semantics::PrmtMode::Generic);
            let ty = need_type(mods, inst)?;
            if ty != ScalarType::B32 {
                return Err(un());
            }
            let o = operands(inst, 4)?;
            let mut ctx = AluCtx::new(ty);
            ctx.prmt = mode;
            Ok(Op::Alu3 {
                f: alu::prmt,
                ctx,
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ty)?,
                c: src(m, fc, &o[3], ty)?,
            })
        }
        "shf" => {
            let right = match mods.take_any(&[".l", ".r"]) {
                Some(".r") => 1,
                Some(_) => 0,
                None => return Err(un()),
            };
            let clamp = match mods.take_any(&[".wrap", ".clamp"]) {
                Some(".clamp") => 2,
                Some(_) => 0,
                None => return Err(un()),
            };
            let ty = need_type(mods, inst)?;
            if ty != ScalarType::B32 {
                return Err(un());
            }
            let o = operands(inst, 4)?;
            let mut ctx = AluCtx::new(ty);
            ctx.aux = right | clamp;
            Ok(Op::Alu3 {
                f: alu::shf,
                ctx,
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ty)?,
                c: src(m, fc, &o[3], ScalarType::U32)?,
            })
        }
        "lop3" => {
            let ty = need_type(mods, inst)?;
            let o = operands(inst, 5)?;
            let lut = match &o[4] {
                Operand::Immediate(ast::Immediate::Int(v)) if (0..=255).contains(v) => *v as u32,
                _ => return Err("lop3 truth table must be an immediate 0..255".into()),
            };
            if ty != ScalarType::B32 {
                return Err(un());
            }
            let mut ctx = AluCtx::new(ty);
            ctx.aux = lut;
            Ok(Op::Alu3 {
                f: alu::lop3,
                ctx,
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ty)?,
                c: src(m, fc, &o[3], ty)?,
            })
        }
        "sad" => {
            let ty = need_type(mods, inst)?;
            if !ty.is_int() {
                return Err(un());
            }
            let o = operands(inst, 4)?;
            Ok(Op::Alu3 {
                f: alu::sad,
                ctx: AluCtx::new(ty),
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ty)?,
                c: src(m, fc, &o[3], ty)?,
            })
        }
        "testp" => {
            let which = match mods.take_any(&[
                ".finite",
                ".infinite",
                ".number",
                ".notanumber",
                ".normal",
                ".subnormal",
            ]) {
                Some(".finite") => 0,
                Some(".infinite") => 1,
                Some(".number") => 2,
                Some(".notanumber") => 3,
                Some(".normal") => 4,
                Some(_) => 5,
                None => return Err(un()),
            };
            let ty = need_type(mods, inst)?;
            if !matches!(ty, ScalarType::F32 | ScalarType::F64) {
                return Err(un());
            }
            let o = operands(inst, 2)?;
            let mut ctx = AluCtx::new(ty);
            ctx.aux = which;
            let a = src(m, fc, &o[1], ty)?;
            Ok(Op::Setp {
                f: alu::testp,
                ctx,
                d: pred_dst(fc, &o[0])?,
                dn: None,
                a,
                b: a,
                combine: None,
            })
        }
        "setp" => compare::decode_setp(m, fc, inst, mods),
        "set" => compare::decode_set(m, fc, inst, mods),
        "selp" => compare::decode_selp(m, fc, inst, mods),
        "slct" => compare::decode_slct(m, fc, inst, mods),
        "bmsk" | "szext" => bitfield::decode(m, fc, inst, mods),
        "cvt" => convert::decode_cvt(m, fc, inst, mods),
        "cvta" => {
            let to = mods.take(".to");
            let space = match space_of(mods)? {
                Some(StateSpace::Global) => Space::Global,
                Some(StateSpace::Shared) => Space::Shared,
                Some(StateSpace::Local) => Space::Local,
                Some(StateSpace::Const) => Space::Const,
                Some(StateSpace::Param) if fc.is_kernel => Space::KernelParam,
                _ => return Err(un()),
            };
            let ty = need_type(mods, inst)?;
            if !matches!(
                ty,
                ScalarType::U64
                    | ScalarType::U32
                    | ScalarType::B64
                    | ScalarType::B32
                    | ScalarType::S64
            ) {
                return Err(un());
            }
            let o = operands(inst, 2)?;
            if let Operand::Symbol(name) = &o[1]
                && let Some(Sym::LocalFrame(_)) = lookup_sym(m, fc, name)
            {
                return Err("cvta of a frame-local symbol: load its address with mov first".into());
            }
            Ok(Op::Cvta {
                to_generic: !to,
                space,
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                a32: reg_width(fc, &o[1]) == Some(32) || ty.bits() == 32,
            })
        }
        "isspacep" => {
            let space = match space_of(mods)? {
                Some(StateSpace::Global) => Space::Global,
                Some(StateSpace::Shared) => Space::Shared,
                Some(StateSpace::Local) => Space::Local,
                Some(StateSpace::Const) => Space::Const,
                Some(StateSpace::Param) => Space::KernelParam,
                _ => return Err(un()),
            };
            let o = operands(inst, 2)?;
            Ok(Op::Isspacep {
                space,
                d: pred_dst(fc, &o[0])?.unwrap_or(m.pred_sink),
                a: src(m, fc, &o[1], ScalarType::U64)?,
            })
        }
        "ld" | "ldu" => {
            mods.take_memory_qualifiers();
            let space = space_of(mods)?;
            let n = vec_count(mods);
            let ty = need_type(mods, inst)?;
            if ty == ScalarType::B128 || ty == ScalarType::Pred {
                return Err(un());
            }
            let o = operands(inst, 2)?;
            let (sp, addr) = address(m, fc, &o[1], space)?;
            let d = vector_rows(fc, &o[0], n, dst)?;
            Ok(Op::Ld {
                space: sp,
                size: ty.size_bytes() as u8,
                signed: ty.is_signed_int(),
                n,
                d,
                addr,
            })
        }
        "st" => {
            mods.take_memory_qualifiers();
            let space = space_of(mods)?;
            let n = vec_count(mods);
            let ty = need_type(mods, inst)?;
            if ty == ScalarType::B128 || ty == ScalarType::Pred {
                return Err(un());
            }
            let o = operands(inst, 2)?;
            let (sp, addr) = address(m, fc, &o[0], space)?;
            if sp == Space::KernelParam || sp == Space::Const {
                return Err(format!("{}: the {} space is read-only", un(), sp.name()));
            }
            let mut rows = [sreg::ZERO; 4];
            let whole = vector_components(fc, &o[1]).map(Operand::Vector);
            match whole.as_ref().unwrap_or(&o[1]) {
                Operand::Vector(items) if items.len() == n as usize => {
                    for (i, it) in items.iter().enumerate() {
                        rows[i] = src(m, fc, it, ty)?;
                    }
                }
                single if n == 1 => rows[0] = src(m, fc, single, ty)?,
                _ => return Err("vector width does not match the operand list".into()),
            }
            Ok(Op::St {
                space: sp,
                size: ty.size_bytes() as u8,
                n,
                s: rows,
                addr,
            })
        }
        "atom" | "red" => decode_atom(m, fc, inst, mods),
        "bra" => {
            mods.take(".uni");
            let o = operands(inst, 1)?;
            match &o[0] {
                Operand::Symbol(l) => match fc.labels.get(l) {
                    Some(pc) => Ok(Op::Bra { target: *pc }),
                    None => Err(format!("unknown label `{l}`")),
                },
                _ => Err("branch target must be a label".into()),
            }
        }
        "brx" => {
            if !mods.take(".idx") {
                return Err(un());
            }
            mods.take(".uni");
            let o = operands(inst, 2)?;
            let Operand::Symbol(table) = &o[1] else {
                return Err("brx.idx needs a .branchtargets label".into());
            };
            let targets = fc
                .branch_tables
                .get(table)
                .cloned()
                .ok_or_else(|| format!("unknown .branchtargets `{table}`"))?;
            Ok(Op::BrxIdx {
                index: src(m, fc, &o[0], ScalarType::U32)?,
                targets,
            })
        }
        "call" => decode_call(m, fc, inst, mods),
        "ret" => {
            mods.take(".uni");
            Ok(if fc.is_kernel { Op::Exit } else { Op::Ret })
        }
        "exit" => Ok(Op::Exit),
        "trap" | "brkpt" => Ok(Op::Trap),
        "membar" | "fence" => {
            mods.take_memory_qualifiers();
            mods.take_any(&[".gl", ".cta", ".sys"]);
            if mods.take_where(|m| m.starts_with(".proxy")).is_some() {
                mods.take_where(|m| m.starts_with('.'));
            }
            Ok(Op::Nop)
        }
        "nanosleep" | "prefetch" | "prefetchu" | "pmevent" => {
            for i in 0..mods.used.len() {
                mods.used[i] = true;
            }
            Ok(Op::Nop)
        }
        "bar" | "barrier" => decode_bar(m, fc, inst, mods),
        "shfl" => {
            if !mods.take(".sync") {
                return Err(format!("{}: only shfl.sync is supported", un()));
            }
            let mode = match mods.take_any(&[".up", ".down", ".bfly", ".idx"]) {
                Some(".up") => ShflMode::Up,
                Some(".down") => ShflMode::Down,
                Some(".bfly") => ShflMode::Bfly,
                Some(_) => ShflMode::Idx,
                None => return Err(un()),
            };
            let ty = need_type(mods, inst)?;
            if ty != ScalarType::B32 {
                return Err(un());
            }
            let o = operands(inst, 5)?;
            let (d, dp) = match &o[0] {
                Operand::PredicatePair(r, p) => (
                    dst(fc, &Operand::Register(r.clone()))?,
                    pred_dst(fc, &Operand::Register(p.clone()))?,
                ),
                other => (dst(fc, other)?, None),
            };
            Ok(Op::Shfl {
                mode,
                d,
                dp,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ScalarType::U32)?,
                c: src(m, fc, &o[3], ScalarType::U32)?,
                mask: src(m, fc, &o[4], ScalarType::U32)?,
            })
        }
        "vote" => {
            let sync = mods.take(".sync");
            let mode = match mods.take_any(&[".all", ".any", ".uni", ".ballot"]) {
                Some(".all") => VoteMode::All,
                Some(".any") => VoteMode::Any,
                Some(".uni") => VoteMode::Uni,
                Some(_) => VoteMode::Ballot,
                None => return Err(un()),
            };
            let ty = need_type(mods, inst)?;
            let o = operands(inst, if sync { 3 } else { 2 })?;
            let mask = if sync {
                src(m, fc, &o[2], ScalarType::U32)?
            } else {
                const_row(m, 0xffff_ffff)
            };
            let (d, dp) = if mode == VoteMode::Ballot {
                if ty != ScalarType::B32 {
                    return Err(un());
                }
                (Some(dst(fc, &o[0])?), None)
            } else {
                if ty != ScalarType::Pred {
                    return Err(un());
                }
                (None, pred_dst(fc, &o[0])?)
            };
            Ok(Op::Vote {
                mode,
                d,
                dp,
                p: pred_src(fc, &o[1])?,
                mask,
            })
        }
        "activemask" => {
            let ty = need_type(mods, inst)?;
            if ty != ScalarType::B32 {
                return Err(un());
            }
            let o = operands(inst, 1)?;
            Ok(Op::Activemask { d: dst(fc, &o[0])? })
        }
        "match" => {
            let all = match mods.take_any(&[".any", ".all"]) {
                Some(".all") => true,
                Some(_) => false,
                None => return Err(un()),
            };
            if !mods.take(".sync") {
                return Err(un());
            }
            let ty = need_type(mods, inst)?;
            if !matches!(ty, ScalarType::B32 | ScalarType::B64) {
                return Err(un());
            }
            let o = operands(inst, 3)?;
            let (d, dp) = match &o[0] {
                Operand::PredicatePair(r, p) => (
                    dst(fc, &Operand::Register(r.clone()))?,
                    pred_dst(fc, &Operand::Register(p.clone()))?,
                ),
                other => (dst(fc, other)?, None),
            };
            if dp.is_some() && !all {
                return Err(un());
            }
            Ok(Op::Match {
                all,
                wide: ty == ScalarType::B64,
                d,
                dp,
                a: src(m, fc, &o[1], ty)?,
                mask: src(m, fc, &o[2], ScalarType::U32)?,
            })
        }
        "redux" => {
            if !mods.take(".sync") {
                return Err(un());
            }
            let op = match mods.take_any(&[".add", ".min", ".max", ".and", ".or", ".xor"]) {
                Some(".add") => ReduxOp::Add,
                Some(".min") => ReduxOp::Min,
                Some(".max") => ReduxOp::Max,
                Some(".and") => ReduxOp::And,
                Some(".or") => ReduxOp::Or,
                Some(_) => ReduxOp::Xor,
                None => return Err(un()),
            };
            let ty = need_type(mods, inst)?;
            if !matches!(ty, ScalarType::U32 | ScalarType::S32 | ScalarType::B32) {
                return Err(un());
            }
            let o = operands(inst, 3)?;
            Ok(Op::Redux {
                op,
                signed: ty == ScalarType::S32,
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                mask: src(m, fc, &o[2], ScalarType::U32)?,
            })
        }
        _ => Err(un()),
    }
}

fn wide_of(ty: ScalarType) -> ScalarType {
    match ty {
        ScalarType::S16 => ScalarType::S32,
        ScalarType::U16 => ScalarType::U32,
        ScalarType::S32 => ScalarType::S64,
        _ => ScalarType::U64,
    }
}

fn vec_count(mods: &mut Mods<'_>) -> u8 {
    match mods.take_any(&[".v2", ".v4"]) {
        Some(".v2") => 2,
        Some(_) => 4,
        None => 1,
    }
}

fn vector_rows(
    fc: &FnCtx<'_>,
    op: &Operand,
    n: u8,
    f: impl Fn(&FnCtx<'_>, &Operand) -> Result<Row, String>,
) -> Result<[Row; 4], String> {
    let mut rows = [sreg::SINK; 4];
    let whole = vector_components(fc, op).map(Operand::Vector);
    match whole.as_ref().unwrap_or(op) {
        Operand::Vector(items) if items.len() == n as usize => {
            for (i, it) in items.iter().enumerate() {
                rows[i] = f(fc, it)?;
            }
        }
        single if n == 1 => rows[0] = f(fc, single)?,
        _ => return Err("vector width does not match the operand list".into()),
    }
    Ok(rows)
}

fn select_binary(
    opcode: &str,
    ty: ScalarType,
    mode: FloatMode,
    wide: bool,
    hi: bool,
    approx: bool,
) -> Option<Alu2Fn> {
    use ScalarType::*;
    let rn = mode.rounding == FloatRounding::Rn;
    let plain = rn && !mode.ftz && !mode.sat;
    if ty.is_int() || ty.is_bits() {
        if mode.ftz || (mode.sat && !(ty == S32 && matches!(opcode, "add" | "sub"))) || approx {
            return None;
        }
        if ty == B128 {
            return None;
        }
        let bits_ok = ty.is_bits();
        return Some(match opcode {
            "add" if mode.sat => alu::add_sat_s32,
            "sub" if mode.sat => alu::sub_sat_s32,
            "add" if ty.bits() == 32 => alu::add_b32,
            "add" if ty.bits() == 64 => alu::add_b64,
            "add" => alu::add_int,
            "sub" if ty.bits() == 32 => alu::sub_b32,
            "sub" if ty.bits() == 64 => alu::sub_b64,
            "sub" => alu::sub_int,
            "mul" if bits_ok => return None,
            "mul" if wide => {
                if ty.bits() > 32 {
                    return None;
                }
                alu::mul_wide
            }
            "mul" if hi => alu::mul_hi,
            "mul" if ty.bits() == 32 => alu::mul_lo_b32,
            "mul" => alu::mul_lo,
            "div" if !bits_ok => alu::div_int,
            "rem" if !bits_ok => alu::rem_int,
            "min" if !bits_ok => alu::min_int,
            "max" if !bits_ok => alu::max_int,
            "and" if bits_ok => alu::and,
            "or" if bits_ok => alu::or,
            "xor" if bits_ok => alu::xor,
            "shl" if bits_ok => alu::shl,
            "shr" => alu::shr,
            _ => return None,
        });
    }
    if !matches!(ty, F32 | F64 | F16 | F16x2 | BF16 | BF16x2) {
        return None;
    }
    let wide = matches!(ty, F32 | F64);
    let _ = (rn, plain);
    Some(match opcode {
        "add" => alu::add_f,
        "sub" => alu::sub_f,
        "mul" => alu::mul_f,
        "div" if wide => alu::div_f,
        "min" if !mode.sat => alu::min_f,
        "max" if !mode.sat => alu::max_f,
        "copysign" if wide && !mode.sat && !mode.ftz => alu::copysign_f,
        _ => return None,
    })
}

fn select_unary(
    opcode: &str,
    ty: ScalarType,
    mode: FloatMode,
    approx: bool,
    full: bool,
) -> Option<Alu1Fn> {
    use ScalarType::*;
    let rn = mode.rounding == FloatRounding::Rn;
    if ty.is_int() || ty.is_bits() {
        if mode.ftz || mode.sat || approx || full || ty == B128 {
            return None;
        }
        let signed = ty.is_signed_int();
        return Some(match opcode {
            "neg" if signed => alu::neg_int,
            "abs" if signed => alu::abs_int,
            "not" if ty.is_bits() => alu::not,
            "cnot" if ty.is_bits() => alu::cnot,
            "popc" if ty.is_bits() && ty.bits() >= 32 => alu::popc,
            "clz" if ty.is_bits() && ty.bits() >= 32 => alu::clz,
            "brev" if ty.is_bits() && ty.bits() >= 32 => alu::brev,
            "bfind" if ty.is_int() && ty.bits() >= 32 => alu::bfind,
            _ => return None,
        });
    }
    let _ = full;
    if !matches!(ty, F32 | F64 | F16 | F16x2 | BF16 | BF16x2) || mode.sat {
        return None;
    }
    let half = !matches!(ty, F32 | F64);
    Some(match opcode {
        "neg" if rn => alu::neg_f,
        "abs" if rn => alu::abs_f,
        "sqrt" if !half => alu::sqrt_f,
        "rcp" if !half => alu::rcp_f,
        "rsqrt" if approx && !half => alu::rsqrt_f,
        "sin" if approx && ty == F32 => alu::sin_f,
        "cos" if approx && ty == F32 => alu::cos_f,
        "lg2" if approx && ty == F32 => alu::lg2_f,
        "ex2" if approx && ty != F64 => alu::ex2_f,
        "tanh" if approx && ty != F64 => alu::tanh_f,
        _ => return None,
    })
}

fn decode_mov(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let ty = need_type(mods, inst)?;
    let o = operands(inst, 2)?;
    if ty == ScalarType::Pred {
        return Ok(Op::PredLogic {
            op: None,
            d: pred_dst(fc, &o[0])?.unwrap_or(m.pred_sink),
            a: pred_src(fc, &o[1])?,
            b: PredSrc::Const(false),
        });
    }
    // Pack / unpack.
    if let Operand::Vector(items) = &o[1] {
        let n = items.len();
        if !(2..=4).contains(&n) || ty.bits() % n as u32 != 0 {
            return Err(unsupported(inst));
        }
        let width = (ty.bits() / n as u32) as u8;
        let pty = bits_type(width as u32);
        let mut s = [sreg::ZERO; 4];
        for (i, it) in items.iter().enumerate() {
            s[i] = src(m, fc, it, pty)?;
        }
        return Ok(Op::Pack {
            d: dst(fc, &o[0])?,
            s,
            n: n as u8,
            width,
        });
    }
    if let Operand::Vector(items) = &o[0] {
        let n = items.len();
        if !(2..=4).contains(&n) || ty.bits() % n as u32 != 0 {
            return Err(unsupported(inst));
        }
        let d = vector_rows(fc, &o[0], n as u8, dst)?;
        return Ok(Op::Unpack {
            d,
            n: n as u8,
            width: (ty.bits() / n as u32) as u8,
            a: src(m, fc, &o[1], ty)?,
        });
    }
    let d = dst(fc, &o[0])?;
    if let Operand::Register(r) = &o[1] {
        if let Some(which) = timer_of(r) {
            return Ok(Op::Timer { d, which });
        }
        if let Some(RegKind::Pred(i)) = lookup_reg(fc, &r.name) {
            return Ok(Op::PredToReg {
                d,
                p: PredSrc::Reg(i, false),
            });
        }
    }
    if let Operand::Symbol(name) = &o[1]
        && let Some(Sym::LocalFrame(off)) = lookup_sym(m, fc, name)
    {
        return Ok(Op::LocalAddr { d, offset: off });
    }
    if let Operand::Symbol(name) = &o[1]
        && let Some(Sym::FrameParam(_)) = lookup_sym(m, fc, name)
    {
        return Err(format!(
            "unsupported: taking the address of .param symbol `{name}` in a function"
        ));
    }
    Ok(Op::Mov {
        d,
        a: src(m, fc, &o[1], ty)?,
    })
}

fn bits_type(bits: u32) -> ScalarType {
    match bits {
        8 => ScalarType::B8,
        16 => ScalarType::B16,
        32 => ScalarType::B32,
        _ => ScalarType::B64,
    }
}

fn decode_atom(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let is_red = inst.opcode == "red";
    mods.take_memory_qualifiers();
    let space = space_of(mods)?;
    let op = mods
        .take_where(|m| AtomOp::parse(m).is_some() && m.starts_with('.'))
        .and_then(AtomOp::parse)
        .ok_or_else(|| unsupported(inst))?;
    mods.take(".noftz");
    let ty = need_type(mods, inst)?;
    let ok = op.supports(ty) && ty != ScalarType::B128;
    if !ok {
        return Err(unsupported(inst));
    }
    let n = match (is_red, op) {
        (true, _) => 2,
        (false, AtomOp::Cas) => 4,
        (false, _) => 3,
    };
    let o = operands(inst, n)?;
    let (d, rest) = if is_red {
        (None, o)
    } else {
        (Some(dst(fc, &o[0])?), &o[1..])
    };
    let (sp, addr) = address(m, fc, &rest[0], space)?;
    if !matches!(sp, Space::Global | Space::Shared | Space::Generic) {
        return Err(format!(
            "{}: atomics on the {} space",
            unsupported(inst),
            sp.name()
        ));
    }
    let b = src(m, fc, &rest[1], ty)?;
    let c = if op == AtomOp::Cas && !is_red {
        src(m, fc, &rest[2], ty)?
    } else {
        sreg::ZERO
    };
    Ok(Op::Atom {
        space: sp,
        op,
        ty,
        d,
        addr,
        b,
        c,
    })
}

fn decode_call(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    mods.take(".uni");
    let call = inst.as_call().ok_or("malformed call")?;
    // Immediate arguments take the width of the callee's parameter.
    let callee_params: Vec<(u32, u32)> = match call.target {
        Operand::Symbol(name) => match m.syms.get(name) {
            Some(Sym::Func(i)) if *i != u32::MAX => m.funcs[*i as usize].params.clone(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let mut slot = |op: &Operand, k: usize, is_ret: bool| -> Result<CallSlot, String> {
        match op {
            Operand::Symbol(s) => match lookup_sym(m, fc, s) {
                Some(Sym::FrameParam(off)) => Ok(CallSlot::Frame(off)),
                _ => Err(format!(
                    "call argument `{s}` is not a .param variable or register"
                )),
            },
            Operand::Register(r) if is_ret => {
                dst(fc, &Operand::Register(r.clone())).map(CallSlot::Reg)
            }
            Operand::Register(_) => src(m, fc, op, ScalarType::B64).map(CallSlot::Reg),
            Operand::Immediate(imm) if !is_ret => {
                let bytes = callee_params.get(k).map_or(8, |p| p.1);
                Ok(CallSlot::Reg(const_row(
                    m,
                    imm_bits(*imm, bits_type(bytes * 8)),
                )))
            }
            _ => Err("unsupported call argument".into()),
        }
    };
    let args = call
        .args
        .iter()
        .enumerate()
        .map(|(k, op)| slot(op, k, false))
        .collect::<Result<Vec<_>, _>>()?;
    let rets = call
        .returns
        .iter()
        .enumerate()
        .map(|(k, op)| slot(op, k, true))
        .collect::<Result<Vec<_>, _>>()?;
    if rets
        .iter()
        .filter(|s| matches!(s, CallSlot::Reg(_)))
        .count()
        > 8
    {
        return Err("unsupported: more than 8 register return values".into());
    }
    let frame_only = |slots: &[CallSlot]| -> Option<Vec<u32>> {
        slots
            .iter()
            .map(|s| match s {
                CallSlot::Frame(o) => Some(*o),
                CallSlot::Reg(_) => None,
            })
            .collect()
    };
    let target = match call.target {
        Operand::Symbol(name) => {
            let callee = match m.syms.get(name) {
                Some(Sym::Func(i)) if *i != u32::MAX => *i,
                Some(Sym::Func(_)) => {
                    let (Some(args), Some(rets)) = (frame_only(&args), frame_only(&rets)) else {
                        return Err(format!(
                            "unsupported: register arguments to external function `{name}`"
                        ));
                    };
                    return match (name.as_str(), args.as_slice(), rets.as_slice()) {
                        ("vprintf", [fmt, a], r) if r.len() <= 1 => Ok(Op::Vprintf {
                            fmt: *fmt,
                            args: *a,
                            ret: r.first().copied(),
                        }),
                        ("__assertfail", [message, file, line, ..], _) => Ok(Op::AssertFail {
                            message: *message,
                            file: *file,
                            line: *line,
                        }),
                        _ => Err(format!(
                            "unsupported: call to external function `{name}` (no body in this module)"
                        )),
                    };
                }
                _ => return Err(format!("unknown function `{name}`")),
            };
            let cinfo = &m.funcs[callee as usize];
            if cinfo.is_kernel {
                return Err("unsupported: calling a kernel".into());
            }
            if args.len() != cinfo.params.len() || rets.len() != cinfo.returns.len() {
                return Err(format!(
                    "call to `{name}` passes the wrong number of arguments or returns"
                ));
            }
            CallTarget::Direct(callee)
        }
        Operand::Register(r) => match value_reg(fc, r) {
            Some((row, _)) => CallTarget::Indirect {
                row,
                params: args.len() as u32,
                returns: rets.len() as u32,
            },
            _ => {
                return Err(format!(
                    "indirect call target `{}` is not a value register",
                    r.name
                ));
            }
        },
        _ => return Err("unsupported call target".into()),
    };
    Ok(Op::Call(Box::new(CallInfo { target, args, rets })))
}

fn decode_bar(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    if inst.opcode == "bar" && mods.take(".warp") {
        if !mods.take(".sync") {
            return Err(unsupported(inst));
        }
        let o = operands(inst, 1)?;
        return Ok(Op::WarpSync {
            mask: src(m, fc, &o[0], ScalarType::B32)?,
        });
    }
    mods.take(".aligned");
    let kind = match mods.take_any(&[".sync", ".arrive", ".red"]) {
        Some(".sync") => BarKind::Sync,
        Some(".arrive") => BarKind::Arrive,
        Some(_) => match mods.take_any(&[".popc", ".and", ".or"]) {
            Some(".popc") => BarKind::RedPopc,
            Some(".and") => BarKind::RedAnd,
            Some(_) => BarKind::RedOr,
            None => return Err(unsupported(inst)),
        },
        None if inst.opcode == "bar" && inst.modifiers.is_empty() => BarKind::Sync,
        None => return Err(unsupported(inst)),
    };
    mods.take(".aligned");
    let o = &inst.operands;
    let mut d = None;
    let mut dp = None;
    let mut p = PredSrc::Const(true);
    let rest: &[Operand] = match kind {
        BarKind::RedPopc => {
            if !mods.take(".u32") {
                return Err(unsupported(inst));
            }
            if o.len() < 3 {
                return Err("bar.red needs a destination, a barrier and a predicate".into());
            }
            d = Some(dst(fc, &o[0])?);
            p = pred_src(fc, &o[o.len() - 1])?;
            &o[1..o.len() - 1]
        }
        BarKind::RedAnd | BarKind::RedOr => {
            if !mods.take(".pred") {
                return Err(unsupported(inst));
            }
            if o.len() < 3 {
                return Err("bar.red needs a destination, a barrier and a predicate".into());
            }
            dp = pred_dst(fc, &o[0])?;
            p = pred_src(fc, &o[o.len() - 1])?;
            &o[1..o.len() - 1]
        }
        _ => o,
    };
    if rest.is_empty() || rest.len() > 2 {
        return Err(format!(
            "`{}` expects a barrier id and an optional thread count",
            inst.opcode
        ));
    }
    let id = src(m, fc, &rest[0], ScalarType::U32)?;
    let count = match rest.get(1) {
        Some(c) => Some(src(m, fc, c, ScalarType::U32)?),
        None => None,
    };
    Ok(Op::Bar {
        kind,
        id,
        count,
        d,
        dp,
        p,
    })
}

/// Rewrites the hottest generic operations into forms the machine inlines.
fn specialise(inst: &ast::Instruction, op: Op) -> Op {
    use ScalarType::*;
    let has = |m: &str| inst.modifiers.iter().any(|x| x == m);
    match op {
        Op::Alu2 { f, ctx, d, a, b } => {
            let plain_f32 = ctx.ty == F32 && ctx.mode == FloatMode::RN;
            let int32 = ctx.ty.bits() == 32 && !ctx.ty.is_float();
            let int64 = ctx.ty.bits() == 64 && !ctx.ty.is_float();
            let fast = match inst.opcode.as_str() {
                "add" if has(".sat") => None,
                "sub" if has(".sat") => None,
                "add" if int32 => Some(Fast2::AddB32),
                "add" if int64 => Some(Fast2::AddB64),
                "add" if plain_f32 => Some(Fast2::AddF32),
                "sub" if int32 => Some(Fast2::SubB32),
                "sub" if int64 => Some(Fast2::SubB64),
                "sub" if plain_f32 => Some(Fast2::SubF32),
                "mul" if plain_f32 => Some(Fast2::MulF32),
                "mul" if has(".wide") && ctx.ty == U32 => Some(Fast2::MulWideU32),
                "mul" if has(".wide") && ctx.ty == S32 => Some(Fast2::MulWideS32),
                "mul" if has(".hi") || has(".wide") => None,
                "mul" if int32 => Some(Fast2::MulLoB32),
                "mul" if int64 => Some(Fast2::MulLoB64),
                "and" if int32 || int64 => Some(Fast2::And),
                "or" if int32 || int64 => Some(Fast2::Or),
                "xor" if int32 || int64 => Some(Fast2::Xor),
                "shl" if int32 => Some(Fast2::ShlB32),
                "shl" if int64 => Some(Fast2::ShlB64),
                "shr" if ctx.ty == S32 => Some(Fast2::ShrS32),
                "shr" if int32 => Some(Fast2::ShrU32),
                "shr" if ctx.ty == S64 => Some(Fast2::ShrS64),
                "shr" if int64 => Some(Fast2::ShrU64),
                "min" if ctx.ty == S32 => Some(Fast2::MinS32),
                "max" if ctx.ty == S32 => Some(Fast2::MaxS32),
                "min" if ctx.ty == U32 => Some(Fast2::MinU32),
                "max" if ctx.ty == U32 => Some(Fast2::MaxU32),
                _ => None,
            };
            match fast {
                Some(op) => Op::Fast2 { op, d, a, b },
                None => Op::Alu2 { f, ctx, d, a, b },
            }
        }
        Op::Alu3 { f, ctx, d, a, b, c } => {
            let fast = match inst.opcode.as_str() {
                "mad" if has(".wide") && ctx.ty == U32 => Some(Fast3::MadWideU32),
                "mad" if has(".wide") && ctx.ty == S32 => Some(Fast3::MadWideS32),
                "mad" if has(".hi") || has(".wide") || ctx.ty.is_float() => None,
                "mad" if ctx.ty.bits() == 32 => Some(Fast3::MadLoB32),
                "mad" if ctx.ty.bits() == 64 => Some(Fast3::MadLoB64),
                "fma" | "mad" if ctx.ty == F32 && ctx.mode == FloatMode::RN => Some(Fast3::FmaF32),
                _ => None,
            };
            match fast {
                Some(op) => Op::Fast3 { op, d, a, b, c },
                None => Op::Alu3 { f, ctx, d, a, b, c },
            }
        }
        Op::Setp {
            f,
            ctx,
            d: Some(d),
            dn: None,
            a,
            b,
            combine: None,
        } => {
            let kind = match ctx.ty {
                S32 => Some(CmpKind::S32),
                U32 | B32 => Some(CmpKind::U32),
                S64 => Some(CmpKind::S64),
                U64 | B64 => Some(CmpKind::U64),
                F32 if !ctx.mode.ftz => Some(CmpKind::F32),
                _ => None,
            };
            match kind {
                Some(kind) if inst.opcode == "setp" => Op::FastSetp {
                    kind,
                    cmp: ctx.cmp,
                    d,
                    a,
                    b,
                },
                _ => Op::Setp {
                    f,
                    ctx,
                    d: Some(d),
                    dn: None,
                    a,
                    b,
                    combine: None,
                },
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(body: &str) -> Result<Program, Vec<LoadDiagnostic>> {
        let ptx = format!(
            ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .b32 %r<4>;\n.reg .f32 %f<3>;\n.reg .pred %p<2>;\n{body}\n}}\n"
        );
        let module = prlx_ptx::parse(&ptx, "t.ptx").expect("parse");
        let mut memory = GlobalMemory::new(1 << 20);
        decode_module(
            &module,
            "t.ptx",
            &DeviceConfig::default(),
            &mut memory,
            &mut Vec::new(),
        )
    }

    #[test]
    fn immediates_take_the_instruction_type() {
        use ast::Immediate::*;
        assert_eq!(imm_bits(Int(-1), ScalarType::U32), 0xffff_ffff);
        assert_eq!(imm_bits(Int(-1), ScalarType::S64), u64::MAX);
        assert_eq!(imm_bits(Int(2), ScalarType::F32), 2.0f32.to_bits() as u64);
        assert_eq!(
            imm_bits(Decimal(0.5), ScalarType::F32),
            0.5f32.to_bits() as u64
        );
        assert_eq!(imm_bits(Decimal(0.5), ScalarType::F64), 0.5f64.to_bits());
        assert_eq!(
            imm_bits(F32Bits(0x3f80_0000), ScalarType::F64),
            1.0f64.to_bits()
        );
        assert_eq!(
            imm_bits(F64Bits(2.0f64.to_bits()), ScalarType::F32),
            2.0f32.to_bits() as u64
        );
        assert_eq!(imm_bits(Decimal(1.0), ScalarType::F16), 0x3c00);
    }

    #[test]
    fn hot_instructions_are_specialised_and_immediates_become_rows() {
        let p = decode("add.s32 %r1, %r2, 5;\nfma.rn.f32 %f1, %f2, %f1, 0f3F800000;\nsetp.lt.u32 %p1, %r1, %r2;\nadd.rz.f32 %f1, %f1, %f2;").unwrap();
        assert!(matches!(
            p.code[0].op,
            Op::Fast2 {
                op: Fast2::AddB32,
                ..
            }
        ));
        assert!(matches!(
            p.code[1].op,
            Op::Fast3 {
                op: Fast3::FmaF32,
                ..
            }
        ));
        assert!(matches!(
            p.code[2].op,
            Op::FastSetp {
                kind: CmpKind::U32,
                ..
            }
        ));
        // Directed rounding stays on the exact (semantics) path.
        assert!(matches!(p.code[3].op, Op::Alu2 { .. }));
        let Op::Fast2 { b, .. } = p.code[0].op else {
            unreachable!()
        };
        assert_eq!(p.const_values[(b - p.const_base) as usize], 5);
        // An implicit return closes the body.
        assert!(matches!(p.code.last().map(|i| &i.op), Some(Op::Exit)));
    }

    #[test]
    fn every_unsupported_instruction_is_reported_with_its_position() {
        let diags = decode("add.s32 %r1, %r2, 5;\n  wgmma.fence.sync.aligned;\nadd.cc.f32 %f1, %f1, %f2;\nld.global.u32 %r1, [%r9];").err().expect("load must fail");
        let text: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert_eq!(
            text[0],
            "t.ptx:10:3: unsupported instruction `wgmma.fence.sync.aligned`"
        );
        assert!(
            text[1].starts_with("t.ptx:11:1: unsupported instruction `add.cc.f32`"),
            "{text:?}"
        );
        assert!(text[2].contains("`%r9`"), "{text:?}");
    }

    #[test]
    fn labels_scopes_and_call_frames_resolve() {
        let p =
            decode("{\n.reg .b32 %r<2>;\nmov.u32 %r1, 1;\n}\nbra $end;\nmov.u32 %r1, 2;\n$end:")
                .unwrap();
        // The label after the last instruction is the implicit return.
        let Op::Bra { target } = p.code[1].op else {
            panic!("{:?}", p.code[1].op)
        };
        assert_eq!(target as usize, p.code.len() - 1);
        // The scoped %r1 gets its own row.
        let (Op::Mov { d: inner, .. }, Op::Mov { d: outer, .. }) = (&p.code[0].op, &p.code[2].op)
        else {
            panic!()
        };
        assert_ne!(inner, outer);
    }
}
