//! The RDNA simulator spec's input files (`prlxctl emu run file.s`): a
//! header between two `---` lines declaring typed arguments with
//! initializers and the launch (`local`, `global`, `wave`), then RDNA
//! assembly. The assembly is assembled by `llvm-mc-19`
//! (`-triple=amdgcn-amd-amdhsa -mcpu=gfx1100 -filetype=obj`; no linking is
//! needed: the `.text` of the object is the kernel) and wrapped into a
//! [`CodeObject`] whose register layout is the spec's:
//!
//! * `s0`, `s1`, `s2`: workgroup ids x, y, z (y and z when `global` has them);
//! * `s[3:4]`: the kernarg table when there are arguments, a list of u64
//!   addresses, inputs first, then `out_` arguments; every argument
//!   (scalars too) lives in global memory;
//! * `v0`, `v1`, `v2`: work-item ids x, y, z (y and z when `local` has them);
//! * LDS: 64 KiB per workgroup; scratch: [`SCRATCH_PER_LANE`] bytes per lane.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::code_object::{CodeObject, Kernel, KernelDescriptor};
use crate::elf::Elf;
/// The element types of header arguments (shared with `prlxctl`'s `.kern`
/// files).
pub use prlx_values::ElemType;
use prlx_values::{Number, SplitMix, parse_number};

pub const SCRATCH_PER_LANE: u32 = 1024;
/// The assembler used; override with `PRLX_LLVM_MC`.
pub const LLVM_MC: &str = "llvm-mc-19";

#[derive(Debug, Clone, PartialEq)]
pub struct AsmError {
    pub file: String,
    pub line: u32,
    pub message: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.file, self.message)
        }
    }
}

impl std::error::Error for AsmError {}

/// One header argument.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgSpec {
    pub name: String,
    pub ty: ElemType,
    /// None for a scalar.
    pub shape: Option<Vec<usize>>,
    /// Initial contents (little-endian), `len() * ty.size()` bytes.
    pub data: Vec<u8>,
    pub line: u32,
}

impl ArgSpec {
    pub fn len(&self) -> usize {
        self.shape.as_ref().map_or(1, |s| s.iter().product())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn is_output(&self) -> bool {
        self.name.starts_with("out_")
    }
}

/// What a `print` directive shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrintArg {
    /// `s[lo:hi]` (or `s[n]`).
    Sgprs(u16, u16),
    /// `v[n]` (or `v[lo:hi]`), per selected thread.
    Vgprs(u16, u16),
    Exec,
    Vcc,
    Scc,
}

/// `print [wave=<id>,] [thread=<id>|thread=all,] <arg>[, <arg>...]`: shows
/// registers of a wave when it reaches the directive (before the next
/// instruction). `wave` is the global wave index (as `--step` numbers
/// waves), `thread` a lane of that wave; by default every wave and every lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintDirective {
    pub line: u32,
    pub wave: Option<u64>,
    pub thread: Option<u32>,
    pub args: Vec<PrintArg>,
    /// Code offset of the instruction the directive precedes (None: after the last one).
    pub pc: Option<u64>,
}

