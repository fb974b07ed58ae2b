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
use crate::registry::{CaptureMode, FastBuild, ParamSlot};
use prlx_ptx_instrument::Options;
use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, c_char, c_void};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use prlx_fatbin as fatbin;

#[path = "caller.rs"]
pub mod caller;

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
    /// `PRLX_CAPTURE_LIBS`: whose modules are instrumented.
    pub libs: caller::CaptureLibs,
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
        let (libs, libs_warnings) =
            caller::CaptureLibs::parse(lookup("PRLX_CAPTURE_LIBS").as_deref());
        warnings.extend(libs_warnings);
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
            libs,
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

/// The PTX a fatbinary carries that the driver can compile for the
/// current device: the entry of the highest such architecture.
/// None when it has none, or when that PTX does not define everything the
/// machine code the driver would otherwise use defines.
pub(crate) fn fatbin_ptx(bytes: &[u8]) -> Result<Option<String>, String> {
    Ok(match fatbin_ptx_for(bytes, device_sm())? {
        FatbinPtx::Usable {
            ptx,
            machine_code: Some((_, symbols)),
        } => prlx_ptx::parse(&ptx, "<fatbinary PTX>")
            .ok()
            .filter(|module| ptx_covers(module, &symbols).is_ok())
            .map(|_| ptx),
        FatbinPtx::Usable { ptx, .. } => Some(ptx),
        FatbinPtx::None | FatbinPtx::Unusable(_) => None,
    })
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

/// An image `cuLinkComplete` produced from inputs the shim rewrote (`link`).
struct Linked {
    /// The link state it came from: it dies with it.
    state: usize,
    image: usize,
    site_table: String,
    params: HashMap<String, Vec<ParamSlot>>,
}

static LINKED: Mutex<Vec<Linked>> = Mutex::new(Vec::new());

fn linked() -> std::sync::MutexGuard<'static, Vec<Linked>> {
    LINKED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Remembers the image a link of rewritten inputs produced: when the
/// application loads it, it is captured as `ptx` with the link's site table.
pub(crate) fn remember_linked(
    state: usize,
    image: usize,
    site_table: String,
    params: HashMap<String, Vec<ParamSlot>>,
) {
    let mut linked = linked();
    linked.retain(|l| l.image != image);
    linked.push(Linked {
        state,
        image,
        site_table,
        params,
    });
}

/// Forgets the images of the link state `state` (`cuLinkDestroy`).
pub(crate) fn forget_linked(state: usize) {
    linked().retain(|l| l.state != state);
}

/// The plan for an image `cuLinkComplete` produced from rewritten inputs:
/// already instrumented, captured as `ptx` with the link's site table.
fn linked_plan(image: *const c_void) -> Option<Plan> {
    let linked = linked();
    let found = linked.iter().find(|l| l.image == image as usize)?;
    Some(Plan::instrumented_elsewhere(
        CaptureMode::Ptx,
        found.site_table.clone(),
        found.params.clone(),
    ))
}

/// Decides how the image at `image` is captured and what the driver gets.
///
/// # Safety
/// As [`classify`].
pub unsafe fn plan(image: *const c_void) -> Plan {
    if let Some(linked) = linked_plan(image) {
        return linked;
    }
    let policy = policy();
    if let Some(reason) = caller::skip_reason(&policy.libs, image) {
        return metadata(reason);
    }
    // SAFETY: per the contract.
    unsafe { plan_for(image, policy, device_sm()) }
}

/// The compute capability (`major * 10 + minor`) of the current context's
/// device, else of device 0: the one the driver compiles PTX for.
fn device_sm() -> Option<u32> {
    const MAJOR: i32 = 75; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    const MINOR: i32 = 76; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    let cuda = crate::driver::cuda();
    let mut device = 0;
    if let Some(get_device) = cuda.cuCtxGetDevice {
        // SAFETY: an out-parameter; without a current context the call
        // fails and device 0 is asked.
        if unsafe { get_device(&mut device) } != CUDA_SUCCESS {
            device = 0;
        }
    }
    let attribute = cuda.cuDeviceGetAttribute?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: out-parameters and a device ordinal.
    let ok = unsafe {
        attribute(&mut major, MAJOR, device) == CUDA_SUCCESS
            && attribute(&mut minor, MINOR, device) == CUDA_SUCCESS
    };
    (ok && major > 0).then(|| (major * 10 + minor) as u32)
}

/// A cubin compiled from instrumented PTX (it defines `__prlx_desc`): its
/// code records events, captured like a pass-built module.
fn cubin_pass_plan(policy: &Policy) -> Plan {
    if policy.allows(CaptureMode::Pass) {
        Plan {
            mode: CaptureMode::Pass,
            ..Plan::default()
        }
    } else {
        metadata(format!(
            "its machine code was built from instrumented PTX and PRLX_CAPTURE={}",
            policy_name(policy)
        ))
    }
}

/// [`plan`] for a device of compute capability `sm` (None: unknown).
///
/// # Safety
/// As [`classify`].
unsafe fn plan_for(image: *const c_void, policy: &Policy, sm: Option<u32>) -> Plan {
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
    let (ptx, binary, machine_code) = match unsafe { classify(image) } {
        Image::Ptx(bytes) => (
            std::str::from_utf8(bytes).ok().map(str::to_owned),
            None,
            None,
        ),
        Image::Fatbin(bytes) => match fatbin_ptx_for(bytes, sm) {
            Ok(FatbinPtx::Usable { ptx, machine_code }) => (Some(ptx), Some(bytes), machine_code),
            Ok(FatbinPtx::None) => (None, Some(bytes), None),
            Ok(FatbinPtx::Unusable(reason)) => return metadata(reason),
            Err(e) => {
                return metadata(format!("its fatbinary could not be read: {e}"));
            }
        },
        // SAFETY: per the contract, a complete ELF image.
        Image::Cubin => match unsafe { crate::cubin::recognise(image as *const u8) } {
            Some(found) if found.descriptor => return cubin_pass_plan(policy),
            _ => (None, None, None),
        },
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
    if let Some((arch, symbols)) = &machine_code
        && let Err(missing) = ptx_covers(&module, symbols)
    {
        return Plan {
            reason: Some(format!(
                "its machine code for sm_{arch} defines {missing}, which its PTX does not; \
                 it is loaded as the application gave it"
            )),
            params,
            ..Plan::default()
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
    instrumented_plan(&module, &ptx, policy, &kernels, params)
}

/// The `ptx` plan: the module instrumented, provided the instrumented form
/// exposes exactly what the original does.
fn instrumented_plan(
    module: &prlx_ptx::Module,
    ptx: &str,
    policy: &Policy,
    kernels: &[&str],
    params: Option<HashMap<String, Vec<ParamSlot>>>,
) -> Plan {
    let refused = |why: String| {
        log::log(
            LogLevel::Warn,
            &format!(
                "could not instrument the PTX of a module defining {}: {why}; loading it unchanged",
                kernels.join(", ")
            ),
        );
        Plan {
            reason: Some(format!("its PTX could not be instrumented: {why}")),
            params: params.clone(),
            ..Plan::default()
        }
    };
    let instrumented = match prlx_ptx_instrument::instrument_parsed(module, ptx, &policy.options) {
        Ok(instrumented) => instrumented,
        Err(e) => return refused(e.to_string()),
    };
    if let Err(why) = same_interface(module, &instrumented.ptx) {
        return refused(why);
    }
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

/// What a module exposes to the application: its kernels and device
/// functions with their attributes (`.maxntid`, `.reqntid` …), and its
/// variables with their state space.
fn interface(module: &prlx_ptx::Module) -> HashMap<&str, (Option<prlx_ptx::FunctionKind>, String)> {
    let mut out = HashMap::new();
    for item in &module.items {
        match item {
            prlx_ptx::Item::Function(f) if f.body.is_some() => {
                out.insert(
                    f.name.as_str(),
                    (Some(f.kind), format!("{:?}", f.directives)),
                );
            }
            prlx_ptx::Item::Variable(v) => {
                out.insert(v.name.as_str(), (None, format!("{:?}", v.space)));
            }
            _ => {}
        }
    }
    out
}

/// The rule of the shim: an instrumented module exposes every kernel,
/// function and variable of the original, with the same attributes, and
/// nothing else but prlx's own (`__prlx*`) symbols.
fn same_interface(original: &prlx_ptx::Module, instrumented: &str) -> Result<(), String> {
    let rewritten = prlx_ptx::parse(instrumented, "<instrumented module>")
        .map_err(|e| format!("the instrumented PTX does not parse ({e})"))?;
    let before = interface(original);
    let after = interface(&rewritten);
    for (name, what) in &before {
        match after.get(name) {
            None => return Err(format!("the instrumented module lost {name}")),
            Some(now) if now != what => {
                return Err(format!(
                    "the instrumented module changed {name}: {what:?} became {now:?}"
                ));
            }
            Some(_) => {}
        }
    }
    if let Some(extra) = after
        .keys()
        .find(|n| !before.contains_key(*n) && !n.starts_with("__prlx"))
    {
        return Err(format!(
            "the instrumented module defines {extra}, which the original does not"
        ));
    }
    Ok(())
}

/// Whether the PTX defines every kernel, function and variable the machine
/// code the driver would otherwise load defines; Err names the first few
/// missing.
fn ptx_covers(module: &prlx_ptx::Module, sass: &fatbin::CubinSymbols) -> Result<(), String> {
    let defined = interface(module);
    let missing: Vec<&str> = sass
        .functions
        .iter()
        .chain(sass.variable_defs.iter().map(|v| &v.name))
        .map(String::as_str)
        .filter(|n| !defined.contains_key(n))
        .collect();
    match missing.as_slice() {
        [] => Ok(()),
        [one] => Err(one.to_string()),
        many => Err(format!(
            "{} and {} more",
            many[..3.min(many.len())].join(", "),
            many.len().saturating_sub(3)
        )),
    }
}

/// What a fatbinary offers to instrument on a device of compute capability
/// `sm`.
enum FatbinPtx {
    /// PTX the driver can compile for the device, and the symbols of the
    /// machine code it would have loaded instead (its architecture too).
    Usable {
        ptx: String,
        machine_code: Option<(u32, fatbin::CubinSymbols)>,
    },
    /// No PTX at all.
    None,
    /// PTX, none of it for this device: why.
    Unusable(String),
}

/// Whether PTX whose `.target` is `target` compiles for `sm`: `sm_XY` for
/// any `sm >= XY`, `sm_XYa` for `XY` only, `sm_XYf` within `XY`'s family.
fn target_compiles_for(target: &str, sm: u32) -> bool {
    let arch = target.trim_start_matches("sm_");
    let digits: String = arch.chars().take_while(char::is_ascii_digit).collect();
    let Ok(xy) = digits.parse::<u32>() else {
        return false;
    };
    match &arch[digits.len()..] {
        "" => sm >= xy,
        "a" => sm == xy,
        "f" => sm >= xy && sm / 10 == xy / 10,
        _ => false,
    }
}

/// The PTX of a fatbinary for a device of compute capability `sm`: the
/// highest PTX the driver can compile for it (all of them when `sm` is
/// unknown), with the machine code the driver would load instead.
fn fatbin_ptx_for(bytes: &[u8], sm: Option<u32>) -> Result<FatbinPtx, String> {
    let entries = fatbin::entries(bytes)?;
    let mut ptx_entries: Vec<&fatbin::Entry> = entries
        .iter()
        .filter(|e| e.kind == fatbin::KIND_PTX)
        .collect();
    if ptx_entries.is_empty() {
        return Ok(FatbinPtx::None);
    }
    ptx_entries.sort_by_key(|e| std::cmp::Reverse(e.arch));
    let highest = ptx_entries[0].arch;
    let mut chosen = None;
    for entry in ptx_entries
        .iter()
        .filter(|e| sm.is_none_or(|sm| e.arch <= sm))
    {
        let payload = entry.payload()?;
        let text = payload.split(|b| *b == 0).next().unwrap_or_default();
        let text = String::from_utf8(text.to_vec())
            .map_err(|e| format!("the fatbinary's PTX is not UTF-8: {e}"))?;
        let target = ptx_target(&text).unwrap_or_default();
        if sm.is_none_or(|sm| target_compiles_for(&target, sm)) {
            chosen = Some(text);
            break;
        }
    }
    let (Some(ptx), Some(sm)) = (chosen.clone(), sm) else {
        return Ok(match chosen {
            Some(ptx) => FatbinPtx::Usable {
                ptx,
                machine_code: None,
            },
            None => FatbinPtx::Unusable(unusable(highest, sm)),
        });
    };
    // The machine code the driver would pick: the device's own
    // architecture, else the highest below it of the same major version.
    let machine = entries
        .iter()
        .filter(|e| e.kind == fatbin::KIND_ELF && e.arch <= sm && e.arch / 10 == sm / 10)
        .max_by_key(|e| e.arch);
    let machine_code = match machine {
        Some(e) => Some((e.arch, fatbin::cubin_symbols(&e.payload()?))),
        None => None,
    };
    Ok(FatbinPtx::Usable { ptx, machine_code })
}

fn unusable(highest: u32, sm: Option<u32>) -> String {
    format!(
        "its PTX is for compute_{highest}, which the driver cannot compile for this device \
         (sm_{}); its machine code is loaded as the application gave it",
        sm.unwrap_or(0)
    )
}

/// The first `.target` of PTX text (`sm_90a`).
fn ptx_target(text: &str) -> Option<String> {
    let at = text.find(".target")?;
    let rest = text[at + ".target".len()..].trim_start();
    Some(
        rest.split(|c: char| c == ',' || c.is_whitespace())
            .next()?
            .to_owned(),
    )
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
    if !crate::process::active() {
        return (original(), None);
    }
    // SAFETY: per the contract; a panic inside only loses the plan.
    let plan = crate::guard::guarded("module load", || None, || Some(unsafe { plan(image) }));
    let Some(mut plan) = plan else {
        return (original(), None);
    };
    if let Some(reason) = plan.reason.as_deref() {
        // PRLX_LOG=info: each reason once (a vendor library loads hundreds
        // of modules for one reason).
        log::once(
            LogLevel::Info,
            reason,
            &format!("a module is loaded unchanged (its launches recorded as metadata): {reason}"),
        );
    }
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
/// `reason` is asked (and the name copied) only the first time: every
/// metadata-only launch comes here.
pub fn notice_metadata(kernel: &str, reason: impl FnOnce() -> Option<String>) {
    type Names = std::collections::HashSet<String, FastBuild>;
    static NOTICED: Mutex<Option<Names>> = Mutex::new(None);
    {
        let mut noticed = NOTICED.lock().unwrap_or_else(|p| p.into_inner());
        let noticed = noticed.get_or_insert_with(Names::default);
        if noticed.contains(kernel) {
            return;
        }
        noticed.insert(kernel.to_owned());
    }
    let reason = reason();
    let why = reason
        .as_deref()
        .unwrap_or("its module's image was not seen being loaded");
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

    /// The fatbinaries of `.nv_fatbin` in a shared library, one after the
    /// other (each 8-byte aligned).
    fn fatbins_of(library: &[u8]) -> Vec<&[u8]> {
        use object::{Object, ObjectSection};
        let file = object::File::parse(library).expect("an ELF library");
        let section = file
            .section_by_name(".nv_fatbin")
            .expect("a .nv_fatbin section");
        let data = section.data().expect("its bytes");
        let mut out = Vec::new();
        let mut at = 0;
        while at + 16 <= data.len() {
            let header: [u8; 16] = data[at..at + 16].try_into().unwrap();
            let Ok(len) = fatbin::total_len(&header) else {
                at += 8;
                continue;
            };
            out.push(&data[at..(at + len).min(data.len())]);
            at += len.div_ceil(8) * 8;
        }
        out
    }

    /// PyPI's cuBLAS (installed with PyTorch by scripts/setup.sh).
    fn cublas() -> Option<Vec<u8>> {
        let lib = prlx_tests::repo_root().join(".tools/pyenv/lib");
        let found = std::fs::read_dir(&lib).ok()?.flatten().find_map(|python| {
            let path = python
                .path()
                .join("site-packages/nvidia/cu13/lib/libcublas.so.13");
            path.is_file().then_some(path)
        });
        match found {
            Some(path) => std::fs::read(path).ok(),
            None => {
                prlx_tests::missing("cuBLAS (.tools/pyenv, PyPI's nvidia-cublas)");
                None
            }
        }
    }

    /// cuBLAS's fatbinaries hold machine code for sm_75…sm_120 and PTX for
    /// compute_120 only. On an H200 (sm_90) the driver cannot compile that
    /// PTX: the module must be loaded as cuBLAS gave it, not replaced by
    /// instrumented sm_120 PTX (which broke cublasCreate on the GPU).
    #[test]
    fn cublas_modules_keep_their_machine_code_on_a_device_below_their_ptx() {
        let Some(library) = cublas() else { return };
        let fatbins = fatbins_of(&library);
        assert!(fatbins.len() > 100, "{} fatbinaries", fatbins.len());
        let (policy, _) = Policy::from_lookup(|_| None);
        for fat in fatbins.iter().take(8) {
            // SAFETY: a whole fatbinary.
            let planned = unsafe { plan_for(fat.as_ptr() as *const c_void, &policy, Some(90)) };
            assert_eq!(planned.mode, CaptureMode::Metadata);
            assert!(planned.replacement.is_none());
            let why = planned.reason.unwrap();
            assert!(
                why.contains("compute_120") && why.contains("sm_90"),
                "{why}"
            );
        }
        // On a device that compiles it, the PTX covers the machine code and
        // the instrumented module exposes the same kernels and variables.
        let fat = fatbins[0];
        // SAFETY: as above.
        let planned = unsafe { plan_for(fat.as_ptr() as *const c_void, &policy, Some(120)) };
        assert_eq!(planned.mode, CaptureMode::Ptx, "{:?}", planned.reason);
        let Ok(FatbinPtx::Usable {
            machine_code: Some((120, symbols)),
            ..
        }) = fatbin_ptx_for(fat, Some(120))
        else {
            panic!("cuBLAS's first fatbinary has sm_120 machine code and PTX");
        };
        assert!(!symbols.functions.is_empty());
    }

    #[test]
    fn ptx_targets_compile_for_the_devices_the_ptx_isa_allows() {
        assert!(target_compiles_for("sm_80", 90) && target_compiles_for("sm_90", 90));
        assert!(!target_compiles_for("sm_120", 90));
        assert!(target_compiles_for("sm_90a", 90) && !target_compiles_for("sm_90a", 100));
        assert!(target_compiles_for("sm_100f", 103) && !target_compiles_for("sm_100f", 120));
        assert!(!target_compiles_for("compute_x", 90));
        assert_eq!(
            ptx_target(".version 9.0\n.target sm_90a, debug\n").as_deref(),
            Some("sm_90a")
        );
    }

    #[test]
    fn an_instrumented_module_must_expose_what_the_original_did() {
        let original = ".version 7.5\n.target sm_80\n.address_size 64\n\
            .visible .global .align 4 .u32 counter;\n\
            .visible .entry k() .maxntid 64, 1, 1\n{\n\tret;\n}\n\
            .visible .entry k2()\n{\n\tret;\n}\n";
        let module = prlx_ptx::parse(original, "t").unwrap();
        assert_eq!(same_interface(&module, original), Ok(()));
        let with_prlx = format!("{original}.visible .global .align 8 .b8 __prlx_desc[64];\n");
        assert_eq!(same_interface(&module, &with_prlx), Ok(()));
        let lost_kernel = original.replace(".visible .entry k2()\n{\n\tret;\n}\n", "");
        assert!(
            same_interface(&module, &lost_kernel)
                .unwrap_err()
                .contains("k2")
        );
        let lost_global = original.replace(".visible .global .align 4 .u32 counter;\n", "");
        assert!(
            same_interface(&module, &lost_global)
                .unwrap_err()
                .contains("counter")
        );
        let attribute = original.replace(".maxntid 64, 1, 1", ".maxntid 128, 1, 1");
        assert!(
            same_interface(&module, &attribute)
                .unwrap_err()
                .contains("changed k")
        );
        let extra = format!("{original}.visible .entry k3()\n{{\n\tret;\n}}\n");
        assert!(same_interface(&module, &extra).unwrap_err().contains("k3"));
        // The machine code's symbols must all be in the PTX.
        let sass = fatbin::CubinSymbols {
            functions: vec!["k".into(), "only_in_sass".into()],
            ..fatbin::CubinSymbols::default()
        };
        assert_eq!(ptx_covers(&module, &sass), Err("only_in_sass".into()));
    }
}
