//! The `prlxctl compile` command line: our own options are taken out, the
//! rest goes to clang untouched.

use crate::error::CompileError;
use std::path::{Path, PathBuf};

/// What to compile and how; built by [`CompileRequest::parse`] or by hand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileRequest {
    /// The CUDA C source.
    pub source: PathBuf,
    /// Where the PTX goes.
    pub ptx: PathBuf,
    /// Where the cubin goes, when one was asked for (`--cubin` or `-o x.cubin`).
    pub cubin: Option<PathBuf>,
    /// `sm_XX`, for clang's `--cuda-gpu-arch`, llc's `-mcpu` and ptxas.
    pub arch: String,
    /// A CUDA SDK to compile against; `None` compiles SDK-free.
    pub cuda_path: Option<PathBuf>,
    /// Function-name globs (comma separated) for the pass's filter.
    pub filter: Option<String>,
    /// Record per-lane compare operands (the pass's `-prlx-snapshots`).
    pub snapshots: bool,
    /// Run the pass and link the device runtime; `false` gives the same
    /// pipeline without them, for overhead and identical-output checks.
    pub instrument: bool,
    /// The site table file; `None` means `prlx-sites.json` beside the PTX.
    pub sites: Option<PathBuf>,
    /// Optimisation level for clang and opt (`-O<level>`), default 2.
    pub opt_level: String,
    /// Print every command before running it.
    pub verbose: bool,
    /// Everything else, for clang (`-g`, `-gline-tables-only`, `-D…`, `-I…`).
    pub clang_args: Vec<String>,
    /// `--offload-arch=gfxNNNN`: HIP for AMDGPU, a code object instead of
    /// PTX (in `ptx`, the output path); `None` compiles CUDA for NVPTX.
    pub amdgpu: Option<AmdgpuTarget>,
}

/// An AMDGPU compile's target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmdgpuTarget {
    /// `gfx1100` …, for clang's `--offload-arch` and llc's `-mcpu`.
    pub processor: String,
    /// `-mwavefrontsize64` among the clang options: Wave64 code and runtime.
    pub wave64: bool,
}

pub const DEFAULT_ARCH: &str = "sm_80";

/// clang options whose value is the next argument.
const CLANG_OPTIONS_WITH_VALUE: &[&str] = &[
    "-I",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-Xclang",
    "-mllvm",
];

/// clang options that would change what the pipeline produces.
const REFUSED: &[&str] = &["-c", "-S", "-E", "-emit-llvm", "-x", "--cuda-host-only"];

pub const USAGE: &str = "usage: prlxctl compile [--arch sm_XX] [--cuda-path DIR] [--filter GLOBS] \
[--snapshots] [--no-instrument] [--cubin] [--sites PATH] [-v] [clang options] kernel.cu -o kernel.ptx\n\
       prlxctl compile --offload-arch=gfx1100 [-mwavefrontsize64] [--filter GLOBS] [--snapshots] \
[--no-instrument] [--sites PATH] [-v] [clang options] kernel.hip -o kernel.co";

impl CompileRequest {
    /// A request with the defaults: instrumented, sm_80, SDK-free, -O2.
    pub fn new(source: impl Into<PathBuf>, ptx: impl Into<PathBuf>) -> CompileRequest {
        CompileRequest {
            source: source.into(),
            ptx: ptx.into(),
            cubin: None,
            arch: DEFAULT_ARCH.to_owned(),
            cuda_path: None,
            filter: None,
            snapshots: false,
            instrument: true,
            sites: None,
            opt_level: "2".to_owned(),
            verbose: false,
            clang_args: Vec::new(),
            amdgpu: None,
        }
    }

