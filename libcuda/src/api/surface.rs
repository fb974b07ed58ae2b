//! Surface objects: `cuSurfObjectCreate/Destroy/GetResourceDesc`.
//!
//! The resource must be a CUDA array. `cuSurfObjectCreate` accepts one made
//! without `CUDA_ARRAY3D_SURFACE_LDST`, as NVIDIA's driver does (its API
//! reference asks for the flag); `cuSurfRefSetArray` still requires it (not
//! checked against a GPU). Kernels read and write it with
//! `suld.b`/`sust.b` (x in bytes), through the handle returned here.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use super::array::{CUDA_ARRAY3D_SURFACE_LDST, array};
use super::texture::{CU_RESOURCE_TYPE_ARRAY, CUDA_RESOURCE_DESC, RefTable};
use crate::cu::*;
use crate::driver::with_context;
use crate::entry::{ProcEntry, procs};
use crate::entry::{exports, non_null, write_out};

pub type CUsurfObject = u64;

fn records() -> MutexGuard<'static, HashMap<u64, CUDA_RESOURCE_DESC>> {
    static TABLE: OnceLock<Mutex<HashMap<u64, CUDA_RESOURCE_DESC>>> = OnceLock::new();
    TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

exports! {
    fn cuSurfObjectCreate(p_surf_object: *mut CUsurfObject, p_res_desc: *const CUDA_RESOURCE_DESC) {
        with_context(|d, _| {
            non_null(p_surf_object)?;
            non_null(p_res_desc)?;
            // SAFETY: non-null, the caller's description.
            let res = unsafe { *p_res_desc };
            if res.res_type != CU_RESOURCE_TYPE_ARRAY || res.flags != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // No CUDA_ARRAY3D_SURFACE_LDST check, although the API reference
            // asks for the flag: driver 580 on an H200 creates a surface over
            // an array made without it (tests/runtime-api/surface_rw.cu).
            let a = array(res.res[0] as *mut c_void)?;
            let handle = d
                .device
                .surface_object_create(a.resource())
                .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            records().insert(handle, res);
            // SAFETY: `cuSurfObjectCreate`'s caller passes `p_surf_object` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUsurfObject`.
            unsafe { write_out(p_surf_object, handle) }
        })
    }

    fn cuSurfObjectDestroy(surf_object: CUsurfObject) {
        with_context(|d, _| {
            d.device
                .bound_object_destroy(surf_object, true)
                .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            records().remove(&surf_object);
            Ok(())
        })
    }

    fn cuSurfObjectGetResourceDesc(p_res_desc: *mut CUDA_RESOURCE_DESC, surf_object: CUsurfObject) {
        with_context(|_, _| {
            let r = records().get(&surf_object).copied().ok_or(CUDA_ERROR_INVALID_VALUE)?;
            // SAFETY: `cuSurfObjectGetResourceDesc`'s caller passes `p_res_desc` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUDA_RESOURCE_DESC`.
            unsafe { write_out(p_res_desc, r) }
        })
    }
}

// ---------------------------------------------------------------------------
// Surface references (`cuModuleGetSurfRef`, `cuSurfRefSetArray`): a module's
// `.surfref` variable bound to an array; binding creates an emulator surface
// object and records it against the variable (`Device::bind_reference`).

pub type CUsurfref = *mut c_void;

#[derive(Debug, Clone, Copy)]
struct SurfRef {
    variable: u64,
    array: Option<usize>,
    object: Option<u64>,
}

fn surfrefs() -> MutexGuard<'static, RefTable<SurfRef>> {
    static TABLE: OnceLock<Mutex<RefTable<SurfRef>>> = OnceLock::new();
    TABLE
        .get_or_init(|| Mutex::new(RefTable::new(0x7a00_0000_0000_0000 + (0x32 << 40))))
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

exports! {
    fn cuModuleGetSurfRef(p_surf_ref: *mut CUsurfref, hmod: CUmodule, name: *const std::ffi::c_char) {
        with_context(|d, _| {
            non_null(p_surf_ref)?;
            // SAFETY: a C string from the caller.
            let name = unsafe { crate::entry::c_str(name) }?;
            let (addr, _) = super::module::get_global(d, hmod, name)?;
            let h = surfrefs().for_variable(addr, || SurfRef { variable: addr, array: None, object: None });
            // SAFETY: `cuModuleGetSurfRef`'s caller passes `p_surf_ref` as cuda.h specifies: NULL (refused
            // by `write_out`) or valid for writing a `CUsurfref`.
            unsafe { write_out(p_surf_ref, h as CUsurfref) }
        })
    }

    fn cuSurfRefSetArray(h_surf_ref: CUsurfref, h_array: super::array::CUarray, flags: u32) {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        with_context(|d, _| {
            let mut t = surfrefs();
            let r = t.refs.get_mut(&(h_surf_ref as usize)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            let a = array(h_array)?;
            if a.desc.flags & CUDA_ARRAY3D_SURFACE_LDST == 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let object = d
                .device
                .surface_object_create(a.resource())
                .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            d.device.bind_reference(r.variable, Some(object));
            if let Some(previous) = r.object.replace(object) {
                let _ = d.device.bound_object_destroy(previous, true);
            }
            r.array = Some(h_array as usize);
            Ok(())
        })
    }

    fn cuSurfRefGetArray(ph_array: *mut super::array::CUarray, h_surf_ref: CUsurfref) {
        with_context(|_, _| {
            let t = surfrefs();
            let r = t.refs.get(&(h_surf_ref as usize)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            let a = r.array.ok_or(CUDA_ERROR_INVALID_VALUE)?;
            // SAFETY: `cuSurfRefGetArray`'s caller passes `ph_array` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `super::array::CUarray`.
            unsafe { write_out(ph_array, a as super::array::CUarray) }
        })
    }
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuSurfObjectCreate": 5000 => cuSurfObjectCreate;
        "cuSurfObjectDestroy": 5000 => cuSurfObjectDestroy;
        "cuSurfObjectGetResourceDesc": 5000 => cuSurfObjectGetResourceDesc;
        "cuModuleGetSurfRef": 3000 => cuModuleGetSurfRef;
        "cuSurfRefSetArray": 3000 => cuSurfRefSetArray;
        "cuSurfRefGetArray": 3000 => cuSurfRefGetArray;
    }
}
