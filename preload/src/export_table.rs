//! `cuGetExportTable`: the driver's private tables, the one road from the
//! CUDA runtime to the driver that `cuGetProcAddress` does not cover.
//!
//! The runtime (cudart 12.x and 13.x, static and shared) asks for a few
//! tables by UUID (see `libcuda/src/api/export_table.rs` and
//! `docs/cudart-roads.md`). One of them, the runtime interface
//! `6bd5fb6c-5bf4-e74a-8987-d93912fd9df9`, has slots that load a module
//! from a fatbinary (slots 1, 6 and 8, the ones ZLUDA names
//! `get_module_from_cubin*`). A module loaded there never passes
//! `cuModuleLoad*` or `cuLibraryLoad*`, so the shim points those slots of
//! the driver's table at its own functions, which go through
//! `module_load` (instrumented like `cuModuleLoadFatBinary`) and register
//! the module; every other slot stays the driver's. The table is patched
//! in place, not copied: the runtime's integrity check (table
//! `d4082055-…`) covers the address of the runtime interface table, and a
//! copy fails it ("integrity checks failed").
//!
//! Every table request is logged at `PRLX_LOG=debug`, and there every
//! runtime-interface slot call too, which is how the roads of a runtime on
//! NVIDIA's driver are found.

use crate::config::LogLevel;
use crate::ffi::*;
use crate::log;
use std::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

type Uuid = [u8; 16];

/// The runtime interface table's UUID, in `CUuuid` byte order.
pub const CUDART_INTERFACE: Uuid = [
    0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9,
];

/// The most slots of the runtime interface table the shim copies; a
/// larger table is handed out unchanged (and said so).
const MAX_SLOTS: usize = 32;

/// The driver's runtime-interface slots (index = slot).
static REAL: [AtomicPtr<c_void>; MAX_SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_SLOTS];

/// Driver tables already patched (their addresses).
static PATCHED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// "aaaaaaaa-bbbb-cccc-dddd-dddddddddddd" as `cuda.h`'s `CUuuid` bytes read.
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

/// After the driver answered `cuGetExportTable(table, id)` with success:
/// logs the request and, for the runtime interface, swaps in the shim's
/// copy.
///
/// # Safety
/// `table` and `id` are the caller's arguments to a call the driver just
/// answered with success: `id` points at 16 bytes, `table` at the answer.
pub unsafe fn after_get(table: *mut *const c_void, id: *const c_void) {
    if table.is_null() || id.is_null() {
        return;
    }
    // SAFETY: per the contract.
    let (uuid, found) = unsafe { (std::ptr::read_unaligned(id.cast::<Uuid>()), *table) };
    log::log(
        LogLevel::Debug,
        &format!("cuGetExportTable({}) = {found:p}", format_uuid(&uuid)),
    );
    if uuid != CUDART_INTERFACE || found.is_null() || !crate::process::active() {
        return;
    }
    patch_in_place(found as usize);
}

