//! `--trace` and `--step`: an [`Observer`] that prints warp-instructions as
//! they issue and, when stepping, stops before them to take commands (the
//! wave-level debugging of the RDNA simulator spec, per warp).

use std::collections::BTreeSet;
use std::io::{BufRead, Write};

use prlx_emulator::{Control, Observer, WarpStep};

pub const HELP: &str = "commands:
  s [N]      step N warp-instructions (default 1)
  c          continue to the next breakpoint (or the end)
  b LINE     break before any warp-instruction on LINE
  r [LANE]   print every register of LANE (default: first active lane)
  p REG      print REG in every active lane
  mask       print the active mask
  q          stop the launch
  h          this help";

/// One line per warp-instruction: block, warp, line, active mask, text.
pub fn describe(step: &WarpStep<'_>) -> String {
    let [x, y, z] = step.block;
    format!(
        "({x},{y},{z}) w{} L{} {:08x}  {}",
        step.warp_in_block, step.ptx_line, step.active_mask, step.text
    )
}

enum Mode {
    /// Stop after this many more warp-instructions issue.
    Step(u64),
    /// Stop at breakpoints only.
    Run,
    /// Input ended: run to completion.
    Detached,
}

pub struct Debugger<'a> {
    trace: bool,
    /// Present with `--step`: where commands come from.
    input: Option<&'a mut dyn BufRead>,
    out: &'a mut dyn Write,
    mode: Mode,
    breakpoints: BTreeSet<u32>,
}

impl<'a> Debugger<'a> {
    pub fn new(trace: bool, input: Option<&'a mut dyn BufRead>, out: &'a mut dyn Write) -> Self {
        Debugger {
            trace,
            input,
            out,
            mode: Mode::Step(0),
            breakpoints: BTreeSet::new(),
        }
    }

    fn should_stop(&mut self, line: u32) -> bool {
        match &mut self.mode {
            Mode::Step(0) => true,
            Mode::Step(n) => {
                *n -= 1;
                false
            }
            Mode::Run => self.breakpoints.contains(&line),
            Mode::Detached => false,
        }
    }

    /// Reads commands until one resumes (or stops) the launch.
    fn prompt(&mut self, step: &WarpStep<'_>) -> Control {
        let _ = writeln!(self.out, "=> {}", describe(step));
        loop {
            let _ = write!(self.out, "(emu) ");
            let _ = self.out.flush();
            let mut line = String::new();
            let read = match self.input.as_mut() {
                Some(input) => input.read_line(&mut line),
                None => Ok(0),
            };
            if !matches!(read, Ok(n) if n > 0) {
                let _ = writeln!(self.out, "\n(end of input: running to completion)");
                self.mode = Mode::Detached;
                return Control::Continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [] => {}
                ["s" | "step"] => {
                    self.mode = Mode::Step(0);
                    return Control::Continue;
                }
                ["s" | "step", n] => match n.parse::<u64>() {
                    Ok(n) if n > 0 => {
                        self.mode = Mode::Step(n - 1);
                        return Control::Continue;
                    }
                    _ => self.say(format_args!("step count `{n}` is not a positive number")),
                },
                ["c" | "continue"] => {
                    self.mode = Mode::Run;
                    return Control::Continue;
                }
                ["b" | "break", n] => match n.parse::<u32>() {
                    Ok(l) => {
                        self.breakpoints.insert(l);
                        self.say(format_args!("breakpoint at line {l}"));
                    }
                    Err(_) => self.say(format_args!("`{n}` is not a line number")),
                },
                ["r" | "regs"] => self.print_lane(step, step.active_mask.trailing_zeros().min(31)),
                ["r" | "regs", lane] => match lane.parse::<u32>() {
                    Ok(l) if l < 32 => self.print_lane(step, l),
                    _ => self.say(format_args!("lane `{lane}` is not in 0..31")),
                },
                ["p" | "print", reg] => self.print_register(step, reg),
                ["mask"] => self.say(format_args!(
                    "active mask {:08x} ({} lanes)",
                    step.active_mask,
                    step.active_mask.count_ones()
                )),
                ["q" | "quit"] => return Control::Abort,
                ["h" | "help"] => self.say(format_args!("{HELP}")),
                _ => self.say(format_args!(
                    "unknown command `{}` (h for help)",
                    line.trim()
                )),
            }
        }
    }

    fn say(&mut self, msg: std::fmt::Arguments<'_>) {
        let _ = writeln!(self.out, "{msg}");
    }

    fn print_lane(&mut self, step: &WarpStep<'_>, lane: u32) {
        let regs = step.registers(lane);
        let active = if step.active_mask >> lane & 1 == 1 {
            "active"
        } else {
            "inactive"
        };
        self.say(format_args!(
            "lane {lane} ({active}), {} registers:",
            regs.len()
        ));
        for (name, value) in regs {
            self.say(format_args!("  {name} = {value}"));
        }
    }

    fn print_register(&mut self, step: &WarpStep<'_>, reg: &str) {
        if step.register(0, reg).is_none() {
            return self.say(format_args!(
                "no register `{reg}` in function {}",
                step.function
            ));
        }
        let mut text = format!("{reg}:");
        for lane in (0..32).filter(|l| step.active_mask >> l & 1 == 1) {
            if let Some(v) = step.register(lane, reg) {
                text.push_str(&format!(" [{lane}]={v}"));
            }
        }
        self.say(format_args!("{text}"));
    }
}

impl Observer for Debugger<'_> {
    fn on_warp_instruction(&mut self, step: &WarpStep<'_>) -> Control {
        let stop = self.input.is_some() && self.should_stop(step.ptx_line);
        if stop {
            return self.prompt(step);
        }
        // A failed write (the reader of a piped trace went away) ends the launch.
        if self.trace && writeln!(self.out, "{}", describe(step)).is_err() {
            return Control::Abort;
        }
        Control::Continue
    }
}
