//! Inter-process communication: `cuIpcGetMemHandle`/`OpenMemHandle`/
//! `CloseMemHandle` and `cuIpcGetEventHandle`/`OpenEventHandle`, between
//! processes of one machine that each run the emulator.
//!
//! Exporting a device allocation moves its bytes into a memfd mapping (the
//! emulator re-backs the allocation at the same device address, see
//! `prlx_emulator::memory::map`), so from then on the bytes live in shared
//! memory. The 64-byte handle names the exporter's process id, the memfd's
//! descriptor number there and the allocation's size; the importer opens
//! `/proc/<pid>/fd/<fd>`, maps the same pages and registers them as device
//! memory at the address it mapped them to. Writes on either side are seen
//! by the other.
//!
//! An event handle names a one-page memfd of the exporter carrying the
//! handle's identity, which the importer checks. Work completes inside the
//! call that enqueues it, in either process, so an opened event is complete
//! whenever the importer asks; it is usable with `cuStreamWaitEvent`,
//! `cuEventQuery` and `cuEventSynchronize` as the driver API specifies.

use crate::cu::*;
use crate::driver::{Driver, Event, with_context};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, exports, non_null, write_out};
pub use crate::state::ipc::IpcHandle;
use crate::state::ipc::*;
use crate::state::vmm::{map_shared, memfd};
use std::ffi::{c_uint, c_void};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

