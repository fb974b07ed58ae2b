//! The decoder: PTX AST → [`Program`]. Runs once per module load and
//! rejects anything the machine cannot execute faithfully, naming the
//! instruction and its line.

mod arith;
mod bitfield;
mod call_windows;
mod compare;
mod control;
mod convert;
mod float;
mod int;
mod memory;
#[cfg(test)]
mod reconverge_tests;
mod shared_layout;
mod sync;
mod tensor;
mod texture;
mod warp;

use std::collections::HashMap;

use prlx_ptx::ast::{self, Operand, StateSpace, Statement};

use crate::alu::{self, Alu1Fn, Alu2Fn, Alu3Fn, AluCtx};
use crate::config::DeviceConfig;
use crate::error::{LoadDiagnostic, LoadError};
use crate::instr::*;
use crate::memory::{GlobalMemory, SHARED_WINDOW};
use crate::observer::RegSlot;
use crate::program::{
    FUNC_ADDR_BASE, FuncInfo, KernelInfo, ParamInfo, Program, RegBinding, diag, sreg,
};
use crate::semantics::{CmpOp, FloatMode, FloatRounding, ScalarType, is_emulated, parse_type};

/// Local memory a thread may use (`.local` variables and one frame), as on
/// NVIDIA GPUs.
const MAX_LOCAL_BYTES: u64 = 512 * 1024;

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
    /// The module's `.target sm_N` (0 when it names none).
    target_sm: u32,
}

/// A declared type, when the emulator models its values.
fn ast_ty(t: ScalarType) -> Option<ScalarType> {
    is_emulated(t).then_some(t)
}

fn var_size(ty: ScalarType, vector: Option<u32>, dims: &[Option<u64>]) -> u64 {
    let el = ty.size_bytes().unwrap_or(1) as u64 * vector.unwrap_or(1) as u64;
    dims.iter()
        .fold(el, |acc, d| acc.saturating_mul(d.unwrap_or(0)))
}