/// Points the module-loading slots (and, at debug level, every slot) of
/// the driver's runtime interface table at `real` to the shim, in place:
/// the runtime's integrity check covers the table's address, so the table
/// handed out must stay the driver's own. Patched once per table; true
/// when the table now holds the shim's slots.
fn patch_in_place(real: usize) -> bool {
    let mut patched = PATCHED.lock().unwrap_or_else(|p| p.into_inner());
    if patched.contains(&real) {
        return true;
    }
    // SAFETY: the driver's table begins with its size in bytes.
    let bytes = unsafe { *(real as *const usize) };
    let slots = bytes / std::mem::size_of::<usize>();
    if bytes % std::mem::size_of::<usize>() != 0 || !(2..=MAX_SLOTS).contains(&slots) {
        log::once(
            LogLevel::Warn,
            "export-table-size",
            &format!(
                "the driver's runtime interface table has an unexpected size ({bytes} bytes); \
                 modules the runtime loads through it are not seen"
            ),
        );
        return false;
    }
    let trace_all = log::enabled(LogLevel::Debug);
    let mut ours = vec![0usize; slots];
    for (slot, cell) in REAL.iter().enumerate().take(slots).skip(1) {
        // SAFETY: within the table's stated size.
        let driver_slot = unsafe { *(real as *const usize).add(slot) };
        cell.store(driver_slot as *mut c_void, Ordering::Relaxed);
        ours[slot] = match slot {
            _ if driver_slot == 0 => 0,
            1 => module_from_wrapper as *const () as usize,
            6 => module_from_wrapper_with_options as *const () as usize,
            8 => module_from_fatbin_with_options as *const () as usize,
            _ if trace_all => TRACED[slot] as usize,
            _ => driver_slot,
        };
    }
    let first = real + std::mem::size_of::<usize>();
    let written = with_writable(first, (slots - 1) * std::mem::size_of::<usize>(), || {
        for (slot, value) in ours.iter().enumerate().skip(1) {
            // SAFETY: within the table, made writable for this.
            unsafe { std::ptr::write_volatile((real as *mut usize).add(slot), *value) };
        }
    });
    if !written {
        log::once(
            LogLevel::Warn,
            "export-table-protect",
            "could not write the driver's runtime interface table; modules the runtime \
             loads through it are not seen",
        );
        return false;
    }
    patched.push(real);
    true
}

/// Runs `write` with the pages of `[start, start + len)` writable, then
/// gives them back their protection as `/proc/self/maps` lists it.
fn with_writable(start: usize, len: usize, write: impl FnOnce()) -> bool {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let first = start / page * page;
    let end = (start + len).div_ceil(page) * page;
    let Some(protection) = protection_of(first, end) else {
        return false;
    };
    if protection & libc::PROT_WRITE != 0 {
        write();
        return true;
    }
    // SAFETY: the range is mapped (listed in /proc/self/maps) and only
    // gains write access while the slots are written.
    let opened = unsafe {
        libc::mprotect(
            first as *mut c_void,
            end - first,
            protection | libc::PROT_WRITE,
        )
    };
    if opened != 0 {
        return false;
    }
    write();
    // SAFETY: as above; the original protection back.
    unsafe { libc::mprotect(first as *mut c_void, end - first, protection) };
    true
}

/// The protection of the mapping that holds all of `[first, end)`.
fn protection_of(first: usize, end: usize) -> Option<i32> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let (range, rest) = line.split_once(' ')?;
        let (lo, hi) = range.split_once('-')?;
        let (lo, hi) = (
            usize::from_str_radix(lo, 16).ok()?,
            usize::from_str_radix(hi, 16).ok()?,
        );
        if !(lo <= first && end <= hi) {
            return None;
        }
        let perms = rest.as_bytes();
        let mut protection = 0;
        if perms.first() == Some(&b'r') {
            protection |= libc::PROT_READ;
        }
        if perms.get(1) == Some(&b'w') {
            protection |= libc::PROT_WRITE;
        }
        if perms.get(2) == Some(&b'x') {
            protection |= libc::PROT_EXEC;
        }
        Some(protection)
    })
}

fn real_slot(slot: usize) -> *mut c_void {
    REAL[slot].load(Ordering::Relaxed)
}

/// Slot 1: `(CUmodule *out, const __fatBinC_Wrapper_t *)`.
type FnFromWrapper = unsafe extern "C" fn(*mut CUmodule, *const c_void) -> CUresult;
/// Slot 6: slot 1 plus JIT options `(options, values, count)`.
type FnFromWrapperEx = unsafe extern "C" fn(
    *mut CUmodule,
    *const c_void,
    *mut CUjit_option,
    *mut *mut c_void,
    u32,
) -> CUresult;
/// Slot 8: `(const fatbinary *, CUmodule *out, options, values, count)`.
type FnFromFatbinEx = unsafe extern "C" fn(
    *const c_void,
    *mut CUmodule,
    *mut CUjit_option,
    *mut *mut c_void,
    u32,
) -> CUresult;

