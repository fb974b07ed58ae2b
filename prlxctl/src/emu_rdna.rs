//! `prlxctl emu run file.s`: the RDNA simulator spec's input files (typed
//! argument header, then gfx1100 assembly) on the prlx-rdna emulator. The
//! header and assembly are handled by `prlx_rdna::asm` (assembled with
//! llvm-mc-19); this file runs the kernel, prints the `out_` arrays, and
//! implements `--trace` and the `--step` debugger.

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use prlx_rdna::asm::{self, AsmProgram, PrintArg, PrintDirective};
use prlx_rdna::decode::{self, Inst, format::format_wave};
use prlx_rdna::{Device, HookAction, HookEvent, Wave};

/// RDNA input files: `.s` / `.asm` (PTX `.kern` files go to the PTX emulator).
pub fn is_rdna(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("s" | "asm" | "S")
    )
}

/// Runs `file`, printing every wave-instruction with `trace` and stopping
/// for debugger commands with `step`. Exit codes: 0 success, 1 the kernel
/// faulted, 2 bad input (via `Err`).
pub fn run(file: &Path, trace: bool, step: bool) -> anyhow::Result<u8> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {name}"))?;
    let base = file.parent().unwrap_or(Path::new("."));
    let prog = asm::parse(&name, &text, base)?;
    let mut dev = Device::new();
    let loaded = prog.load(&mut dev).map_err(|e| anyhow::anyhow!("{e}"))?;
    let prog = Arc::new(prog);
    let waves_per_group = prog.local.iter().product::<u32>().div_ceil(prog.wave_size);
    if step || trace || !prog.prints.is_empty() {
        let debugger = Arc::new(Mutex::new(Debugger::new(
            prog.clone(),
            waves_per_group,
            step,
            trace,
        )));
        let d = debugger.clone();
        dev.set_hook(Some(Box::new(move |ev: &HookEvent<'_>| {
            d.lock().unwrap_or_else(|p| p.into_inner()).before(ev)
        })));
    }
    let result = prog.run(&mut dev, &loaded);
    dev.set_hook(None);
    let mut out = std::io::stdout().lock();
    match result {
        Ok(stats) => {
            print_outputs(&mut out, &prog, &dev, &loaded.addrs)?;
            writeln!(
                out,
                "ran {}: {} workgroup(s), {} wave(s) of {}, {} wave-instructions",
                name, stats.workgroups, stats.waves, prog.wave_size, stats.wave_instructions
            )?;
            Ok(0)
        }
        Err(fault) => {
            out.flush()?;
            let line = fault
                .pc
                .and_then(|pc| prog.lines.get(&pc))
                .map(|l| format!(" ({name}:{l})"))
                .unwrap_or_default();
            eprintln!("fault: {fault}{line}");
            Ok(1)
        }
    }
}

fn print_outputs(
    out: &mut impl Write,
    prog: &AsmProgram,
    dev: &Device,
    addrs: &[u64],
) -> anyhow::Result<()> {
    for (arg, &addr) in prog.args.iter().zip(addrs).filter(|(a, _)| a.is_output()) {
        let size = arg.ty.size();
        let mut bytes = vec![0u8; arg.len() * size];
        dev.read(addr, &mut bytes)
            .map_err(|a| anyhow::anyhow!("reading {} at {a:#x}", arg.name))?;
        let vals: Vec<String> = bytes.chunks_exact(size).map(|b| arg.ty.decode(b)).collect();
        match &arg.shape {
            None => writeln!(out, "{}: {} = {}", arg.name, arg.ty.name(), vals[0])?,
            Some(shape) => {
                let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
                writeln!(out, "{}: {}[{}]", arg.name, arg.ty.name(), dims.join(","))?;
                let row = if shape.len() > 1 {
                    *shape.last().unwrap()
                } else {
                    16
                };
                let width = vals.iter().map(String::len).max().unwrap_or(1);
                for (r, chunk) in vals.chunks(row).enumerate() {
                    let cells: Vec<String> = chunk.iter().map(|v| format!("{v:>width$}")).collect();
                    writeln!(out, "  [{:>3}] {}", r * row, cells.join(" "))?;
                }
            }
        }
    }
    Ok(())
}