fn var_align(ty: ScalarType, vector: Option<u32>, align: Option<u32>) -> u32 {
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
                    if r.ty == ScalarType::Pred {
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

/// Parses, lays out and decodes a module; `.global`/`.const` variables are
/// allocated in `memory` (freed again if loading fails).
pub fn load(
    ptx: &str,
    source_name: &str,
    config: &DeviceConfig,
    memory: &mut GlobalMemory,
) -> Result<Program, LoadError> {
    let module = prlx_ptx::parse(ptx, source_name).map_err(|e| LoadError {
        file: e.file.clone(),
        line: e.line,
        col: e.col,
        message: e.message.clone(),
        more: Vec::new(),
    })?;
    let mut allocations = Vec::new();
    let result = decode_module(&module, source_name, config, memory, &mut allocations);
    match result {
        Ok(mut p) => {
            p.variable_allocations = allocations;
            Ok(p)
        }
        Err(diags) => {
            for a in allocations {
                memory.free(a);
            }
            Err(LoadError::from_diagnostics(diags)
                .unwrap_or_else(|| LoadError::new(source_name, 1, 1, "module failed to load")))
        }
    }
}

/// Decodes a parsed module into a [`Program`], in phases: the target check,
/// function signatures (so calls can refer forward), variable layout and
/// allocation, code, kernel metadata. Global variables are allocated in
/// `memory` and their addresses pushed to `allocations`, also on failure.
pub fn decode_module(
    module: &ast::Module,
    file: &str,
    config: &DeviceConfig,
    memory: &mut GlobalMemory,
    allocations: &mut Vec<u64>,
) -> Result<Program, Vec<LoadDiagnostic>> {
    let target_sm = check_target(module, file, config)?;
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
        target_sm,
    };

    // Functions: indices and signatures first, so calls can refer forward.
    let defined: Vec<&ast::Function> = module.functions().filter(|f| f.body.is_some()).collect();
    let max_preds = declare_functions(&mut m, module, &defined);

    // Variables: shared and local layouts, global allocations.
    let mut vars = VariableLayout {
        dyn_align: 16,
        ..VariableLayout::default()
    };
    layout_module_variables(&mut m, module, memory, allocations, &mut vars);
    layout_body_variables(&mut m, &defined, memory, allocations, &mut vars);
    layout_static_shared(&mut m, module, &defined, &mut vars);
    if vars.shared_end > u32::MAX as u64 / 2 || vars.local_end > MAX_LOCAL_BYTES {
        m.diags.push(diag(
            file,
            ast::Span::new(1, 1),
            "unsupported: module shared or local variables are larger than any device allows",
        ));
        return Err(m.diags);
    }
    let dyn_base = place_extern_shared(&mut m, &mut vars);
    for (v, addr) in std::mem::take(&mut vars.inits) {
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
        if f.kind == ast::FunctionKind::Entry {
            let info = kernel_info(&mut m, module, config, i, f, &vars, target_sm);
            kernels.push((i as u32, info));
        }
    }

    if !m.diags.is_empty() {
        return Err(m.diags);
    }
    let num_rows = m.const_base + m.const_values.len() as u32;
    let uses_heap = m
        .code
        .iter()
        .any(|i| matches!(i.op, Op::DeviceMalloc { .. } | Op::DeviceFree { .. }));
    Ok(Program {
        file: file.to_string(),
        reconverge: crate::reconverge::table(&m.code),
        code: m.code,
        text: m.text,
        funcs: m.funcs,
        kernels,
        const_base: m.const_base,
        const_values: m.const_values,
        num_rows,
        num_preds: max_preds + 1,
        static_shared: dyn_base,
        static_local: align_up(vars.local_end, 16) as u32,
        globals: vars.globals,
        variable_allocations: Vec::new(),
        uses_heap,
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

/// Refuses 32-bit modules and modules for a newer GPU than the device;
/// returns the module's target SM (0 when it names none).
fn check_target(
    module: &ast::Module,
    file: &str,
    config: &DeviceConfig,
) -> Result<u32, Vec<LoadDiagnostic>> {
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
    Ok(target_sm)
}

/// Gives every defined function its index, register counts and parameter
/// frame, and every declared-only one an unresolvable symbol; places the
/// constant rows after the highest register window. Returns the most
/// predicates any function uses.
fn declare_functions(
    m: &mut ModuleCtx<'_>,
    module: &ast::Module,
    defined: &[&ast::Function],
) -> u32 {
    let mut max_preds = 0;
    for (i, f) in defined.iter().enumerate() {
        m.syms.insert(f.name.clone(), Sym::Func(i as u32));
        let info = function_signature(f);
        max_preds = u32::max(max_preds, info.num_preds);
        m.funcs.push(info);
    }
    for f in module.functions().filter(|f| f.body.is_none()) {
        m.syms.entry(f.name.clone()).or_insert(Sym::Func(u32::MAX));
    }
    m.const_base = call_windows::place_windows(defined, &mut m.funcs, m.window_base);
    m.pred_sink = max_preds;
    max_preds
}

/// A defined function's registers and `.param` frame (returns, then
/// parameters, for `.func`s); its code fills in the rest.
fn function_signature(f: &ast::Function) -> FuncInfo {
    let (mut rows, mut preds) = (0, 0);
    count_regs(f.body.as_deref().unwrap_or(&[]), &mut rows, &mut preds);
    // `.reg` parameters and return values are registers of the function:
    // a row per component, or a predicate.
    for p in f.params.iter().chain(&f.returns) {
        if p.space != ast::ParamSpace::Reg {
            continue;
        }
        if p.ty == ScalarType::Pred {
            preds += 1;
        } else {
            rows += p.vector.unwrap_or(1);
        }
    }
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
    FuncInfo {
        name: f.name.clone(),
        is_kernel,
        entry_pc: 0,
        num_rows: rows,
        num_preds: preds,
        window_base: 0,
        clobber_rows: 0..0,
        clobber_preds: preds,
        param_frame: align_up(frame, 8) as u32,
        local_frame: 0,
        params,
        returns,
        reg_params: Vec::new(),
        reg_returns: Vec::new(),
        slots: Vec::new(),
    }
}

/// Where a module's variables live, as the layout phases build it.
#[derive(Default)]
struct VariableLayout<'a> {
    /// Static shared variables (module and function scope), in declaration
    /// order, until [`layout_static_shared`] places them.
    static_shared: Vec<shared_layout::StaticShared>,
    /// The end of the highest static shared variable placed.
    shared_end: u64,
    /// Per defined function: its static shared bytes as a kernel (only the
    /// variables it can use).
    kernel_shared: Vec<u64>,
    /// Bytes of module-scope `.local` variables.
    local_end: u64,
    /// `.extern .shared` arrays, placed after the static ones: module-scope
    /// names, or `function\0name`.
    extern_shared: Vec<String>,
    /// Alignment of dynamic shared memory's start (16 or more).
    dyn_align: u64,
    /// Variables with initializers, and their addresses.
    inits: Vec<(&'a ast::VarDecl, u64)>,
    /// `.global`/`.const` module variables: name → (address, size).
    globals: HashMap<String, (u64, u64)>,
}

fn external_variable(file: &str, v: &ast::VarDecl) -> LoadDiagnostic {
    diag(
        file,
        v.span,
        format!(
            "unsupported: external variable `{}` (modules are not linked)",
            v.name
        ),
    )
}

/// Module-scope variables: shared ones listed for [`layout_static_shared`],
/// local offsets, global and constant
/// allocations (`__managed__` ones at their host address).
fn layout_module_variables<'a>(
    m: &mut ModuleCtx<'_>,
    module: &'a ast::Module,
    memory: &mut GlobalMemory,
    allocations: &mut Vec<u64>,
    vars: &mut VariableLayout<'a>,
) {
    let file = m.file;
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
                    vars.dyn_align = vars.dyn_align.max(align);
                    vars.extern_shared.push(v.name.clone());
                } else {
                    vars.static_shared.push(shared_layout::StaticShared {
                        key: shared_layout::SharedKey::Module(v.name.clone()),
                        size,
                        align,
                    });
                }
            }
            StateSpace::Local => {
                vars.local_end = align_up(vars.local_end, align);
                m.syms
                    .insert(v.name.clone(), Sym::LocalStatic(vars.local_end as u32));
                vars.local_end = vars.local_end.saturating_add(size);
            }
            StateSpace::Global | StateSpace::Const => {
                if v.linkage == ast::Linkage::Extern {
                    m.diags.push(external_variable(file, v));
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
                vars.globals.insert(v.name.clone(), (addr, size));
                if v.init.is_some() {
                    vars.inits.push((v, addr));
                }
            }
            _ => m.diags.push(diag(
                file,
                v.span,
                format!("unsupported: module variable in {} space", v.space.as_str()),
            )),
        }
    }
}

