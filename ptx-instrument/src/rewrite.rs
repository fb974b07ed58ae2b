//! Finding the sites of a parsed module and splicing probes into its text.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use prlx_ptx::{
    AddressBase, Function, FunctionKind, Guard, Instruction, Item, Module, Operand, ParamSpace,
    ScalarType, Span, Statement,
};

use crate::instrumented::{Error, Instrumented};
pub use crate::runtime::Runtime;
use crate::runtime::{
    DESCRIPTOR, DESCRIPTOR_REGISTER, RECORD_BRANCH, RECORD_SNAPSHOT, RECORD_VALUE,
    RECORDING_REGISTER, WARP_SLOT_REGISTER, descriptor_setup, runtime_ptx_for, warp_slot_setup,
};
use crate::sites::{Location, SiteKind, SiteTable};
use crate::switch_tree::{self, SwitchTrees};
use crate::value::{FLOAT_DECL, HALF_DECL, RegisterTypes, SCRATCH_DECLS, instruction_type, word};

/// What to record besides branches, switches, shared stores and atomics
/// (the pass's options of the same names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Per-lane compare operands of each branch (`-prlx-snapshots`).
    pub snapshots: bool,
    /// Function entry and each return (`-prlx-instrument-func-entry-exit`).
    pub func_entry_exit: bool,
    /// Stores to global memory (`-prlx-instrument-global-stores`).
    pub global_stores: bool,
}

/// How instrumented functions are laid out (not what they record); the
/// default is what the shim loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Keep each instrumented function's body as compiled too, and run it
    /// when the module is not being captured ([`crate::idle_copy`]): an
    /// idle call costs a fixed test instead of a branch per site visit, for
    /// twice the code. Off: one body, whose probes branch past themselves.
    pub idle_copy: bool,
}

impl Default for Layout {
    fn default() -> Self {
        Layout { idle_copy: true }
    }
}

/// `TraceEvent` flag (reserved half-word) of an Atomic event whose value is
/// what the atomic returned, not its operand
/// ([`prlx_trace::layout::event_flags::RETURNED`]).
pub const RETURNED_FLAG: u16 = 0x2;

/// The PTX ISA version the runtime needs (`activemask`).
const MIN_VERSION: (u32, u32) = (6, 2);

/// Parses `text` (diagnostics name it `name`) and instruments it.
pub fn instrument(text: &str, name: &str, options: &Options) -> Result<Instrumented, Error> {
    instrument_with(text, name, options, Layout::default())
}

/// [`instrument`] with another [`Layout`] (for measuring it).
pub fn instrument_with(
    text: &str,
    name: &str,
    options: &Options,
    layout: Layout,
) -> Result<Instrumented, Error> {
    let module = prlx_ptx::parse(text, name)?;
    instrument_parsed_with(&module, text, options, layout)
}

/// Instruments a module already parsed from `text` (its spans index `text`).
pub fn instrument_parsed(
    module: &Module,
    text: &str,
    options: &Options,
) -> Result<Instrumented, Error> {
    instrument_parsed_with(module, text, options, Layout::default())
}

/// [`instrument_parsed`] with another [`Layout`] (for measuring it).
pub fn instrument_parsed_with(
    module: &Module,
    text: &str,
    options: &Options,
    layout: Layout,
) -> Result<Instrumented, Error> {
    let mut sites = SiteTable::default();
    let (ptx, kernels) = instrument_into(module, text, options, layout, &mut sites, Runtime::Own)?;
    Ok(Instrumented {
        ptx,
        sites,
        kernels,
    })
}

/// One input of a link: instruments `module` (parsed from `text`) adding
/// its sites to `sites`, shared by every input of the link so that ids are
/// unique in the linked image. Returns the PTX and the kernels it defines.
pub fn instrument_link_input(
    module: &Module,
    text: &str,
    options: &Options,
    sites: &mut SiteTable,
    runtime: Runtime,
) -> Result<(String, Vec<String>), Error> {
    instrument_into(module, text, options, Layout::default(), sites, runtime)
}

