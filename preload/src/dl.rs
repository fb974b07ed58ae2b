//! `dlsym` interposition: the road to the driver that `LD_PRELOAD` alone
//! does not cover.
//!
//! cudart (static and shared) and JIT-heavy applications do not link
//! `libcuda`: they `dlopen("libcuda.so.1")` and fetch entry points with
//! `dlsym(handle, …)`. A lookup through a handle searches that library and
//! its dependencies only — preloaded objects are not in that scope — so
//! without this module such an application calls the driver directly and
//! the shim sees nothing.
//!
//! Why interpose `dlsym` rather than use an rtld-audit library
//! (`LD_AUDIT`, `la_symbind64`): audit needs a second environment variable
//! and a second library, and whether `la_symbind64` sees `dlsym` lookups
//! and `BIND_NOW` bindings depends on the glibc version (both only from
//! 2.35). A preloaded `dlsym` is seen by every caller that binds `dlsym`
//! dynamically, which is every program that calls it. `dlopen` needs no
//! wrapper: nothing about opening the library has to change, only which
//! address a lookup hands back.
//!
//! The hazard of wrapping `dlsym` is that glibc answers `RTLD_NEXT` and
//! `RTLD_DEFAULT` relative to the *caller's* object (found from the return
//! address), and a wrapper that calls the real `dlsym` makes itself the
//! caller. So the exported `dlsym` is a few instructions of assembly: it
//! asks `prlx_dlsym_pick` whether the lookup is one the shim answers (a real handle
//! and the name of a wrapped driver entry point); if not, it *jumps* to the
//! real `dlsym` with the caller's return address still on the stack, so
//! glibc sees the original caller — for pseudo-handles and every unrelated
//! name alike (and glibc records the lookup's dependency on the right
//! object). The real `dlsym` is found with `dlvsym(RTLD_NEXT, "dlsym",
//! <glibc version>)`; `dlvsym` itself is not wrapped, so there is no
//! recursion. The shim's own `libc::dlsym` calls (in `driver`) go through
//! the same trampoline and keep their `RTLD_NEXT` meaning.
//!
//! Lookups the shim makes itself (its driver table, `driver`) are told
//! apart by the return address the trampoline passes along, and always get
//! the driver's own functions: handing the shim its wrappers would make a
//! wrapper call itself.
//!
//! When `prlx_dlsym_pick` answers, it looks the name up through the handle itself,
//! remembers the result as the real function of that entry point (as
//! `cuGetProcAddress` answers are remembered) and returns the shim's
//! wrapper.

use std::ffi::{CStr, c_char, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The real `dlsym`, set by `prlx_dlsym_pick` before the trampoline first jumps to it.
static PRLX_REAL_DLSYM: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

type FnDlsym = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// `RTLD_DEFAULT` (0) and `RTLD_NEXT` (-1): lookups relative to the caller.
fn is_pseudo_handle(handle: *mut c_void) -> bool {
    handle.is_null() || handle as isize == -1
}

/// The real `dlsym`, by version: 2.34 moved it into libc.so.6 (the base
/// versions stay as compatibility aliases).
fn real_dlsym() -> *mut c_void {
    let cached = PRLX_REAL_DLSYM.load(Ordering::Acquire);
    if !cached.is_null() {
        return cached;
    }
    let versions: &[&CStr] = &[c"GLIBC_2.34", c"GLIBC_2.2.5", c"GLIBC_2.17", c"GLIBC_2.0"];
    for version in versions {
        // SAFETY: dlvsym takes NUL-terminated strings and may return null;
        // it is not interposed, so this does not come back here.
        let found = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) };
        if !found.is_null() && found != dlsym_trampoline_address() {
            PRLX_REAL_DLSYM.store(found, Ordering::Release);
            return found;
        }
    }
    std::ptr::null_mut()
}

fn dlsym_trampoline_address() -> *mut c_void {
    dlsym as *mut c_void
}

/// Whether `address` lies in libprlx itself: the shim's own lookups (the
/// driver table in `driver`) must get the driver's functions, never the
/// shim's wrappers.
fn in_the_shim(address: usize) -> bool {
    fn base_of(address: usize) -> usize {
        // SAFETY: `Dl_info` is a C struct of pointers and ints, for which
        // all zeroes (null pointers) is a valid value.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr only compares `address` against the loaded
        // objects' ranges (any value is accepted; one in no object gives 0)
        // and writes `info`, a live local.
        match unsafe { libc::dladdr(address as *const c_void, &mut info) } {
            0 => 0,
            _ => info.dli_fbase as usize,
        }
    }
    static OWN_BASE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let own = *OWN_BASE.get_or_init(|| base_of(in_the_shim as *const () as usize));
    own != 0 && base_of(address) == own
}

