//! `cuGetExportTable`: the private tables the CUDA runtime (cudart, static
//! or shared, 12.x and 13.x) asks the driver for before its first call.
//!
//! Each table is an array of pointers identified by a UUID; most begin with
//! their own size in bytes. Which tables cudart asks for and what each slot
//! must do are facts observed of the runtime (ZLUDA serves it the same
//! way); a slot nobody has seen used is NULL. The tables served:
//!
//! | id | what | slots |
//! |---|---|---|
//! | `6bd5fb6c-…` | runtime interface | 1, 6, 8: load a module from a fatbinary (wrapper or header); 2: retain the primary context; 7: no-op; 12: start-up handshake (shared 13.x) |
//! | `a094798c-…` | tools runtime callbacks | 2, 6: scratch buffers the runtime writes into |
//! | `42d85a81-…` | tools thread-local storage | size only |
//! | `c693336e-…` | context-local storage | 0 put, 1 delete, 2 get (key → value per context; destructors run when the context goes) |
//! | `0ca50b8c-…` | context creation | 1: `cuCtxCreate` |
//! | `d4082055-…` | integrity check | 1: see [`crate::integrity`] |
//! | `263e8860-…` | context checks | 2: "is this context special" (no), 3: 0 |
//! | `21318c60-…` | tools context (13.x) | must exist; 94 slots, none seen called: each refuses naming itself |
//!
//! Any other id fails with `CUDA_ERROR_NOT_SUPPORTED` and a NULL table; the
//! runtime copes with that for the ids it merely probes (`f8cff951-…`).

use super::device::{DRIVER_VERSION, device_attribute};
use super::module::load_image;
use crate::cu::*;
use crate::driver::{self, LocalStorage, as_handle, with_context, with_driver};
use crate::entry::{ProcEntry, exports, guard, non_null, procs, write_out};
use crate::image;
use crate::integrity;
use crate::jit::JitLogs;
use std::ffi::{c_int, c_uint, c_void};

type Uuid = [u8; 16];

/// A table as handed out: pointer-sized slots.
#[repr(transparent)]
pub struct Slots<const N: usize>([*const c_void; N]);
// SAFETY: the slots are immutable function pointers and sizes.
unsafe impl<const N: usize> Sync for Slots<N> {}

impl<const N: usize> Slots<N> {
    fn start(&self) -> *const c_void {
        self.0.as_ptr().cast()
    }
}

/// Slot 0 of most tables: the table's size in bytes.
const fn size_of_table(n: usize) -> *const c_void {
    (n * std::mem::size_of::<usize>()) as *const c_void
}

const NULL: *const c_void = std::ptr::null();

pub const CUDART_INTERFACE: Uuid = uuid(0x6bd5fb6c, 0x5bf4, 0xe74a, 0x8987d93912fd9df9);
pub const TOOLS_RUNTIME_CALLBACKS: Uuid = uuid(0xa094798c, 0x2e74, 0x2e74, 0x93f20800200c0a66);
pub const TOOLS_TLS: Uuid = uuid(0x42d85a81, 0x23f6, 0xcb47, 0x8298f6e78a3aecdc);
pub const CONTEXT_LOCAL_STORAGE: Uuid = uuid(0xc693336e, 0x1121, 0xdf11, 0xa8c368f355d89593);
pub const CONTEXT_CREATE: Uuid = uuid(0x0ca50b8c, 0x1004, 0x929a, 0x89a7d0df10e77286);
pub const INTEGRITY_CHECK: Uuid = uuid(0xd4082055, 0xbde6, 0x704b, 0x8d34ba123c66e1f2);
pub const CONTEXT_CHECKS: Uuid = uuid(0x263e8860, 0x7cd2, 0x6143, 0x92f6bbd5006dfa7e);
pub const TOOLS_CONTEXT: Uuid = uuid(0x21318c60, 0x9714, 0x3248, 0x8ca641ff7324c8f2);

