//! What the shim knows about loaded code: modules and libraries (and whether
//! they were built with the pass), and the functions and kernels in them.
//! Keys are the driver's opaque handles as integers.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};

/// A map the launch path reads on every launch: keyed by the driver's
/// handles and kernel names, which need no defence against chosen keys,
/// so hashed with [`FastHasher`] rather than the default SipHash.
pub type FastMap<K, V> = HashMap<K, V, FastBuild>;

/// Builds [`FastHasher`]s.
pub type FastBuild = BuildHasherDefault<FastHasher>;

/// FxHash's word step (as rustc's), a word at a time, finished with a
/// rotation that brings the product's well-mixed high bits down to the
/// low bits the table indexes by (handles are aligned pointers).
#[derive(Clone, Copy, Default)]
pub struct FastHasher(u64);

impl FastHasher {
    const SEED: u64 = 0x517c_c1b7_2722_0a95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn write_isize(&mut self, n: isize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

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

/// Where a function's globals are looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeHandle {
    Module(usize),
    Library(usize),
}

/// A module built with the pass: it defines the `__prlx_desc` descriptor.
#[derive(Debug)]
pub struct Instrumented {
    /// Device address of `__prlx_desc`.
    pub descriptor: u64,
    /// The module's embedded site table (`__prlx_sites`, JSON), if present.
    pub site_table: Option<String>,
    /// Serialises captures: the descriptor is one global per module.
    pub capture_lock: Arc<Mutex<()>>,
}

#[derive(Debug, Default)]
pub struct CodeInfo {
    /// Kernel name → parameter sizes and offsets, when the image was PTX text.
    pub ptx_params: HashMap<String, Vec<ParamSlot>>,
    pub instrumented: Option<Arc<Instrumented>>,
    /// How its launches are captured (`module_load`), and why metadata only.
    pub capture: CaptureMode,
    pub capture_reason: Option<String>,
    /// A short stable id for file names (FNV of the image's first bytes).
    pub image_id: u64,
    /// Instrumented, but its descriptor could not be looked up at load:
    /// looked up at its first launch (`state::resolve_pending`).
    pub pending: Option<PendingDescriptor>,
}

/// A library instrumented at load before any context was current: the
/// CUDA runtime loads its modules with `cuLibraryLoadData` before it
/// creates the primary context when the program's first call is a launch
/// or a `__managed__` variable is touched, and NVIDIA's driver answers
/// `cuLibraryGetGlobal` only in a context (`CUDA_ERROR_INVALID_CONTEXT`).
#[derive(Debug)]
pub struct PendingDescriptor {
    /// The capture mode the load planned.
    pub mode: CaptureMode,
    /// The site map of the instrumented image.
    pub site_table: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamSlot {
    pub offset: usize,
    pub size: usize,
}

#[derive(Clone, Debug)]
pub struct FunctionInfo {
    pub name: String,
    pub code: CodeHandle,
}

#[derive(Default)]
pub struct Registry {
    pub code: FastMap<CodeHandle, CodeInfo>,
    /// CUfunction (and CUkernel, which launches accept too) → function.
    pub functions: FastMap<usize, FunctionInfo>,
    /// Launches recorded so far per kernel name: the next launch index.
    pub launch_counts: FastMap<String, u32>,
    pub launches_recorded: u64,
    /// `cuFuncGetParamInfo` answers per function handle (None: the driver
    /// could not say), so it is asked once per function, not per launch.
    pub param_layouts: FastMap<usize, Option<Vec<ParamSlot>>>,
    /// Another handle of loaded code → the code it is (`cuLibraryGetModule`:
    /// a library's module in a context, where cudart 12.x looks its
    /// kernels up with `cuModuleGetFunction`).
    pub code_aliases: HashMap<CodeHandle, CodeHandle>,
}

impl Registry {
    /// The code `code` stands for (itself unless it is an alias).
    pub fn canonical(&self, code: CodeHandle) -> CodeHandle {
        self.code_aliases.get(&code).copied().unwrap_or(code)
    }

    pub fn forget_code(&mut self, code: CodeHandle) {
        self.code.remove(&code);
        self.code_aliases
            .retain(|alias, of| *alias != code && *of != code);
        let functions = &mut self.functions;
        // Handles may be reused by the driver for the next module's functions.
        self.param_layouts
            .retain(|handle, _| functions.get(handle).is_none_or(|f| f.code != code));
        functions.retain(|_, f| f.code != code);
    }

    /// The kernels (`cuLibraryGetKernel` handles) named `name`, with what
    /// is known of them: the candidates a `CUfunction` the shim never saw
    /// (`cuKernelGetFunction` inside the driver or the runtime) may stand for.
    pub fn library_kernels_named(&self, name: &str) -> Vec<(usize, FunctionInfo)> {
        self.functions
            .iter()
            .filter(|(_, f)| f.name == name && matches!(f.code, CodeHandle::Library(_)))
            .map(|(&handle, f)| (handle, f.clone()))
            .collect()
    }