fn parse_print(line: u32, text: &str) -> Result<PrintDirective, String> {
    let body = text.strip_prefix("print").unwrap_or(text).trim();
    let (mut wave, mut thread, mut args) = (None, None, Vec::new());
    for item in split_top(body) {
        let it = item.replace(' ', "");
        let range = |inner: &str| -> Option<(u16, u16)> {
            let inner = inner.strip_prefix('[')?.strip_suffix(']')?;
            match inner.split_once(':') {
                Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
                None => inner.parse().ok().map(|n| (n, n)),
            }
        };
        if let Some(w) = it.strip_prefix("wave=") {
            wave = Some(
                w.parse()
                    .map_err(|_| format!("print: wave={w} is not a number"))?,
            );
        } else if let Some(t) = it.strip_prefix("thread=") {
            thread = if t == "all" {
                None
            } else {
                Some(
                    t.parse()
                        .map_err(|_| format!("print: thread={t} is not a number or all"))?,
                )
            };
        } else if it == "exec" {
            args.push(PrintArg::Exec);
        } else if it == "vcc" {
            args.push(PrintArg::Vcc);
        } else if it == "scc" {
            args.push(PrintArg::Scc);
        } else if let Some(r) = it.strip_prefix('s').and_then(range).or_else(|| {
            it.strip_prefix('s')
                .and_then(|n| n.parse().ok())
                .map(|n| (n, n))
        }) {
            if r.1 < r.0 || r.1 > 105 {
                return Err(format!("print: bad SGPR range `{item}`"));
            }
            args.push(PrintArg::Sgprs(r.0, r.1));
        } else if let Some(r) = it.strip_prefix('v').and_then(range).or_else(|| {
            it.strip_prefix('v')
                .and_then(|n| n.parse().ok())
                .map(|n| (n, n))
        }) {
            if r.1 < r.0 || r.1 > 255 {
                return Err(format!("print: bad VGPR range `{item}`"));
            }
            args.push(PrintArg::Vgprs(r.0, r.1));
        } else {
            return Err(format!(
                "print: cannot parse `{item}` (s[n], s[lo:hi], v[n], exec, vcc, scc, wave=N, thread=N|all)"
            ));
        }
    }
    if args.is_empty() {
        return Err("print: nothing to print".into());
    }
    Ok(PrintDirective {
        line,
        wave,
        thread,
        args,
        pc: None,
    })
}

/// A parsed and assembled `.s` file.
#[derive(Debug, Clone)]
pub struct AsmProgram {
    pub file: String,
    pub args: Vec<ArgSpec>,
    /// Workgroup size (`local`) and count (`global`).
    pub local: [u32; 3],
    pub global: [u32; 3],
    pub wave_size: u32,
    /// `print` directives, in source order.
    pub prints: Vec<PrintDirective>,
    /// The code object: one kernel named `main`.
    pub code: CodeObject,
    /// Source line of the instruction at each code offset.
    pub lines: BTreeMap<u64, u32>,
    /// Source text of each line (1-based index).
    pub source: Vec<String>,
}

