//! `PRLX_SUBSTITUTE=DIR`: a pass-built module registered for an image is
//! loaded instead of it — found by the image's content hash, else by the
//! kernels it defines — and launches are then captured as `substitute`.

use prlx::module_load::plan;
use prlx::registry::CaptureMode;
use std::ffi::{CString, c_void};

const PLAIN: &str = ".version 7.5
.target sm_80
.address_size 64
.visible .entry scale(.param .u64 p)
{
	.reg .b32 %r<2>;
	mov.u32 %r1, %tid.x;
	ret;
}
";

/// What `prlxctl compile` would have built: the same kernel with the descriptor.
const PASS_BUILT: &str = ".version 7.5
.target sm_80
.address_size 64
.visible .global .align 8 .b8 __prlx_desc[64];
.visible .entry scale(.param .u64 p)
{
	ret;
}
";

fn module(kernel: &str, pass_built: bool) -> String {
    let text = if pass_built { PASS_BUILT } else { PLAIN };
    text.replace("scale", kernel)
}

#[test]
fn substitutes_are_found_by_hash_then_by_kernel_names() {
    let dir = tempfile::tempdir().unwrap();
    let by_hash = module("scale", false);
    let hash = prlx_session::fnv1a64(by_hash.as_bytes());
    std::fs::write(
        dir.path().join(format!("{hash:016x}.ptx")),
        module("scale", true),
    )
    .unwrap();
    std::fs::write(dir.path().join("kernels.ptx"), module("other", true)).unwrap();
    // Plain modules defining a kernel are not substitutes (no descriptor).
    std::fs::write(dir.path().join("a-plain.ptx"), module("nobody", false)).unwrap();

    // The policy is read once per process: this test owns its process.
    // SAFETY: no other thread of this test binary reads the environment.
    unsafe { std::env::set_var("PRLX_SUBSTITUTE", dir.path()) };
    let plan_of = |text: &str| {
        let image = CString::new(text).unwrap();
        // SAFETY: a NUL-terminated PTX string.
        unsafe { plan(image.as_ptr() as *const c_void) }
    };
    let planned = plan_of(&by_hash);
    assert_eq!(
        planned.mode,
        CaptureMode::Substitute,
        "{:?}",
        planned.reason
    );
    assert!(planned.params.unwrap().contains_key("scale"));
    let planned = plan_of(&module("other", false));
    assert_eq!(
        planned.mode,
        CaptureMode::Substitute,
        "{:?}",
        planned.reason
    );
    assert!(planned.params.unwrap().contains_key("other"));
    // No substitute defines `nobody`: instrumented at load instead.
    let planned = plan_of(&module("nobody", false));
    assert_eq!(planned.mode, CaptureMode::Ptx, "{:?}", planned.reason);
}
