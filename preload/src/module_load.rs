//! How each loaded module is captured, decided before the driver sees it.
//!
//! For every image an application loads (`cuModuleLoad*`, `cuLibraryLoadData`,
//! fatbinaries, the modules cudart registers) the shim picks, in order:
//!
//! 1. **pass** — the module was built with the prlx pass (it defines
//!    `__prlx_desc`): it records by itself;
//! 2. **substitute** — `PRLX_SUBSTITUTE=DIR` holds a pass-built module for
//!    this image (`DIR/<image hash>.ptx`, or a `.ptx` defining every kernel the
//!    image defines): the driver gets that instead;
//! 3. **ptx** — the image carries PTX (text, or a fatbinary PTX entry, also
//!    compressed): it is instrumented by `prlx-ptx-instrument` and the driver
//!    gets the instrumented PTX;
//! 4. **nvbit** — an NVBit tool is loaded in the process: it instruments SASS;
//! 5. **metadata** — launches are recorded without a trace, with one notice
//!    per kernel saying why.
//!
//! `PRLX_CAPTURE=auto|pass|ptx|nvbit|metadata` narrows the choice. If the
//! driver refuses a rewritten image, the original is loaded untouched and
//! one warning says why: the shim never breaks the application.

use crate::config::LogLevel;
use crate::ffi::{CUDA_SUCCESS, CUresult};
use crate::log;
use crate::registry::ParamSlot;
use prlx_ptx_instrument::Options;
use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, c_char, c_void};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

#[path = "../../libcuda/src/fatbin.rs"]
#[allow(dead_code)]
mod fatbin;

/// How a module's launches are captured (`session.json`'s `capture`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CaptureMode {
    Pass,
    Substitute,
    Ptx,
    Nvbit,
    #[default]
    Metadata,
}

impl CaptureMode {
    pub fn as_str(self) -> &'static str {
        match self {
            CaptureMode::Pass => "pass",
            CaptureMode::Substitute => "substitute",
            CaptureMode::Ptx => "ptx",
            CaptureMode::Nvbit => "nvbit",
            CaptureMode::Metadata => "metadata",
        }
    }
}

/// `PRLX_CAPTURE`: `auto` tries every mode in order; a mode allows only itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Auto,
    Only(CaptureMode),
}

/// The capture settings read once from the environment.
#[derive(Clone, Debug)]
pub struct Policy {
    pub choice: Choice,
    pub substitute_dir: Option<PathBuf>,
    pub options: Options,
}

impl Policy {
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> (Policy, Vec<String>) {
        let mut warnings = Vec::new();
        let choice = match lookup("PRLX_CAPTURE").as_deref().map(str::trim) {
            None | Some("") | Some("auto") => Choice::Auto,
            Some("pass") => Choice::Only(CaptureMode::Pass),
            Some("substitute") => Choice::Only(CaptureMode::Substitute),
            Some("ptx") => Choice::Only(CaptureMode::Ptx),
            Some("nvbit") => Choice::Only(CaptureMode::Nvbit),
            Some("metadata") => Choice::Only(CaptureMode::Metadata),
            Some(other) => {
                warnings.push(format!(
                    "PRLX_CAPTURE={other:?} is not auto, pass, ptx, nvbit or metadata; using auto"
                ));
                Choice::Auto
            }
        };
        let flag = |key: &str| {
            lookup(key).is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"))
        };
        let snapshots = lookup("PRLX_SNAPSHOT_DEPTH")
            .and_then(|v| v.trim().parse::<u32>().ok())
            .is_some_and(|d| d > 0);
        let policy = Policy {
            choice,
            substitute_dir: lookup("PRLX_SUBSTITUTE")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            options: Options {
                snapshots,
                func_entry_exit: flag("PRLX_FUNC_EVENTS"),
                global_stores: flag("PRLX_GLOBAL_STORES"),
            },
        };
        (policy, warnings)
    }

    fn allows(&self, mode: CaptureMode) -> bool {
        match self.choice {
            Choice::Auto => true,
            Choice::Only(only) => only == mode,
        }
    }
}