/// The bytes of a UUID written as `aaaaaaaa-bbbb-cccc-dddd-dddddddddddd`,
/// in the order `CUuuid` holds them.
const fn uuid(a: u32, b: u16, c: u16, d: u64) -> Uuid {
    let a = a.to_be_bytes();
    let b = b.to_be_bytes();
    let c = c.to_be_bytes();
    let d = d.to_be_bytes();
    [
        a[0], a[1], a[2], a[3], b[0], b[1], c[0], c[1], d[0], d[1], d[2], d[3], d[4], d[5], d[6],
        d[7],
    ]
}

static CUDART_INTERFACE_TABLE: Slots<13> = Slots([
    size_of_table(13),
    module_from_wrapper as *const c_void,
    primary_context as *const c_void,
    unserved_slot::<1, 3> as *const c_void,
    unserved_slot::<1, 4> as *const c_void,
    unserved_slot::<1, 5> as *const c_void,
    module_from_wrapper_with_options as *const c_void,
    runtime_notice as *const c_void,
    module_from_fatbin_with_options as *const c_void,
    unserved_slot::<1, 9> as *const c_void,
    unserved_slot::<1, 10> as *const c_void,
    unserved_slot::<1, 11> as *const c_void,
    runtime_handshake as *const c_void,
]);

static TOOLS_RUNTIME_CALLBACKS_TABLE: Slots<7> = Slots([
    size_of_table(7),
    unserved_slot::<2, 1> as *const c_void,
    callback_buffer as *const c_void,
    unserved_slot::<2, 3> as *const c_void,
    unserved_slot::<2, 4> as *const c_void,
    unserved_slot::<2, 5> as *const c_void,
    hook_flags_buffer as *const c_void,
]);

static TOOLS_TLS_TABLE: Slots<4> = Slots([size_of_table(4), NULL, NULL, NULL]);

/// This table has no size slot.
static CONTEXT_LOCAL_STORAGE_TABLE: Slots<4> = Slots([
    local_storage_put as *const c_void,
    local_storage_delete as *const c_void,
    local_storage_get as *const c_void,
    NULL,
]);

static CONTEXT_CREATE_TABLE: Slots<2> = Slots([size_of_table(2), context_create as *const c_void]);

static INTEGRITY_CHECK_TABLE: Slots<3> =
    Slots([size_of_table(3), integrity_check as *const c_void, NULL]);

static CONTEXT_CHECKS_TABLE: Slots<4> = Slots([
    size_of_table(4),
    NULL,
    context_check as *const c_void,
    check_flags as *const c_void,
]);

/// Tools context table: the 13.x runtime requires it to exist but was not
/// seen calling any of its 94 slots; each refuses, saying which it is (as
/// do the unknown slots of the other tables).
#[repr(C)]
struct ToolsContextTable {
    size: usize,
    slots: [*const c_void; 94],
}
// SAFETY: immutable function pointers.
unsafe impl Sync for ToolsContextTable {}

macro_rules! unserved_slots {
    ($table:literal; $($slot:literal)*) => {
        [$(unserved_slot::<$table, $slot> as *const c_void),*]
    };
}

static TOOLS_CONTEXT_TABLE: ToolsContextTable = ToolsContextTable {
    size: 95 * std::mem::size_of::<usize>(),
    slots: unserved_slots!(0; 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94),
};

/// Tables whose slots are only refused, by index for [`unserved_slot`].
const UNSERVED_TABLES: [Uuid; 3] = [TOOLS_CONTEXT, CUDART_INTERFACE, TOOLS_RUNTIME_CALLBACKS];