/// Called by the trampoline with the caller's arguments and return
/// address: the shim's wrapper for `name`, or null to let the real `dlsym`
/// answer (then the real `dlsym` is known, so the trampoline's jump has a
/// target).
///
/// # Safety
/// `name`, when non-null, is a NUL-terminated string (the `dlsym` contract).
unsafe extern "C" fn prlx_dlsym_pick(
    handle: *mut c_void,
    name: *const c_char,
    caller: usize,
) -> *mut c_void {
    let real = real_dlsym();
    if real.is_null() {
        // Not a glibc we know: the trampoline answers null (lookup failed).
        return std::ptr::null_mut();
    }
    if is_pseudo_handle(handle) || name.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: per the contract above.
    let symbol = unsafe { CStr::from_ptr(name) }.to_bytes();
    if !symbol.starts_with(b"cu") {
        return std::ptr::null_mut(); // the common case: one compare
    }
    let picked = std::panic::catch_unwind(|| {
        let (cell, wrapper) = crate::hooks::export_wrapper(symbol)?;
        if in_the_shim(caller) || !crate::process::active() {
            return None;
        }
        // SAFETY: `real` is glibc's dlsym; the handle and name are the caller's.
        let found = unsafe { std::mem::transmute::<*mut c_void, FnDlsym>(real)(handle, name) };
        if found.is_null() {
            return None; // let the real lookup set dlerror
        }
        if found != wrapper {
            cell.store(found, Ordering::Relaxed);
        }
        Some(wrapper)
    });
    picked.ok().flatten().unwrap_or(std::ptr::null_mut())
}

/// The exported `dlsym` (see the module comment). The stack is realigned
/// around the call (entry leaves it 8 mod 16 on x86-64); the argument
/// registers are saved across it.
///
/// # Safety
/// The `dlsym` contract.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    std::arch::naked_asm!(
        "push rdi",
        "push rsi",
        "sub rsp, 8",
        // The caller's return address, the third argument.
        "mov rdx, qword ptr [rsp + 24]",
        "call {pick}",
        "add rsp, 8",
        "pop rsi",
        "pop rdi",
        "test rax, rax",
        "jnz 2f",
        "mov rax, qword ptr [rip + {real}]",
        "test rax, rax",
        "jz 3f",
        "jmp rax",
        "2:",
        "ret",
        "3:",
        // No real dlsym known (not glibc): the lookup fails cleanly.
        "xor eax, eax",
        "ret",
        pick = sym prlx_dlsym_pick,
        real = sym PRLX_REAL_DLSYM,
    )
}

/// The exported `dlsym` (see the module comment).
///
/// # Safety
/// The `dlsym` contract.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    std::arch::naked_asm!(
        "stp x29, x30, [sp, #-32]!",
        "mov x29, sp",
        "stp x0, x1, [sp, #16]",
        // The caller's return address, the third argument.
        "mov x2, x30",
        "bl {pick}",
        "mov x9, x0",
        "ldp x0, x1, [sp, #16]",
        "ldp x29, x30, [sp], #32",
        "cbnz x9, 2f",
        "adrp x9, {real}",
        "ldr x9, [x9, :lo12:{real}]",
        "cbz x9, 3f",
        "br x9",
        "2:",
        "mov x0, x9",
        "ret",
        "3:",
        "mov x0, xzr",
        "ret",
        pick = sym prlx_dlsym_pick,
        real = sym PRLX_REAL_DLSYM,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_dlsym_is_glibcs_and_not_the_trampoline() {
        let real = real_dlsym();
        assert!(!real.is_null());
        assert_ne!(real, dlsym_trampoline_address());
        // Through the trampoline, an ordinary lookup still answers.
        // SAFETY: a NUL-terminated literal name; RTLD_NOLOAD only looks up
        // the already loaded libc, running no initialisers.
        let libc_handle =
            unsafe { libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        assert!(!libc_handle.is_null());
        // SAFETY: a live handle from dlopen (checked non-null above) and a
        // NUL-terminated literal name.
        let strlen = unsafe { libc::dlsym(libc_handle, c"strlen".as_ptr()) };
        assert!(!strlen.is_null());
        // RTLD_NEXT keeps the caller's meaning: from this executable, the
        // next `strlen` is libc's.
        // SAFETY: RTLD_NEXT is a pseudo-handle dlsym accepts; the name is a
        // NUL-terminated literal.
        let next = unsafe { libc::dlsym(libc::RTLD_NEXT, c"strlen".as_ptr()) };
        assert_eq!(next, strlen);
    }

    #[test]
    fn pseudo_handles_and_other_names_are_not_picked() {
        // SAFETY: valid strings.
        unsafe {
            assert!(prlx_dlsym_pick(std::ptr::null_mut(), c"cuLaunchKernel".as_ptr(), 0).is_null());
            assert!(
                prlx_dlsym_pick(-1isize as *mut c_void, c"cuLaunchKernel".as_ptr(), 0).is_null()
            );
            let libc_handle =
                libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
            assert!(prlx_dlsym_pick(libc_handle, c"strlen".as_ptr(), 0).is_null());
            // A driver name the handle does not define: the real lookup answers (null).
            assert!(prlx_dlsym_pick(libc_handle, c"cuLaunchKernel".as_ptr(), 0).is_null());
        }
    }
}