pub fn policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let (policy, warnings) = Policy::from_lookup(|k| std::env::var(k).ok());
        for w in warnings {
            log::log(LogLevel::Warn, &w);
        }
        policy
    })
}

/// What was decided for one image.
#[derive(Debug, Default)]
pub struct Plan {
    pub mode: CaptureMode,
    /// Why a module records metadata only.
    pub reason: Option<String>,
    /// The image the driver gets instead (NUL-terminated PTX).
    replacement: Option<Vec<u8>>,
    /// The site map of an instrumented module (prlx-sites.json).
    pub site_table: Option<String>,
    /// Kernel parameter layouts from the PTX, parsed once here.
    pub params: Option<HashMap<String, Vec<ParamSlot>>>,
}

impl Plan {
    /// An image that already carries instrumentation made by the shim
    /// elsewhere (a link of rewritten inputs): loaded as is.
    pub(crate) fn instrumented_elsewhere(
        mode: CaptureMode,
        site_table: String,
        params: HashMap<String, Vec<ParamSlot>>,
    ) -> Plan {
        Plan {
            mode,
            site_table: Some(site_table),
            params: Some(params),
            ..Plan::default()
        }
    }
}

/// Whether `PRLX_CAPTURE` allows `mode`.
pub(crate) fn allows(policy: &Policy, mode: CaptureMode) -> bool {
    policy.allows(mode)
}