/// A slot nobody has seen used: says so, once per slot, and fails.
unsafe extern "C" fn unserved_slot<const TABLE: usize, const SLOT: usize>(
    a: usize,
    b: usize,
    c: usize,
    d: usize,
) -> CUresult {
    trace(format_args!(
        "unserved slot {SLOT} of table {TABLE} ({a:#x}, {b:#x}, {c:#x}, {d:#x})"
    ));
    static REPORTED: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());
    let mut reported = REPORTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !reported.contains(&(TABLE, SLOT)) {
        reported.push((TABLE, SLOT));
        eprintln!(
            "prlx libcuda: the CUDA runtime called slot {SLOT} of export table {}, which the \
             emulator does not implement: CUDA_ERROR_NOT_SUPPORTED",
            format_uuid(&UNSERVED_TABLES[TABLE])
        );
    }
    CUDA_ERROR_NOT_SUPPORTED
}

/// The table for `id`, if this driver serves it.
pub fn table(id: &Uuid) -> Option<*const c_void> {
    Some(match *id {
        CUDART_INTERFACE => CUDART_INTERFACE_TABLE.start(),
        TOOLS_RUNTIME_CALLBACKS => TOOLS_RUNTIME_CALLBACKS_TABLE.start(),
        TOOLS_TLS => TOOLS_TLS_TABLE.start(),
        CONTEXT_LOCAL_STORAGE => CONTEXT_LOCAL_STORAGE_TABLE.start(),
        CONTEXT_CREATE => CONTEXT_CREATE_TABLE.start(),
        INTEGRITY_CHECK => INTEGRITY_CHECK_TABLE.start(),
        CONTEXT_CHECKS => CONTEXT_CHECKS_TABLE.start(),
        TOOLS_CONTEXT => std::ptr::from_ref(&TOOLS_CONTEXT_TABLE).cast(),
        _ => return None,
    })
}

/// `PRLX_LIBCUDA_TRACE=1`: report table requests and slot calls.
pub fn trace_enabled() -> bool {
    crate::entry::trace_enabled()
}

fn trace(what: std::fmt::Arguments) {
    if trace_enabled() {
        eprintln!("prlx libcuda: {what}");
    }
}

pub fn format_uuid(id: &Uuid) -> String {
    let hex: Vec<String> = id.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        hex[0..4].concat(),
        hex[4..6].concat(),
        hex[6..8].concat(),
        hex[8..10].concat(),
        hex[10..16].concat()
    )
}

exports! {
    /// The private tables the CUDA runtime needs.
    fn cuGetExportTable(pp_export_table: *mut *const c_void, p_export_table_id: *const c_void) {
        // SAFETY: `cuGetExportTable`'s contract (a writable out-pointer, an
        // id pointing to a `CUuuid`) is `get_export_table`'s.
        unsafe { get_export_table(pp_export_table, p_export_table_id) }
    }
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuGetExportTable": 3000 => cuGetExportTable;
    }
}

/// # Safety
/// As `cuGetExportTable`: `id` points to a `CUuuid`.
pub unsafe fn get_export_table(
    pp_export_table: *mut *const c_void,
    id: *const c_void,
) -> Result<(), CUresult> {
    non_null(pp_export_table)?;
    non_null(id)?;
    // SAFETY: a CUuuid is 16 bytes.
    let id: Uuid = unsafe { std::ptr::read_unaligned(id.cast()) };
    match table(&id) {
        Some(t) => {
            trace(format_args!("cuGetExportTable({})", format_uuid(&id)));
            // SAFETY: `pp_export_table` is NULL or valid by `get_export_table`'s `# Safety` contract
            // (writable for a `*const c_void`); `write_out` refuses NULL.
            unsafe { write_out(pp_export_table, t) }
        }
        None => {
            trace(format_args!(
                "cuGetExportTable({}): unknown table, not supported",
                format_uuid(&id)
            ));
            // SAFETY: `pp_export_table` is NULL or valid by `get_export_table`'s `# Safety` contract
            // (writable for a `*const c_void`); `write_out` refuses NULL.
            unsafe { write_out(pp_export_table, std::ptr::null()) }?;
            Err(CUDA_ERROR_NOT_SUPPORTED)
        }
    }
}

