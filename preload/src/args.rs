//! A launch's argument hash: FNV-1a of the packed argument bytes, laid out
//! per the kernel's parameters (from the PTX image, else the driver's
//! `cuFuncGetParamInfo`), else of the `extra` buffer.

use crate::driver;
use crate::ffi::*;
use crate::registry::{CodeHandle, ParamSlot};
use crate::state::registry;
use std::ffi::c_void;

/// The launch's argument hash ("0x…"): the packed bytes per the kernel's
/// parameter layout (from the PTX image, else `cuFuncGetParamInfo`,
/// looked up once per function), else the `extra` buffer.
pub(crate) fn for_launch(
    function: CUfunction,
    name: &str,
    code: Option<CodeHandle>,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Option<String> {
    let layout = {
        let registry = registry();
        let from_ptx = code
            .and_then(|c| registry.code.get(&c))
            .and_then(|c| c.ptx_params.get(name).cloned());
        match from_ptx {
            Some(layout) => Some(Some(layout)),
            None => registry.param_layouts.get(&(function as usize)).cloned(),
        }
    };
    let layout = match layout {
        Some(known) => known,
        None => {
            let asked = driver_param_layout(function);
            registry()
                .param_layouts
                .insert(function as usize, asked.clone());
            asked
        }
    };
    layout
        .as_deref()
        // SAFETY: the launch's own parameter list, laid out per `layout`.
        .and_then(|slots| unsafe { args_hash(slots, params, extra) })
        // SAFETY: the launch's own `extra` list.
        .or_else(|| unsafe { extra_buffer(extra) }.map(prlx_session::fnv1a64))
        .map(|h| format!("{h:#018x}"))
}

/// The hash of a launch's `extra` argument buffer, "0x…" (HIP launches).
///
/// # Safety
/// `extra`, when non-null, must be a CU_LAUNCH_PARAM_END-terminated list.
pub(crate) unsafe fn of_extra(extra: *mut *mut c_void) -> Option<String> {
    // SAFETY: per the contract.
    unsafe { extra_buffer(extra) }
        .map(prlx_session::fnv1a64)
        .map(|h| format!("{h:#018x}"))
}

/// Parameter layout from `cuFuncGetParamInfo` (CUDA 12.4+), when the driver has it.
fn driver_param_layout(function: CUfunction) -> Option<Vec<ParamSlot>> {
    let info = driver::cuda().cuFuncGetParamInfo?;
    let mut slots = Vec::new();
    for index in 0..4096 {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: out-pointers to locals.
        if unsafe { info(function, index, &mut offset, &mut size) } != CUDA_SUCCESS {
            break;
        }
        slots.push(ParamSlot { offset, size });
    }
    (!slots.is_empty()).then_some(slots)
}

/// FNV-1a over the packed argument bytes.
///
/// # Safety
/// `params`, when non-null, must be the launch's kernelParams: one valid
/// pointer per parameter of `slots`.
unsafe fn args_hash(
    slots: &[ParamSlot],
    params: *mut *mut c_void,
    _extra: *mut *mut c_void,
) -> Option<u64> {
    if params.is_null() {
        return None;
    }
    let total = slots.iter().map(|s| s.offset + s.size).max().unwrap_or(0);
    let mut packed = vec![0u8; total];
    for (i, slot) in slots.iter().enumerate() {
        // SAFETY: per the contract above.
        let arg = unsafe { *params.add(i) } as *const u8;
        if arg.is_null() {
            return None;
        }
        // SAFETY: the argument holds `slot.size` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(arg, slot.size) };
        packed[slot.offset..slot.offset + slot.size].copy_from_slice(bytes);
    }
    Some(prlx_session::fnv1a64(&packed))
}

/// The argument buffer passed through `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE).
///
/// # Safety
/// `extra`, when non-null, must be a CU_LAUNCH_PARAM_END-terminated list.
unsafe fn extra_buffer<'a>(extra: *mut *mut c_void) -> Option<&'a [u8]> {
    const END: usize = 0;
    const BUFFER_POINTER: usize = 1;
    const BUFFER_SIZE: usize = 2;
    if extra.is_null() {
        return None;
    }
    let (mut pointer, mut size) = (std::ptr::null::<u8>(), None);
    for i in (0..64).step_by(2) {
        // SAFETY: per the contract, pairs until END.
        let key = unsafe { *extra.add(i) } as usize;
        if key == END {
            break;
        }
        // SAFETY: the key at `i` is not END, so per the contract its value
        // follows it at `i + 1`.
        let value = unsafe { *extra.add(i + 1) };
        match key {
            BUFFER_POINTER => pointer = value as *const u8,
            BUFFER_SIZE if !value.is_null() => {
                // SAFETY: cuda.h defines BUFFER_SIZE's value as a pointer to
                // a `size_t` the caller keeps alive for the launch call; it
                // was checked non-null.
                size = Some(unsafe { *(value as *const usize) })
            }
            _ => {}
        }
    }
    match (pointer.is_null(), size) {
        // SAFETY: the driver reads `size` bytes from `pointer` too.
        (false, Some(size)) => Some(unsafe { std::slice::from_raw_parts(pointer, size) }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_packed_arguments() {
        let mut n: u32 = 7;
        let mut p: u64 = 0x1000;
        let mut params = [
            &mut n as *mut u32 as *mut c_void,
            &mut p as *mut u64 as *mut c_void,
        ];
        let slots = [
            ParamSlot { offset: 0, size: 4 },
            ParamSlot { offset: 8, size: 8 },
        ];
        // SAFETY: `params` holds one pointer per slot, to `n` (4 bytes at
        // offset 0) and `p` (8 bytes at offset 8), both alive for the call.
        let hash = unsafe { args_hash(&slots, params.as_mut_ptr(), std::ptr::null_mut()) }.unwrap();
        let mut packed = [0u8; 16];
        packed[..4].copy_from_slice(&7u32.to_le_bytes());
        packed[8..].copy_from_slice(&0x1000u64.to_le_bytes());
        assert_eq!(hash, prlx_session::fnv1a64(&packed));
    }

    #[test]
    fn reads_extra_argument_buffers() {
        let mut buffer = [1u8, 2, 3, 4];
        let mut size = buffer.len();
        // CU_LAUNCH_PARAM_BUFFER_POINTER (1) and _SIZE (2) are small integers cast to pointers.
        let (pointer_key, size_key) = (1usize, 2usize);
        let mut extra = [
            pointer_key as *mut c_void,
            buffer.as_mut_ptr() as *mut c_void,
            size_key as *mut c_void,
            &mut size as *mut usize as *mut c_void,
            std::ptr::null_mut(),
        ];
        // SAFETY: `extra` is END-terminated (the trailing null); its buffer
        // pointer and size point at `buffer` and `size`, alive for the call.
        let bytes = unsafe { extra_buffer(extra.as_mut_ptr()) }.unwrap();
        assert_eq!(bytes, &[1, 2, 3, 4]);
    }
}