/// An image as the driver API receives it.
enum Image<'a> {
    Ptx(&'a [u8]),
    Fatbin(&'a [u8]),
    Cubin,
    Unknown,
}

/// Classifies the image at `ptr` without reading past its end.
///
/// # Safety
/// `ptr` is a NUL-terminated PTX string, an ELF image, a fatbinary or a
/// fatbinary wrapper, as the driver API requires of module images.
unsafe fn classify<'a>(ptr: *const c_void) -> Image<'a> {
    if ptr.is_null() {
        return Image::Unknown;
    }
    let p = ptr as *const u8;
    // Byte by byte, stopping at a NUL, so a short PTX string is never
    // overread (no magic contains a zero byte).
    let mut head = [0u8; 4];
    for (i, slot) in head.iter_mut().enumerate() {
        // SAFETY: bytes up to and including the first NUL are readable.
        *slot = unsafe { *p.add(i) };
        if *slot == 0 {
            break;
        }
    }
    if head == [0x7f, b'E', b'L', b'F'] {
        return Image::Cubin;
    }
    let magic = u32::from_le_bytes(head);
    if magic == fatbin::WRAPPER_MAGIC {
        // __fatBinC_Wrapper_t { int magic; int version; const u64 *data; … }
        // SAFETY: the wrapper is at least 16 bytes; `data` is at offset 8.
        let data = unsafe { std::ptr::read_unaligned(p.add(8) as *const *const c_void) };
        // SAFETY: the wrapper points at a fatbinary.
        return unsafe { classify(data) };
    }
    if magic == fatbin::MAGIC {
        // SAFETY: the fatbinary header is 16 bytes.
        let header = unsafe { std::ptr::read_unaligned(p as *const [u8; 16]) };
        return match fatbin::total_len(&header) {
            // SAFETY: the header says how long the fatbinary is.
            Ok(len) => Image::Fatbin(unsafe { std::slice::from_raw_parts(p, len) }),
            Err(_) => Image::Unknown,
        };
    }
    // SAFETY: anything else is NUL-terminated PTX text.
    Image::Ptx(unsafe { CStr::from_ptr(p as *const c_char) }.to_bytes())
}

/// The PTX a fatbinary carries: the entry of the highest architecture.
pub(crate) fn fatbin_ptx(bytes: &[u8]) -> Result<Option<String>, String> {
    let entries = fatbin::entries(bytes)?;
    let Some(entry) = entries
        .iter()
        .filter(|e| e.kind == fatbin::KIND_PTX)
        .max_by_key(|e| e.arch)
    else {
        return Ok(None);
    };
    let payload = entry.payload()?;
    let text = payload.split(|b| *b == 0).next().unwrap_or_default();
    String::from_utf8(text.to_vec())
        .map(Some)
        .map_err(|e| format!("the fatbinary's PTX is not UTF-8: {e}"))
}

/// Whether prlx's NVBit tool is loaded in this process (`nvbit`).
fn nvbit_loaded() -> bool {
    crate::nvbit::tool().is_some()
}

fn nvbit_plan() -> Plan {
    Plan {
        mode: CaptureMode::Nvbit,
        ..Plan::default()
    }
}

/// Decides how the image at `image` is captured and what the driver gets.
///
/// # Safety
/// As [`classify`].
pub unsafe fn plan(image: *const c_void) -> Plan {
    if let Some(linked) = crate::link::linked_plan(image) {
        return linked;
    }
    let policy = policy();
    if policy.choice == Choice::Only(CaptureMode::Nvbit) {
        // Chosen for every module, PTX or not, when the tool is there.
        return if nvbit_loaded() {
            nvbit_plan()
        } else {
            metadata(
                "PRLX_CAPTURE=nvbit, and prlx's NVBit tool (libprlx_nvbit.so) is not loaded".into(),
            )
        };
    }
    // SAFETY: per the contract.
    let (ptx, binary) = match unsafe { classify(image) } {
        Image::Ptx(bytes) => (std::str::from_utf8(bytes).ok().map(str::to_owned), None),
        Image::Fatbin(bytes) => match fatbin_ptx(bytes) {
            Ok(ptx) => (ptx, Some(bytes)),
            Err(e) => {
                return metadata(format!("its fatbinary could not be read: {e}"));
            }
        },
        Image::Cubin => (None, None),
        Image::Unknown => return metadata("its image is of an unknown kind".into()),
    };
    let Some(ptx) = ptx else {
        return if policy.allows(CaptureMode::Nvbit) && nvbit_loaded() {
            nvbit_plan()
        } else {
            metadata("its image holds machine code (SASS) only, no PTX to instrument, and no NVBit tool is loaded".into())
        };
    };
    let module = match prlx_ptx::parse(&ptx, "<module image>") {
        Ok(m) => m,
        Err(e) => return metadata(format!("its PTX does not parse ({e})")),
    };
    let params = Some(crate::registry::ptx_module_param_layouts(&module));
    let defines_descriptor = module.items.iter().any(|i| {
        matches!(i, prlx_ptx::Item::Variable(v) if v.name == prlx_ptx_instrument::runtime::DESCRIPTOR)
    });
    if defines_descriptor {
        return if policy.allows(CaptureMode::Pass) {
            Plan {
                mode: CaptureMode::Pass,
                params,
                ..Plan::default()
            }
        } else {
            Plan {
                reason: Some(format!(
                    "it was built with the prlx pass and PRLX_CAPTURE={}",
                    policy_name(policy)
                )),
                params,
                ..Plan::default()
            }
        };
    }
    let kernels: Vec<&str> = module
        .functions()
        .filter(|f| f.kind == prlx_ptx::FunctionKind::Entry && f.body.is_some())
        .map(|f| f.name.as_str())
        .collect();
    if policy.allows(CaptureMode::Substitute)
        && let Some(dir) = &policy.substitute_dir
    {
        let image_bytes = binary.unwrap_or(ptx.as_bytes());
        if let Some(substitute) = find_substitute(dir, image_bytes, &kernels) {
            let mut plan = Plan {
                mode: CaptureMode::Substitute,
                ..Plan::default()
            };
            plan.params = prlx_ptx::parse(&substitute, "<substitute>")
                .ok()
                .map(|m| crate::registry::ptx_module_param_layouts(&m));
            let mut bytes = substitute.into_bytes();
            bytes.push(0);
            plan.replacement = Some(bytes);
            return plan;
        }
    }
    if !policy.allows(CaptureMode::Ptx) {
        return Plan {
            reason: Some(format!("PRLX_CAPTURE={}", policy_name(policy))),
            params,
            ..Plan::default()
        };
    }
    match prlx_ptx_instrument::instrument_parsed(&module, &ptx, &policy.options) {
        Ok(instrumented) => {
            let mut bytes = instrumented.ptx.into_bytes();
            bytes.push(0);
            Plan {
                mode: CaptureMode::Ptx,
                reason: None,
                replacement: Some(bytes),
                site_table: Some(instrumented.sites.to_json()),
                params,
            }
        }
        Err(e) => {
            log::log(
                LogLevel::Warn,
                &format!(
                    "could not instrument the PTX of a module defining {}: {e}; loading it unchanged",
                    kernels.join(", ")
                ),
            );
            Plan {
                reason: Some(format!("its PTX could not be instrumented: {e}")),
                params,
                ..Plan::default()
            }
        }
    }
}

fn policy_name(policy: &Policy) -> &'static str {
    match policy.choice {
        Choice::Auto => "auto",
        Choice::Only(mode) => mode.as_str(),
    }
}