/// Loads a fatbinary (a wrapper or a bare fatbinary) into the current
/// context, as `cuModuleLoadFatBinary` would.
fn load_fatbinary(module: *mut CUmodule, image_ptr: *const c_void) -> Result<(), CUresult> {
    with_context(|d, ctx| {
        non_null(module)?;
        non_null(image_ptr)?;
        // SAFETY: the runtime passes the wrapper or fatbinary nvcc embedded.
        let img = unsafe { image::read(image_ptr.cast(), d.sm()) };
        let m = load_image(d, ctx, img, "fatbinary.ptx", &JitLogs::default())?;
        // SAFETY: `module` is NULL or valid by `load_fatbinary`'s `# Safety` contract (writable for a
        // `CUmodule`); `write_out` refuses NULL.
        unsafe { write_out(module, m) }
    })
}

/// Slot 1: `(CUmodule *out, const __fatBinC_Wrapper_t *)`.
unsafe extern "C" fn module_from_wrapper(
    module: *mut CUmodule,
    wrapper: *const c_void,
) -> CUresult {
    trace(format_args!(
        "runtime interface: load module from wrapper {wrapper:p}"
    ));
    guard(|| load_fatbinary(module, wrapper))
}

/// Slot 6: as slot 1, plus JIT options (options, values, count), which the
/// emulator has no use for.
unsafe extern "C" fn module_from_wrapper_with_options(
    module: *mut CUmodule,
    wrapper: *const c_void,
    _options: *mut c_void,
    _values: *mut c_void,
    _count: c_uint,
) -> CUresult {
    trace(format_args!(
        "runtime interface: load module from wrapper {wrapper:p} (with options)"
    ));
    guard(|| load_fatbinary(module, wrapper))
}

/// Slot 8: the fatbinary itself first, then the module, then JIT options.
unsafe extern "C" fn module_from_fatbin_with_options(
    fatbin: *const c_void,
    module: *mut CUmodule,
    _options: *mut c_void,
    _values: *mut c_void,
    _count: c_uint,
) -> CUresult {
    trace(format_args!(
        "runtime interface: load module from fatbinary {fatbin:p}"
    ));
    guard(|| load_fatbinary(module, fatbin))
}

/// Slot 12: called once by the shared 13.x runtime while it starts, with
/// (pointer, an 11-character key, 11, 0x44); it goes on only when this
/// succeeds, and nothing it passes needs an answer.
unsafe extern "C" fn runtime_handshake(
    _a: usize,
    _key: usize,
    len: usize,
    flags: usize,
) -> CUresult {
    trace(format_args!(
        "runtime interface: slot 12 (key of {len} bytes, {flags:#x}): acknowledged"
    ));
    CUDA_SUCCESS
}

/// Slot 2: the device's primary context, retained.
unsafe extern "C" fn primary_context(pctx: *mut CUcontext, dev: CUdevice) -> CUresult {
    trace(format_args!(
        "runtime interface: primary context of device {dev}"
    ));
    // SAFETY: same contract as cuDevicePrimaryCtxRetain.
    unsafe { super::context::cuDevicePrimaryCtxRetain(pctx, dev) }
}

/// Slot 7: called with one integer; nothing to do.
unsafe extern "C" fn runtime_notice(value: usize) -> CUresult {
    trace(format_args!("runtime interface: slot 7 ({value:#x})"));
    CUDA_SUCCESS
}

/// Scratch the runtime's tools hooks write into; never read by the driver.
struct Scratch<const N: usize>(std::cell::UnsafeCell<[u64; N]>);
// SAFETY: only the runtime writes it, through the pointer handed out.
unsafe impl<const N: usize> Sync for Scratch<N> {}