/// Splits on commas outside parentheses and quotes.
fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut cur) = (0, false, String::new());
    for ch in s.chars() {
        match ch {
            '"' => quoted = !quoted,
            '(' | '[' if !quoted => depth += 1,
            ')' | ']' if !quoted => depth -= 1,
            ',' if depth == 0 && !quoted => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn dims3(v: &str) -> Option<[u32; 3]> {
    let v = v.trim().trim_start_matches('(').trim_end_matches(')');
    let parts: Vec<&str> = v
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        let i = parse_number(p)?.as_int()?;
        d[k] = u32::try_from(i).ok().filter(|&x| x > 0)?;
    }
    Some(d)
}

/// Parses the header and collects the assembly lines; `base_dir` resolves `file(...)` paths.
pub fn parse(file: &str, text: &str, base_dir: &Path) -> Result<AsmProgram, AsmError> {
    let err = |line: u32, m: String| AsmError {
        file: file.to_string(),
        line,
        message: m,
    };
    let lines: Vec<&str> = text.lines().collect();
    let seps: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim() == "---")
        .map(|(i, _)| i)
        .collect();
    if seps.len() < 2 {
        return Err(err(0, "expected a header between two `---` lines".into()));
    }
    let (h0, h1) = (seps[0], seps[1]);
    let mut args = Vec::new();
    let (mut local, mut global, mut wave) = (None, None, 32u32);
    for (idx, raw) in lines.iter().enumerate().take(h1).skip(h0 + 1) {
        let ln = idx as u32 + 1;
        let l = raw.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        if let Some((key, value)) = l.split_once(':').filter(|(k, _)| !k.contains('=')) {
            // name: type[shape] [= init]
            let name = key.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(err(ln, format!("invalid argument name `{name}`")));
            }
            let (decl, init) = match value.split_once('=') {
                Some((d, i)) => (d.trim(), Some(i.trim())),
                None => (value.trim(), None),
            };
            let (tname, shape) = match decl.split_once('[') {
                Some((t, rest)) => {
                    let inner = rest
                        .strip_suffix(']')
                        .ok_or_else(|| err(ln, format!("`{decl}`: missing `]`")))?;
                    let dims = inner
                        .split(',')
                        .map(|d| d.trim().parse::<usize>().ok().filter(|&x| x > 0))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| {
                            err(ln, format!("`{decl}`: shape must be positive integers"))
                        })?;
                    (t.trim(), Some(dims))
                }
                None => (decl, None),
            };
            let ty = ElemType::parse(tname).ok_or_else(|| {
                err(
                    ln,
                    format!(
                        "unknown type `{tname}` (u8 u16 u32 u64 i8 i16 i32 i64 f16 bf16 f32 f64)"
                    ),
                )
            })?;
            let n: usize = shape.as_ref().map_or(1, |s| s.iter().product());
            let data = init_data(ty, n, init, args.len() as u64, base_dir)
                .map_err(|m| err(ln, format!("{name}: {m}")))?;
            args.push(ArgSpec {
                name: name.to_string(),
                ty,
                shape,
                data,
                line: ln,
            });
        } else if let Some((key, value)) = l.split_once('=') {
            match key.trim() {
                "local" => {
                    local = Some(dims3(value).ok_or_else(|| {
                        err(
                            ln,
                            format!("local = {}: expected x[, y[, z]] positive", value.trim()),
                        )
                    })?)
                }
                "global" => {
                    global = Some(dims3(value).ok_or_else(|| {
                        err(
                            ln,
                            format!("global = {}: expected x[, y[, z]] positive", value.trim()),
                        )
                    })?)
                }
                "wave" => {
                    wave = match value.trim() {
                        "32" => 32,
                        "64" => 64,
                        v => return Err(err(ln, format!("wave = {v}: expected 32 or 64"))),
                    }
                }
                k => {
                    return Err(err(
                        ln,
                        format!("unknown setting `{k}` (local, global, wave)"),
                    ));
                }
            }
        } else {
            return Err(err(
                ln,
                format!("cannot parse `{l}`: expected `name: type[...] [= init]` or `key = value`"),
            ));
        }
    }
    let local =
        local.ok_or_else(|| err(h0 as u32 + 1, "the header has no `local = x, y, z`".into()))?;
    let global = global.unwrap_or([1, 1, 1]);
    if local.iter().product::<u32>() > 1024 {
        return Err(err(
            0,
            format!("local = {local:?}: more than 1024 work-items per workgroup"),
        ));
    }
    // Instruction block: keep line numbers by blanking everything else.
    let mut asm = String::new();
    let mut prints = Vec::new();
    let mut inst_lines = Vec::new();
    for (idx, raw) in lines.iter().enumerate() {
        let ln = idx as u32 + 1;
        if idx == 0 {
            asm.push_str(".text");
        }
        if idx > h1 {
            let code = strip_comment(raw);
            let t = code.trim();
            if t.starts_with("print ") || t == "print" {
                prints.push(parse_print(ln, t).map_err(|m| err(ln, m))?);
            } else if !t.is_empty() {
                let is_label = t.ends_with(':') && !t.contains(' ');
                if !is_label && !t.starts_with('.') {
                    inst_lines.push(ln);
                }
                if idx > 0 {
                    asm.push_str(&legacy_sendmsg(code).unwrap_or_else(|| code.to_string()));
                }
            }
        }
        asm.push('\n');
    }
    let text_bytes = assemble(file, &asm, wave == 64)?;
    if text_bytes.is_empty() {
        return Err(err(
            h1 as u32 + 1,
            "no instructions after the header".into(),
        ));
    }
    let decoded = crate::decode::decode_all(&text_bytes, 0);
    let mut line_map = BTreeMap::new();
    if decoded.len() == inst_lines.len() {
        for ((pc, _), ln) in decoded.iter().zip(&inst_lines) {
            line_map.insert(*pc, *ln);
        }
    }
    for p in prints.iter_mut() {
        p.pc = line_map
            .iter()
            .find(|(_, l)| **l > p.line)
            .map(|(pc, _)| *pc);
    }
    let code = build_code_object(text_bytes, wave, global);
    Ok(AsmProgram {
        file: file.to_string(),
        args,
        local,
        global,
        wave_size: wave,
        prints,
        code,
        lines: line_map,
        source: lines.iter().map(|s| s.to_string()).collect(),
    })
}