/// Highest SGPR and VGPR numbers the program names, to bound the dumps.
fn register_extent(prog: &AsmProgram) -> (u16, u16) {
    let mut s = 4u16;
    let mut v = 2u16;
    for (_, r) in decode::decode_all(&prog.code.text, 0) {
        let Ok(i) = r else { continue };
        let mut see = |code: u16| {
            if code < 106 {
                s = s.max(code + 1);
            } else if (256..512).contains(&code) {
                v = v.max(code - 256 + 3);
            }
        };
        for c in i.src {
            see(c);
        }
        if i.is_valu() {
            see(256 + i.dst);
        } else if matches!(
            i.format,
            decode::Format::Sop1
                | decode::Format::Sop2
                | decode::Format::Sopk
                | decode::Format::Smem
        ) {
            see(i.dst + 3);
        } else {
            for r in [i.dst, i.addr, i.data0, i.data1] {
                see(256 + r);
            }
        }
        if let Some(h) = i.vopd {
            for x in h {
                see(256 + x.vdst);
                see(256 + x.vsrc1);
                see(x.src0);
            }
        }
    }
    (s.min(106), v.min(256))
}

/// One `print` directive's output for a wave.
fn print_text(p: &PrintDirective, global_wave: u64, w: &Wave) -> String {
    let lanes: Vec<usize> = match p.thread {
        Some(t) => vec![t as usize % w.wave_size as usize],
        None => (0..w.wave_size as usize).collect(),
    };
    let parts: Vec<String> = p
        .args
        .iter()
        .map(|a| match *a {
            PrintArg::Exec => format!("exec = {:#x}", w.exec()),
            PrintArg::Vcc => format!("vcc = {:#x}", w.vcc()),
            PrintArg::Scc => format!("scc = {}", w.scc as u8),
            PrintArg::Sgprs(lo, hi) => {
                let vals: Vec<String> = (lo..=hi).map(|r| format!("{:#010x}", w.sreg(r))).collect();
                let name = if lo == hi {
                    format!("s{lo}")
                } else {
                    format!("s[{lo}:{hi}]")
                };
                format!("{name} = {}", vals.join(" "))
            }
            PrintArg::Vgprs(lo, hi) => (lo..=hi)
                .map(|r| {
                    let vals: Vec<String> = lanes
                        .iter()
                        .map(|&l| format!("{:#x}", w.vgpr(r, l)))
                        .collect();
                    match p.thread {
                        Some(t) => format!("v{r}[{t}] = {}", vals[0]),
                        None => format!("v{r} = [{}]", vals.join(" ")),
                    }
                })
                .collect::<Vec<_>>()
                .join("; "),
        })
        .collect();
    format!(
        "print (line {}) wave {global_wave}: {}",
        p.line,
        parts.join("; ")
    )
}

struct Debugger {
    prog: Arc<AsmProgram>,
    waves_per_group: u32,
    step: bool,
    trace: bool,
    /// Stop only before instructions of this global wave (None = every wave).
    watch: Option<u64>,
    /// Instructions to run before stopping again.
    skip: u64,
    /// Stepping stopped by `c`: run until a breakpoint.
    running: bool,
    /// Source lines to stop at.
    breakpoints: std::collections::BTreeSet<u32>,
    extent: (u16, u16),
}

fn help() -> &'static str {
    "commands: <enter>|s [N] step N instructions | c continue (to the next breakpoint) | \
     b LINE break before the instruction of LINE (in every followed wave) | d LINE delete it | \
     w N follow wave N only | w all follow every wave | p print the state again | q stop the kernel | h help"
}

impl Debugger {
    fn new(prog: Arc<AsmProgram>, waves_per_group: u32, step: bool, trace: bool) -> Debugger {
        let extent = register_extent(&prog);
        Debugger {
            prog,
            waves_per_group,
            step,
            trace,
            watch: None,
            skip: 0,
            extent,
            running: false,
            breakpoints: Default::default(),
        }
    }

    fn global_wave(&self, ev: &HookEvent<'_>) -> u64 {
        let [x, y, z] = ev.workgroup;
        let [gx, gy, _] = self.prog.global;
        let wg = (z as u64 * gy as u64 + y as u64) * gx as u64 + x as u64;
        wg * self.waves_per_group as u64 + ev.wave.id as u64
    }

    fn where_(&self, ev: &HookEvent<'_>, inst: &Inst) -> String {
        let [x, y, z] = ev.workgroup;
        let line = self
            .prog
            .lines
            .get(&ev.pc)
            .map(|l| format!(" line {l}"))
            .unwrap_or_default();
        format!(
            "wave {} (workgroup ({x},{y},{z}) wave {}) pc {:#06x}{line}: {}",
            self.global_wave(ev),
            ev.wave.id,
            ev.pc,
            format_wave(inst, ev.wave.wave64())
        )
    }

