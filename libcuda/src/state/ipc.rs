//! Inter-process handles (`cuIpc*`, pool sharing; the entry points are
//! `api::ipc` and `api::pool`): the 64-byte handle's encoding, and what
//! this process exported and opened. How IPC maps onto memfds is
//! described in `api::ipc`.

use crate::cu::*;
use crate::state::vmm::fd_size;
use prlx_emulator::Device;
use std::collections::BTreeMap;
use std::ffi::{c_uint, c_void};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::AtomicU64;

/// `CUipcMemHandle` and `CUipcEventHandle`: 64 opaque bytes, passed by value.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct IpcHandle {
    pub reserved: [u8; 64],
}

pub const MEM_MAGIC: &[u8; 8] = b"PRLXIPCM";
pub const EVENT_MAGIC: &[u8; 8] = b"PRLXIPCE";
pub const CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: c_uint = 1;
pub const CU_EVENT_INTERPROCESS: u32 = 0x4;
pub const PAGE: u64 = 4096;

/// What a handle carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    pub pid: u32,
    pub fd: i32,
    pub size: u64,
    /// Unique per exporting process.
    pub id: u64,
    pub device: i32,
}

pub fn encode(magic: &[u8; 8], f: Fields) -> IpcHandle {
    let mut b = [0u8; 64];
    b[..8].copy_from_slice(magic);
    b[8..12].copy_from_slice(&f.pid.to_le_bytes());
    b[12..16].copy_from_slice(&f.fd.to_le_bytes());
    b[16..24].copy_from_slice(&f.size.to_le_bytes());
    b[24..32].copy_from_slice(&f.id.to_le_bytes());
    b[32..36].copy_from_slice(&f.device.to_le_bytes());
    IpcHandle { reserved: b }
}

pub fn decode(magic: &[u8; 8], h: &IpcHandle) -> Result<Fields, CUresult> {
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
pub struct Export {
    pub memfd: OwnedFd,
    /// The shared mapping that backs the allocation now.
    pub map: u64,
    pub map_len: u64,
    pub id: u64,
}

/// Another process's allocation mapped here.
#[derive(Debug)]
pub struct Opened {
    pub ctx: usize,
    pub pid: u32,
    pub id: u64,
    pub refs: u32,
    pub map_len: u64,
}

/// An event of this process exported to others.
#[derive(Debug)]
pub struct EventExport {
    pub memfd: OwnedFd,
    pub id: u64,
}

/// Handles exported from and opened in this process.
#[derive(Debug, Default)]
pub struct Ipc {
    pub exports: BTreeMap<u64, Export>,
    pub opened: BTreeMap<u64, Opened>,
    pub events: BTreeMap<usize, EventExport>,
    pub next_id: u64,
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
pub static NEXT_IMPORT_HINT: AtomicU64 = AtomicU64::new(0x0000_6800_0000_0000);

pub fn pid() -> u32 {
    std::process::id()
}

impl Ipc {
    /// Called after the allocation at `base` was freed: its shared backing
    /// goes (an exported allocation), or the mapping of another process's
    /// memory (a pool pointer imported with `cuMemPoolImportPointer`, which
    /// `cuMemFree` releases).
    pub fn on_free(&mut self, base: u64) {
        if let Some(e) = self.exports.remove(&base) {
            // SAFETY: our shared mapping of `map_len` bytes, made by
            // `export_memory`; the emulator, whose allocation it backed,
            // freed it before this call.
            unsafe { libc::munmap(e.map as *mut c_void, e.map_len as usize) };
        }
        if let Some(o) = self.opened.remove(&base) {
            // SAFETY: our mapping of the exporter's memfd (`map_len` bytes at
            // `base`), already unregistered from the emulator by the free.
            unsafe { libc::munmap(base as *mut c_void, o.map_len as usize) };
        }
    }

    /// Closes what context `ctx` opened (it is being destroyed).
    pub fn release_context(&mut self, device: &mut Device, ctx: usize) {
        let mine: Vec<u64> = self
            .opened
            .iter()
            .filter(|(_, o)| o.ctx == ctx)
            .map(|(b, _)| *b)
            .collect();
        for base in mine {
            self.close(device, base);
        }
    }

    /// Unregisters and unmaps the opened allocation at `base`.
    pub fn close(&mut self, device: &mut Device, base: u64) {
        if let Some(o) = self.opened.remove(&base) {
            let _ = device.mem_free(base);
            // SAFETY: our mapping of the exporter's memfd (`map_len` bytes at
            // `base`); unregistered from the emulator just above, so nothing
            // refers to it.
            unsafe { libc::munmap(base as *mut c_void, o.map_len as usize) };
        }
    }
}

/// The name of export `id`'s memfd (`kind`: "mem" or "event").
pub fn memfd_name(kind: &str, id: u64) -> String {
    format!("prlx-ipc-{kind}-{id}")
}

/// Opens the exporter's descriptor through `/proc`, checking it is one of
/// ours (a prlx memfd) and at least `min_len` bytes long.
pub fn open_remote(f: &Fields, kind: &str, min_len: u64) -> Result<OwnedFd, CUresult> {
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