fn instrument_into(
    module: &Module,
    text: &str,
    options: &Options,
    layout: Layout,
    table: &mut SiteTable,
    runtime: Runtime,
) -> Result<(String, Vec<String>), Error> {
    for item in &module.items {
        if let Item::Variable(v) = item
            && v.name == DESCRIPTOR
        {
            return Err(Error::AlreadyInstrumented);
        }
    }
    if module.address_size != Some(64) {
        return Err(Error::Unsupported(
            "the module uses 32-bit addressing (.address_size 64 is required)".into(),
        ));
    }
    if text.contains("%prlx_") {
        return Err(Error::Unsupported(
            "the module already uses register names starting with %prlx_".into(),
        ));
    }
    // The copy's renamed labels must be new names: a module that already
    // has the suffix keeps one body per function.
    let layout = Layout {
        idle_copy: layout.idle_copy && !text.contains(crate::idle_copy::SUFFIX),
    };
    let lines = LineIndex::new(text);
    let files: HashMap<u32, &str> = module
        .items
        .iter()
        .filter_map(|i| match i {
            Item::File(f) => Some((f.index, f.path.as_str())),
            _ => None,
        })
        .collect();

    let mut edits = Edits::default();
    if (module.version.major, module.version.minor) < MIN_VERSION {
        match version_number_range(text) {
            Some(range) => edits.replace(range, format!("{}.{}", MIN_VERSION.0, MIN_VERSION.1)),
            None => return Err(Error::Unsupported("no .version directive found".into())),
        }
    }
    let first_item = module
        .items
        .iter()
        .find(|i| matches!(i, Item::Function(_) | Item::Variable(_)))
        .map(|i| lines.offset(i.span()));
    let Some(first_item) = first_item else {
        return Err(Error::Unsupported("the module defines no functions".into()));
    };
    edits.insert(first_item, runtime_ptx_for(runtime));

    let mut kernels = Vec::new();
    for item in &module.items {
        let Item::Function(function) = item else {
            continue;
        };
        if function.body.is_none() {
            continue;
        }
        if function.kind == FunctionKind::Entry {
            kernels.push(function.name.clone());
        }
        if skipped(&function.name) {
            continue;
        }
        FunctionRewrite::new(function, &files, &lines, options)
            .run(text, layout, table, &mut edits);
    }
    Ok((edits.apply(text), kernels))
}

/// The digits after `.version`.
fn version_number_range(text: &str) -> Option<(usize, usize)> {
    let at = text.find(".version")? + ".version".len();
    let rest = &text[at..];
    let start = at + rest.len() - rest.trim_start().len();
    let len = text[start..]
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    (len > 0).then_some((start, start + len))
}

/// The pass's skip rules: our own runtime, vendor builtins and warp-intrinsic
/// wrappers, also inside an Itanium-mangled name.
fn skipped(name: &str) -> bool {
    const PREFIXES: [&str; 8] = [
        "__prlx_",
        "__nv_",
        "__ocml_",
        "__ockl_",
        "__hip_",
        "__builtin_",
        "__nvvm_",
        "__llvm_",
    ];
    const WRAPPERS: [&str; 9] = [
        "__shfl",
        "__ballot",
        "__activemask",
        "__syncwarp",
        "__any_sync",
        "__all_sync",
        "__match",
        "__reduce_",
        "__uni_sync",
    ];
    let matches = |id: &str| {
        PREFIXES.iter().any(|p| id.starts_with(p)) || WRAPPERS.iter().any(|p| id.starts_with(p))
    };
    matches(name) || mangled_identifier(name).is_some_and(matches)
}

/// `_Z6reducePfi` → `reduce`.
fn mangled_identifier(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("_Z")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let len: usize = rest[..digits].parse().ok()?;
    rest.get(digits..digits + len)
}

/// Byte offsets of line starts, to turn spans into offsets.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let mut starts = Vec::with_capacity(text.len() / 24);
        starts.push(0);
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }

    fn offset(&self, span: Span) -> usize {
        let line = (span.line.max(1) - 1) as usize;
        self.starts.get(line).copied().unwrap_or(0) + span.col.max(1) as usize - 1
    }
}

/// Text insertions and replacements, applied in one pass.
#[derive(Default)]
struct Edits {
    /// (start, end, text): replaces `start..end` (empty for an insertion).
    edits: Vec<(usize, usize, String)>,
}

impl Edits {
    fn insert(&mut self, at: usize, text: String) {
        self.edits.push((at, at, text));
    }

    fn replace(&mut self, (start, end): (usize, usize), text: String) {
        self.edits.push((start, end, text));
    }

    fn apply(mut self, text: &str) -> String {
        // Stable: insertions at one offset keep the order they were made in.
        self.edits.sort_by_key(|e| e.0);
        let added: usize = self.edits.iter().map(|e| e.2.len()).sum();
        let mut out = String::with_capacity(text.len() + added);
        let mut at = 0;
        for (start, end, insert) in &self.edits {
            let start = (*start).clamp(at, text.len());
            out.push_str(&text[at..start]);
            out.push_str(insert);
            at = (*end).max(start);
        }
        out.push_str(&text[at.min(text.len())..]);
        out
    }
}

/// A statement of a function body in source order, scopes flattened; `None`
/// marks the end of a `{ }` scope.
type Flat<'a> = Option<&'a Statement>;

fn flatten<'a>(body: &'a [Statement], out: &mut Vec<Flat<'a>>) {
    for stmt in body {
        out.push(Some(stmt));
        if let Statement::Scope(scope) = stmt {
            flatten(&scope.body, out);
            out.push(None);
        }
    }
}

fn as_instruction<'a>(flat: &Flat<'a>) -> Option<&'a Instruction> {
    match flat {
        Some(Statement::Instruction(i)) => Some(i),
        _ => None,
    }
}

fn is_control(i: &Instruction) -> bool {
    matches!(i.opcode.as_str(), "bra" | "brx" | "ret" | "exit")
}

