//! The compile itself: clang (with the pass) → llvm-link (device runtime) →
//! opt -O2 (inlines the runtime) → llc → PTX, then ptxas → cubin on request.
//! Intermediates live in a temporary directory.

use crate::args::CompileRequest;
use crate::error::CompileError;
use crate::run::Runner;
use crate::run::describe_failure;
use crate::tools::{CLANG, LLC, LLVM_LINK, LLVM_NM, OPT, Toolchain};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a compile wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOutput {
    pub ptx: PathBuf,
    pub cubin: Option<PathBuf>,
    /// The site table the pass merged this module's sites into.
    pub sites: Option<PathBuf>,
}

const PTX_FEATURE: &str = "+ptx75";

/// The NVPTX compile: PTX, and a cubin when `req` asks for one.
pub(crate) fn compile_nvptx(
    req: &CompileRequest,
    tools: &Toolchain,
    runner: &Runner,
) -> Result<CompileOutput, CompileError> {
    std::fs::File::open(&req.source)
        .map_err(|e| CompileError::io(&req.source, "cannot read the source", e))?;
    if req.cubin.is_some() && tools.ptxas.is_none() {
        return Err(CompileError::ToolMissing {
            tool: "ptxas".to_owned(),
            hint: "a cubin was asked for; set PRLX_PTXAS, pass --cuda-path, or put ptxas on PATH"
                .to_owned(),
        });
    }
    for out in std::iter::once(&req.ptx).chain(req.cubin.as_ref()) {
        create_parent(out)?;
    }
    let scratch = scratch_dir()?;
    let sites = sites_target(req)?;
    let ir = scratch.path().join("device.bc");
    runner.run(CLANG, &mut clang_command(req, tools, sites.as_deref(), &ir))?;
    let optimised = link_and_optimise(req, tools, runner, &ir, scratch.path(), &[])?;

    let mut llc = Command::new(&tools.llc);
    llc.args(["-mtriple=nvptx64-nvidia-cuda"])
        .arg(format!("-mcpu={}", req.arch))
        .arg(format!("-mattr={PTX_FEATURE}"))
        .arg(&optimised)
        .arg("-o")
        .arg(&req.ptx);
    runner.run(LLC, &mut llc)?;

    if let (Some(cubin), Some(ptxas)) = (&req.cubin, &tools.ptxas) {
        let mut assemble = Command::new(ptxas);
        assemble
            .arg(format!("-arch={}", req.arch))
            .arg(&req.ptx)
            .arg("-o")
            .arg(cubin);
        runner.run("ptxas", &mut assemble)?;
    }
    Ok(CompileOutput {
        ptx: req.ptx.clone(),
        cubin: req.cubin.clone(),
        sites,
    })
}

/// clang-19, device-only CUDA to LLVM IR, with the pass when instrumenting.
pub fn clang_command(
    req: &CompileRequest,
    tools: &Toolchain,
    sites: Option<&Path>,
    ir: &Path,
) -> Command {
    let mut clang = Command::new(&tools.clang);
    clang
        .args(["-x", "cuda", "--cuda-device-only"])
        .arg(format!("--cuda-gpu-arch={}", req.arch))
        .arg(format!("-O{}", req.opt_level));
    match &req.cuda_path {
        None => {
            clang.args(["-nocudainc", "-nocudalib"]);
        }
        Some(sdk) => {
            clang.arg(format!("--cuda-path={}", sdk.display()));
        }
    }
    clang.args(["-Xclang", "-target-feature", "-Xclang", PTX_FEATURE]);
    if let (true, Some(plugin)) = (req.instrument, &tools.plugin) {
        // -mllvm -prlx-* are parsed before -fpass-plugin loads the plugin, so
        // it is also loaded with -Xclang -load (llvm-pass/README.md).
        clang
            .arg(format!("-fpass-plugin={}", plugin.display()))
            .args(["-Xclang", "-load", "-Xclang"])
            .arg(plugin);
        if let Some(sites) = sites {
            clang
                .arg("-mllvm")
                .arg(format!("-prlx-sites-json={}", sites.display()));
        }
        if req.snapshots {
            clang.args(["-mllvm", "-prlx-snapshots"]);
        }
        if let Some(filter) = &req.filter {
            clang.arg("-mllvm").arg(format!("-prlx-filter={filter}"));
        }
    }
    clang
        .args(&req.clang_args)
        .args(["-c", "-emit-llvm"])
        .arg(&req.source)
        .arg("-o")
        .arg(ir);
    clang
}

/// What the device runtime must export: the descriptor the host fills and
/// the embedded site table it reads.
pub(crate) const RUNTIME_PUBLIC: &[&str] = &["__prlx_desc", "__prlx_sites"];

/// The symbols of one bitcode module, as llvm-nm sees them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ModuleSymbols {
    /// External definitions: kernels, device functions and globals.
    pub defined: Vec<String>,
    /// Declarations the module uses but does not define.
    pub undefined: Vec<String>,
}

impl ModuleSymbols {
    /// Parses `llvm-nm --format=posix` output: `NAME TYPE [VALUE SIZE]`.
    pub fn parse(listing: &str) -> ModuleSymbols {
        let mut symbols = ModuleSymbols::default();
        for line in listing.lines() {
            let mut fields = line.split_whitespace();
            let (Some(name), Some(kind)) = (fields.next(), fields.next()) else {
                continue;
            };
            match kind {
                "U" => symbols.undefined.push(name.to_owned()),
                k if k.chars().all(|c| c.is_ascii_uppercase()) => {
                    symbols.defined.push(name.to_owned())
                }
                _ => {}
            }
        }
        symbols
    }