/// Loads through the runtime interface's slot `slot`: `original` is the
/// driver's slot with the runtime's arguments; an instrumented image goes
/// to `cuModuleLoadDataEx` with the runtime's JIT options.
///
/// # Safety
/// `module` is the runtime's out-pointer and `image` its fatbinary (or
/// wrapper), as the slot's contract.
unsafe fn load_through_slot(
    slot: usize,
    module: *mut CUmodule,
    image: *const c_void,
    jit: (*mut CUjit_option, *mut *mut c_void, u32),
    original: impl FnOnce() -> CUresult,
) -> CUresult {
    let load_ex = crate::driver::cuda().cuModuleLoadDataEx;
    let forward = std::cell::Cell::new(Some(original));
    let run_original = || forward.take().map_or(CUDA_ERROR_UNKNOWN, |f| f());
    let (result, plan) = if crate::process::active() {
        // SAFETY: the runtime's image; the loads forward its arguments or the rewritten image.
        unsafe {
            crate::module_load::load(image, run_original, |rewritten| match load_ex {
                Some(load_ex) => load_ex(module, rewritten, jit.2, jit.0, jit.1),
                None => CUDA_ERROR_NOT_INITIALIZED,
            })
        }
    } else {
        (run_original(), None)
    };
    log::log(
        LogLevel::Debug,
        &format!("runtime interface slot {slot}: module from {image:p}: CUresult {result}"),
    );
    crate::state::module_loaded(result, module, None, plan);
    result
}