/// The register an instruction writes first (its destination), if any.
fn destination(i: &Instruction) -> Option<&str> {
    if matches!(
        i.opcode.as_str(),
        "st" | "red" | "bra" | "brx" | "call" | "ret" | "exit"
    ) {
        return None;
    }
    match i.operands.first()? {
        Operand::Register(r) => Some(&r.name),
        Operand::PredicatePair(p, _) => Some(&p.name),
        _ => None,
    }
}

fn writes(i: &Instruction, name: &str) -> bool {
    if matches!(
        i.opcode.as_str(),
        "st" | "red" | "bra" | "brx" | "call" | "ret" | "exit"
    ) {
        return false;
    }
    match i.operands.first() {
        Some(Operand::Register(r)) => r.name == name,
        Some(Operand::PredicatePair(p, q)) => p.name == name || q.name == name,
        _ => false,
    }
}

/// Where an address operand's register came from, for generic stores.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    Shared,
    Local,
}

/// LLVM `CmpInst::Predicate` of a `setp` (what the pass's snapshots record).
fn cmp_predicate(op: &str, ty: ScalarType) -> Option<u32> {
    use ScalarType::*;
    let float = matches!(ty, F16 | BF16 | F32 | F64);
    let signed = matches!(ty, S8 | S16 | S32 | S64);
    Some(if float {
        match op {
            ".eq" => 1,
            ".gt" => 2,
            ".ge" => 3,
            ".lt" => 4,
            ".le" => 5,
            ".ne" => 6,
            ".num" => 7,
            ".nan" => 8,
            ".equ" => 9,
            ".gtu" => 10,
            ".geu" => 11,
            ".ltu" => 12,
            ".leu" => 13,
            ".neu" => 14,
            _ => return None,
        }
    } else {
        match (op, signed) {
            (".eq", _) => 32,
            (".ne", _) => 33,
            (".gt" | ".hi", false) => 34,
            (".ge" | ".hs", false) => 35,
            (".lt" | ".lo", false) => 36,
            (".le" | ".ls", false) => 37,
            (".gt", true) => 38,
            (".ge", true) => 39,
            (".lt", true) => 40,
            (".le", true) => 41,
            _ => return None,
        }
    })
}

struct FunctionRewrite<'a> {
    function: &'a Function,
    files: &'a HashMap<u32, &'a str>,
    lines: &'a LineIndex,
    options: &'a Options,
    flat: Vec<Flat<'a>>,
    /// The `.loc` (file, line, column) in force at each flat statement.
    locs: Vec<Option<(u32, u32, u32)>>,
    regs: RegisterTypes<'a>,
    /// Predicates guarding something other than control flow.
    predicating: HashSet<&'a str>,
    origins: HashMap<&'a str, Origin>,
    /// Switches llc lowered to compare-and-branch trees.
    switches: SwitchTrees<'a>,
}

impl<'a> FunctionRewrite<'a> {
    fn new(
        function: &'a Function,
        files: &'a HashMap<u32, &'a str>,
        lines: &'a LineIndex,
        options: &'a Options,
    ) -> Self {
        let mut flat = Vec::new();
        flatten(function.body.as_deref().unwrap_or(&[]), &mut flat);
        let mut regs = RegisterTypes::default();
        for p in function.params.iter().chain(&function.returns) {
            if p.space == ParamSpace::Reg {
                regs.declare(&p.name, p.ty, None);
            }
        }
        let mut locs = Vec::with_capacity(flat.len());
        let mut current = None;
        let mut predicating = HashSet::new();
        let mut origins = HashMap::new();
        for stmt in &flat {
            match stmt {
                Some(Statement::Loc(loc)) => {
                    current = (loc.line != 0).then_some((loc.file, loc.line, loc.col));
                }
                Some(Statement::Reg(decl)) => {
                    for name in &decl.names {
                        regs.declare(&name.name, decl.ty, name.range);
                    }
                }
                Some(Statement::Instruction(i)) => {
                    if let Some(g) = &i.guard
                        && !is_control(i)
                    {
                        predicating.insert(g.register.name.as_str());
                    }
                    // A predicate choosing a `selp`'s operand: a data-dependent
                    // choice, recorded at its compare like a branch.
                    if i.opcode == "selp"
                        && let Some(Operand::Register(p) | Operand::Not(p)) = i.operands.get(3)
                    {
                        predicating.insert(p.name.as_str());
                    }
                    track_origin(i, &mut origins);
                }
                _ => {}
            }
            locs.push(current);
        }
        let switches = switch_tree::find(&flat);
        FunctionRewrite {
            function,
            files,
            lines,
            options,
            flat,
            locs,
            regs,
            predicating,
            origins,
            switches,
        }
    }

    fn location(&self, loc: Option<(u32, u32, u32)>) -> Location {
        let mut location = Location {
            function: self.function.name.clone(),
            ..Location::default()
        };
        if let Some((file, line, col)) = loc {
            location.file = self
                .files
                .get(&file)
                .map_or(String::new(), |f| f.to_string());
            location.line = line;
            location.column = col;
        }
        location
    }