/// Variables declared inside function bodies: static shared ones are listed
/// for [`layout_static_shared`], extern shared ones for
/// [`place_extern_shared`], global and constant ones are allocated.
fn layout_body_variables<'a>(
    m: &mut ModuleCtx<'_>,
    defined: &[&'a ast::Function],
    memory: &mut GlobalMemory,
    allocations: &mut Vec<u64>,
    vars: &mut VariableLayout<'a>,
) {
    let file = m.file;
    for (fi, f) in defined.iter().enumerate() {
        let mut decls = Vec::new();
        collect_body_shared(f.body.as_deref().unwrap_or(&[]), &mut decls);
        for v in decls {
            let size = var_size(v.ty, v.vector, &v.array_dims);
            let align = var_align(v.ty, v.vector, v.align) as u64;
            if v.space != StateSpace::Shared {
                if v.linkage == ast::Linkage::Extern {
                    m.diags.push(external_variable(file, v));
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
                    vars.inits.push((v, addr));
                }
                continue;
            }
            if v.linkage == ast::Linkage::Extern {
                vars.dyn_align = vars.dyn_align.max(align);
                vars.extern_shared
                    .push(format!("{}\u{0}{}", f.name, v.name));
                continue;
            }
            vars.static_shared.push(shared_layout::StaticShared {
                key: shared_layout::SharedKey::Body(fi, v.name.clone()),
                size,
                align,
            });
        }
    }
}

/// Gives every static shared variable its one offset, module-wide, laid
/// out per kernel (`shared_layout`): variables no kernel uses together may
/// overlap, and each kernel's static size counts only the variables it can
/// use. Sets `shared_end` (the highest end of any) and `kernel_shared`.
fn layout_static_shared(
    m: &mut ModuleCtx<'_>,
    module: &ast::Module,
    defined: &[&ast::Function],
    vars: &mut VariableLayout<'_>,
) {
    let list = std::mem::take(&mut vars.static_shared);
    let layout = shared_layout::layout(module, defined, &list);
    for (v, off) in list.into_iter().zip(layout.offsets) {
        // Offsets past the limit are refused by the caller (`shared_end`).
        let off = off.min(u32::MAX as u64) as u32;
        match v.key {
            shared_layout::SharedKey::Module(name) => {
                m.syms.insert(name, Sym::Shared(off));
            }
            shared_layout::SharedKey::Body(fi, name) => {
                m.body_shared.insert((defined[fi].name.clone(), name), off);
            }
        }
    }
    vars.shared_end = layout.end;
    vars.kernel_shared = layout.kernel_bytes;
}