    /// Parses `prlxctl compile`'s arguments (without the subcommand name).
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<CompileRequest, CompileError> {
        let mut parser = Parser {
            args: args.iter().map(|a| a.as_ref().to_owned()).collect(),
            next: 0,
        };
        let mut req = CompileRequest::new(PathBuf::new(), PathBuf::new());
        let mut sources: Vec<PathBuf> = Vec::new();
        let mut output: Option<PathBuf> = None;
        let mut want_cubin = false;
        let mut only_positional = false;
        while let Some(arg) = parser.take() {
            if only_positional || !arg.starts_with('-') || arg == "-" {
                sources.push(PathBuf::from(arg));
                continue;
            }
            if arg == "--" {
                only_positional = true;
            } else if let Some(v) = parser.value(&arg, "-o")? {
                output = Some(PathBuf::from(v));
            } else if let Some(v) = parser.value(&arg, "--arch")? {
                req.arch = v;
            } else if let Some(v) = arg.strip_prefix("--cuda-gpu-arch=") {
                req.arch = v.to_owned();
            } else if let Some(v) = parser.value(&arg, "--offload-arch")? {
                validate_processor(&v)?;
                req.amdgpu = Some(AmdgpuTarget {
                    processor: v,
                    wave64: false,
                });
            } else if let Some(v) = parser.value(&arg, "--cuda-path")? {
                req.cuda_path = Some(PathBuf::from(v));
            } else if let Some(v) = parser.value(&arg, "--filter")? {
                req.filter = Some(v);
            } else if let Some(v) = parser.value(&arg, "--sites")? {
                req.sites = Some(PathBuf::from(v));
            } else if arg == "--snapshots" {
                req.snapshots = true;
            } else if arg == "--no-instrument" {
                req.instrument = false;
            } else if arg == "--cubin" {
                want_cubin = true;
            } else if arg == "-v" || arg == "--verbose" {
                req.verbose = true;
            } else if let Some(level) = arg.strip_prefix("-O") {
                req.opt_level = match level {
                    "" => "2".to_owned(),
                    "0" | "1" | "2" | "3" | "s" | "z" => level.to_owned(),
                    _ => return Err(usage(format!("unsupported optimisation level '{arg}'"))),
                };
            } else if REFUSED.contains(&arg.as_str()) {
                return Err(usage(format!(
                    "'{arg}' is not accepted: prlxctl compile always emits PTX from CUDA C"
                )));
            } else if CLANG_OPTIONS_WITH_VALUE.contains(&arg.as_str()) {
                let value = parser
                    .take()
                    .ok_or_else(|| usage(format!("'{arg}' needs a value")))?;
                req.clang_args.push(arg);
                req.clang_args.push(value);
            } else {
                req.clang_args.push(arg);
            }
        }
        req.source = match sources.len() {
            1 => sources.pop().unwrap_or_default(),
            0 => return Err(usage("no input file".to_owned())),
            _ => {
                let names: Vec<String> = sources.iter().map(|s| s.display().to_string()).collect();
                return Err(usage(format!(
                    "one source per compile, got {}",
                    names.join(", ")
                )));
            }
        };
        validate_arch(&req.arch)?;
        if let Some(target) = req.amdgpu.as_mut() {
            // The last of -mwavefrontsize64 / -mno-wavefrontsize64 wins, as in clang.
            target.wave64 = req
                .clang_args
                .iter()
                .rev()
                .find_map(|a| match a.as_str() {
                    "-mwavefrontsize64" => Some(true),
                    "-mno-wavefrontsize64" => Some(false),
                    _ => None,
                })
                .unwrap_or(false);
            if want_cubin || req.cuda_path.is_some() {
                return Err(usage(
                    "--cubin and --cuda-path are for NVIDIA targets, not --offload-arch".to_owned(),
                ));
            }
            req.ptx = output.unwrap_or_else(|| default_output(&req.source).with_extension("co"));
            return Ok(req);
        }
        let output = output.unwrap_or_else(|| default_output(&req.source));
        if output.extension().is_some_and(|e| e == "cubin") {
            req.ptx = output.with_extension("ptx");
            req.cubin = Some(output);
        } else {
            if want_cubin {
                req.cubin = Some(output.with_extension("cubin"));
            }
            req.ptx = output;
        }
        Ok(req)
    }