/// The handle of device allocation `dptr`, exporting it on first use.
pub fn export_memory(d: &mut Driver, dptr: u64) -> Result<IpcHandle, CUresult> {
    let owner = *d.allocations.get(&dptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let (base, size) = d.device.mem_range(dptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let device = d.device_of(owner);
    if let Some(e) = d.ipc.exports.get(&dptr) {
        return Ok(encode(
            MEM_MAGIC,
            Fields {
                pid: pid(),
                fd: e.memfd.as_raw_fd(),
                size,
                id: e.id,
                device,
            },
        ));
    }
    // Only the start of an ordinary device allocation (not managed memory).
    if base != dptr || d.managed.contains_key(&dptr) || d.device.mem_is_host_backed(dptr) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let map_len = size.next_multiple_of(PAGE);
    let id = d.ipc.next_id + 1;
    let fd = memfd(&memfd_name("mem", id), map_len)?;
    // SAFETY: a fresh shared mapping of our new memfd, placed by the kernel.
    let map = unsafe { map_shared(0, map_len, fd.as_raw_fd(), false) }?;
    // SAFETY: the mapping holds `map_len` ≥ size bytes, belongs to this
    // allocation alone, and stays mapped until `on_free`.
    if unsafe { d.device.mem_rebind(dptr, map as *mut u8, map_len as usize) }.is_err() {
        // SAFETY: unused fresh mapping.
        unsafe { libc::munmap(map as *mut c_void, map_len as usize) };
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.ipc.next_id = id;
    let handle = encode(
        MEM_MAGIC,
        Fields {
            pid: pid(),
            fd: fd.as_raw_fd(),
            size,
            id,
            device,
        },
    );
    d.ipc.exports.insert(
        dptr,
        Export {
            memfd: fd,
            map,
            map_len,
            id,
        },
    );
    Ok(handle)
}

/// Maps another process's exported allocation into context `ctx`.
pub fn open_memory(
    d: &mut Driver,
    ctx: usize,
    handle: &IpcHandle,
    flags: c_uint,
) -> Result<u64, CUresult> {
    if flags & !CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let f = decode(MEM_MAGIC, handle)?;
    // A process cannot open its own handles.
    if f.pid == pid() {
        return Err(CUDA_ERROR_INVALID_CONTEXT);
    }
    if let Some((&base, o)) = d
        .ipc
        .opened
        .iter_mut()
        .find(|(_, o)| o.ctx == ctx && o.pid == f.pid && o.id == f.id)
    {
        o.refs += 1;
        return Ok(base);
    }
    if f.size == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let map_len = f.size.next_multiple_of(PAGE);
    let fd = open_remote(&f, "mem", map_len)?;
    let hint = NEXT_IMPORT_HINT.fetch_add(map_len + (1 << 20), Ordering::Relaxed);
    // SAFETY: a shared mapping at a hint only (no MAP_FIXED).
    let base = unsafe { map_shared(hint, map_len, fd.as_raw_fd(), false) }
        .map_err(|_| CUDA_ERROR_MAP_FAILED)?;
    // SAFETY: the mapping holds `size` bytes and stays until `close`.
    if unsafe { d.device.mem_register_host(base as *mut u8, f.size) }.is_err() {
        // SAFETY: our unused fresh mapping.
        unsafe { libc::munmap(base as *mut c_void, map_len as usize) };
        return Err(CUDA_ERROR_MAP_FAILED);
    }
    d.ipc.opened.insert(
        base,
        Opened {
            ctx,
            pid: f.pid,
            id: f.id,
            refs: 1,
            map_len,
        },
    );
    Ok(base)
}

/// `CUDA_ERROR_MAP_FAILED`.
const CUDA_ERROR_MAP_FAILED: CUresult = 205;

fn export_event(d: &mut Driver, event: CUevent) -> Result<IpcHandle, CUresult> {
    let e = d.events.get(event).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let wanted = CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING;
    if e.flags & wanted != wanted {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let device = d.device_of(e.ctx);
    let key = event as usize;
    if !d.ipc.events.contains_key(&key) {
        d.ipc.next_id += 1;
        let id = d.ipc.next_id;
        let fd = memfd(&memfd_name("event", id), PAGE)?;
        // The page names the export, so a stale or forged handle is refused.
        let mut page = [0u8; 16];
        page[..8].copy_from_slice(EVENT_MAGIC);
        page[8..].copy_from_slice(&id.to_le_bytes());
        // SAFETY: writes 16 bytes from our buffer to our own memfd.
        let n = unsafe { libc::pwrite(fd.as_raw_fd(), page.as_ptr().cast(), 16, 0) };
        if n != 16 {
            return Err(CUDA_ERROR_OUT_OF_MEMORY);
        }
        d.ipc.events.insert(key, EventExport { memfd: fd, id });
    }
    let x = &d.ipc.events[&key];
    Ok(encode(
        EVENT_MAGIC,
        Fields {
            pid: pid(),
            fd: x.memfd.as_raw_fd(),
            size: PAGE,
            id: x.id,
            device,
        },
    ))
}

fn open_event(d: &mut Driver, ctx: usize, handle: &IpcHandle) -> Result<CUevent, CUresult> {
    let f = decode(EVENT_MAGIC, handle)?;
    if f.pid == pid() {
        return Err(CUDA_ERROR_INVALID_CONTEXT);
    }
    let fd = open_remote(&f, "event", 16)?;
    let mut page = [0u8; 16];
    // SAFETY: reads 16 bytes into our buffer.
    let n = unsafe { libc::pread(fd.as_raw_fd(), page.as_mut_ptr().cast(), 16, 0) };
    if n != 16 || &page[..8] != EVENT_MAGIC || page[8..] != f.id.to_le_bytes() {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    let e = d.events.insert(Event {
        ctx,
        flags: CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING,
        recorded_at: None,
    });
    Ok(e)
}

exports! {
    fn cuIpcGetMemHandle(p_handle: *mut IpcHandle, dptr: CUdeviceptr) {
        with_context(|d, _| {
            non_null(p_handle)?;
            let h = export_memory(d, dptr)?;
            // SAFETY: `cuIpcGetMemHandle`'s caller passes `p_handle` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `IpcHandle`.
            unsafe { write_out(p_handle, h) }
        })
    }

    fn cuIpcOpenMemHandle(pdptr: *mut CUdeviceptr, handle: IpcHandle, flags: c_uint) {
        with_context(|d, ctx| {
            non_null(pdptr)?;
            let p = open_memory(d, ctx, &handle, flags)?;
            // SAFETY: `cuIpcOpenMemHandle`'s caller passes `pdptr` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUdeviceptr`.
            unsafe { write_out(pdptr, p) }
        })
    }

    /// The mapping goes when every open of it in this context is closed.
    fn cuIpcCloseMemHandle(dptr: CUdeviceptr) {
        with_context(|d, _| {
            let o = d.ipc.opened.get_mut(&dptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            o.refs -= 1;
            if o.refs == 0 {
                d.ipc.close(&mut d.device, dptr);
            }
            Ok(())
        })
    }

    fn cuIpcGetEventHandle(p_handle: *mut IpcHandle, event: CUevent) {
        with_context(|d, _| {
            non_null(p_handle)?;
            let h = export_event(d, event)?;
            // SAFETY: `cuIpcGetEventHandle`'s caller passes `p_handle` as cuda.h specifies: NULL (refused
            // by `write_out`) or valid for writing a `IpcHandle`.
            unsafe { write_out(p_handle, h) }
        })
    }

    fn cuIpcOpenEventHandle(ph_event: *mut CUevent, handle: IpcHandle) {
        with_context(|d, ctx| {
            non_null(ph_event)?;
            let e = open_event(d, ctx, &handle)?;
            // SAFETY: `cuIpcOpenEventHandle`'s caller passes `ph_event` as cuda.h specifies: NULL (refused
            // by `write_out`) or valid for writing a `CUevent`.
            unsafe { write_out(ph_event, e) }
        })
    }
}

aliases! {
    cuIpcOpenMemHandle_v2 = cuIpcOpenMemHandle(pdptr: *mut CUdeviceptr, handle: IpcHandle, flags: c_uint);
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuIpcGetMemHandle": 4010 => cuIpcGetMemHandle;
        "cuIpcOpenMemHandle": 4010 => cuIpcOpenMemHandle, 11000 => cuIpcOpenMemHandle_v2;
        "cuIpcCloseMemHandle": 4010 => cuIpcCloseMemHandle;
        "cuIpcGetEventHandle": 4010 => cuIpcGetEventHandle;
        "cuIpcOpenEventHandle": 4010 => cuIpcOpenEventHandle;
    }
}