static CALLBACK_BUFFER: Scratch<1024> = Scratch(std::cell::UnsafeCell::new([0; 1024]));
static HOOK_FLAGS_BUFFER: Scratch<32> = Scratch(std::cell::UnsafeCell::new([0; 32]));

/// Tools slot 2: `(void **buffer, size_t *entries)`.
unsafe extern "C" fn callback_buffer(buffer: *mut *mut c_void, entries: *mut usize) {
    if !buffer.is_null() && !entries.is_null() {
        // SAFETY: non-null out-pointers from the runtime.
        unsafe {
            *buffer = CALLBACK_BUFFER.0.get().cast();
            *entries = 1024;
        }
    }
}

/// Tools slot 6: `(void **buffer, size_t *entries)`.
unsafe extern "C" fn hook_flags_buffer(buffer: *mut *mut c_void, entries: *mut usize) {
    if !buffer.is_null() && !entries.is_null() {
        // SAFETY: as above.
        unsafe {
            *buffer = HOOK_FLAGS_BUFFER.0.get().cast();
            *entries = 14;
        }
    }
}

/// The context a local-storage call means: the given one, or the current.
fn storage_context(d: &driver::Driver, ctx: CUcontext) -> Result<usize, CUresult> {
    let ctx = if ctx.is_null() {
        driver::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?
    } else {
        ctx as usize
    };
    if d.contexts.contains(as_handle(ctx)) {
        Ok(ctx)
    } else {
        Err(CUDA_ERROR_INVALID_CONTEXT)
    }
}

/// Local storage slot 0: `(ctx, key, value, destructor)`.
unsafe extern "C" fn local_storage_put(
    ctx: CUcontext,
    key: *mut c_void,
    value: *mut c_void,
    destructor: Option<driver::LocalStorageDestructor>,
) -> CUresult {
    trace(format_args!(
        "context-local storage: put {key:p} = {value:p} in {ctx:p}"
    ));
    guard(|| {
        with_driver(|d| {
            let ctx = storage_context(d, ctx)?;
            let c = d
                .contexts
                .get_mut(as_handle(ctx))
                .ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
            c.local_storage.retain(|s| s.key != key as usize);
            c.local_storage.push(LocalStorage {
                key: key as usize,
                value: value as usize,
                destructor,
            });
            Ok(())
        })
    })
}

/// Local storage slot 1: `(ctx, key)`.
unsafe extern "C" fn local_storage_delete(ctx: CUcontext, key: *mut c_void) -> CUresult {
    trace(format_args!(
        "context-local storage: delete {key:p} in {ctx:p}"
    ));
    guard(|| {
        with_driver(|d| {
            let ctx = storage_context(d, ctx)?;
            if let Some(c) = d.contexts.get_mut(as_handle(ctx)) {
                c.local_storage.retain(|s| s.key != key as usize);
            }
            Ok(())
        })
    })
}

/// Local storage slot 2: `(void **value, ctx, key)`; a missing key is
/// `CUDA_ERROR_INVALID_HANDLE`.
unsafe extern "C" fn local_storage_get(
    value: *mut *mut c_void,
    ctx: CUcontext,
    key: *mut c_void,
) -> CUresult {
    let code = guard(|| {
        with_driver(|d| {
            let ctx = storage_context(d, ctx)?;
            let c = d
                .contexts
                .get(as_handle(ctx))
                .ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
            let found = c
                .local_storage
                .iter()
                .find(|s| s.key == key as usize)
                .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            // SAFETY: `value` is NULL or valid by `local_storage_get`'s `# Safety` contract (writable for a
            // `*mut c_void`); `write_out` refuses NULL.
            unsafe { write_out(value, found.value as *mut c_void) }
        })
    });
    trace(format_args!(
        "context-local storage: get {key:p} in {ctx:p}: {code}"
    ));
    code
}