    /// The site location of flat statement `at`: its own line, else (like
    /// the pass's `lineOf`) the line of what decided it, else the nearest
    /// earlier instruction of its block that has one.
    fn site_location(&self, at: usize, decided_by: Option<usize>) -> Location {
        let mut loc = self.locs[at];
        if loc.is_none() {
            loc = decided_by.and_then(|d| self.locs[d]);
        }
        if loc.is_none() {
            for i in (0..at).rev() {
                match self.flat[i] {
                    Some(Statement::Label(_)) => break,
                    Some(Statement::Instruction(_)) if self.locs[i].is_some() => {
                        loc = self.locs[i];
                        break;
                    }
                    _ => {}
                }
            }
        }
        self.location(loc)
    }

    /// The `setp` that computed `guard` for the branch at `at`, in the same block.
    fn guard_compare(&self, at: usize, guard: &str) -> Option<usize> {
        for i in (0..at).rev() {
            match self.flat[i] {
                Some(Statement::Label(_)) => return None,
                Some(Statement::Instruction(inst)) => {
                    if is_control(inst) {
                        return None;
                    }
                    if writes(inst, guard) {
                        return (inst.opcode == "setp").then_some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Offset of the statement after flat index `at`, when it is in the same scope.
    fn offset_after(&self, at: usize) -> Option<usize> {
        self.flat
            .get(at + 1)
            .copied()
            .flatten()
            .map(|s| self.lines.offset(s.span()))
    }

    fn run(&self, text: &str, layout: Layout, table: &mut SiteTable, edits: &mut Edits) {
        // The warp slot, computed once at the start of the body (before its
        // first label: once per call), if any probe is placed.
        let body = self.function.body.as_deref().unwrap_or(&[]);
        let first = body.iter().position(|s| {
            !matches!(
                s,
                Statement::Reg(_) | Statement::Var(_) | Statement::Pragma(_)
            )
        });
        let Some(first) = first else {
            return;
        };
        let start = self.lines.offset(body[first].span());
        let setup = edits.edits.len();
        let claim =
            (self.function.kind == FunctionKind::Entry).then_some(self.function.name.as_str());
        edits.insert(start, descriptor_setup(claim, setup) + &warp_slot_setup());
        self.place_probes(table, edits);
        if edits.edits.len() == setup + 1 {
            edits.edits.pop();
            return;
        }
        if !layout.idle_copy {
            return;
        }
        // Before the set-up (insertions at one offset keep their order).
        // A function that cannot have one keeps the probes' own idle
        // branches: it records the same, only idles at more cost.
        if let Ok(copy) = crate::idle_copy::idle_copy(text, start, &body[first..], setup) {
            edits.edits.insert(setup, (start, start, copy.test));
            edits.insert(copy.end, copy.body);
        }
    }

    fn place_probes(&self, table: &mut SiteTable, edits: &mut Edits) {
        let mut entry_done = !self.options.func_entry_exit;
        for (at, flat) in self.flat.iter().enumerate() {
            let Some(inst) = as_instruction(flat) else {
                continue;
            };
            let before = self.lines.offset(inst.span);
            if !entry_done {
                entry_done = true;
                let first_loc = self.locs.iter().flatten().next().copied();
                let id = table.add(self.location(first_loc), SiteKind::FuncEntry);
                edits.insert(
                    before,
                    probe(
                        SiteKind::FuncEntry,
                        id,
                        None,
                        "",
                        RECORD_VALUE,
                        &[
                            id.to_string(),
                            (SiteKind::FuncEntry as u32).to_string(),
                            "0".into(),
                        ],
                    ),
                );
            }
            match inst.opcode.as_str() {
                "bra" | "ret" | "exit" => {
                    if let Some(&(value, modifiers)) = self.switches.roots.get(&at) {
                        self.switch_tree_root(at, inst, value, modifiers, table, edits);
                    } else if self.switches.inner.contains(&at) {
                        // Recorded once, by the tree's root.
                    } else if let Some(guard) = &inst.guard {
                        self.branch(at, inst, guard, table, edits);
                    }
                    if inst.opcode != "bra" && self.options.func_entry_exit {
                        let id = table.add(self.site_location(at, None), SiteKind::FuncExit);
                        edits.insert(
                            before,
                            probe(
                                SiteKind::FuncExit,
                                id,
                                inst.guard.as_ref(),
                                "",
                                RECORD_VALUE,
                                &[
                                    id.to_string(),
                                    (SiteKind::FuncExit as u32).to_string(),
                                    "0".into(),
                                ],
                            ),
                        );
                    }
                }
                "brx" => {
                    let Some(index) = inst.operands.first() else {
                        continue;
                    };
                    let id = table.add(self.site_location(at, None), SiteKind::Switch);
                    self.value_probe(
                        SiteKind::Switch,
                        id,
                        inst,
                        index,
                        Some(ScalarType::U32),
                        edits,
                    );
                }
                "st" => {
                    let Some(kind) = self.store_kind(inst) else {
                        continue;
                    };
                    let Some(value) = inst.operands.get(1) else {
                        continue;
                    };
                    let id = table.add(self.site_location(at, None), kind);
                    self.value_probe(
                        kind,
                        id,
                        inst,
                        value,
                        instruction_type(&inst.modifiers),
                        edits,
                    );
                }
                "atom" | "red" => self.atomic(at, inst, table, edits),
                "setp" => self.predicating_compare(at, inst, table, edits),
                _ => {}
            }
        }
    }

    /// An `atom` records, right after it, the value it returned (the old
    /// value: the order in which lanes and warps reached it), flagged
    /// [`RETURNED_FLAG`]; an `atom.cas` also records which lanes' swap
    /// succeeded (returned value = compare operand) as a Branch event at its
    /// line. A `red` returns nothing: it records its operand, before it.
    fn atomic(&self, at: usize, inst: &Instruction, table: &mut SiteTable, edits: &mut Edits) {
        let cas = inst.has_modifier(".cas");
        let ty = instruction_type(&inst.modifiers);
        let returned = match (inst.opcode.as_str(), inst.operands.first()) {
            ("atom", Some(Operand::Register(dest))) => self.offset_after(at).map(|a| (dest, a)),
            _ => None,
        };
        let Some((dest, after)) = returned else {
            let index = match (inst.opcode.as_str(), cas) {
                ("red", _) => 1,
                (_, true) => 3,
                _ => 2,
            };
            if let Some(value) = inst.operands.get(index) {
                let id = table.add(self.site_location(at, None), SiteKind::Atomic);
                self.value_probe(SiteKind::Atomic, id, inst, value, ty, edits);
            }
            return;
        };
        let location = self.site_location(at, None);
        let id = table.add(location.clone(), SiteKind::Atomic);
        let mut prelude = String::new();
        let old = Operand::Register(dest.clone());
        let w = word(&mut prelude, &old, ty, false, &self.regs, 0);
        let kind = SiteKind::Atomic as u32 | (u32::from(RETURNED_FLAG) << 16);
        edits.insert(
            after,
            probe(
                SiteKind::Atomic,
                id,
                inst.guard.as_ref(),
                &prelude,
                RECORD_VALUE,
                &[id.to_string(), kind.to_string(), w],
            ),
        );
        // The compare operand, unless the old value overwrote it.
        let compare = inst.operands.get(2).filter(|c| match c {
            Operand::Register(r) => r.name != dest.name,
            Operand::Immediate(_) => true,
            _ => false,
        });
        // `set` compares 16, 32 and 64 bits (not `.b128`'s register pairs).
        let bits = ty.and_then(|t| match t {
            ScalarType::B16 | ScalarType::U16 | ScalarType::S16 => Some(16),
            ScalarType::B32 | ScalarType::U32 | ScalarType::S32 => Some(32),
            ScalarType::B64 | ScalarType::U64 | ScalarType::S64 => Some(64),
            _ => None,
        });
        let (true, Some(compare), Some(bits)) = (cas, compare, bits) else {
            return;
        };
        let id = table.add(location, SiteKind::Branch);
        let prelude = format!("\tset.eq.u32.b{bits} 	%prlx_w0, {dest}, {compare};\n");
        edits.insert(
            after,
            probe(
                SiteKind::Branch,
                id,
                inst.guard.as_ref(),
                &prelude,
                RECORD_BRANCH,
                &[id.to_string(), "%prlx_w0".into()],
            ),
        );
    }

    fn store_kind(&self, inst: &Instruction) -> Option<SiteKind> {
        let has = |prefix: &str| inst.modifiers.iter().any(|m| m.starts_with(prefix));
        if has(".shared") {
            return Some(SiteKind::SharedStore);
        }
        if has(".local") || has(".param") || has(".const") {
            return None;
        }
        if has(".global") {
            return self.options.global_stores.then_some(SiteKind::GlobalStore);
        }
        // Generic: decide by where the address came from.
        let origin = match inst.operands.first() {
            Some(Operand::Address(a)) => match &a.base {
                AddressBase::Register(r) => self.origins.get(r.name.as_str()).copied(),
                _ => None,
            },
            _ => None,
        };
        match origin {
            Some(Origin::Shared) => Some(SiteKind::SharedStore),
            Some(Origin::Local) => None,
            None => self.options.global_stores.then_some(SiteKind::GlobalStore),
        }
    }

    fn branch(
        &self,
        at: usize,
        inst: &Instruction,
        guard: &Guard,
        table: &mut SiteTable,
        edits: &mut Edits,
    ) {
        let compare = self.guard_compare(at, &guard.register.name);
        let id = table.add(self.site_location(at, compare), SiteKind::Branch);
        if self.options.snapshots
            && let Some(c) = compare
        {
            self.snapshot(c, id, edits);
        }
        let (taken, not_taken) = if guard.negated { (0, 1) } else { (1, 0) };
        let prelude = format!(
            "\tselp.u32 	%prlx_w0, {taken}, {not_taken}, {};\n",
            guard.register
        );
        edits.insert(
            self.lines.offset(inst.span),
            probe(
                SiteKind::Branch,
                id,
                None,
                &prelude,
                RECORD_BRANCH,
                &[id.to_string(), "%prlx_w0".into()],
            ),
        );
    }

    /// The first test of a lowered switch: one Switch event with the value
    /// switched on, recorded by every lane (not under the branch's guard).
    fn switch_tree_root(
        &self,
        at: usize,
        inst: &Instruction,
        value: &str,
        compare_modifiers: &[String],
        table: &mut SiteTable,
        edits: &mut Edits,
    ) {
        let compare = inst
            .guard
            .as_ref()
            .and_then(|g| self.guard_compare(at, &g.register.name));
        let id = table.add(self.site_location(at, compare), SiteKind::Switch);
        let mut prelude = String::new();
        let operand = Operand::Register(prlx_ptx::Register::new(value));
        let w = word(
            &mut prelude,
            &operand,
            instruction_type(compare_modifiers),
            false,
            &self.regs,
            0,
        );
        edits.insert(
            self.lines.offset(inst.span),
            probe(
                SiteKind::Switch,
                id,
                None,
                &prelude,
                RECORD_VALUE,
                &[id.to_string(), (SiteKind::Switch as u32).to_string(), w],
            ),
        );
    }

    /// A compare whose predicate guards ordinary instructions (Triton's
    /// predicated loads and stores): a branch site right after it.
    fn predicating_compare(
        &self,
        at: usize,
        inst: &Instruction,
        table: &mut SiteTable,
        edits: &mut Edits,
    ) {
        let used = |r: &prlx_ptx::Register| self.predicating.contains(r.name.as_str());
        let predicate = match inst.operands.first() {
            Some(Operand::Register(p)) if used(p) => p,
            Some(Operand::PredicatePair(p, q)) if used(p) || used(q) => p,
            _ => return,
        };
        let Some(after) = self.offset_after(at) else {
            return;
        };
        let id = table.add(self.site_location(at, None), SiteKind::Branch);
        if self.options.snapshots {
            self.snapshot(at, id, edits);
        }
        let prelude = format!("\tselp.u32 	%prlx_w0, 1, 0, {predicate};\n");
        edits.insert(
            after,
            probe(
                SiteKind::Branch,
                id,
                None,
                &prelude,
                RECORD_BRANCH,
                &[id.to_string(), "%prlx_w0".into()],
            ),
        );
    }

    /// Per-lane operands of the `setp` at flat index `at`, recorded right after it.
    fn snapshot(&self, at: usize, id: u32, edits: &mut Edits) {
        let Some(cmp) = as_instruction(&self.flat[at]) else {
            return;
        };
        let Some(ty) = instruction_type(&cmp.modifiers) else {
            return;
        };
        let Some(predicate) = cmp.modifiers.first().and_then(|op| cmp_predicate(op, ty)) else {
            return;
        };
        let (Some(lhs), Some(rhs)) = (cmp.operands.get(1), cmp.operands.get(2)) else {
            return;
        };
        let Some(after) = self.offset_after(at) else {
            return;
        };
        let signed = matches!(
            ty,
            ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
        );
        let mut prelude = String::new();
        let l = word(&mut prelude, lhs, Some(ty), signed, &self.regs, 0);
        // The first word may sit in %prlx_f; keep it before converting the second.
        let l = if l == "%prlx_f" {
            prelude.push_str("\tmov.b32 	%prlx_w2, %prlx_f;\n");
            "%prlx_w2".to_string()
        } else {
            l
        };
        let r = word(&mut prelude, rhs, Some(ty), signed, &self.regs, 1);
        edits.insert(
            after,
            probe(
                SiteKind::Branch,
                id,
                None,
                &prelude,
                RECORD_SNAPSHOT,
                &[id.to_string(), l, r, predicate.to_string()],
            ),
        );
    }

    fn value_probe(
        &self,
        kind: SiteKind,
        id: u32,
        inst: &Instruction,
        value: &Operand,
        ty: Option<ScalarType>,
        edits: &mut Edits,
    ) {
        let mut prelude = String::new();
        let w = word(&mut prelude, value, ty, false, &self.regs, 0);
        edits.insert(
            self.lines.offset(inst.span),
            probe(
                kind,
                id,
                inst.guard.as_ref(),
                &prelude,
                RECORD_VALUE,
                &[id.to_string(), (kind as u32).to_string(), w],
            ),
        );
    }
}

/// Registers holding generic addresses of shared or local memory.
fn track_origin<'a>(i: &'a Instruction, origins: &mut HashMap<&'a str, Origin>) {
    // Most functions never form a generic shared or local address: nothing
    // to track until a `cvta` does.
    if origins.is_empty() && i.opcode != "cvta" {
        return;
    }
    let Some(dest) = destination(i) else {
        return;
    };
    if i.opcode == "cvta" && !i.has_modifier(".to") {
        if i.modifiers.iter().any(|m| m.starts_with(".shared")) {
            origins.insert(dest, Origin::Shared);
            return;
        }
        if i.has_modifier(".local") {
            origins.insert(dest, Origin::Local);
            return;
        }
    }
    let derived = matches!(
        i.opcode.as_str(),
        "add" | "sub" | "mad" | "mov" | "cvt" | "or"
    );
    let from = derived
        .then(|| {
            i.operands[1..].iter().find_map(|op| match op {
                Operand::Register(r) => origins.get(r.name.as_str()).copied(),
                _ => None,
            })
        })
        .flatten();
    match from {
        Some(origin) => {
            origins.insert(dest, origin);
        }
        None => {
            origins.remove(dest);
        }
    }
}

/// One probe: a scope that loads `__prlx_desc.trace` and, when it is set
/// (and the site's own guard holds), calls the runtime with `args`.
fn probe(
    kind: SiteKind,
    id: u32,
    guard: Option<&Guard>,
    prelude: &str,
    callee: &str,
    args: &[String],
) -> String {
    let mut out = String::with_capacity(512 + prelude.len());
    let _ = writeln!(out, "{{ // prlx: {} site {id:#010x}", kind.name());
    out.push_str(SCRATCH_DECLS);
    if prelude.contains("%prlx_h") {
        out.push_str(HALF_DECL);
    }
    if prelude.contains("%prlx_f") {
        out.push_str(FLOAT_DECL);
    }
    // The function's warp slot and descriptor go last.
    let tail = [
        WARP_SLOT_REGISTER.to_string(),
        DESCRIPTOR_REGISTER.to_string(),
    ];
    let args: Vec<&String> = args.iter().chain(&tail).collect();
    for i in 0..args.len() {
        let width = if i + 1 == args.len() { 64 } else { 32 };
        let _ = writeln!(out, "\t.param .b{width} 	prlx_arg{i};");
    }
    // Not recording: past the whole probe in one uniform branch.
    static SKIPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let skip = SKIPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let _ = writeln!(out, "\t@!{RECORDING_REGISTER} bra.uni 	$__prlx_idle{skip};");
    let _ = writeln!(out, "\tld.global.u64 	%prlx_d, [{DESCRIPTOR_REGISTER}];");
    match guard {
        Some(g) => {
            let not = if g.negated { "!" } else { "" };
            let _ = writeln!(
                out,
                "\tsetp.ne.and.u64 	%prlx_p, %prlx_d, 0, {not}{};",
                g.register
            );
        }
        None => out.push_str("\tsetp.ne.u64 	%prlx_p, %prlx_d, 0;\n"),
    }
    out.push_str(prelude);
    for (i, arg) in args.iter().enumerate() {
        let width = if i + 1 == args.len() { 64 } else { 32 };
        let _ = writeln!(out, "\tst.param.b{width} 	[prlx_arg{i}], {arg};");
    }
    let _ = write!(out, "\t@%prlx_p call 	{callee}, (");
    for i in 0..args.len() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "prlx_arg{i}");
    }
    let _ = write!(out, ");\n$__prlx_idle{skip}:\n\t}}\n\t");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_rules_see_through_mangling() {
        assert!(skipped("__prlx_record_branch"));
        assert!(skipped("__nv_sinf"));
        assert!(skipped("_Z10__shfl_syncjiii"));
        assert!(!skipped("_Z6reducePfi"));
        assert!(!skipped("bin_energies"));
    }

    #[test]
    fn edits_apply_in_order() {
        let mut e = Edits::default();
        e.insert(3, "X".into());
        e.insert(0, "A".into());
        e.insert(3, "Y".into());
        e.replace((4, 5), "Z".into());
        assert_eq!(e.apply("abcdef"), "AabcXYdZf");
    }

    const CHOICE: &str = ".version 7.5
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 t)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [p];
	ld.param.u32 	%r1, [t];
	atom.global.add.u32 	%r2, [%rd1], 1;
	setp.lt.u32 	%p1, %r2, %r1;
	selp.b32 	%r3, 5, 9, %p1;
	atom.global.cas.b32 	%r4, [%rd1], %r3, 7;
	red.global.add.u32 	[%rd1], %r4;
	atom.shared.exch.b32 	%r5, [%rd1], %r1;
	st.global.u32 	[%rd1+4], %r5;
	ret;
}
";