fn metadata(reason: String) -> Plan {
    Plan {
        reason: Some(reason),
        ..Plan::default()
    }
}

/// A substitute for an image: `DIR/<fnv1a64 of the image, 16 hex digits>.ptx`,
/// else the first `.ptx` of `DIR` (by name) that defines `__prlx_desc` and
/// every one of the image's kernels.
fn find_substitute(dir: &std::path::Path, image: &[u8], kernels: &[&str]) -> Option<String> {
    let by_hash = dir.join(format!("{:016x}.ptx", prlx_session::fnv1a64(image)));
    if let Ok(text) = std::fs::read_to_string(&by_hash) {
        log::log(
            LogLevel::Info,
            &format!("substituting {} for a loaded module", by_hash.display()),
        );
        return Some(text);
    }
    if kernels.is_empty() {
        return None;
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    paths.sort();
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !text.contains("__prlx_desc") {
            continue;
        }
        let defined = entry_names(&text);
        if kernels.iter().all(|k| defined.contains(*k)) {
            log::log(
                LogLevel::Info,
                &format!(
                    "substituting {} for the module defining {}",
                    path.display(),
                    kernels.join(", ")
                ),
            );
            return Some(text);
        }
    }
    None
}

/// Names after `.entry` in PTX text (a scan, not a parse: substitutes are
/// only read whole when they match).
fn entry_names(text: &str) -> HashSet<&str> {
    let mut names = HashSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(".entry") {
        rest = &rest[at + ".entry".len()..];
        let name: &str = rest
            .trim_start()
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .next()
            .unwrap_or("");
        if !name.is_empty() {
            names.insert(name);
        }
    }
    names
}

/// Loads an image as planned: `replaced` (the real driver call) with the
/// rewritten image first and, if the driver refuses it or nothing was
/// rewritten, `original` (the application's own call, unchanged).
///
/// # Safety
/// `image` is a module image as [`classify`] requires.
pub unsafe fn load(
    image: *const c_void,
    mut original: impl FnMut() -> CUresult,
    mut replaced: impl FnMut(*const c_void) -> CUresult,
) -> (CUresult, Option<Plan>) {
    if !crate::state::active() {
        return (original(), None);
    }
    // SAFETY: per the contract; a panic inside only loses the plan.
    let plan = crate::state::guarded("module load", || None, || Some(unsafe { plan(image) }));
    let Some(mut plan) = plan else {
        return (original(), None);
    };
    if let Some(replacement) = plan.replacement.take() {
        let result = replaced(replacement.as_ptr() as *const c_void);
        if result == CUDA_SUCCESS {
            return (result, Some(plan));
        }
        let why = format!(
            "the driver refused the {} module (CUresult {result}); loaded the original unchanged",
            if plan.mode == CaptureMode::Substitute {
                "substitute"
            } else {
                "instrumented"
            }
        );
        log::once(LogLevel::Warn, "instrumented-load", &why);
        plan = Plan {
            reason: Some(why),
            params: plan.params,
            ..Plan::default()
        };
    }
    (original(), Some(plan))
}