    /// The next launch index of `kernel`, counting this launch.
    pub fn next_launch_index(&mut self, kernel: &str) -> u32 {
        // The name is copied only for a kernel's first launch.
        let counter = match self.launch_counts.get_mut(kernel) {
            Some(counter) => counter,
            None => self.launch_counts.entry(kernel.to_owned()).or_insert(0),
        };
        let index = *counter;
        *counter += 1;
        index
    }
}

/// Parameter layouts of every `.entry` in a PTX module, via the project's
/// PTX front end. Alignment follows the PTX rules the driver packs by:
/// `.align N` when given, else the element size.
pub fn ptx_param_layouts(ptx: &str) -> HashMap<String, Vec<ParamSlot>> {
    match prlx_ptx::parse(ptx, "<module image>") {
        Ok(module) => ptx_module_param_layouts(&module),
        Err(_) => HashMap::new(),
    }
}

/// [`ptx_param_layouts`] of an already parsed module.
pub fn ptx_module_param_layouts(module: &prlx_ptx::Module) -> HashMap<String, Vec<ParamSlot>> {
    let mut layouts = HashMap::new();
    for item in &module.items {
        let prlx_ptx::Item::Function(function) = item else {
            continue;
        };
        if function.kind != prlx_ptx::FunctionKind::Entry {
            continue;
        }
        let mut offset = 0usize;
        let mut slots = Vec::new();
        for param in &function.params {
            let Some(scalar) = param.ty.size_bytes() else {
                slots.clear();
                break;
            };
            let element = scalar as usize * param.vector.unwrap_or(1) as usize;
            let count: usize = param
                .array_dims
                .iter()
                .map(|d| d.unwrap_or(1) as usize)
                .product();
            let align = param.align.map(|a| a as usize).unwrap_or(element).max(1);
            offset = offset.div_ceil(align) * align;
            let size = element * count;
            slots.push(ParamSlot { offset, size });
            offset += size;
        }
        if slots.len() == function.params.len() {
            layouts.insert(function.name.clone(), slots);
        }
    }
    layouts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_layouts_follow_alignment() {
        let ptx = r#"
.version 7.5
.target sm_80
.address_size 64
.visible .entry k(.param .u32 n, .param .u64 p, .param .align 16 .b8 s[24], .param .f32 x)
{
    ret;
}
"#;
        let layouts = ptx_param_layouts(ptx);
        assert_eq!(
            layouts["k"],
            vec![
                ParamSlot { offset: 0, size: 4 },
                ParamSlot { offset: 8, size: 8 },
                ParamSlot {
                    offset: 16,
                    size: 24
                },
                ParamSlot {
                    offset: 40,
                    size: 4
                },
            ]
        );
    }

    #[test]
    fn library_kernels_are_found_by_name() {
        let mut r = Registry::default();
        let info = |name: &str, code| FunctionInfo {
            name: name.into(),
            code,
        };
        r.functions.insert(1, info("k", CodeHandle::Library(10)));
        r.functions.insert(2, info("k", CodeHandle::Module(20)));
        r.functions
            .insert(3, info("other", CodeHandle::Library(10)));
        let found = r.library_kernels_named("k");
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].0, found[0].1.code), (1, CodeHandle::Library(10)));
    }

    #[test]
    fn aliases_name_their_code_until_it_goes() {
        let mut r = Registry::default();
        let (library, module) = (CodeHandle::Library(1), CodeHandle::Module(2));
        r.code_aliases.insert(module, library);
        assert_eq!(r.canonical(module), library);
        assert_eq!(r.canonical(library), library);
        r.forget_code(library);
        assert_eq!(r.canonical(module), module);
    }

    #[test]
    fn fast_maps_find_what_they_hold() {
        let mut handles: FastMap<usize, usize> = FastMap::default();
        let mut names: FastMap<String, usize> = FastMap::default();
        // Aligned handles (as the driver's are) and names of every length
        // around a word.
        for i in 0..4096usize {
            handles.insert(0x7f00_0000_0000 + i * 64, i);
            names.insert("k".repeat(i % 19) + &i.to_string(), i);
        }
        for i in 0..4096usize {
            assert_eq!(handles.get(&(0x7f00_0000_0000 + i * 64)), Some(&i));
            assert_eq!(names.get(&("k".repeat(i % 19) + &i.to_string())), Some(&i));
        }
        assert_eq!(handles.get(&(0x7f00_0000_0000 + 32)), None);
        let hash = |s: &str| {
            let mut h = FastHasher::default();
            h.write(s.as_bytes());
            h.finish()
        };
        // A shorter tail is not the same word padded with zeros.
        assert_ne!(hash("ab"), hash("ab\0"));
    }

    #[test]
    fn launch_indices_count_per_kernel() {
        let mut r = Registry::default();
        assert_eq!(r.next_launch_index("a"), 0);
        assert_eq!(r.next_launch_index("b"), 0);
        assert_eq!(r.next_launch_index("a"), 1);
    }
}
