//! The CPU call stack at a launch, as the application cannot afford to
//! symbolise it.
//!
//! On the application's thread: raw instruction pointers only (no lock, one
//! small Vec), and only as `PRLX_STACKS` says — `on` (every recorded
//! launch), `sampled` (the first [`SAMPLED_FIRST`] launches of each kernel,
//! then one in [`SAMPLED_EVERY`]) or `off` — and within a time budget per
//! thread ([`WalkBudget`]: about 1 % of the thread's time), so the cost of
//! walking does not grow with the launch rate; past it, launches other than
//! each kernel's first go without a stack. On the writer thread, whole
//! stacks are resolved once per distinct return-address tuple. On the writer thread: each
//! address becomes its module (path), the module's GNU build-id and the
//! address as the module's file has it, read from the loader's in-memory
//! program headers — no file is opened, no debug info is loaded, so the
//! cost does not grow with the size of the application's binaries.
//! Function names, files and lines are found later, outside the
//! application, by `prlx-symbolize` (prlxctl).

use prlx_session::StackFrame;
use std::collections::HashMap;
use std::ffi::{CStr, c_int, c_void};
use std::sync::OnceLock;

/// Frames kept per launch.
const MAX_FRAMES: usize = 48;
/// Frames stored per launch, the shim's own left out.
const STORED_FRAMES: usize = 32;
/// `sampled`: every launch of a kernel up to this index …
pub const SAMPLED_FIRST: u32 = 4;
/// … then one in this many.
pub const SAMPLED_EVERY: u32 = 64;

/// `PRLX_STACKS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackMode {
    Off,
    On,
    Sampled,
}

impl StackMode {
    /// The mode `value` names; None for anything else.
    pub fn parse(value: &str) -> Option<StackMode> {
        match value.trim() {
            "off" | "0" => Some(StackMode::Off),
            "on" | "1" => Some(StackMode::On),
            "sampled" => Some(StackMode::Sampled),
            _ => None,
        }
    }

    /// Whether launch `launch_index` of a kernel walks the stack.
    pub fn walks(self, launch_index: u32) -> bool {
        match self {
            StackMode::Off => false,
            StackMode::On => true,
            StackMode::Sampled => {
                launch_index < SAMPLED_FIRST || launch_index.is_multiple_of(SAMPLED_EVERY)
            }
        }
    }
}

/// The default, chosen by measurement (docs/shim-benchmark.md): a walk
/// adds ~1.3 µs to a recorded launch (0.6 µs without it); sampled keeps
/// each kernel's first launch sites at a fraction of that.
pub const DEFAULT_STACKS: StackMode = StackMode::Sampled;

/// `PRLX_STACKS`, read once; a bad value is said once and the default used.
pub fn mode() -> StackMode {
    static MODE: OnceLock<StackMode> = OnceLock::new();
    *MODE.get_or_init(|| match std::env::var("PRLX_STACKS") {
        Err(_) => DEFAULT_STACKS,
        Ok(value) => StackMode::parse(&value).unwrap_or_else(|| {
            crate::log::once(
                crate::config::LogLevel::Warn,
                "PRLX_STACKS",
                &format!("PRLX_STACKS={value:?} is not off|on|sampled; using sampled"),
            );
            DEFAULT_STACKS
        }),
    })
}

/// Instruction pointers, innermost first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RawStack(Vec<usize>);

/// Walks may take at most 1/this of a thread's time since its first walk …
pub const WALK_BUDGET_DIVISOR: u64 = 100;
/// … plus this much (start-up: the first launches of many kernels).
pub const WALK_ALLOWANCE_NS: u64 = 5_000_000;

/// A thread's walks so far: when the first began and the time they took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkBudget {
    first_ns: u64,
    spent_ns: u64,
}

impl WalkBudget {
    /// Whether a walk may start at `now_ns` (a monotonic clock): the first
    /// [`SAMPLED_FIRST`] launches of each kernel always walk (`always`);
    /// others while the walks so far took at most 1/[`WALK_BUDGET_DIVISOR`]
    /// of the time since the first, plus [`WALK_ALLOWANCE_NS`].
    pub fn allows(&mut self, now_ns: u64, always: bool) -> bool {
        if self.first_ns == 0 {
            self.first_ns = now_ns.max(1);
        }
        let allowed =
            WALK_ALLOWANCE_NS + now_ns.saturating_sub(self.first_ns) / WALK_BUDGET_DIVISOR;
        always || self.spent_ns <= allowed
    }