/// The spec's examples use the pre-gfx11 GS messages
/// (`s_sendmsg sendmsg(MSG_GS_DONE, GS_OP_NOP)`), which llvm-mc refuses for
/// gfx1100: they are written as their raw immediate (the emulator executes
/// `s_sendmsg` as a no-op either way).
fn legacy_sendmsg(code: &str) -> Option<String> {
    let t = code.trim();
    let (mnemonic, rest) = t.split_once(char::is_whitespace)?;
    if mnemonic != "s_sendmsg" && mnemonic != "s_sendmsghalt" {
        return None;
    }
    let inner = rest.trim().strip_prefix("sendmsg(")?.strip_suffix(')')?;
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let id = match parts[0] {
        "MSG_GS" => 2,
        "MSG_GS_DONE" => 3,
        "MSG_SAVEWAVE" => 4,
        _ => return None,
    };
    let op = match parts.get(1).copied() {
        None | Some("GS_OP_NOP") => 0,
        Some("GS_OP_CUT") => 1,
        Some("GS_OP_EMIT") => 2,
        Some("GS_OP_EMIT_CUT") => 3,
        Some(n) => n.parse().ok()?,
    };
    let stream: u32 = parts.get(2).map_or(Some(0), |n| n.parse().ok())?;
    Some(format!("{mnemonic} {}", id | (op << 4) | (stream << 8)))
}

fn strip_comment(l: &str) -> &str {
    let mut end = l.len();
    for pat in ["//", ";"] {
        if let Some(p) = l.find(pat) {
            end = end.min(p);
        }
    }
    if l.trim_start().starts_with('#') {
        end = 0;
    }
    &l[..end]
}

fn init_data(
    ty: ElemType,
    n: usize,
    init: Option<&str>,
    seed: u64,
    base_dir: &Path,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(n * ty.size());
    let Some(init) = init else {
        return Ok(vec![0; n * ty.size()]);
    };
    let call = |name: &str| -> Option<Vec<String>> {
        let rest = init.strip_prefix(name)?.trim();
        let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
        Some(split_top(inner))
    };
    let num = |s: &str| parse_number(s).ok_or_else(|| format!("`{s}` is not a number"));
    if let Some(a) = call("repeat") {
        let [v] = a.as_slice() else {
            return Err("repeat(value) takes one value".into());
        };
        let v = num(v)?;
        for _ in 0..n {
            out.extend(ty.encode_wrapping(v));
        }
    } else if let Some(a) = call("arange") {
        let vals: Vec<Number> = a.iter().map(|s| num(s)).collect::<Result<_, _>>()?;
        let (start, end, step) = match vals.as_slice() {
            [e] => (Number::Int(0), *e, Number::Int(1)),
            [s, e] => (*s, *e, Number::Int(1)),
            [s, e, st] => (*s, *e, *st),
            _ => return Err("arange(n) or arange(start, end[, step])".into()),
        };
        if step.as_f64() == 0.0 {
            return Err("arange: step must not be zero".into());
        }
        let count = ((end.as_f64() - start.as_f64()) / step.as_f64())
            .ceil()
            .max(0.0) as usize;
        if count != n {
            return Err(format!("arange gives {count} values for {n} elements"));
        }
        for k in 0..n {
            let v = match (start, step) {
                (Number::Int(s), Number::Int(st)) if !ty.is_float() => {
                    Number::Int(s + st * k as i128)
                }
                _ => Number::Float(start.as_f64() + step.as_f64() * k as f64),
            };
            out.extend(ty.encode_wrapping(v));
        }
    } else if let Some(a) = call("rand") {
        if !a.is_empty() {
            return Err("rand() takes no arguments".into());
        }
        let mut r = SplitMix::new(0x5eed ^ seed.wrapping_mul(0x1000_0001));
        for _ in 0..n {
            let v = if ty.is_float() {
                Number::Float(r.unit())
            } else {
                Number::Int((r.next_u64() % 100) as i128)
            };
            out.extend(ty.encode_wrapping(v));
        }
    } else if let Some(a) = call("file") {
        let [path, dtype] = a.as_slice() else {
            return Err("file(\"path\", dtype)".into());
        };
        let path = path.trim().trim_matches('"');
        let dt = ElemType::parse(dtype.trim())
            .ok_or_else(|| format!("file(): unknown dtype `{dtype}`"))?;
        let full: PathBuf = base_dir.join(path);
        let bytes =
            std::fs::read(&full).map_err(|e| format!("file(\"{}\"): {e}", full.display()))?;
        if bytes.len() < n * dt.size() {
            return Err(format!(
                "file(\"{path}\") holds {} bytes, {} needed",
                bytes.len(),
                n * dt.size()
            ));
        }
        for k in 0..n {
            let b = &bytes[k * dt.size()..(k + 1) * dt.size()];
            let v = parse_number(&dt.decode(b)).unwrap_or(Number::Float(f64::NAN));
            out.extend(ty.encode_wrapping(v));
        }
    } else {
        let vals = split_top(init);
        if vals.len() != n {
            return Err(format!("{} initial values for {n} elements", vals.len()));
        }
        for v in vals {
            let x = num(&v)?;
            if !ty.is_float() && x.as_int().is_none() {
                return Err(format!("`{v}` is not an integer ({} argument)", ty.name()));
            }
            out.extend(ty.encode_wrapping(x));
        }
    }
    Ok(out)
}

