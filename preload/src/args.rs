//! A launch's argument hash: FNV-1a of the packed argument bytes, laid out
//! per the kernel's parameters (from the PTX image, else the driver's
//! `cuFuncGetParamInfo`), else of the `extra` buffer.

use crate::driver;
use crate::ffi::*;
use crate::registry::{CodeHandle, ParamSlot, Registry};
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
    let known = by_known_layout(&registry(), function, name, code, params);
    finish(known, function, params, extra)
}

/// The hash of the packed arguments by the layout the registry already
/// knows for `function` (`name` in `code`): `None` when no layout is known
/// yet (the driver is asked in [`finish`]), `Some(None)` when the layout
/// gives no hash (none is known, or an argument pointer is null).
/// Reads the launch's arguments, not the driver: cheap enough to run under
/// the registry lock the launch path already holds.
pub(crate) fn by_known_layout(
    registry: &Registry,
    function: CUfunction,
    name: &str,
    code: Option<CodeHandle>,
    params: *mut *mut c_void,
) -> Option<Option<u64>> {
    let from_ptx = code
        .and_then(|c| registry.code.get(&c))
        .and_then(|c| c.ptx_params.get(name));
    let layout = match from_ptx {
        Some(layout) => Some(layout.as_slice()),
        None => registry.param_layouts.get(&(function as usize))?.as_deref(),
    };
    // SAFETY: the launch's own parameter list, laid out per `layout`.
    Some(layout.and_then(|slots| unsafe { args_hash(slots, params) }))
}

/// The launch's argument hash ("0x…") from [`by_known_layout`]'s answer:
/// with no layout known yet, the driver's `cuFuncGetParamInfo` is asked
/// once for the function (remembered); without a hash by layout, the
/// `extra` buffer's.
pub(crate) fn finish(
    known: Option<Option<u64>>,
    function: CUfunction,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Option<String> {
    let by_layout = match known {
        Some(hash) => hash,
        None => {
            let asked = driver_param_layout(function);
            // SAFETY: the launch's own parameter list, laid out per `asked`.
            let hash = asked
                .as_deref()
                .and_then(|s| unsafe { args_hash(s, params) });
            registry().param_layouts.insert(function as usize, asked);
            hash
        }
    };
    by_layout
        // SAFETY: the launch's own `extra` list.
        .or_else(|| unsafe { extra_buffer(extra) }.map(prlx_session::fnv1a64))
        .map(hex_id)
}

/// The hash of a launch's `extra` argument buffer, "0x…" (HIP launches).
///
/// # Safety
/// `extra`, when non-null, must be a CU_LAUNCH_PARAM_END-terminated list.
pub(crate) unsafe fn of_extra(extra: *mut *mut c_void) -> Option<String> {
    // SAFETY: per the contract.
    unsafe { extra_buffer(extra) }
        .map(prlx_session::fnv1a64)
        .map(hex_id)
}

/// A hash as the session writes it: `format!("{h:#018x}")` ("0x" and 16
/// lowercase digits), without the formatting machinery, on every launch.
fn hex_id(hash: u64) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(18);
    text.push_str("0x");
    for shift in (0..16).rev() {
        text.push(char::from(DIGITS[(hash >> (shift * 4)) as usize & 15]));
    }
    text
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

/// FNV-1a over the packed argument bytes: the parameters' bytes at their
/// offsets, zeros between them. Slots in offset order (as PTX and
/// `cuFuncGetParamInfo` give them) are hashed as they are read, with no
/// buffer; any other layout is packed into one first.
///
/// # Safety
/// `params`, when non-null, must be the launch's kernelParams: one valid
/// pointer per parameter of `slots`.
unsafe fn args_hash(slots: &[ParamSlot], params: *mut *mut c_void) -> Option<u64> {
    if params.is_null() {
        return None;
    }
    let in_order = slots
        .windows(2)
        .all(|w| w[0].offset + w[0].size <= w[1].offset);
    let mut packed = Vec::new();
    if !in_order {
        let total = slots.iter().map(|s| s.offset + s.size).max().unwrap_or(0);
        packed = vec![0u8; total];
    }
    let mut hash = Fnv1a::default();
    for (i, slot) in slots.iter().enumerate() {
        // SAFETY: per the contract above.
        let arg = unsafe { *params.add(i) } as *const u8;
        if arg.is_null() {
            return None;
        }
        // SAFETY: the argument holds `slot.size` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(arg, slot.size) };
        if in_order {
            hash.zeros(slot.offset - hash.len);
            hash.write(bytes);
        } else {
            packed[slot.offset..slot.offset + slot.size].copy_from_slice(bytes);
        }
    }
    if !in_order {
        hash.write(&packed);
    }
    Some(hash.state)
}

/// [`prlx_session::fnv1a64`] fed piece by piece.
struct Fnv1a {
    state: u64,
    /// Bytes fed so far.
    len: usize,
}

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a {
            state: prlx_session::fnv1a64(&[]),
            len: 0,
        }
    }
}

impl Fnv1a {
    const PRIME: u64 = 0x0100_0000_01b3;

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.state = (self.state ^ u64::from(b)).wrapping_mul(Self::PRIME);
        }
        self.len += bytes.len();
    }

    fn zeros(&mut self, count: usize) {
        for _ in 0..count {
            self.state = self.state.wrapping_mul(Self::PRIME);
        }
        self.len += count;
    }
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
        let hash = unsafe { args_hash(&slots, params.as_mut_ptr()) }.unwrap();
        let mut packed = [0u8; 16];
        packed[..4].copy_from_slice(&7u32.to_le_bytes());
        packed[8..].copy_from_slice(&0x1000u64.to_le_bytes());
        assert_eq!(hash, prlx_session::fnv1a64(&packed));
    }

    #[test]
    fn hex_ids_are_formatted_as_before() {
        for h in [0, 1, 0xabc, 0x0123_4567_89ab_cdef, u64::MAX, 1 << 63] {
            assert_eq!(hex_id(h), format!("{h:#018x}"));
        }
    }

    #[test]
    fn out_of_order_layouts_hash_as_packed() {
        let (mut a, mut b, mut c) = (0x11u8, 0x2233u16, 0x4455_6677u32);
        let mut params = [
            &mut a as *mut u8 as *mut c_void,
            &mut b as *mut u16 as *mut c_void,
            &mut c as *mut u32 as *mut c_void,
        ];
        // In order with gaps (streamed), and the same bytes listed out of
        // order (packed first): both hash the packed bytes.
        let mut packed = [0u8; 12];
        packed[0] = 0x11;
        packed[2..4].copy_from_slice(&0x2233u16.to_le_bytes());
        packed[8..].copy_from_slice(&0x4455_6677u32.to_le_bytes());
        let slot = |offset, size| ParamSlot { offset, size };
        let in_order = [slot(0, 1), slot(2, 2), slot(8, 4)];
        // SAFETY: one pointer per slot, each to as many bytes as its size.
        let streamed = unsafe { args_hash(&in_order, params.as_mut_ptr()) };
        assert_eq!(streamed, Some(prlx_session::fnv1a64(&packed)));
        params.swap(0, 2);
        let reordered = [slot(8, 4), slot(2, 2), slot(0, 1)];
        // SAFETY: as above, the pointers swapped with their slots.
        let packed_first = unsafe { args_hash(&reordered, params.as_mut_ptr()) };
        assert_eq!(packed_first, streamed);
        // SAFETY: a null parameter list is refused before any read.
        assert_eq!(unsafe { args_hash(&in_order, std::ptr::null_mut()) }, None);
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