    pub fn spend(&mut self, ns: u64) {
        self.spent_ns = self.spent_ns.saturating_add(ns);
    }
}

thread_local! {
    static BUDGET: std::cell::Cell<WalkBudget> = const {
        std::cell::Cell::new(WalkBudget { first_ns: 0, spent_ns: 0 })
    };
}

fn monotonic_ns() -> u64 {
    static EPOCH: OnceLock<std::time::Instant> = OnceLock::new();
    EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
        + 1
}

/// The stack for launch `launch_index` of a kernel, if the mode walks it
/// and the calling thread's walk budget allows: however many launches a
/// second the application makes, walking takes at most about 1 % of its
/// thread's time (each kernel's first launches are always walked).
pub fn capture_for(launch_index: u32) -> Option<RawStack> {
    if !mode().walks(launch_index) {
        return None;
    }
    let always = launch_index < SAMPLED_FIRST;
    let start = monotonic_ns();
    let mut budget = BUDGET.with(|b| b.get());
    if !budget.allows(start, always) {
        return None;
    }
    let stack = capture();
    budget.spend(monotonic_ns().saturating_sub(start));
    BUDGET.with(|b| b.set(budget));
    Some(stack)
}

/// Walks the calling thread's stack.
pub fn capture() -> RawStack {
    let mut ips = Vec::with_capacity(MAX_FRAMES);
    // SAFETY: unsynchronised unwinding is safe on Linux (the unwinder is
    // thread-safe); the crate's lock only guards Windows' dbghelp. Taking it
    // would make the application thread wait on the writer.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            ips.push(frame.ip() as usize);
            ips.len() < MAX_FRAMES
        });
    }
    RawStack(ips)
}

/// A loaded object: where it is, what it is.
#[derive(Clone, Debug)]
struct Module {
    path: String,
    build_id: Option<String>,
    /// Load bias: the file's addresses plus this are the process's.
    bias: usize,
}

/// Turns raw stacks into module-relative frames, remembering every address
/// and module it has seen.
pub struct Resolver {
    own_base: usize,
    frames: HashMap<usize, Option<StackFrame>>,
    /// By `dli_fbase`.
    modules: HashMap<usize, Option<Module>>,
    /// Whole stacks resolved, by their addresses (a loop launches from a
    /// few call sites): at most [`MAX_CACHED_STACKS`], then started afresh.
    stacks: HashMap<RawStack, Vec<StackFrame>>,
}

/// Resolved stacks kept by [`Resolver`].
const MAX_CACHED_STACKS: usize = 4096;

impl Default for Resolver {
    fn default() -> Resolver {
        Resolver {
            own_base: own_module_base(),
            frames: HashMap::new(),
            modules: HashMap::new(),
            stacks: HashMap::new(),
        }
    }
}

impl Resolver {
    /// The application's frames of `stack` (the shim's own dropped).
    pub fn resolve(&mut self, stack: &RawStack) -> Vec<StackFrame> {
        if let Some(frames) = self.stacks.get(stack) {
            return frames.clone();
        }
        let frames = self.resolve_frames(stack);
        if self.stacks.len() >= MAX_CACHED_STACKS {
            self.stacks.clear();
        }
        self.stacks.insert(stack.clone(), frames.clone());
        frames
    }

    fn resolve_frames(&mut self, stack: &RawStack) -> Vec<StackFrame> {
        let mut out = Vec::new();
        for &ip in stack.0.iter().filter(|&&ip| ip != 0) {
            if out.len() == STORED_FRAMES {
                break;
            }
            if !self.frames.contains_key(&ip) {
                let frame = self.frame(ip);
                self.frames.insert(ip, frame);
            }
            if let Some(Some(frame)) = self.frames.get(&ip) {
                out.push(frame.clone());
            }
        }
        out
    }