/// One notice per kernel recorded without a trace, naming it and why.
pub fn notice_metadata(kernel: &str, reason: Option<&str>) {
    static NOTICED: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut noticed = NOTICED.lock().unwrap_or_else(|p| p.into_inner());
    if !noticed
        .get_or_insert_with(HashSet::new)
        .insert(kernel.to_owned())
    {
        return;
    }
    let why = reason.unwrap_or("its module's image was not seen being loaded");
    log::log(
        LogLevel::Warn,
        &format!("kernel {kernel} is recorded as metadata only (no trace): {why}"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_choice_from_the_environment() {
        let (p, w) = Policy::from_lookup(|k| (k == "PRLX_CAPTURE").then(|| "ptx".into()));
        assert_eq!(p.choice, Choice::Only(CaptureMode::Ptx));
        assert!(w.is_empty());
        assert!(p.allows(CaptureMode::Ptx) && !p.allows(CaptureMode::Pass));
        let (p, w) = Policy::from_lookup(|k| (k == "PRLX_CAPTURE").then(|| "sass".into()));
        assert_eq!(p.choice, Choice::Auto);
        assert_eq!(w.len(), 1);
        let (p, _) = Policy::from_lookup(|k| match k {
            "PRLX_SNAPSHOT_DEPTH" => Some("8".into()),
            "PRLX_FUNC_EVENTS" => Some("1".into()),
            _ => None,
        });
        assert!(p.options.snapshots && p.options.func_entry_exit && !p.options.global_stores);
    }

    #[test]
    fn substitute_entry_names_are_scanned() {
        let names = entry_names(".visible .entry k1(\n) {}\n.entry _Z2k2Pf ( .param .u64 p) {}");
        assert!(names.contains("k1") && names.contains("_Z2k2Pf"));
    }

    #[test]
    fn plain_ptx_is_planned_for_instrumentation_and_pass_builds_are_left_alone() {
        let ptx = c".version 7.5
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
	.reg .pred %p<2>;
	.reg .b32 %r<3>;
	mov.u32 %r1, %tid.x;
	setp.lt.u32 %p1, %r1, 4;
	@%p1 bra $L1;
	mov.u32 %r2, 1;
$L1:
	ret;
}
";
        // SAFETY: a NUL-terminated PTX string.
        let planned = unsafe { plan(ptx.as_ptr() as *const c_void) };
        assert_eq!(planned.mode, CaptureMode::Ptx);
        let text = planned.replacement.as_deref().unwrap();
        assert_eq!(text.last(), Some(&0));
        assert!(
            std::str::from_utf8(&text[..text.len() - 1])
                .unwrap()
                .contains("__prlx_desc")
        );
        assert!(planned.site_table.unwrap().contains("Branch"));
        assert!(planned.params.unwrap().contains_key("k"));

        let pass_built = c".version 7.5
.target sm_80
.address_size 64
.visible .global .align 8 .b8 __prlx_desc[64];
.visible .entry k()
{
	ret;
}
";
        // SAFETY: as above.
        let planned = unsafe { plan(pass_built.as_ptr() as *const c_void) };
        assert_eq!(planned.mode, CaptureMode::Pass);
        assert!(planned.replacement.is_none());

        let cubin = [0x7fu8, b'E', b'L', b'F', 0];
        // SAFETY: an ELF magic; classify reads only the magic.
        let planned = unsafe { plan(cubin.as_ptr() as *const c_void) };
        assert_eq!(planned.mode, CaptureMode::Metadata);
        assert!(planned.reason.unwrap().contains("SASS"));
    }

    #[test]
    fn session_records_carry_the_capture_mode_and_old_ones_still_read() {
        let old = r#"{"kernel":"k","launch":0,"grid":[1,1,1],"block":[32,1,1]}"#;
        let record: prlx_session::LaunchRecord = serde_json::from_str(old).unwrap();
        assert_eq!(record.capture, None);
        let record = prlx_session::LaunchRecord {
            capture: Some(CaptureMode::Ptx.as_str().into()),
            ..record
        };
        let json = serde_json::to_string(&record).unwrap();
        assert!(json.contains(r#""capture":"ptx""#), "{json}");
    }
}