unsafe extern "C" fn module_from_wrapper(
    module: *mut CUmodule,
    wrapper: *const c_void,
) -> CUresult {
    let real = real_slot(1);
    if real.is_null() {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    // SAFETY: the driver's slot 1, of this signature.
    let real = unsafe { std::mem::transmute::<*mut c_void, FnFromWrapper>(real) };
    let jit = (std::ptr::null_mut(), std::ptr::null_mut(), 0);
    // SAFETY: the runtime's arguments, forwarded unchanged by `original`.
    unsafe { load_through_slot(1, module, wrapper, jit, || real(module, wrapper)) }
}

unsafe extern "C" fn module_from_wrapper_with_options(
    module: *mut CUmodule,
    wrapper: *const c_void,
    options: *mut CUjit_option,
    values: *mut *mut c_void,
    count: u32,
) -> CUresult {
    let real = real_slot(6);
    if real.is_null() {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    // SAFETY: the driver's slot 6, of this signature.
    let real = unsafe { std::mem::transmute::<*mut c_void, FnFromWrapperEx>(real) };
    // SAFETY: `real` is the driver's slot entry of this signature, called
    // inside this hook with the arguments the runtime passed to it,
    // unchanged, so they carry the runtime's own contract with the driver.
    let original = || unsafe { real(module, wrapper, options, values, count) };
    // SAFETY: the runtime's arguments, forwarded unchanged by `original`.
    unsafe { load_through_slot(6, module, wrapper, (options, values, count), original) }
}

unsafe extern "C" fn module_from_fatbin_with_options(
    fatbin: *const c_void,
    module: *mut CUmodule,
    options: *mut CUjit_option,
    values: *mut *mut c_void,
    count: u32,
) -> CUresult {
    let real = real_slot(8);
    if real.is_null() {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    // SAFETY: the driver's slot 8, of this signature.
    let real = unsafe { std::mem::transmute::<*mut c_void, FnFromFatbinEx>(real) };
    // SAFETY: `real` is the driver's slot entry of this signature, called
    // inside this hook with the arguments the runtime passed to it,
    // unchanged, so they carry the runtime's own contract with the driver.
    let original = || unsafe { real(fatbin, module, options, values, count) };
    // SAFETY: the runtime's arguments, forwarded unchanged by `original`.
    unsafe { load_through_slot(8, module, fatbin, (options, values, count), original) }
}

/// Calls of the other slots, counted for the debug log.
static TRACED_CALLS: AtomicUsize = AtomicUsize::new(0);

/// A slot whose arguments are not known, at debug level: logs the call
/// and forwards six integer registers (the slots seen take at most five
/// pointer or integer arguments).
unsafe extern "C" fn traced_slot<const SLOT: usize>(
    a: usize,
    b: usize,
    c: usize,
    d: usize,
    e: usize,
    f: usize,
) -> usize {
    type Six = unsafe extern "C" fn(usize, usize, usize, usize, usize, usize) -> usize;
    let real = real_slot(SLOT);
    if real.is_null() {
        return CUDA_ERROR_NOT_SUPPORTED as usize;
    }
    // SAFETY: the driver's slot; extra registers are ignored by a callee
    // that takes fewer arguments.
    let result = unsafe { std::mem::transmute::<*mut c_void, Six>(real)(a, b, c, d, e, f) };
    if TRACED_CALLS.fetch_add(1, Ordering::Relaxed) < 1000 {
        log::log(
            LogLevel::Debug,
            &format!(
                "runtime interface slot {SLOT}({a:#x}, {b:#x}, {c:#x}, {d:#x}, {e:#x}) = {result:#x}"
            ),
        );
    }
    result
}

macro_rules! traced_slots {
    ($($slot:literal)*) => {
        [$(traced_slot::<$slot> as TracedSlot),*]
    };
}

type TracedSlot = unsafe extern "C" fn(usize, usize, usize, usize, usize, usize) -> usize;

static TRACED: [TracedSlot; MAX_SLOTS] = traced_slots!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interface_uuid_reads_as_cuda_writes_it() {
        assert_eq!(
            format_uuid(&CUDART_INTERFACE),
            "6bd5fb6c-5bf4-e74a-8987-d93912fd9df9"
        );
    }

    unsafe extern "C" fn fake_slot_1(module: *mut CUmodule, _wrapper: *const c_void) -> CUresult {
        // SAFETY: the test passes a valid out-pointer.
        unsafe { *module = 0x1234 as CUmodule };
        CUDA_SUCCESS
    }

    #[test]
    fn module_loading_slots_are_patched_in_place_and_the_rest_kept() {
        let other = 0x5555usize;
        let table: &'static [usize] = Box::leak(
            vec![
                13 * 8,
                fake_slot_1 as *const () as usize,
                other,
                0,
                0,
                0,
                other,
                other,
                other,
                0,
                0,
                0,
                other,
            ]
            .into_boxed_slice(),
        );
        let real = table.as_ptr() as usize;
        assert!(patch_in_place(real));
        // SAFETY: the table has 13 slots.
        let slots = unsafe { std::slice::from_raw_parts(real as *const usize, 13) };
        assert_eq!(slots[0], 13 * 8);
        assert_eq!(slots[1], module_from_wrapper as *const () as usize);
        assert_eq!(
            slots[6],
            module_from_wrapper_with_options as *const () as usize
        );
        assert_eq!(
            slots[8],
            module_from_fatbin_with_options as *const () as usize
        );
        assert_eq!(slots[3], 0, "an empty slot stays empty");
        // The copy's slot 1 reaches the driver's (no image: passed through).
        let mut module: CUmodule = std::ptr::null_mut();
        // SAFETY: the fake slot writes the out-pointer only.
        let r = unsafe { module_from_wrapper(&mut module, std::ptr::null()) };
        assert_eq!((r, module as usize), (CUDA_SUCCESS, 0x1234));
        // Asked again: patched once, the driver's slot still remembered.
        assert!(patch_in_place(real));
        assert_eq!(real_slot(1), fake_slot_1 as *const () as *mut c_void);
    }
}
