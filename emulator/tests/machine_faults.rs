//! Memory faults, traps and their diagnostics.

mod machine_util;
use machine_util::*;
use prlx_emulator::LaunchError;

const HEADER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n";

fn faulting(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k(.param .u64 p, .param .u32 off)\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n{body}\n}}\n"
    )
}

#[test]
fn out_of_bounds_global_load_names_kernel_block_thread_line_and_address() {
    // Thread 37 of block 1 reads one element past the end.
    let ptx = faulting(
        "ld.param.u64 %rd1, [p];\n\
         mov.u32 %r1, %tid.x;\n\
         mov.u32 %r2, %ctaid.x;\n\
         mad.lo.s32 %r3, %r2, 64, %r1;\n\
         mul.wide.u32 %rd2, %r3, 4;\n\
         add.s64 %rd3, %rd1, %rd2;\n\
         ld.global.u32 %r4, [%rd3];\n\
         ret;",
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "k");
    let buf = dev.mem_alloc(101 * 4).unwrap();
    let err = run_err(&mut dev, f, cfg(2, 64), &Params::new().u64(buf).u32(0));
    let LaunchError::IllegalAddress(fault) = &err else {
        panic!("expected IllegalAddress, got {err}")
    };
    assert_eq!(fault.kernel, "k");
    assert_eq!(fault.block, [1, 0, 0]);
    assert_eq!(fault.thread, [37, 0, 0]);
    assert_eq!(fault.ptx_line, 15);
    assert_eq!(fault.address, Some(buf + 101 * 4));
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("illegal address 0x{:x}", buf + 404)),
        "{text}"
    );
    assert!(
        text.contains("kernel k, block (1,0,0), thread (37,0,0), at test.ptx:15"),
        "{text}"
    );
    assert!(text.contains("ld.global.u32 %r4, [%rd3];"), "{text}");
}

#[test]
fn misaligned_access_is_reported() {
    let ptx = faulting(
        "ld.param.u64 %rd1, [p];\n\
         add.s64 %rd2, %rd1, 2;\n\
         st.global.u32 [%rd2], 7;\n\
         ret;",
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "k");
    let buf = dev.mem_alloc(64).unwrap();
    let err = run_err(&mut dev, f, cfg(1, 1), &Params::new().u64(buf).u32(0));
    let LaunchError::MisalignedAddress(fault) = &err else {
        panic!("expected MisalignedAddress, got {err}")
    };
    assert_eq!(fault.address, Some(buf + 2));
    assert!(err.to_string().starts_with("misaligned address"), "{err}");
}

#[test]
fn vector_access_needs_vector_alignment() {
    let ptx = faulting(
        "ld.param.u64 %rd1, [p];\n\
         ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+8];\n\
         ret;",
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "k");
    let buf = dev.mem_alloc(64).unwrap();
    let err = run_err(&mut dev, f, cfg(1, 1), &Params::new().u64(buf).u32(0));
    assert!(matches!(err, LaunchError::MisalignedAddress(_)), "{err}");
}

#[test]
fn null_and_freed_pointers_fault() {
    let ptx = faulting("ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\nret;");
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "k");
    let err = run_err(&mut dev, f, cfg(1, 1), &Params::new().u64(0).u32(0));
    assert!(matches!(err, LaunchError::IllegalAddress(_)), "{err}");
    let buf = dev.mem_alloc(64).unwrap();
    dev.mem_free(buf).unwrap();
    let err = run_err(&mut dev, f, cfg(1, 1), &Params::new().u64(buf).u32(0));
    assert!(matches!(err, LaunchError::IllegalAddress(_)), "{err}");
}

#[test]
fn shared_memory_is_bounds_checked() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u32 i)\n{{\n.reg .b32 %r<4>;\n.shared .align 4 .b8 buf[64];\n\
         ld.param.u32 %r1, [i];\nmov.u32 %r2, buf;\nadd.s32 %r3, %r2, %r1;\nst.shared.u32 [%r3], 1;\nret;\n}}\n"
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "k");
    run(&mut dev, f, cfg(1, 1), &Params::new().u32(60));
    let err = run_err(&mut dev, f, cfg(1, 1), &Params::new().u32(64));
    let LaunchError::IllegalAddress(fault) = &err else {
        panic!("{err}")
    };
    assert_eq!(fault.address, Some(64));
}

#[test]
fn generic_pointer_to_shared_and_local_round_trips() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<6>;\n.reg .b64 %rd<8>;\n.reg .pred %p<3>;\n\
         .shared .align 4 .b8 buf[16];\n.local .align 4 .b8 loc[16];\n\
         ld.param.u64 %rd1, [out];\n\
         mov.u64 %rd2, buf;\ncvta.shared.u64 %rd3, %rd2;\nst.u32 [%rd3+4], 11;\nld.shared.u32 %r1, [buf+4];\n\
         mov.u64 %rd4, loc;\ncvta.local.u64 %rd5, %rd4;\nst.u32 [%rd5+8], 22;\nld.local.u32 %r2, [loc+8];\n\
         isspacep.shared %p1, %rd3;\nisspacep.global %p2, %rd5;\nselp.u32 %r3, 1, 0, %p1;\nselp.u32 %r4, 1, 0, %p2;\n\
         cvta.to.shared.u64 %rd6, %rd3;\ncvt.u32.u64 %r5, %rd6;\n\
         st.global.v4.u32 [%rd1], {{%r1, %r2, %r3, %r4}};\nst.global.u32 [%rd1+16], %r5;\nret;\n}}\n"
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "k");
    let out = dev.mem_alloc(32).unwrap();
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(out));
    assert_eq!(download_u32(&dev, out, 5), vec![11, 22, 1, 0, 0]);
}

#[test]
fn trap_stops_the_launch() {
    let ptx = faulting("mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 5;\n@%p1 trap;\nret;");
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "k");
    let err = run_err(&mut dev, f, cfg(1, 32), &Params::new().u64(0).u32(0));
    let LaunchError::Trap(fault) = &err else {
        panic!("{err}")
    };
    assert_eq!(fault.thread, [5, 0, 0]);
    assert_eq!(fault.ptx_line, 11);
}

#[test]
fn host_side_memory_errors_do_not_panic() {
    let mut dev = device();
    let p = dev.mem_alloc(16).unwrap();
    assert!(dev.mem_write(p + 8, &[0; 16]).is_err());
    let mut out = [0u8; 4];
    assert!(dev.mem_read(0, &mut out).is_err());
    assert!(dev.mem_copy(p, p + 12, 8).is_err());
    assert!(dev.mem_set(p, &[1, 2, 3], 1).is_err());
}

#[test]
fn faults_and_observers_carry_the_source_line_from_loc() {
    let ptx = format!(
        "{HEADER}.file 1 \"/src/kernel.cu\"\n.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
         .loc 1 10 3\nld.param.u64 %rd1, [p];\n.loc 1 12 5\nld.global.u32 %r1, [%rd1+4096];\nret;\n}}\n"
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "k");
    let buf = dev.mem_alloc(16).unwrap();
    let err = run_err(&mut dev, f, cfg(1, 1), &Params::new().u64(buf));
    let LaunchError::IllegalAddress(fault) = &err else {
        panic!("{err}")
    };
    assert_eq!(fault.source.as_deref(), Some("/src/kernel.cu:12"));
    assert!(
        err.to_string()
            .contains("at test.ptx:12 (/src/kernel.cu:12): "),
        "{err}"
    );
}