    /// Whether the pass inserted any call into the runtime.
    pub fn calls_runtime(&self) -> bool {
        self.undefined
            .iter()
            .any(|s| s.starts_with("__prlx_record_"))
    }
}

/// The temporary directory a compile's intermediates live in.
pub(crate) fn scratch_dir() -> Result<tempfile::TempDir, CompileError> {
    tempfile::Builder::new()
        .prefix("prlx-compile")
        .tempdir()
        .map_err(|e| CompileError::io(std::env::temp_dir(), "cannot create a scratch directory", e))
}

/// The site table the pass merges into (its directory created), when
/// instrumenting.
pub(crate) fn sites_target(req: &CompileRequest) -> Result<Option<PathBuf>, CompileError> {
    if !req.instrument {
        return Ok(None);
    }
    let sites = req.sites_path();
    create_parent(&sites)?;
    Ok(Some(absolute(&sites)))
}

/// clang's IR `ir` linked with the device runtime (when the pass called
/// into it) and optimised, with `opt_args` added to opt's command line;
/// returns the optimised bitcode in `scratch`.
///
/// The module's own external symbols (kernels, device globals) stay
/// visible; the runtime's functions are internalised so that, once
/// inlined, no copy of them is left in the output.
pub(crate) fn link_and_optimise(
    req: &CompileRequest,
    tools: &Toolchain,
    runner: &Runner,
    ir: &Path,
    scratch: &Path,
    opt_args: &[&str],
) -> Result<PathBuf, CompileError> {
    let symbols = module_symbols(ir, tools, runner)?;
    let mut public = symbols.defined.clone();
    for name in RUNTIME_PUBLIC {
        if !public.iter().any(|p| p == name) {
            public.push((*name).to_owned());
        }
    }
    let optimised_input = match &tools.runtime {
        // A module the pass left alone (the filter) is not linked, so it
        // carries no descriptor: the shim records it as uninstrumented.
        Some(runtime) if req.instrument && symbols.calls_runtime() => {
            let linked = scratch.join("linked.bc");
            let mut link = Command::new(&tools.llvm_link);
            link.arg("--only-needed")
                .arg(ir)
                .arg(runtime)
                .arg("-o")
                .arg(&linked);
            runner.run(LLVM_LINK, &mut link)?;
            linked
        }
        _ => ir.to_path_buf(),
    };
    let optimised = scratch.join("optimised.bc");
    let mut opt = Command::new(&tools.opt);
    opt.arg(format!("-passes=internalize,default<O{}>", req.opt_level))
        .arg(format!("-internalize-public-api-list={}", public.join(",")))
        .args(opt_args)
        .arg(&optimised_input)
        .arg("-o")
        .arg(&optimised);
    runner.run(OPT, &mut opt)?;
    Ok(optimised)
}

pub(crate) fn module_symbols(
    bitcode: &Path,
    tools: &Toolchain,
    runner: &Runner,
) -> Result<ModuleSymbols, CompileError> {
    let mut nm = Command::new(&tools.llvm_nm);
    nm.arg("--format=posix").arg(bitcode);
    let output = runner.output(LLVM_NM, &mut nm)?;
    if !output.status.success() {
        return Err(describe_failure(LLVM_NM, &output));
    }
    Ok(ModuleSymbols::parse(&String::from_utf8_lossy(
        &output.stdout,
    )))
}

pub(crate) fn create_parent(path: &Path) -> Result<(), CompileError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir)
            .map_err(|e| CompileError::io(dir, "cannot create the output directory", e)),
        _ => Ok(()),
    }
}

pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cubin_without_ptxas_fails_before_running_anything() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("k.cu");
        std::fs::write(&source, "").unwrap();
        let missing = dir.path().join("never-run");
        let tools = Toolchain {
            clang: missing.clone(),
            llvm_link: missing.clone(),
            opt: missing.clone(),
            llc: missing.clone(),
            llvm_nm: missing.clone(),
            plugin: None,
            runtime: None,
            ptxas: None,
            lld: None,
            offload_bundler: None,
            rocm_device_libs: None,
        };
        let mut req = CompileRequest::new(&source, dir.path().join("k.ptx"));
        req.cubin = Some(dir.path().join("k.cubin"));
        let err = compile_nvptx(&req, &tools, &Runner { verbose: false }).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("ptxas not found: a cubin was asked for"),
            "{err}"
        );
        let err = compile_nvptx(
            &CompileRequest::new(dir.path().join("absent.cu"), "k.ptx"),
            &tools,
            &Runner { verbose: false },
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("absent.cu: cannot read the source: No such file"),
            "{err}"
        );
    }

    #[test]
    fn nm_listing_splits_definitions_from_uses() {
        let listing = "_ZZ7branchyE4tile d ---------------- 0\n\
                       __prlx_record_branch U 0 0\n\
                       __prlx_sites D ---------------- 0\n\
                       branchy T ---------------- 0\n\
                       w W ---------------- 0\n\n";
        let symbols = ModuleSymbols::parse(listing);
        assert_eq!(symbols.defined, ["__prlx_sites", "branchy", "w"]);
        assert_eq!(symbols.undefined, ["__prlx_record_branch"]);
        assert!(symbols.calls_runtime());
        assert!(!ModuleSymbols::parse("branchy T 0 0\n").calls_runtime());
    }
}
