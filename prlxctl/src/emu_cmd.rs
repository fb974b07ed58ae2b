//! `prlxctl emu run case.kern`: runs one kernel on the PTX emulator and
//! prints its `out_` arrays. The `.kern` format lives in `emu_cmd::kern`,
//! typed values in `emu_cmd::values`, `--trace`/`--step` in
//! `emu_cmd::debugger`.

mod debugger;
mod kern;
mod values;

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use prlx_emulator::{Device, DeviceConfig, LaunchConfig, LaunchError};

use kern::{KernError, KernFile};

#[derive(Subcommand)]
pub enum EmuCommand {
    /// Run one kernel described by a .kern file (header + PTX).
    Run(RunArgs),
}

#[derive(Args)]
pub struct RunArgs {
    /// The .kern file: argument and launch header, then the PTX.
    pub file: PathBuf,
    /// Print every warp-instruction: block, warp, line, active mask, text.
    #[arg(long)]
    pub trace: bool,
    /// Stop before warp-instructions and read debugger commands from stdin
    /// (h for help).
    #[arg(long)]
    pub step: bool,
    /// Compute capability of the emulated device (80 = sm_80).
    #[arg(long, value_name = "SM")]
    pub sm: Option<u32>,
    /// Perturb the warp and CTA schedule with this seed.
    #[arg(long, value_name = "SEED")]
    pub schedule: Option<u64>,
}

pub fn run(cmd: EmuCommand) -> anyhow::Result<u8> {
    let result = match cmd {
        EmuCommand::Run(args) if crate::emu_rdna::is_rdna(&args.file) => run_rdna(&args),
        EmuCommand::Run(args) => run_kern(&args),
    };
    match result {
        // `prlxctl emu run --trace k.kern | head` closes the pipe early.
        Err(e) if is_broken_pipe(&e) => Ok(0),
        other => other,
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// RDNA assembly on the RDNA emulator, which has no `--sm` or `--schedule`.
fn run_rdna(args: &RunArgs) -> anyhow::Result<u8> {
    if args.sm.is_some() || args.schedule.is_some() {
        bail!("--sm and --schedule apply to PTX .kern files, not RDNA assembly");
    }
    crate::emu_rdna::run(&args.file, args.trace, args.step)
}

/// Exit codes: 0 success, 1 the kernel faulted, 2 bad input (via `Err`).
fn run_kern(args: &RunArgs) -> anyhow::Result<u8> {
    let name = args.file.display().to_string();
    let text = std::fs::read_to_string(&args.file).with_context(|| format!("reading {name}"))?;
    let kf = kern::parse(&name, &text)?;

    let mut config = DeviceConfig::from_env();
    if let Some(sm) = args.sm {
        if !(30..=129).contains(&sm) {
            bail!("--sm {sm}: expected a compute capability such as 80 or 86");
        }
        config.compute_capability = (sm / 10, sm % 10);
        config.name = format!("prlx PTX emulator (sm_{sm})");
    }
    if let Some(seed) = args.schedule {
        config.schedule_seed = Some(seed);
    }
    let mut device = Device::new(config);
    let module = device
        .load_module(&kf.ptx, &name)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let (kernel, kernel_line) = kernel_name(&kf)?;
    let function = device
        .get_function(module, &kernel)
        .map_err(|e| kern_error(&kf, kernel_line, format!("{e}")))?;
    let info = device
        .kernel_info(function)
        .ok_or_else(|| {
            kern_error(
                &kf,
                kernel_line,
                format!("no information about kernel `{kernel}`"),
            )
        })?
        .clone();
    if info.params.len() != kf.args.len() {
        return Err(kern_error(
            &kf,
            kf.header_end_line,
            format!(
                "kernel `{kernel}` takes {} parameters, the header declares {} arguments",
                info.params.len(),
                kf.args.len()
            ),
        )
        .into());
    }

    let mut params = vec![0u8; info.param_bytes as usize];
    let mut outputs = Vec::new();
    for (arg, param) in kf.args.iter().zip(&info.params) {
        let bytes = arg.bytes().map_err(|m| kern_error(&kf, arg.line, m))?;
        let value = match &arg.shape {
            Some(shape) => {
                let ptr = device
                    .mem_alloc(bytes.len() as u64)
                    .and_then(|p| device.mem_write(p, &bytes).map(|_| p))
                    .map_err(|e| {
                        kern_error(&kf, arg.line, format!("allocating `{}`: {e}", arg.name))
                    })?;
                if arg.is_output() {
                    outputs.push((arg, shape.clone(), ptr, bytes.len()));
                }
                ptr.to_le_bytes().to_vec()
            }
            None => bytes,
        };
        if value.len() != param.size as usize {
            let what = if arg.shape.is_some() {
                "an array, passed as an 8-byte pointer".to_string()
            } else {
                format!("{} bytes", value.len())
            };
            return Err(kern_error(
                &kf,
                arg.line,
                format!(
                    "`{}` is {what}, but parameter `{}` is {} bytes",
                    arg.name, param.name, param.size
                ),
            )
            .into());
        }
        params[param.offset as usize..param.offset as usize + value.len()].copy_from_slice(&value);
    }

    let launch = LaunchConfig {
        grid: kf.grid,
        block: kf.block,
        dynamic_shared_bytes: kf.dynamic_shared_bytes,
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = if args.trace || args.step {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let input: Option<&mut dyn std::io::BufRead> =
            if args.step { Some(&mut input) } else { None };
        let mut debugger = debugger::Debugger::new(args.trace, input, &mut out);
        device.launch_observed(function, &launch, &params, &mut debugger)
    } else {
        device.launch(function, &launch, &params)
    };
    let stats = match result {
        Ok(stats) => stats,
        Err(LaunchError::Aborted(_)) => {
            writeln!(out, "launch stopped by the debugger")?;
            return Ok(0);
        }
        Err(e) => {
            out.flush()?;
            eprintln!("prlxctl: kernel `{kernel}` failed: {e}");
            return Ok(1);
        }
    };
    for (arg, shape, ptr, len) in outputs {
        let mut data = vec![0u8; len];
        device
            .mem_read(ptr, &mut data)
            .with_context(|| format!("reading back `{}`", arg.name))?;
        writeln!(
            out,
            "{}",
            values::format_array(&arg.name, arg.ty, &shape, &data)
        )?;
    }
    writeln!(
        out,
        "# {}: {} CTAs, {} warp-instructions, {} thread-instructions",
        kernel, stats.ctas, stats.warp_instructions, stats.thread_instructions
    )?;
    Ok(0)
}

fn kern_error(kf: &KernFile, line: u32, message: String) -> KernError {
    KernError {
        file: kf.file.clone(),
        line,
        message,
    }
}

/// The header's `kernel = NAME`, or the PTX's only `.entry`.
fn kernel_name(kf: &KernFile) -> Result<(String, u32), KernError> {
    if let Some(k) = &kf.kernel {
        return Ok(k.clone());
    }
    let entries = kern::entry_names(&kf.ptx);
    match entries.as_slice() {
        [one] => Ok((one.clone(), kf.header_end_line)),
        _ => Err(kern_error(
            kf,
            kf.header_end_line,
            format!(
                "the header names no kernel and the PTX has {} entries ({}); add `kernel = NAME`",
                entries.len(),
                entries.join(", ")
            ),
        )),
    }
}