    /// The site table this compile writes: `--sites`, else beside the PTX.
    pub fn sites_path(&self) -> PathBuf {
        match &self.sites {
            Some(path) => path.clone(),
            None => self
                .ptx
                .parent()
                .unwrap_or(Path::new(""))
                .join("prlx-sites.json"),
        }
    }
}

fn usage(message: String) -> CompileError {
    CompileError::Usage(format!("compile: {message}"))
}

/// `kernel.cu` → `kernel.ptx` in the current directory.
fn default_output(source: &Path) -> PathBuf {
    let stem = source.file_stem().unwrap_or(source.as_os_str());
    PathBuf::from(stem).with_extension("ptx")
}

fn validate_arch(arch: &str) -> Result<(), CompileError> {
    let digits = arch.strip_prefix("sm_").unwrap_or("");
    let digits = digits.strip_suffix('a').unwrap_or(digits);
    if digits.len() >= 2 && digits.chars().all(|c| c.is_ascii_digit()) {
        Ok(())
    } else {
        Err(usage(format!(
            "--arch '{arch}' is not an NVIDIA architecture like sm_80"
        )))
    }
}

/// An AMDGPU processor name like `gfx1100` (or `gfx90a`).
fn validate_processor(processor: &str) -> Result<(), CompileError> {
    let rest = processor.strip_prefix("gfx").unwrap_or("");
    if !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric()) {
        Ok(())
    } else {
        Err(usage(format!(
            "--offload-arch '{processor}' is not an AMDGPU processor like gfx1100"
        )))
    }
}

struct Parser {
    args: Vec<String>,
    next: usize,
}

impl Parser {
    fn take(&mut self) -> Option<String> {
        let arg = self.args.get(self.next).cloned();
        self.next += 1;
        arg
    }

