//! Surface objects: `cuSurfObjectCreate/Destroy/GetResourceDesc`.
//!
//! As `cuSurfObjectCreate` requires, the resource must be a CUDA array
//! created with `CUDA_ARRAY3D_SURFACE_LDST`; kernels read and write it with
//! `suld.b`/`sust.b` (x in bytes), through the handle returned here.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use super::array::{CUDA_ARRAY3D_SURFACE_LDST, array};
use super::texture::{CU_RESOURCE_TYPE_ARRAY, CUDA_RESOURCE_DESC};
use crate::cu::*;
use crate::driver::with_context;
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
            let a = array(res.res[0] as *mut c_void)?;
            if a.desc.flags & CUDA_ARRAY3D_SURFACE_LDST == 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let handle = d
                .device
                .surface_object_create(a.resource())
                .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            records().insert(handle, res);
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
            unsafe { write_out(p_res_desc, r) }
        })
    }
}