    /// One frame, or None for a frame of libprlx itself.
    fn frame(&mut self, ip: usize) -> Option<StackFrame> {
        let mut frame = StackFrame {
            ip: format!("{ip:#x}"),
            ..StackFrame::default()
        };
        // SAFETY: `Dl_info` is a C struct of pointers and ints, for which
        // all zeroes (null pointers) is a valid value.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr only compares the address against the loaded objects'
        // ranges (any value is accepted; one in no object gives 0) and writes
        // `info`, a live local.
        if unsafe { libc::dladdr(ip as *mut c_void, &mut info) } == 0 {
            return Some(frame);
        }
        let base = info.dli_fbase as usize;
        if self.own_base != 0 && base == self.own_base {
            return None;
        }
        let module = self.modules.entry(base).or_insert_with(|| module_of(ip));
        if let Some(module) = module {
            frame.module = Some(module.path.clone());
            frame.build_id = module.build_id.clone();
            frame.offset = Some(ip.wrapping_sub(module.bias) as u64);
        }
        if !info.dli_sname.is_null() {
            // The dynamic symbol table is in memory: exported names are free.
            // SAFETY: non-null, NUL-terminated.
            let name = unsafe { CStr::from_ptr(info.dli_sname) };
            frame.function = Some(name.to_string_lossy().into_owned());
        }
        Some(frame)
    }
}

/// The object whose loaded segments hold `ip`: its path (the main
/// program's from /proc/self/exe: the loader names it ""), load bias and
/// build-id.
fn module_of(ip: usize) -> Option<Module> {
    struct Search {
        ip: usize,
        found: Option<Module>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: the loader hands a valid info; `data` is our Search.
        let (info, search) = unsafe { (&*info, &mut *(data as *mut Search)) };
        if info.dlpi_phdr.is_null() {
            return 0;
        }
        // SAFETY: dlpi_phdr holds dlpi_phnum headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let bias = info.dlpi_addr as usize;
        let holds = headers.iter().any(|h| {
            let start = bias.wrapping_add(h.p_vaddr as usize);
            h.p_type == libc::PT_LOAD && (start..start + h.p_memsz as usize).contains(&search.ip)
        });
        if !holds {
            return 0;
        }
        let build_id = headers
            .iter()
            .filter(|h| h.p_type == libc::PT_NOTE)
            // SAFETY: a loaded PT_NOTE segment, mapped at bias + vaddr.
            .find_map(|h| unsafe {
                gnu_build_id(std::slice::from_raw_parts(
                    bias.wrapping_add(h.p_vaddr as usize) as *const u8,
                    h.p_memsz as usize,
                ))
            });
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            // SAFETY: non-null, NUL-terminated.
            unsafe { CStr::from_ptr(info.dlpi_name) }
                .to_string_lossy()
                .into_owned()
        };
        let path = if name.is_empty() {
            std::fs::read_link("/proc/self/exe")
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        } else {
            name
        };
        search.found = Some(Module {
            path,
            build_id,
            bias,
        });
        1
    }
    let mut search = Search { ip, found: None };
    // SAFETY: the callback only reads the loader's headers.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut c_void) };
    search.found
}