    /// `ld/st.global.v8` and a register plus a constant as a stored value
    /// (the PTX ISA 8.8 and ptxas forms) pass through as written; the
    /// shared store's probe records the sum.
    #[test]
    fn v8_accesses_and_offset_values_pass_through() {
        let ptx = ".version 8.8
.target sm_100
.address_size 64
.visible .entry k(.param .u64 p)
{
	.shared .align 4 .b32 s[2];
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [p];
	ld.global.v8.u32 	{%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1];
	st.shared.u32 	[s], %r1 + 5;
	st.global.v8.b32 	[%rd1+32], {%r7, %r6, %r5, %r4, %r3, %r2, %r1, %r0};
	ret;
}
";
        let out = instrument(ptx, "k.ptx", &Options::default()).unwrap();
        for line in ptx
            .lines()
            .filter(|l| l.contains("v8") || l.contains("+ 5"))
        {
            assert!(out.ptx.contains(line), "{line} changed:\n{}", out.ptx);
        }
        let store = out.ptx.find("st.shared.u32 \t[s], %r1 + 5;").unwrap();
        let probe = &out.ptx[..store];
        let probe = &probe[probe.rfind("prlx: ").expect(probe)..];
        assert!(probe.contains("add.u32 \t%prlx_w0, %r1, 5;"), "{probe}");
        assert!(probe.contains("[prlx_arg2], %prlx_w0;"), "{probe}");
        // The emulator (an sm_100 device) takes the instrumented module.
        let mut device = prlx_emulator::Device::new(prlx_emulator::DeviceConfig {
            compute_capability: (10, 0),
            ..prlx_emulator::DeviceConfig::default()
        });
        if let Err(e) = device.load_module(&out.ptx, "k.ptx") {
            panic!("{e}");
        }
    }

