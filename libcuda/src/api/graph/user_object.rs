//! User objects (`cuUserObjectCreate`): a destructor run when the last
//! reference goes. References are held by the application and by graphs
//! (`cuGraphRetainUserObject`); a clone of a graph holds its own, and an
//! executable graph holds those of its graph (child graphs included) until
//! it is destroyed. Destructors run on the thread that lets go of the last
//! reference, with no lock held.

use crate::cu::*;
use crate::driver::with_driver;
use crate::entry::{ProcEntry, procs};
use crate::entry::{exports, non_null, write_out};
use crate::graph::abi::{CUgraph, HostFn};
use crate::graph::model::with_state;
use std::ffi::{c_uint, c_void};

/// `CU_USER_OBJECT_NO_DESTRUCTOR_SYNC`, the one (required) creation flag.
const NO_DESTRUCTOR_SYNC: c_uint = 1;
/// `CU_GRAPH_USER_OBJECT_MOVE`: the graph takes the caller's references.
const GRAPH_USER_OBJECT_MOVE: c_uint = 1;

/// A reference count argument: nonzero, at most `INT_MAX`.
fn count(n: c_uint) -> Result<u64, CUresult> {
    if n == 0 || n > i32::MAX as c_uint {
        Err(CUDA_ERROR_INVALID_VALUE)
    } else {
        Ok(u64::from(n))
    }
}

exports! {
    fn cuUserObjectCreate(
        object_out: *mut *mut c_void,
        ptr: *mut c_void,
        destroy: HostFn,
        initial_refcount: c_uint,
        flags: c_uint,
    ) {
        with_driver(|_| Ok(()))?;
        non_null(object_out)?;
        let destroy = destroy.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let refs = count(initial_refcount)?;
        if flags != NO_DESTRUCTOR_SYNC {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let o = with_state(|s| {
            s.user_objects.insert(crate::graph::model::UserObject {
                ptr: ptr as usize,
                destroy: destroy as usize,
                refs,
            })
        });
        // SAFETY: `cuUserObjectCreate`'s caller passes `object_out` as cuda.h specifies: NULL
        // (refused by `write_out`) or valid for writing a `*mut c_void`.
        unsafe { write_out(object_out, o) }
    }

    fn cuUserObjectRetain(object: *mut c_void, n: c_uint) {
        let n = count(n)?;
        with_state(|s| s.retain_object(object as usize, n))
    }

    /// The destructor runs when the count reaches zero.
    fn cuUserObjectRelease(object: *mut c_void, n: c_uint) {
        let n = count(n)?;
        with_state(|s| s.release_object(object as usize, n))
    }

    fn cuGraphRetainUserObject(graph: CUgraph, object: *mut c_void, n: c_uint, flags: c_uint) {
        let n = count(n)?;
        if flags & !GRAPH_USER_OBJECT_MOVE != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        with_state(|s| {
            s.graph(graph as usize).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            if !s.user_objects.contains(object) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // Moved references are the caller's: the count is unchanged.
            if flags & GRAPH_USER_OBJECT_MOVE == 0 {
                s.retain_object(object as usize, n)?;
            }
            *s.graph_mut(graph as usize)?.user_refs.entry(object as usize).or_default() += n;
            Ok(())
        })
    }

    /// At most the references the graph holds.
    fn cuGraphReleaseUserObject(graph: CUgraph, object: *mut c_void, n: c_uint) {
        let n = count(n)?;
        with_state(|s| {
            let g = s.graph_mut(graph as usize).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            let held = g.user_refs.get(&(object as usize)).copied().unwrap_or(0);
            if n > held {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            if held == n {
                g.user_refs.remove(&(object as usize));
            } else {
                g.user_refs.insert(object as usize, held - n);
            }
            s.release_object(object as usize, n)
        })
    }
}

pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuUserObjectCreate": 11030 => cuUserObjectCreate;
        "cuUserObjectRetain": 11030 => cuUserObjectRetain;
        "cuUserObjectRelease": 11030 => cuUserObjectRelease;
        "cuGraphRetainUserObject": 11030 => cuGraphRetainUserObject;
        "cuGraphReleaseUserObject": 11030 => cuGraphReleaseUserObject;
    }
}