/// Context-creation slot 1: `cuCtxCreate(pctx, flags, dev)`.
unsafe extern "C" fn context_create(
    pctx: *mut CUcontext,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    // SAFETY: same contract.
    unsafe { super::context::cuCtxCreate_v2(pctx, flags, dev) }
}

/// Integrity slot 1: `(runtime version, unix seconds, u64 result[2])`.
unsafe extern "C" fn integrity_check(
    version: c_uint,
    unix_seconds: u64,
    result: *mut [u64; 2],
) -> CUresult {
    let code = guard(|| {
        non_null(result)?;
        // One record per device: its UUID and PCI domain, bus and device
        // (the bus is the ordinal, see api/device.rs).
        let devices: Vec<integrity::DeviceRecord> = with_driver(|d| {
            let attr = |a| device_attribute(d, a).unwrap_or(0);
            Ok((0..crate::driver::device_count())
                .map(|dev| integrity::DeviceRecord {
                    uuid: super::device::device_uuid(dev),
                    pci_domain: attr(50),
                    pci_bus: dev,
                    pci_device: attr(34),
                })
                .collect())
        })
        .unwrap_or_default();
        let input = integrity::CheckInput {
            driver_version: DRIVER_VERSION as u32,
            runtime_version: version,
            process: std::process::id(),
            // SAFETY: no preconditions.
            thread: unsafe { libc::pthread_self() } as u32,
            cudart_table: CUDART_INTERFACE_TABLE.start() as usize,
            integrity_table: INTEGRITY_CHECK_TABLE.start() as usize,
            check_function: INTEGRITY_CHECK_TABLE.0[1] as usize,
            unix_seconds,
        };
        // SAFETY: `result` is NULL or valid by `integrity_check`'s `# Safety` contract (writable for a
        // `[u64; 2]`); `write_out` refuses NULL.
        unsafe { write_out(result, integrity::answer(&input, &devices)) }
    });
    trace(format_args!(
        "integrity check: runtime {version}, time {unix_seconds}: {code}"
    ));
    code
}

/// Context-checks slot 2: `(ctx, u32 *flags, void **extra)`; no context
/// here is special, so the flags are 0.
unsafe extern "C" fn context_check(
    _ctx: CUcontext,
    flags: *mut u32,
    _extra: *mut *const c_void,
) -> CUresult {
    if flags.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: non-null out-pointer.
    unsafe { *flags = 0 };
    CUDA_SUCCESS
}

/// Context-checks slot 3: always 0.
unsafe extern "C" fn check_flags() -> c_int {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_laid_out_as_cuda_h_holds_them() {
        assert_eq!(
            CUDART_INTERFACE,
            [
                0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd,
                0x9d, 0xf9
            ]
        );
        assert_eq!(
            format_uuid(&TOOLS_RUNTIME_CALLBACKS),
            "a094798c-2e74-2e74-93f2-0800200c0a66"
        );
    }

    #[test]
    fn known_tables_are_served_and_sized() {
        let t = table(&CUDART_INTERFACE).unwrap() as *const usize;
        // SAFETY: `table` returned a pointer to a static export table, whose first word (its size) is
        // readable.
        assert_eq!(unsafe { *t }, 13 * 8);
        assert!(table(&[0; 16]).is_none());
        let mut out = std::ptr::dangling::<c_void>();
        let id = [0xf8u8; 16];
        // SAFETY: `out` is a live local and `id` 16 readable bytes, as `get_export_table` requires.
        let r = unsafe { get_export_table(&mut out, id.as_ptr().cast()) };
        assert_eq!(r, Err(CUDA_ERROR_NOT_SUPPORTED));
        assert!(out.is_null());
        assert_eq!(
            // SAFETY: NULL `pp_export_table` is allowed (refused); `id` is 16 readable bytes.
            unsafe { get_export_table(std::ptr::null_mut(), id.as_ptr().cast()) },
            Err(CUDA_ERROR_INVALID_VALUE)
        );
    }
}