    fn kinds(ptx: &str) -> Vec<SiteKind> {
        let out = instrument(ptx, "k.ptx", &Options::default()).unwrap();
        out.sites.sites().iter().map(|s| s.kind).collect()
    }

    #[test]
    fn atomics_record_what_they_returned_after_them() {
        let out = instrument(CHOICE, "k.ptx", &Options::default()).unwrap();
        let returned = (SiteKind::Atomic as u32) | (u32::from(RETURNED_FLAG) << 16);
        // The add's probe follows it and passes its destination, flagged.
        let add = out.ptx.find("atom.global.add.u32 	%r2").unwrap();
        let probe = &out.ptx[add..];
        let call = probe.find("call 	__prlx_record_value").unwrap();
        let flagged = format!("st.param.b32 	[prlx_arg1], {returned};");
        let at = probe.find(&flagged).unwrap();
        assert!(at < call, "{probe}");
        assert!(probe[..call].contains("[prlx_arg2], %r2;"), "{probe}");
        // cas: the old value, then a branch on old == compare operand.
        let cas = out.ptx.find("atom.global.cas.b32").unwrap();
        let after = &out.ptx[cas..];
        let set = after.find("set.eq.u32.b32 	%prlx_w0, %r4, %r3;").unwrap();
        assert!(after[..set].contains("[prlx_arg2], %r4;"), "{after}");
        // red returns nothing: its operand, before it.
        let red = out.ptx.find("red.global.add.u32 \t[%rd1], %r4").unwrap();
        let before = &out.ptx[..red];
        let last = before.rfind("prlx: Atomic").unwrap();
        assert!(before[last..].contains("[prlx_arg2], %r4;"));
        assert!(
            before[last..].contains("[prlx_arg1], 2;"),
            "{}",
            &before[last..]
        );
        assert_eq!(
            kinds(CHOICE),
            [
                SiteKind::Atomic,
                SiteKind::Branch, // the compare feeding selp
                SiteKind::Atomic,
                SiteKind::Branch, // cas succeeded
                SiteKind::Atomic, // red
                SiteKind::Atomic, // exch (shared)
            ]
        );
    }

