//! Inter-process communication: `cuIpcGetMemHandle`/`OpenMemHandle`/
//! `CloseMemHandle` and `cuIpcGetEventHandle`/`OpenEventHandle`, between
//! processes of one machine that each run the emulator.
//!
//! Exporting a device allocation moves its bytes into a memfd mapping (the
//! emulator re-backs the allocation at the same device address, see
//! `prlx_emu::memory::map`), so from then on the bytes live in shared
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

use super::proc_address::{ProcEntry, procs};
use super::vmm::{fd_size, map_shared, memfd};
use crate::cu::*;
use crate::driver::{Driver, Event, with_context};
use crate::entry::{aliases, exports, non_null, write_out};
use std::collections::BTreeMap;
use std::ffi::{c_uint, c_void};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// `CUipcMemHandle` and `CUipcEventHandle`: 64 opaque bytes, passed by value.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct IpcHandle {
    pub reserved: [u8; 64],
}

const MEM_MAGIC: &[u8; 8] = b"PRLXIPCM";
const EVENT_MAGIC: &[u8; 8] = b"PRLXIPCE";
const CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: c_uint = 1;
const CU_EVENT_DISABLE_TIMING: u32 = 0x2;
const CU_EVENT_INTERPROCESS: u32 = 0x4;
const PAGE: u64 = 4096;

/// What a handle carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fields {
    pid: u32,
    fd: i32,
    size: u64,
    /// Unique per exporting process.
    id: u64,
    device: i32,
}

fn encode(magic: &[u8; 8], f: Fields) -> IpcHandle {
    let mut b = [0u8; 64];
    b[..8].copy_from_slice(magic);
    b[8..12].copy_from_slice(&f.pid.to_le_bytes());
    b[12..16].copy_from_slice(&f.fd.to_le_bytes());
    b[16..24].copy_from_slice(&f.size.to_le_bytes());
    b[24..32].copy_from_slice(&f.id.to_le_bytes());
    b[32..36].copy_from_slice(&f.device.to_le_bytes());
    IpcHandle { reserved: b }
}

fn decode(magic: &[u8; 8], h: &IpcHandle) -> Result<Fields, CUresult> {
    let b = &h.reserved;
    if &b[..8] != magic {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default());
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
    Ok(Fields {
        pid: u32_at(8),
        fd: u32_at(12) as i32,
        size: u64_at(16),
        id: u64_at(24),
        device: u32_at(32) as i32,
    })
}

/// An allocation of this process exported to others.
#[derive(Debug)]
struct Export {
    memfd: OwnedFd,
    /// The shared mapping that backs the allocation now.
    map: u64,
    map_len: u64,
    id: u64,
}

/// Another process's allocation mapped here.
#[derive(Debug)]
struct Opened {
    ctx: usize,
    pid: u32,
    id: u64,
    refs: u32,
    map_len: u64,
}

/// An event of this process exported to others.
#[derive(Debug)]
struct EventExport {
    memfd: OwnedFd,
    id: u64,
}

/// Handles exported from and opened in this process.
#[derive(Debug, Default)]
pub struct Ipc {
    exports: BTreeMap<u64, Export>,
    opened: BTreeMap<u64, Opened>,
    events: BTreeMap<usize, EventExport>,
    next_id: u64,
}

impl Ipc {
    /// (base, opening context) of every opened allocation.
    pub fn opened_bases(&self) -> impl Iterator<Item = (u64, usize)> + '_ {
        self.opened.iter().map(|(base, o)| (*base, o.ctx))
    }

    /// Whether `base` starts another process's allocation mapped here.
    pub fn is_opened(&self, base: u64) -> bool {
        self.opened.contains_key(&base)
    }
}

/// Where imported mappings are asked to go (clear of the emulator's device
/// addresses and of reservations).
static NEXT_IMPORT_HINT: AtomicU64 = AtomicU64::new(0x0000_6800_0000_0000);

fn pid() -> u32 {
    std::process::id()
}