    fn dump(&self, ev: &HookEvent<'_>) -> String {
        let w: &Wave = ev.wave;
        let mut s = String::new();
        let hexw = if w.wave64() { 16 } else { 8 };
        s += &format!(
            "  exec {:#0hw$x}  vcc {:#0hw$x}  scc {}  m0 {:#x}  pending loads {}\n",
            w.exec(),
            w.vcc(),
            w.scc as u8,
            w.sreg(125),
            w.pending.len(),
            hw = hexw + 2
        );
        let (ns, nv) = self.extent;
        for base in (0..ns).step_by(8) {
            let regs: Vec<String> = (base..(base + 8).min(ns))
                .map(|r| format!("{:08x}", w.sreg(r)))
                .collect();
            s += &format!("  s{:<3} {}\n", base, regs.join(" "));
        }
        for r in 0..nv {
            let lanes: Vec<String> = (0..w.wave_size as usize)
                .map(|l| format!("{:x}", w.vgpr(r, l)))
                .collect();
            for (k, chunk) in lanes.chunks(16).enumerate() {
                let label = if k == 0 {
                    format!("v{r}")
                } else {
                    String::new()
                };
                s += &format!("  {:<4} [{:>2}] {}\n", label, k * 16, chunk.join(" "));
            }
        }
        s
    }

    /// Runs the `print` directives placed before this instruction.
    fn prints(&self, ev: &HookEvent<'_>) {
        let gw = self.global_wave(ev);
        let w = ev.wave;
        for p in self
            .prog
            .prints
            .iter()
            .filter(|p| p.pc == Some(ev.pc) && p.wave.is_none_or(|x| x == gw))
        {
            println!("{}", print_text(p, gw, w));
        }
    }

    fn before(&mut self, ev: &HookEvent<'_>) -> HookAction {
        let inst = ev.inst;
        self.prints(ev);
        if self.trace {
            println!("{}  exec {:#x}", self.where_(ev, inst), ev.wave.exec());
        }
        if !self.step {
            return HookAction::Continue;
        }
        if self.watch.is_some_and(|w| w != self.global_wave(ev)) {
            return HookAction::Continue;
        }
        if self.running {
            let line = self.prog.lines.get(&ev.pc);
            if !line.is_some_and(|l| self.breakpoints.contains(l)) {
                return HookAction::Continue;
            }
            self.running = false;
            println!("breakpoint at line {}", line.unwrap());
        }
        if self.skip > 0 {
            self.skip -= 1;
            return HookAction::Continue;
        }
        println!("{}", self.where_(ev, inst));
        print!("{}", self.dump(ev));
        let stdin = std::io::stdin();
        loop {
            print!("(rdna) ");
            let _ = std::io::stdout().flush();
            let mut line = String::new();
            if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
                // End of input: run to the end.
                self.step = false;
                return HookAction::Continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [] | ["s"] | ["n"] => return HookAction::Continue,
                ["s" | "n", n] => match n.parse::<u64>() {
                    Ok(n) if n > 0 => {
                        self.skip = n - 1;
                        return HookAction::Continue;
                    }
                    _ => println!("s N: N must be a positive number"),
                },
                ["c"] => {
                    if self.breakpoints.is_empty() {
                        self.step = false;
                    } else {
                        self.running = true;
                    }
                    return HookAction::Continue;
                }
                ["b", n] | ["d", n] => match n.parse::<u32>() {
                    Ok(l) if self.prog.lines.values().any(|&x| x == l) => {
                        if words[0] == "b" {
                            self.breakpoints.insert(l);
                            println!("breakpoint at line {l}");
                        } else {
                            self.breakpoints.remove(&l);
                            println!("deleted the breakpoint at line {l}");
                        }
                    }
                    _ => println!("{n}: not a line with an instruction"),
                },
                ["w", "all"] => {
                    self.watch = None;
                    println!("following every wave");
                }
                ["w", n] => match n.parse::<u64>() {
                    Ok(n) => {
                        self.watch = Some(n);
                        println!("following wave {n}");
                        if n != self.global_wave(ev) {
                            return HookAction::Continue;
                        }
                    }
                    Err(_) => println!("w N: N is a wave number"),
                },
                ["p"] => print!("{}\n{}", self.where_(ev, inst), self.dump(ev)),
                ["q"] => return HookAction::Abort,
                _ => println!("{}", help()),
            }
        }
    }
}
