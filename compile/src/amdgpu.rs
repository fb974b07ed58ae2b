//! HIP for AMDGPU: clang-19 `-x hip --cuda-device-only --offload-arch=…`
//! (with the pass) → llvm-link-19 with the AMDGPU device runtime (Wave32 or
//! Wave64) → opt-19 -O2 (inlines it) → llc-19 → ld.lld-19 → a code object
//! that `hipModuleLoadData` takes, with `__prlx_desc` and `__prlx_sites`;
//! with `-o k.hipfb`, that code object in a clang offload bundle
//! (clang-offload-bundler-19), for a host compile to embed.
//!
//! Instructions are selected by llc's default selection DAG, as hipcc
//! builds. Not GlobalISel: llc-19's selects a 64-bit shift-and-truncate as
//! `v_bfe_u32 v, v, 0, 32`, which extracts zero bits on RDNA (the width is
//! taken modulo 32), so a loop of `(v & 3) + 1` iterations ran two instead
//! of three (tests/e2e/hip.rs, docs/hip-runtime.md). The selection DAG once
//! crashed here ("SI Fix SGPR copies") because instrumented kernels kept
//! clang's `amdgpu-no-*` promises although the runtime linked in reads those
//! inputs; the pass now drops them. The module is still stripped of debug
//! info: code objects carry no DWARF, and line information is not lost, the
//! pass wrote the site table (file, line, column of every site) before.

use crate::args::{AmdgpuTarget, CompileRequest};
use crate::error::CompileError;
use crate::pipeline::{CompileOutput, create_parent, link_and_optimise, scratch_dir, sites_target};
use crate::run::Runner;
use crate::tools::{CLANG, LLC, LLD, OFFLOAD_BUNDLER, Toolchain};
use std::path::Path;
use std::process::Command;

pub fn compile_amdgpu(
    req: &CompileRequest,
    target: &AmdgpuTarget,
    tools: &Toolchain,
    runner: &Runner,
) -> Result<CompileOutput, CompileError> {
    std::fs::File::open(&req.source)
        .map_err(|e| CompileError::io(&req.source, "cannot read the source", e))?;
    let Some(lld) = &tools.lld else {
        return Err(CompileError::ToolMissing {
            tool: LLD.to_owned(),
            hint: "an AMDGPU code object needs ld.lld-19 (scripts/setup.sh)".to_owned(),
        });
    };
    create_parent(&req.ptx)?;
    let scratch = scratch_dir()?;
    let sites = sites_target(req)?;
    let ir = scratch.path().join("device.bc");
    runner.run(
        CLANG,
        &mut clang_command(req, target, tools, sites.as_deref(), &ir),
    )?;
    // No DWARF in the code object (see the module documentation).
    let optimised = link_and_optimise(req, tools, runner, &ir, scratch.path(), &["-strip-debug"])?;

    let object = scratch.path().join("device.o");
    let mut llc = Command::new(&tools.llc);
    llc.args(["-mtriple=amdgcn-amd-amdhsa", "-filetype=obj"])
        .arg(format!("-mcpu={}", target.processor));
    if target.wave64 {
        llc.arg("-mattr=+wavefrontsize64");
    }
    llc.arg(&optimised).arg("-o").arg(&object);
    runner.run(LLC, &mut llc)?;

    // `-o k.hipfb`: the code object wrapped in an offload bundle, which a
    // host compile embeds (`-Xclang -fcuda-include-gpubinary -Xclang k.hipfb`)
    // so that `<<<>>>` launches run the instrumented kernels.
    let bundle = req.ptx.extension().is_some_and(|e| e == "hipfb");
    let code_object = if bundle {
        scratch.path().join("device.co")
    } else {
        req.ptx.clone()
    };
    let mut link = Command::new(lld);
    link.arg("-shared").arg(&object).arg("-o").arg(&code_object);
    runner.run(LLD, &mut link)?;
    if bundle {
        let Some(bundler) = &tools.offload_bundler else {
            return Err(CompileError::ToolMissing {
                tool: OFFLOAD_BUNDLER.to_owned(),
                hint: "a .hipfb output needs clang-offload-bundler-19 (scripts/setup.sh)"
                    .to_owned(),
            });
        };
        let mut wrap = Command::new(bundler);
        wrap.arg("-type=o")
            .arg(format!(
                "-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--{}",
                target.processor
            ))
            .arg("-input=/dev/null")
            .arg(format!("-input={}", code_object.display()))
            .arg(format!("-output={}", req.ptx.display()));
        runner.run(OFFLOAD_BUNDLER, &mut wrap)?;
    }
    Ok(CompileOutput {
        ptx: req.ptx.clone(),
        cubin: None,
        sites,
    })
}

/// clang-19, device-only HIP to LLVM IR for one processor, with the pass
/// when instrumenting and ROCm's device libraries linked in by clang.
pub fn clang_command(
    req: &CompileRequest,
    target: &AmdgpuTarget,
    tools: &Toolchain,
    sites: Option<&Path>,
    ir: &Path,
) -> Command {
    let mut clang = Command::new(&tools.clang);
    clang
        .args(["-x", "hip", "--cuda-device-only"])
        .arg(format!("--offload-arch={}", target.processor))
        .arg(format!("-O{}", req.opt_level));
    let names_device_libs = req
        .clang_args
        .iter()
        .any(|a| a.starts_with("--rocm-device-lib-path") || a.starts_with("--rocm-path"));
    if let (false, Some(libs)) = (names_device_libs, &tools.rocm_device_libs) {
        clang.arg(format!("--rocm-device-lib-path={}", libs.display()));
    }
    if let (true, Some(plugin)) = (req.instrument, &tools.plugin) {
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