/// Places every `.extern .shared` array at the start of dynamic shared
/// memory, after every static variable of the module (whichever kernel uses
/// it: the base is baked into shared code); returns that offset, which is
/// also the static part of every CTA's shared window.
fn place_extern_shared(m: &mut ModuleCtx<'_>, vars: &mut VariableLayout<'_>) -> u32 {
    let dyn_base = align_up(vars.shared_end, vars.dyn_align) as u32;
    for name in std::mem::take(&mut vars.extern_shared) {
        if let Some((f, v)) = name.split_once('\u{0}') {
            m.body_shared
                .insert((f.to_string(), v.to_string()), dyn_base);
        } else {
            m.syms.insert(name, Sym::Shared(dyn_base));
        }
    }
    dyn_base
}

/// What `cuFuncGetAttribute` reports for kernel `f` (function `index`):
/// its parameter layout, resources (static shared bytes: only the variables
/// the kernel and its callees can use) and launch bounds.
fn kernel_info(
    m: &mut ModuleCtx<'_>,
    module: &ast::Module,
    config: &DeviceConfig,
    index: usize,
    f: &ast::Function,
    vars: &VariableLayout<'_>,
    target_sm: u32,
) -> KernelInfo {
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
    let mut maxnreg = None;
    let mut min_ctas_per_sm = 1u32;
    let mut reqnctapercluster = None;
    let mut explicit_cluster = false;
    let mut max_cluster_rank = None;
    for d in &f.directives {
        match d {
            ast::FunctionDirective::ReqNTid(v) => reqntid = Some(dims3(v)),
            ast::FunctionDirective::MaxNTid(v) => maxntid = Some(dims3(v)),
            ast::FunctionDirective::MaxNReg(n) => maxnreg = Some(*n),
            ast::FunctionDirective::MinNCtaPerSm(n) => min_ctas_per_sm = (*n).max(1),
            ast::FunctionDirective::ReqNCtaPerCluster(v) => reqnctapercluster = Some(dims3(v)),
            ast::FunctionDirective::ExplicitCluster => explicit_cluster = true,
            ast::FunctionDirective::MaxClusterRank(n) => max_cluster_rank = Some(*n),
            _ => {}
        }
    }
    let limit = reqntid
        .or(maxntid)
        .map(|d| d[0].saturating_mul(d[1]).saturating_mul(d[2]))
        .unwrap_or(config.max_threads_per_block)
        .min(config.max_threads_per_block);
    let fi = &m.funcs[index];
    KernelInfo {
        name: f.name.clone(),
        params,
        param_bytes: off as u32,
        static_shared_bytes: vars.kernel_shared.get(index).copied().unwrap_or(0) as u32,
        local_bytes_per_thread: vars.local_end as u32 + fi.local_frame,
        num_regs: register_estimate(
            fi.num_rows + fi.num_preds.div_ceil(32),
            maxnreg,
            limit.saturating_mul(min_ctas_per_sm),
            config
                .attribute(crate::config::DeviceAttribute::MAX_REGISTERS_PER_MULTIPROCESSOR)
                .unwrap_or(65536) as u32,
        ),
        max_threads_per_block: limit,
        reqntid,
        reqnctapercluster,
        explicit_cluster,
        max_cluster_rank,
        ptx_version: (module.version.major, module.version.minor),
        target_sm,
    }
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
        next_row: info.window_base,
        next_pred: 0,
        param_frame: info.param_frame as u64,
        local_frame: 0,
        slots: Vec::new(),
    };
    // `.reg` parameters and return values: registers the call fills and reads.
    let mut reg_rows = |ps: &[ast::Param], fc: &mut FnCtx<'_>| -> Vec<Option<RegBinding>> {
        ps.iter()
            .map(|p| {
                if p.space != ast::ParamSpace::Reg {
                    return None;
                }
                match reg_param(fc, p) {
                    Ok(binding) => Some(binding),
                    Err(msg) => {
                        m.diags.push(diag(m.file, p.span, msg));
                        None
                    }
                }
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

/// Declares a `.reg` parameter or return value as the function's register:
/// a scalar, a vector (`.reg .v4 .u16 v`: a row per component) or a
/// predicate; returns how the call passes it through the frame slot.
fn reg_param(fc: &mut FnCtx<'_>, p: &ast::Param) -> Result<RegBinding, String> {
    let unsupported = || format!("unsupported: .reg parameter `{}` of this type", p.name);
    let ty = ast_ty(p.ty)
        .filter(|_| p.array_dims.is_empty())
        .ok_or_else(unsupported)?;
    let binding = if ty == ScalarType::Pred {
        if p.vector.is_some() {
            return Err(unsupported());
        }
        fc.next_pred += 1;
        let pred = fc.next_pred - 1;
        if let Some(scope) = fc.scopes.last_mut() {
            scope.insert(p.name.clone(), RegKind::Pred(pred));
        }
        fc.slots.push(RegSlot {
            name: p.name.clone(),
            ty,
            index: pred,
        });
        RegBinding::Pred(pred)
    } else {
        let n = match p.vector {
            None => 1u8,
            Some(n @ (2 | 4)) => n as u8,
            Some(_) => return Err(unsupported()),
        };
        let row = fc.next_row;
        fc.next_row += n as u32;
        let kind = if p.vector.is_some() {
            RegKind::Vector(row, ty, n)
        } else {
            RegKind::Value(row, ty)
        };
        if let Some(scope) = fc.scopes.last_mut() {
            scope.insert(p.name.clone(), kind);
        }
        fc.slots.push(RegSlot {
            name: p.name.clone(),
            ty,
            index: row,
        });
        RegBinding::Rows {
            row,
            n,
            elem: ty.size_bytes().unwrap_or(1) as u8,
        }
    };
    Ok(binding)
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
        self.take_where(|m| parse_type(m).is_some())
            .and_then(parse_type)
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

/// A family module's decoder: every form of the opcodes it owns.
type FamilyDecoder =
    fn(&mut ModuleCtx<'_>, &mut FnCtx<'_>, &ast::Instruction, &mut Mods<'_>) -> Result<Op, String>;

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
        "%cluster_ctaid" => xyz(sreg::CLUSTER_CTAID)?,
        "%cluster_nctaid" => xyz(sreg::CLUSTER_NCTAID)?,
        "%clusterid" => xyz(sreg::CLUSTERID)?,
        "%nclusterid" => xyz(sreg::NCLUSTERID)?,
        "%cluster_ctarank" => sreg::CLUSTER_CTARANK,
        "%cluster_nctarank" => sreg::CLUSTER_NCTARANK,
        "%total_smem_size" => sreg::TOTAL_SMEM_SIZE,
        "%envreg1" => sreg::ENVREG1,
        "%envreg2" => sreg::ENVREG2,
        n if n.starts_with("%envreg") || n.starts_with("%pm") => sreg::ZERO,
        _ => return None,
    })
}

fn timer_of(reg: &ast::Register) -> Option<TimeSource> {
    match reg.name.as_str() {
        "%clock" => Some(TimeSource::Clock32),
        "%clock64" => Some(TimeSource::Clock64),
        "%clock_hi" => Some(TimeSource::ClockHi),
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
        Operand::RegisterOffset(..) => Err(
            "a register plus or minus an immediate (`%rd1 + 1`) is evaluated only as the value \
             of st"
                .to_string(),
        ),
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

/// `Op::Alu3` with destination `o[0]` and sources `o[1..4]` read as
/// `types`.
fn alu3(
    m: &mut ModuleCtx<'_>,
    fc: &FnCtx<'_>,
    o: &[Operand],
    f: Alu3Fn,
    ctx: AluCtx,
    types: [ScalarType; 3],
) -> Result<Op, String> {
    Ok(Op::Alu3 {
        f,
        ctx,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], types[0])?,
        b: src(m, fc, &o[2], types[1])?,
        c: src(m, fc, &o[3], types[2])?,
    })
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
    if s.is_none() && mods.take(".shared::cluster") {
        // `.shared::cta` addresses are valid `.shared::cluster` addresses
        // of the executing CTA; those `mapa` made carry a peer's rank, and
        // shared accesses route them (`memory::CLUSTER_RANK_SHIFT`).
        return Ok(Some(StateSpace::Shared));
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
                    // A variable of another space named in a generic access
                    // (`ld.b32 r, [smem_var]`) is accessed in its own space,
                    // as ptxas does.
                    sp = implied;
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
    // Each opcode belongs to one family module, which decodes all its forms.
    let family: FamilyDecoder = match inst.opcode.as_str() {
        // Integer-only (the carry chain first: `add.cc` is not `add`).
        "add" | "sub" if mods.list.contains(&".cc") => int::decode,
        "mad" if mods.list.contains(&".cc") => int::decode,
        "addc" | "subc" | "madc" | "mul24" | "mad24" | "dp4a" | "dp2a" | "bfe" | "bfi" | "prmt"
        | "shf" | "lop3" | "sad" | "fns" | "vshl" | "vshr" => int::decode,
        "bmsk" | "szext" => bitfield::decode,
        // Arithmetic shared by integer and float types, and moves.
        "mov" | "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor"
        | "shl" | "shr" | "copysign" | "mad" | "fma" | "neg" | "abs" | "not" | "cnot" | "popc"
        | "clz" | "brev" | "bfind" | "sqrt" | "rcp" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2"
        | "tanh" => arith::decode,
        "testp" => float::decode,
        "setp" => compare::decode_setp,
        "set" => compare::decode_set,
        "selp" => compare::decode_selp,
        "slct" => compare::decode_slct,
        "cvt" => convert::decode_cvt,
        "ld" | "ldu" | "st" | "atom" | "red" | "cp" | "cvta" | "isspacep" | "membar" | "fence"
        | "nanosleep" | "prefetch" | "prefetchu" | "pmevent" | "createpolicy"
        | "griddepcontrol" | "discard" | "applypriority" => memory::decode,
        "bra" | "brx" | "call" | "ret" | "exit" | "trap" | "brkpt" | "bar" | "barrier" => {
            control::decode
        }
        "shfl" | "vote" | "activemask" | "match" | "redux" => warp::decode,
        "mbarrier" | "elect" | "mapa" | "getctarank" => sync::decode,
        "ldmatrix" | "stmatrix" | "movmatrix" | "mma" | "wmma" => tensor::decode,
        "tex" | "tld4" | "txq" | "suld" | "sust" | "suq" => texture::decode,
        _ => return Err(unsupported(inst)),
    };
    family(m, fc, inst, mods)
}

fn vec_count(mods: &mut Mods<'_>) -> u8 {
    match mods.take_any(&[".v2", ".v4"]) {
        Some(".v2") => 2,
        Some(_) => 4,
        None => 1,
    }
}

fn vector_rows<const N: usize>(
    fc: &FnCtx<'_>,
    op: &Operand,
    n: u8,
    f: impl Fn(&FnCtx<'_>, &Operand) -> Result<Row, String>,
) -> Result<[Row; N], String> {
    let mut rows = [sreg::SINK; N];
    let whole = vector_components(fc, op).map(Operand::Vector);
    match whole.as_ref().unwrap_or(op) {
        Operand::Vector(items) if items.len() == n as usize && items.len() <= N => {
            for (i, it) in items.iter().enumerate() {
                rows[i] = f(fc, it)?;
            }
        }
        single if n == 1 => rows[0] = f(fc, single)?,
        _ => return Err("vector width does not match the operand list".into()),
    }
    Ok(rows)
}

fn bits_type(bits: u32) -> ScalarType {
    match bits {
        8 => ScalarType::B8,
        16 => ScalarType::B16,
        32 => ScalarType::B32,
        _ => ScalarType::B64,
    }
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
                "min" | "max" if has(".relu") => None,
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

/// The registers a kernel reports (`CU_FUNC_ATTRIBUTE_NUM_REGS`): PTX's
/// virtual registers are not what ptxas allocates, so the declared count is
/// capped the way ptxas bounds its allocation: by `.maxnreg`, by what lets
/// `threads` (the kernel's thread limit times `.minnctapersm`) be resident
/// in one SM's register file, and by the 255 a thread can address. Programs
/// that check `numRegs * blockSize <= regsPerBlock` then agree with the
/// launches the emulator accepts.
fn register_estimate(declared: u32, maxnreg: Option<u32>, threads: u32, file: u32) -> u32 {
    let resident = file / threads.max(1);
    declared
        .min(maxnreg.unwrap_or(u32::MAX))
        .min(resident)
        .clamp(1, 255)
}

#[cfg(test)]
mod register_estimate_tests {
    use super::register_estimate;

    #[test]
    fn bounded_by_maxnreg_residency_and_the_isa_limit() {
        // 1024 threads must fit in 64K registers: at most 64 each.
        assert_eq!(register_estimate(159, None, 1024, 65536), 64);
        assert_eq!(register_estimate(40, None, 1024, 65536), 40);
        assert_eq!(register_estimate(159, Some(32), 1024, 65536), 32);
        // __launch_bounds__(128): up to 255.
        assert_eq!(register_estimate(400, None, 128, 65536), 255);
        // __launch_bounds__(256, 4): 1024 resident threads.
        assert_eq!(register_estimate(200, None, 256 * 4, 65536), 64);
        assert_eq!(register_estimate(0, None, 1024, 65536), 1);
    }
}