/// Called after the allocation at `base` was freed: its shared backing goes
/// (an exported allocation), or the mapping of another process's memory (a
/// pool pointer imported with `cuMemPoolImportPointer`, which `cuMemFree`
/// releases).
pub fn on_free(d: &mut Driver, base: u64) {
    if let Some(e) = d.ipc.exports.remove(&base) {
        // SAFETY: our shared mapping; the emulator no longer refers to it.
        unsafe { libc::munmap(e.map as *mut c_void, e.map_len as usize) };
    }
    if let Some(o) = d.ipc.opened.remove(&base) {
        // SAFETY: our mapping of the exporter's memfd, already unregistered.
        unsafe { libc::munmap(base as *mut c_void, o.map_len as usize) };
    }
}

/// Closes what context `ctx` opened (it is being destroyed).
pub fn release_context(d: &mut Driver, ctx: usize) {
    let mine: Vec<u64> = d
        .ipc
        .opened
        .iter()
        .filter(|(_, o)| o.ctx == ctx)
        .map(|(b, _)| *b)
        .collect();
    for base in mine {
        close(d, base);
    }
}

fn close(d: &mut Driver, base: u64) {
    if let Some(o) = d.ipc.opened.remove(&base) {
        let _ = d.device.mem_free(base);
        // SAFETY: our mapping of the exporter's memfd; nothing refers to it.
        unsafe { libc::munmap(base as *mut c_void, o.map_len as usize) };
    }
}

/// The name of export `id`'s memfd (`kind`: "mem" or "event").
fn memfd_name(kind: &str, id: u64) -> String {
    format!("prlx-ipc-{kind}-{id}")
}

/// Opens the exporter's descriptor through `/proc`, checking it is one of
/// ours (a prlx memfd) and at least `min_len` bytes long.
fn open_remote(f: &Fields, kind: &str, min_len: u64) -> Result<OwnedFd, CUresult> {
    let path = format!("/proc/{}/fd/{}", f.pid, f.fd);
    let link = std::fs::read_link(&path).map_err(|_| CUDA_ERROR_INVALID_HANDLE)?;
    // The descriptor must still be the export the handle names (the number
    // may have been reused since): the memfd's name carries its id.
    let name = format!("/memfd:{} ", memfd_name(kind, f.id));
    if !link.to_string_lossy().starts_with(&name) {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|_| CUDA_ERROR_INVALID_HANDLE)?;
    let fd = OwnedFd::from(file);
    if fd_size(fd.as_raw_fd()).is_none_or(|n| n < min_len) {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    Ok(fd)
}

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
            unsafe { write_out(p_handle, h) }
        })
    }

    fn cuIpcOpenMemHandle(pdptr: *mut CUdeviceptr, handle: IpcHandle, flags: c_uint) {
        with_context(|d, ctx| {
            non_null(pdptr)?;
            let p = open_memory(d, ctx, &handle, flags)?;
            unsafe { write_out(pdptr, p) }
        })
    }

    /// The mapping goes when every open of it in this context is closed.
    fn cuIpcCloseMemHandle(dptr: CUdeviceptr) {
        with_context(|d, _| {
            let o = d.ipc.opened.get_mut(&dptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            o.refs -= 1;
            if o.refs == 0 {
                close(d, dptr);
            }
            Ok(())
        })
    }

    fn cuIpcGetEventHandle(p_handle: *mut IpcHandle, event: CUevent) {
        with_context(|d, _| {
            non_null(p_handle)?;
            let h = export_event(d, event)?;
            unsafe { write_out(p_handle, h) }
        })
    }

    fn cuIpcOpenEventHandle(ph_event: *mut CUevent, handle: IpcHandle) {
        with_context(|d, ctx| {
            non_null(ph_event)?;
            let e = open_event(d, ctx, &handle)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_reject_the_other_kind() {
        let f = Fields {
            pid: 77,
            fd: 5,
            size: 1000,
            id: 3,
            device: 1,
        };
        let h = encode(MEM_MAGIC, f);
        assert_eq!(decode(MEM_MAGIC, &h), Ok(f));
        assert_eq!(decode(EVENT_MAGIC, &h), Err(CUDA_ERROR_INVALID_VALUE));
        assert_eq!(std::mem::size_of::<IpcHandle>(), 64);
    }
}