/// The `NT_GNU_BUILD_ID` note's bytes, in hex.
fn gnu_build_id(notes: &[u8]) -> Option<String> {
    const NT_GNU_BUILD_ID: u32 = 3;
    let word = |at: usize| -> Option<u32> {
        notes
            .get(at..at + 4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut at = 0;
    while at + 12 <= notes.len() {
        let (namesz, descsz, kind) = (word(at)? as usize, word(at + 4)? as usize, word(at + 8)?);
        let name_at = at + 12;
        let desc_at = name_at + namesz.div_ceil(4) * 4;
        let next = desc_at + descsz.div_ceil(4) * 4;
        if next > notes.len() {
            return None;
        }
        if kind == NT_GNU_BUILD_ID && notes.get(name_at..name_at + namesz) == Some(b"GNU\0") {
            let desc = &notes[desc_at..desc_at + descsz];
            return Some(desc.iter().map(|b| format!("{b:02x}")).collect());
        }
        at = next;
    }
    None
}

/// The load address of the object containing `address` (0 if none).
fn module_base(address: *mut c_void) -> usize {
    // SAFETY: `Dl_info` is a C struct of pointers and ints, for which
    // all zeroes (null pointers) is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only compares the address against the loaded objects'
    // ranges (any value is accepted; one in no object gives 0) and writes
    // `info`, a live local.
    let found = unsafe { libc::dladdr(address, &mut info) };
    if found != 0 {
        info.dli_fbase as usize
    } else {
        0
    }
}

/// The load address of libprlx itself, to drop its frames from call stacks.
fn own_module_base() -> usize {
    module_base(own_module_base as *mut c_void)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_named_caller() -> RawStack {
        capture()
    }

    #[test]
    fn frames_carry_module_build_id_and_file_address_and_are_cached() {
        let raw = a_named_caller();
        // In the test binary the crate is linked into the executable, so
        // "the shim's own frames" would be all of them: no filter here.
        let mut resolver = Resolver {
            own_base: 0,
            frames: HashMap::new(),
            modules: HashMap::new(),
            stacks: HashMap::new(),
        };
        let frames = resolver.resolve(&raw);
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let ours: Vec<_> = frames
            .iter()
            .filter(|f| f.module.as_deref() == Some(exe.to_str().unwrap()))
            .collect();
        assert!(!ours.is_empty(), "{frames:#?}");
        // The file address of a_named_caller's frame lies in the executable's
        // text, below its load address in the process (PIE) or equal (not).
        assert!(ours.iter().all(|f| f.offset.is_some()));
        assert!(
            ours[0].build_id.as_ref().is_some_and(|b| b.len() >= 16),
            "rustc links with a build-id: {:?}",
            ours[0]
        );
        let cached = resolver.frames.len();
        assert_eq!(resolver.resolve(&raw), frames);
        assert_eq!(
            resolver.frames.len(),
            cached,
            "second resolution is all cache hits"
        );
    }

    #[test]
    fn build_id_notes_parse() {
        let mut note = Vec::new();
        note.extend_from_slice(&4u32.to_ne_bytes());
        note.extend_from_slice(&3u32.to_ne_bytes());
        note.extend_from_slice(&3u32.to_ne_bytes());
        note.extend_from_slice(b"GNU\0");
        note.extend_from_slice(&[0xab, 0xcd, 0xef, 0]);
        assert_eq!(gnu_build_id(&note).as_deref(), Some("abcdef"));
        assert_eq!(gnu_build_id(&note[..10]), None);
    }

    #[test]
    fn walks_are_held_to_their_share_of_the_threads_time() {
        let mut budget = WalkBudget::default();
        let (mut now, mut walked) = (1_000u64, 0u64);
        // 25,000 launches a second for 10 s, each walk taking 1.3 µs (3 %
        // of the time): the budget keeps walks near 1 % whatever the rate.
        for _ in 0..250_000 {
            now += 40_000;
            if budget.allows(now, false) {
                budget.spend(1_300);
                walked += 1;
            }
        }
        let spent = walked * 1_300;
        let elapsed = now - 1_000;
        assert!(
            spent <= elapsed / WALK_BUDGET_DIVISOR + WALK_ALLOWANCE_NS + 1_300,
            "{spent} ns of {elapsed}"
        );
        assert!(walked > 250_000 / 4, "walks go on at the budget: {walked}");
        // Each kernel's first launches walk even past the budget.
        assert!(budget.allows(now, true));
        budget.spend(u64::MAX / 2);
        assert!(!budget.allows(now, false));
        assert!(budget.allows(now, true));
    }

    #[test]
    fn sampled_stacks_keep_the_first_launches_then_thin_out() {
        assert!(StackMode::On.walks(1000));
        assert!(!StackMode::Off.walks(0));
        let walked: Vec<u32> = (0..200).filter(|&i| StackMode::Sampled.walks(i)).collect();
        assert_eq!(walked, vec![0, 1, 2, 3, 64, 128, 192]);
        assert_eq!(StackMode::parse(" sampled "), Some(StackMode::Sampled));
        assert_eq!(StackMode::parse("yes"), None);
    }
}