/// Assembles `asm` (line numbers preserved) and returns the `.text` bytes.
fn assemble(file: &str, asm: &str, wave64: bool) -> Result<Vec<u8>, AsmError> {
    let err = |line: u32, m: String| AsmError {
        file: file.to_string(),
        line,
        message: m,
    };
    let dir = std::env::temp_dir().join(format!("prlx-rdna-asm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| err(0, format!("temporary directory: {e}")))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let src = dir.join(format!("k{stamp}.s"));
    let obj = dir.join(format!("k{stamp}.o"));
    std::fs::write(&src, asm).map_err(|e| err(0, format!("{}: {e}", src.display())))?;
    let mc = std::env::var("PRLX_LLVM_MC").unwrap_or_else(|_| LLVM_MC.to_string());
    let mut cmd = Command::new(&mc);
    cmd.args([
        "-triple=amdgcn-amd-amdhsa",
        "-mcpu=gfx1100",
        "-filetype=obj",
    ]);
    cmd.arg(if wave64 {
        "-mattr=+wavefrontsize64"
    } else {
        "-mattr=+wavefrontsize32"
    });
    cmd.arg(&src).arg("-o").arg(&obj);
    let out = cmd.output().map_err(|e| {
        err(
            0,
            format!("running {mc}: {e} (install LLVM 19: scripts/setup.sh)"),
        )
    })?;
    let result = if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        let src_name = src.display().to_string();
        // First diagnostic: "<tmp>:LINE:COL: error: text"
        let first = msg
            .lines()
            .find(|l| l.contains("error:"))
            .unwrap_or("assembly failed")
            .to_string();
        let line = first
            .strip_prefix(&src_name)
            .and_then(|r| r.trim_start_matches(':').split(':').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let text = first
            .split("error:")
            .nth(1)
            .unwrap_or(&first)
            .trim()
            .to_string();
        Err(err(line, format!("llvm-mc: {text}")))
    } else {
        let bytes = std::fs::read(&obj).map_err(|e| err(0, format!("{}: {e}", obj.display())))?;
        let elf = Elf::parse(&bytes).map_err(|e| err(0, format!("llvm-mc output: {e}")))?;
        let has_relocs = elf
            .sections
            .iter()
            .any(|s| s.name == ".rela.text" || s.name == ".rel.text");
        if has_relocs {
            Err(err(0, "the code refers to symbols outside it (relocations); only local labels are supported".into()))
        } else {
            let text = elf
                .section(".text")
                .ok_or_else(|| err(0, "llvm-mc produced no .text".into()))?;
            Ok(elf
                .section_data(text)
                .map_err(|e| err(0, e.to_string()))?
                .to_vec())
        }
    };
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&obj);
    let _ = std::fs::remove_dir(&dir);
    result
}

/// A code object holding `text` as kernel `main` with a descriptor matching
/// the spec's layout (workgroup ids in s0..s2, no user SGPRs; the runner
/// writes the kernarg table pointer to s[3:4]).
fn build_code_object(text: Vec<u8>, wave: u32, global: [u32; 3]) -> CodeObject {
    let granule = if wave == 32 { 8 } else { 4 };
    let rsrc1 = 256 / granule - 1;
    let mut rsrc2 = 1 << 7; // workgroup id x
    if global[1] > 1 {
        rsrc2 |= 1 << 8;
    }
    if global[2] > 1 {
        rsrc2 |= 1 << 9;
    }
    rsrc2 |= 2 << 11; // work-item ids x, y, z
    let descriptor = KernelDescriptor {
        group_segment_fixed_size: crate::device::LDS_BYTES,
        private_segment_fixed_size: SCRATCH_PER_LANE,
        kernarg_size: 0,
        kernel_code_entry_byte_offset: 0,
        compute_pgm_rsrc3: 0,
        compute_pgm_rsrc1: rsrc1,
        compute_pgm_rsrc2: rsrc2,
        kernel_code_properties: if wave == 32 { 1 << 10 } else { 0 },
    };
    let kernel = Kernel {
        name: "main".into(),
        descriptor,
        entry: 0,
        args: Vec::new(),
        kernarg_segment_size: 0,
        kernarg_segment_align: 8,
        group_segment_fixed_size: crate::device::LDS_BYTES,
        private_segment_fixed_size: SCRATCH_PER_LANE,
        wavefront_size: wave,
        max_flat_workgroup_size: 1024,
        uses_dynamic_stack: false,
    };
    let size = text.len() as u64;
    CodeObject {
        mach: 0x41,
        kernels: BTreeMap::from([("main".to_string(), kernel)]),
        text_addr: 0,
        segments: vec![(0, text.clone())],
        symbols: vec![("main".into(), 0, size)],
        relocations: Vec::new(),
        text,
    }
}

/// A loaded program: device buffers of every argument and the table.
pub struct Loaded {
    pub module: crate::ModuleId,
    /// Device address of each argument (header order).
    pub addrs: Vec<u64>,
    pub table: Option<u64>,
}

impl AsmProgram {
    /// Allocates and fills every argument and the kernarg table, loads the code.
    pub fn load(&self, dev: &mut crate::Device) -> Result<Loaded, crate::Fault> {
        let mut addrs = Vec::new();
        for a in &self.args {
            let size = (a.len() * a.ty.size()).max(1) as u64;
            let p = dev
                .alloc(size, 256)
                .ok_or_else(|| crate::Fault::launch("main", "out of device memory"))?;
            dev.write(p, &a.data).expect("fresh allocation");
            addrs.push(p);
        }
        let table = if self.args.is_empty() {
            None
        } else {
            let order = self
                .args
                .iter()
                .enumerate()
                .filter(|(_, a)| !a.is_output())
                .chain(self.args.iter().enumerate().filter(|(_, a)| a.is_output()));
            let bytes: Vec<u8> = order.flat_map(|(k, _)| addrs[k].to_le_bytes()).collect();
            let t = dev
                .alloc(bytes.len() as u64, 256)
                .ok_or_else(|| crate::Fault::launch("main", "out of device memory"))?;
            dev.write(t, &bytes).expect("fresh allocation");
            Some(t)
        };
        let module = dev.load(self.code.clone())?;
        Ok(Loaded {
            module,
            addrs,
            table,
        })
    }

    /// Runs the kernel with the spec's initial register state.
    pub fn run(
        &self,
        dev: &mut crate::Device,
        loaded: &Loaded,
    ) -> Result<crate::LaunchStats, crate::Fault> {
        let table = loaded.table;
        let local = self.local;
        let setup = move |w: &mut crate::Wave, wg: [u32; 3]| {
            // s0..s2: workgroup ids (the descriptor enables only the dims in use).
            for (d, &id) in wg.iter().enumerate() {
                w.set_sreg(d as u16, id);
            }
            if let Some(t) = table {
                w.set_sreg64(3, t);
            }
            for lane in 0..w.wave_size as usize {
                if w.lanes_present >> lane & 1 == 1 {
                    let [x, y, z] = w.lane_ids[lane];
                    w.set_vgpr(0, lane, x);
                    if local[1] > 1 || local[2] > 1 {
                        w.set_vgpr(1, lane, y);
                    }
                    if local[2] > 1 {
                        w.set_vgpr(2, lane, z);
                    }
                }
            }
        };
        let launch = crate::device::Launch {
            grid: self.global,
            block: self.local,
            dynamic_lds: 0,
            kernarg: &[],
            setup: Some(&setup),
        };
        dev.launch_with(loaded.module, "main", &launch)
    }
}