    /// The value of option `name` when `arg` is it: `name VALUE`, `name=VALUE`,
    /// or for single-dash short options `-oVALUE`.
    fn value(&mut self, arg: &str, name: &str) -> Result<Option<String>, CompileError> {
        if arg == name {
            return self
                .take()
                .map(Some)
                .ok_or_else(|| usage(format!("'{name}' needs a value")));
        }
        if let Some(v) = arg.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            return Ok(Some(v.to_owned()));
        }
        if !name.starts_with("--") {
            if let Some(v) = arg.strip_prefix(name) {
                return Ok(Some(v.to_owned()));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> CompileRequest {
        CompileRequest::parse(args).unwrap()
    }

    fn error(args: &[&str]) -> String {
        CompileRequest::parse(args).unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_instrumented_sm80_sdk_free() {
        let req = parse(&["k.cu", "-o", "out/k.ptx"]);
        assert_eq!(req.source, PathBuf::from("k.cu"));
        assert_eq!(req.ptx, PathBuf::from("out/k.ptx"));
        assert_eq!(req.cubin, None);
        assert_eq!(req.arch, "sm_80");
        assert!(req.instrument && !req.snapshots && !req.verbose);
        assert_eq!(req.cuda_path, None);
        assert_eq!(req.opt_level, "2");
        assert_eq!(req.sites_path(), PathBuf::from("out/prlx-sites.json"));
        assert!(req.clang_args.is_empty());
    }

    #[test]
    fn own_options_in_both_spellings() {
        let req = parse(&[
            "--arch=sm_86",
            "--filter",
            "clamp*,reduce",
            "--snapshots",
            "--no-instrument",
            "--sites=/tmp/s.json",
            "--cuda-path",
            "/opt/cuda",
            "-v",
            "-ok.ptx",
            "k.cu",
        ]);
        assert_eq!(req.arch, "sm_86");
        assert_eq!(req.filter.as_deref(), Some("clamp*,reduce"));
        assert!(req.snapshots && !req.instrument && req.verbose);
        assert_eq!(req.sites_path(), PathBuf::from("/tmp/s.json"));
        assert_eq!(req.cuda_path, Some(PathBuf::from("/opt/cuda")));
        assert_eq!(req.ptx, PathBuf::from("k.ptx"));
    }

    #[test]
    fn clang_options_pass_through_with_their_values() {
        let req = parse(&[
            "-g",
            "-DN=4",
            "-I",
            "inc",
            "-gline-tables-only",
            "k.cu",
            "-O3",
        ]);
        assert_eq!(
            req.clang_args,
            ["-g", "-DN=4", "-I", "inc", "-gline-tables-only"]
        );
        assert_eq!(req.opt_level, "3");
        assert_eq!(req.ptx, PathBuf::from("k.ptx"), "default output");
    }

    #[test]
    fn offload_arch_selects_amdgpu_and_a_code_object() {
        let req = parse(&["--offload-arch=gfx1100", "-g", "k.hip"]);
        assert_eq!(
            req.amdgpu,
            Some(AmdgpuTarget {
                processor: "gfx1100".into(),
                wave64: false
            })
        );
        assert_eq!(req.ptx, PathBuf::from("k.co"));
        assert_eq!(req.clang_args, ["-g"]);
        let req = parse(&[
            "--offload-arch",
            "gfx1100",
            "-mwavefrontsize64",
            "k.hip",
            "-o",
            "out/k.co",
        ]);
        assert!(req.amdgpu.as_ref().is_some_and(|t| t.wave64));
        assert_eq!(req.ptx, PathBuf::from("out/k.co"));
        assert_eq!(req.sites_path(), PathBuf::from("out/prlx-sites.json"));
        assert!(
            error(&["--offload-arch=sm_80", "k.hip"]).contains("not an AMDGPU processor"),
            "sm_80 is no gfx"
        );
        assert!(error(&["--offload-arch=gfx1100", "--cubin", "k.hip"]).contains("--cubin"));
    }

    #[test]
    fn cubin_output_keeps_the_ptx_beside_it() {
        let req = parse(&["k.cu", "-o", "b/k.cubin"]);
        assert_eq!(req.ptx, PathBuf::from("b/k.ptx"));
        assert_eq!(req.cubin, Some(PathBuf::from("b/k.cubin")));
        let req = parse(&["--cubin", "k.cu", "-o", "k.ptx"]);
        assert_eq!(req.cubin, Some(PathBuf::from("k.cubin")));
    }

    #[test]
    fn a_file_after_double_dash_is_a_source() {
        let req = parse(&["-o", "x.ptx", "--", "-weird.cu"]);
        assert_eq!(req.source, PathBuf::from("-weird.cu"));
    }

    #[test]
    fn bad_command_lines_are_one_line_errors() {
        assert!(error(&[]).contains("no input file"));
        assert!(error(&["a.cu", "b.cu"]).contains("one source per compile, got a.cu, b.cu"));
        assert!(error(&["k.cu", "-o"]).contains("'-o' needs a value"));
        assert!(error(&["k.cu", "--arch", "gfx1100"]).contains("not an NVIDIA architecture"));
        assert!(error(&["k.cu", "-c"]).contains("'-c' is not accepted"));
        assert!(error(&["k.cu", "-O7"]).contains("unsupported optimisation level"));
        assert!(error(&["k.cu", "-I"]).contains("'-I' needs a value"));
        for message in [error(&[]), error(&["k.cu", "-x"])] {
            assert!(!message.contains('\n'), "{message}");
        }
    }

    #[test]
    fn arch_forms() {
        assert_eq!(parse(&["k.cu", "--cuda-gpu-arch=sm_90a"]).arch, "sm_90a");
        assert!(CompileRequest::parse(&["k.cu", "--arch", "sm_"]).is_err());
    }
}
