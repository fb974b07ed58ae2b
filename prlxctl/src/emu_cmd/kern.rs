//! The `.kern` file: a header that declares the kernel's arguments and its
//! launch, between two `---` lines, followed by the PTX. Format reference:
//! `examples/kern/README.md`.

use std::fmt;

use super::values::{ElemType, Number, SplitMix, parse_number};

/// A parse or validation error, naming the file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernError {
    pub file: String,
    pub line: u32,
    pub message: String,
}

impl fmt::Display for KernError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for KernError {}

#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    Zeros,
    Values(Vec<Number>),
    Range { start: Number, step: Number },
    Fill(Number),
    Random { seed: u64, lo: Number, hi: Number },
}

/// One kernel argument, in parameter order.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgDecl {
    pub name: String,
    pub ty: ElemType,
    /// `None` for a scalar passed by value; arrays are passed as pointers.
    pub shape: Option<Vec<usize>>,
    pub init: Init,
    pub line: u32,
}

impl ArgDecl {
    pub fn is_output(&self) -> bool {
        self.name.starts_with("out_")
    }

    pub fn len(&self) -> usize {
        self.shape.as_ref().map_or(1, |s| s.iter().product())
    }

    /// The initial contents, little-endian.
    pub fn bytes(&self) -> Result<Vec<u8>, String> {
        let n = self.len();
        let mut out = Vec::with_capacity(n * self.ty.size());
        let mut put = |v: Number, i: usize| {
            self.ty
                .encode(v, &mut out)
                .map_err(|e| format!("`{}` element {i}: {e}", self.name))
        };
        match &self.init {
            Init::Zeros => out.resize(n * self.ty.size(), 0),
            Init::Values(vs) => {
                for (i, v) in vs.iter().enumerate() {
                    put(*v, i)?;
                }
            }
            Init::Fill(v) => {
                for i in 0..n {
                    put(*v, i)?;
                }
            }
            Init::Range { start, step } => {
                for i in 0..n {
                    let v = match (start, step) {
                        (Number::Int(a), Number::Int(s)) => Number::Int(a + s * i as i128),
                        _ => Number::Float(start.as_f64() + step.as_f64() * i as f64),
                    };
                    put(v, i)?;
                }
            }
            Init::Random { seed, lo, hi } => {
                let mut rng = SplitMix::new(*seed);
                for i in 0..n {
                    let v = match (lo, hi) {
                        (Number::Int(lo), Number::Int(hi)) if !self.ty.is_float() => {
                            let span = (hi - lo + 1) as u128;
                            Number::Int(lo + (rng.next_u64() as u128 % span) as i128)
                        }
                        _ => {
                            let (lo, hi) = (lo.as_f64(), hi.as_f64());
                            Number::Float(lo + (hi - lo) * rng.unit())
                        }
                    };
                    put(v, i)?;
                }
            }
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernFile {
    pub file: String,
    pub args: Vec<ArgDecl>,
    /// The kernel's name and the header line naming it.
    pub kernel: Option<(String, u32)>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    /// The line of the `---` closing the header.
    pub header_end_line: u32,
    /// The PTX, preceded by blank lines so that its line numbers are the
    /// `.kern` file's.
    pub ptx: String,
}

/// Arrays larger than this are almost certainly a typo.
const MAX_ELEMENTS: usize = 1 << 28;

pub fn parse(file: &str, text: &str) -> Result<KernFile, KernError> {
    let err = |line: usize, message: String| KernError {
        file: file.to_string(),
        line: line as u32,
        message,
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() && is_blank_or_comment(lines[i]) {
        i += 1;
    }
    if i == lines.len() || lines[i].trim() != "---" {
        return Err(err(
            i.min(lines.len().saturating_sub(1)) + 1,
            "expected `---` to open the header".into(),
        ));
    }
    let open = i;
    let mut kf = KernFile {
        file: file.to_string(),
        args: Vec::new(),
        kernel: None,
        grid: [1, 1, 1],
        block: [0, 0, 0],
        dynamic_shared_bytes: 0,
        header_end_line: 0,
        ptx: String::new(),
    };
    let mut block_seen = false;
    i += 1;
    loop {
        let Some(raw) = lines.get(i) else {
            return Err(err(
                open + 1,
                "the header opened here is not closed by a `---` line".into(),
            ));
        };
        let lineno = i + 1;
        let line = strip_comment(raw).trim();
        i += 1;
        if line.is_empty() {
            continue;
        }
        if line == "---" {
            kf.header_end_line = lineno as u32;
            break;
        }
        let colon = line.find(':');
        let equals = line.find('=');
        match (colon, equals) {
            (Some(c), e) if e.is_none_or(|e| c < e) => {
                let decl = parse_arg(line, lineno as u32).map_err(|m| err(lineno, m))?;
                if kf.args.iter().any(|a| a.name == decl.name) {
                    return Err(err(
                        lineno,
                        format!("argument `{}` is declared twice", decl.name),
                    ));
                }
                kf.args.push(decl);
            }
            (_, Some(e)) => {
                let key = line[..e].trim();
                let value = line[e + 1..].trim();
                match key {
                    "kernel" => {
                        if !is_identifier(value) {
                            return Err(err(lineno, format!("`{value}` is not a kernel name")));
                        }
                        kf.kernel = Some((value.to_string(), lineno as u32));
                    }
                    "grid" => {
                        kf.grid =
                            parse_dims(value).map_err(|m| err(lineno, format!("grid: {m}")))?
                    }
                    "block" => {
                        kf.block =
                            parse_dims(value).map_err(|m| err(lineno, format!("block: {m}")))?;
                        block_seen = true;
                    }
                    "shared" => {
                        kf.dynamic_shared_bytes = parse_u32(value).ok_or_else(|| {
                            err(lineno, format!("shared: `{value}` is not a byte count"))
                        })?;
                    }
                    other => {
                        return Err(err(
                            lineno,
                            format!(
                                "unknown setting `{other}` (expected kernel, grid, block or shared)"
                            ),
                        ));
                    }
                }
            }
            _ => {
                return Err(err(
                    lineno,
                    format!(
                        "expected `name: type[shape] = init` or `setting = value`, found `{line}`"
                    ),
                ));
            }
        }
    }
    if !block_seen {
        return Err(err(
            kf.header_end_line as usize,
            "the header has no `block = x, y, z` line".into(),
        ));
    }
    let body = &lines[i..];
    if body.iter().all(|l| l.trim().is_empty()) {
        return Err(err(
            kf.header_end_line as usize,
            "no PTX follows the header".into(),
        ));
    }
    kf.ptx = "\n".repeat(i) + &body.join("\n") + "\n";
    Ok(kf)
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

fn strip_comment(line: &str) -> &str {
    line.split_once('#').map_or(line, |(before, _)| before)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn parse_u32(s: &str) -> Option<u32> {
    match parse_number(s)? {
        Number::Int(i) => u32::try_from(i).ok(),
        Number::Float(_) => None,
    }
}

/// `x`, `x, y` or `x, y, z`, parentheses optional; missing dimensions are 1.
fn parse_dims(s: &str) -> Result<[u32; 3], String> {
    let s = s.trim();
    let s = s
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(s);
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!("`{s}` has more than 3 dimensions"));
    }
    let mut dims = [1u32; 3];
    for (d, p) in dims.iter_mut().zip(&parts) {
        *d = parse_u32(p)
            .filter(|v| *v > 0)
            .ok_or_else(|| format!("`{p}` is not a positive integer"))?;
    }
    Ok(dims)
}

/// `name: type`, `name: type[d0, d1]`, optionally `= init`.
fn parse_arg(line: &str, lineno: u32) -> Result<ArgDecl, String> {
    let (name, rest) = line.split_once(':').unwrap_or((line, ""));
    let name = name.trim();
    if !is_identifier(name) {
        return Err(format!("`{name}` is not an argument name"));
    }
    let (ty_text, init_text) = match rest.split_once('=') {
        Some((t, i)) => (t.trim(), Some(i.trim())),
        None => (rest.trim(), None),
    };
    let (ty_name, shape) = match ty_text.split_once('[') {
        Some((t, dims)) => {
            let dims = dims
                .strip_suffix(']')
                .ok_or_else(|| format!("`{ty_text}`: missing `]`"))?;
            let mut shape = Vec::new();
            for d in dims.split(',') {
                let v = parse_u32(d.trim())
                    .filter(|v| *v > 0)
                    .ok_or_else(|| format!("`{}` is not a positive array dimension", d.trim()))?;
                shape.push(v as usize);
            }
            let n = shape.iter().try_fold(1usize, |a, d| a.checked_mul(*d));
            if n.is_none_or(|n| n > MAX_ELEMENTS) {
                return Err(format!("`{name}` has more than {MAX_ELEMENTS} elements"));
            }
            (t.trim(), Some(shape))
        }
        None => (ty_text, None),
    };
    let ty = ElemType::parse(ty_name).ok_or_else(|| {
        format!("unknown type `{ty_name}` (expected u8..u64, i8..i64, f16, bf16, f32 or f64)")
    })?;
    if shape.is_none() && name.starts_with("out_") {
        return Err(format!(
            "output `{name}` must be an array, e.g. `{name}: {ty_name}[16]`"
        ));
    }
    let init = match init_text {
        None => Init::Zeros,
        Some(t) => parse_init(t)?,
    };
    let decl = ArgDecl {
        name: name.to_string(),
        ty,
        shape,
        init,
        line: lineno,
    };
    let n = decl.len();
    match (&decl.init, &decl.shape) {
        (Init::Values(vs), Some(_)) if vs.len() != n => {
            return Err(format!(
                "`{name}` has {n} elements but {} values are given",
                vs.len()
            ));
        }
        (Init::Values(vs), None) if vs.len() != 1 => {
            return Err(format!(
                "scalar `{name}` takes one value, {} are given",
                vs.len()
            ));
        }
        (Init::Range { .. } | Init::Fill(_) | Init::Random { .. }, None) => {
            return Err(format!(
                "scalar `{name}` takes a single value, not an array initializer"
            ));
        }
        (Init::Random { lo, hi, .. }, _) if lo.as_f64() > hi.as_f64() => {
            return Err(format!(
                "random(): low bound {} is above high bound {}",
                lo.as_f64(),
                hi.as_f64()
            ));
        }
        _ => {}
    }
    // Range-check every element now, so errors point at this line.
    decl.bytes()?;
    Ok(decl)
}

fn parse_init(t: &str) -> Result<Init, String> {
    if t == "zeros" {
        return Ok(Init::Zeros);
    }
    if let Some((func, args)) = t.split_once('(') {
        let func = func.trim();
        if is_identifier(func) {
            let args = args
                .trim_end()
                .strip_suffix(')')
                .ok_or_else(|| format!("`{t}`: missing `)`"))?;
            let nums = parse_numbers(args)?;
            return match (func, nums.as_slice()) {
                ("fill", [v]) => Ok(Init::Fill(*v)),
                ("range", [start]) => Ok(Init::Range {
                    start: *start,
                    step: Number::Int(1),
                }),
                ("range", [start, step]) => Ok(Init::Range {
                    start: *start,
                    step: *step,
                }),
                ("random", [Number::Int(seed), lo, hi]) if *seed >= 0 => Ok(Init::Random {
                    seed: *seed as u64,
                    lo: *lo,
                    hi: *hi,
                }),
                ("fill" | "range" | "random", _) => Err(format!(
                    "`{t}`: expected fill(value), range(start, step) or random(seed, lo, hi)"
                )),
                _ => Err(format!(
                    "unknown initializer `{func}` (expected zeros, fill, range, random or a list of values)"
                )),
            };
        }
    }
    Ok(Init::Values(parse_numbers(t)?))
}

fn parse_numbers(s: &str) -> Result<Vec<Number>, String> {
    s.split(',')
        .map(|p| parse_number(p.trim()).ok_or_else(|| format!("`{}` is not a number", p.trim())))
        .collect()
}

/// The names of the PTX's `.entry` functions, for a header without `kernel =`.
pub fn entry_names(ptx: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry") {
        rest = &rest[at + ".entry".len()..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        if !name.is_empty() {
            names.push(name);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "# a comment\n---\na: f32[4] = 1, 2.5, -3, 0x10\nn: u32 = 4\nout_b: i32[2, 2]\nkernel = k\ngrid = 2\nblock = (32, 2)\nshared = 64\n---\n.entry k() { ret; }\n";

    #[test]
    fn parses_header_and_keeps_ptx_lines() {
        let kf = parse("t.kern", SAMPLE).unwrap();
        assert_eq!(kf.args.len(), 3);
        assert_eq!(kf.args[0].shape, Some(vec![4]));
        assert_eq!(kf.args[0].line, 3);
        assert!(kf.args[2].is_output());
        assert_eq!(kf.args[2].len(), 4);
        assert_eq!(kf.kernel, Some(("k".to_string(), 6)));
        assert_eq!(
            (kf.grid, kf.block, kf.dynamic_shared_bytes),
            ([2, 1, 1], [32, 2, 1], 64)
        );
        assert_eq!(kf.header_end_line, 10);
        assert_eq!(kf.ptx.lines().nth(10), Some(".entry k() { ret; }"));
        let a = kf.args[0].bytes().unwrap();
        assert_eq!(&a[4..8], &2.5f32.to_le_bytes());
        assert_eq!(&a[12..16], &16f32.to_le_bytes());
    }

    #[test]
    fn initializers() {
        let arg = |s: &str| parse_arg(s, 1).unwrap().bytes().unwrap();
        assert_eq!(arg("x: u16[3] = range(5, 2)"), [5, 0, 7, 0, 9, 0]);
        assert_eq!(arg("x: i8[2] = fill(-1)"), [0xff, 0xff]);
        assert_eq!(arg("x: u8[2] = zeros"), [0, 0]);
        assert_eq!(arg("x: u8[2]"), [0, 0]);
        assert_eq!(
            arg("x: u32[3] = random(7, 0, 9)"),
            arg("x: u32[3] = random(7, 0, 9)")
        );
        for chunk in arg("x: i32[64] = random(1, -3, 3)").chunks(4) {
            let v = i32::from_le_bytes(chunk.try_into().unwrap());
            assert!((-3..=3).contains(&v));
        }
        let f = arg("x: f32[2] = range(0.5, 0.25)");
        assert_eq!(&f[4..], &0.75f32.to_le_bytes());
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("t.kern", "---\na: f32[2] = 1, 2, 3\nblock = 1\n---\nx\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.kern:2: `a` has 2 elements but 3 values are given"
        );
        let e = parse("t.kern", "---\na: q32[2]\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("unknown type `q32`"));
        let e = parse("t.kern", "---\nblock = 1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.kern:1: the header opened here is not closed by a `---` line"
        );
        let e = parse("t.kern", "---\nb: u8[2] = 1, 256\nblock = 1\n---\nx\n").unwrap_err();
        assert!(e.message.contains("256 does not fit in u8"), "{e}");
        let e = parse("t.kern", "---\ngrid = 0\n---\n").unwrap_err();
        assert!(
            e.message.contains("grid: `0` is not a positive integer"),
            "{e}"
        );
        let e = parse("t.kern", "---\nblock = 1\n---\n\n").unwrap_err();
        assert_eq!(e.to_string(), "t.kern:3: no PTX follows the header");
        let e = parse("t.kern", "---\nout_x: u32 = 3\n").unwrap_err();
        assert!(e.message.contains("must be an array"), "{e}");
        let e = parse("t.kern", "nonsense\n").unwrap_err();
        assert_eq!(e.to_string(), "t.kern:1: expected `---` to open the header");
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0b101"), Some(Number::Int(5)));
        assert_eq!(parse_number("-0x10"), Some(Number::Int(-16)));
        assert_eq!(parse_number("1e3"), Some(Number::Float(1000.0)));
        assert_eq!(parse_number("-inf"), Some(Number::Float(f64::NEG_INFINITY)));
        assert!(matches!(parse_number("nan"), Some(Number::Float(f)) if f.is_nan()));
        assert_eq!(parse_number("abc"), None);
        assert_eq!(parse_number(""), None);
    }

    #[test]
    fn finds_entries() {
        let ptx = ".visible .entry vadd(\n.param .u64 a) {}\n.entry   other() {}";
        assert_eq!(entry_names(ptx), ["vadd", "other"]);
    }
}