    #[test]
    fn a_128_bit_cas_records_no_success_event() {
        let ptx = CHOICE.replace(
            "atom.global.cas.b32 \t%r4, [%rd1], %r3, 7;",
            ".reg .b128 %q<3>;\n\tatom.global.cas.b128 \t%q1, [%rd1], %q2, %q2;",
        );
        assert!(ptx.contains("cas.b128"));
        let out = instrument(&ptx, "k.ptx", &Options::default()).unwrap();
        assert!(!out.ptx.contains("set.eq.u32.b"), "{}", out.ptx);
        assert_eq!(
            kinds(&ptx)
                .iter()
                .filter(|k| **k == SiteKind::Branch)
                .count(),
            1
        );
    }

    #[test]
    fn a_compare_feeding_selp_is_a_branch_site_after_it() {
        let out = instrument(CHOICE, "k.ptx", &Options::default()).unwrap();
        let setp = out.ptx.find("setp.lt.u32 	%p1").unwrap();
        let selp = out.ptx.find("selp.b32 	%r3").unwrap();
        let between = &out.ptx[setp..selp];
        assert!(between.contains("prlx: Branch"), "{between}");
        assert!(
            between.contains("selp.u32 	%prlx_w0, 1, 0, %p1;"),
            "{between}"
        );
        assert!(between.contains("call 	__prlx_record_branch"), "{between}");
    }

    #[test]
    fn compare_predicates_are_llvm_codes() {
        assert_eq!(cmp_predicate(".lt", ScalarType::S32), Some(40));
        assert_eq!(cmp_predicate(".lt", ScalarType::U32), Some(36));
        assert_eq!(cmp_predicate(".hi", ScalarType::U64), Some(34));
        assert_eq!(cmp_predicate(".ge", ScalarType::F32), Some(3));
        assert_eq!(cmp_predicate(".neu", ScalarType::F64), Some(14));
    }
}
