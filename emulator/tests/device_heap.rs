//! Device-side `malloc` and `free` (the externals nvcc calls for them and
//! for `new`/`delete`): 16-byte-aligned blocks from one device heap of
//! `cudaLimitMallocHeapSize` bytes, NULL when it is exhausted, blocks that
//! outlive their launch, a size fixed by the first launch that uses it,
//! and a fault naming the address for a `free` of anything else.

mod machine_util;
use machine_util::*;
use prlx_emulator::LaunchError;

const HEADER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n\
.extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0);\n\
.extern .func free(.param .b64 free_param_0);\n";

/// `p = malloc(%rd_size)` into `%rd{dst}`.
fn malloc(size: &str, dst: &str) -> String {
    format!(
        "{{\n.param .b64 a;\n.param .b64 r;\nst.param.b64 [a], {size};\n\
         call.uni (r), malloc, (a);\nld.param.b64 {dst}, [r];\n}}\n"
    )
}

fn free(ptr: &str) -> String {
    format!("{{\n.param .b64 a;\nst.param.b64 [a], {ptr};\ncall.uni free, (a);\n}}\n")
}

/// `alloc(out, bytes)`: each thread mallocs `bytes`, writes its id through
/// the pointer, and stores the pointer and the id it read back (all ones
/// for NULL) in its 16 bytes of `out`; `release(ptrs)` frees `ptrs[tid]`;
/// `keep(ptrs)` mallocs 32 bytes per thread and stores the pointer.
fn module() -> String {
    format!(
        r#"{HEADER}
.visible .entry alloc(.param .u64 out, .param .u64 bytes)
{{
.reg .pred %p1;
.reg .b32 %r<4>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [bytes];
mov.u32 %r1, %tid.x;
{}
mov.u32 %r2, 0xffffffff;
setp.eq.u64 %p1, %rd3, 0;
@%p1 bra store;
st.global.u32 [%rd3], %r1;
ld.global.u32 %r2, [%rd3];
store:
mul.wide.u32 %rd4, %r1, 16;
add.s64 %rd5, %rd1, %rd4;
st.global.u64 [%rd5], %rd3;
st.global.u32 [%rd5+8], %r2;
ret;
}}
.visible .entry keep(.param .u64 ptrs)
{{
.reg .b32 %r<2>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [ptrs];
mov.u32 %r1, %tid.x;
mov.u64 %rd2, 32;
{}
mul.wide.u32 %rd4, %r1, 8;
add.s64 %rd5, %rd1, %rd4;
st.global.u64 [%rd5], %rd3;
st.global.u32 [%rd3], %r1;
ret;
}}
.visible .entry release(.param .u64 ptrs, .param .u64 sums)
{{
.reg .b32 %r<2>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [ptrs];
ld.param.u64 %rd6, [sums];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd4, %r1, 8;
add.s64 %rd5, %rd1, %rd4;
ld.global.u64 %rd3, [%rd5];
ld.global.u32 %r0, [%rd3];
atom.global.add.u32 %r0, [%rd6], %r0;
{}
ret;
}}
"#,
        malloc("%rd2", "%rd3"),
        malloc("%rd2", "%rd3"),
        free("%rd3")
    )
}

fn alloc(dev: &mut prlx_emulator::Device, threads: u32, bytes: u64) -> Vec<(u64, u32)> {
    let m = load(dev, &module());
    let f = dev.get_function(m, "alloc").unwrap();
    let out = dev.mem_alloc(16 * threads as u64).unwrap();
    run(dev, f, cfg(1, threads), &Params::new().u64(out).u64(bytes));
    download_u32(dev, out, 4 * threads as usize)
        .chunks(4)
        .map(|c| (c[0] as u64 | (c[1] as u64) << 32, c[2]))
        .collect()
}

#[test]
fn each_thread_gets_its_own_aligned_block() {
    let mut dev = device();
    let got = alloc(&mut dev, 64, 20);
    let mut addresses: Vec<u64> = got.iter().map(|&(p, _)| p).collect();
    for (t, &(p, v)) in got.iter().enumerate() {
        assert_ne!(p, 0, "thread {t} got NULL");
        assert_eq!(
            p % 16,
            0,
            "thread {t}'s block 0x{p:x} is not 16-byte aligned"
        );
        assert_eq!(v, t as u32, "thread {t} read back {v}");
    }
    addresses.sort_unstable();
    for w in addresses.windows(2) {
        assert!(
            w[1] - w[0] >= 32,
            "20-byte blocks overlap: 0x{:x}, 0x{:x}",
            w[0],
            w[1]
        );
    }
}

#[test]
fn an_exhausted_heap_returns_null() {
    let mut dev = device();
    dev.set_malloc_heap_size(128).unwrap();
    assert_eq!(dev.malloc_heap_size(), 128);
    let got = alloc(&mut dev, 32, 16);
    let served = got.iter().filter(|&&(p, _)| p != 0).count();
    assert_eq!(served, 8, "128 bytes hold eight 16-byte blocks: {got:?}");
    for &(p, v) in &got {
        if p == 0 {
            assert_eq!(v, 0xffff_ffff);
        }
    }
    // Zero bytes: NULL.
    let got = alloc(&mut dev, 1, 0);
    assert_eq!(got[0].0, 0);
}

#[test]
fn blocks_outlive_their_launch_and_another_kernel_frees_them() {
    let mut dev = device();
    dev.set_malloc_heap_size(32 * 32).unwrap();
    let m = load(&mut dev, &module());
    let keep = dev.get_function(m, "keep").unwrap();
    let release = dev.get_function(m, "release").unwrap();
    let ptrs = dev.mem_alloc(8 * 32).unwrap();
    let sums = dev.mem_alloc(4).unwrap();
    run(&mut dev, keep, cfg(1, 32), &Params::new().u64(ptrs));
    run(
        &mut dev,
        release,
        cfg(1, 32),
        &Params::new().u64(ptrs).u64(sums),
    );
    assert_eq!(download_u32(&dev, sums, 1), vec![(0..32).sum::<u32>()]);
    // Everything was freed: the whole heap serves the next launch again.
    run(&mut dev, keep, cfg(1, 32), &Params::new().u64(ptrs));
    let words = download_u32(&dev, ptrs, 64);
    assert!(words.chunks(2).all(|w| w[0] != 0 || w[1] != 0), "{words:?}");
}

#[test]
fn the_size_is_fixed_by_the_first_launch_that_uses_the_heap() {
    let mut dev = device();
    dev.set_malloc_heap_size(1 << 20).unwrap();
    dev.set_malloc_heap_size(2 << 20).unwrap();
    alloc(&mut dev, 1, 8);
    let err = dev.set_malloc_heap_size(4 << 20).unwrap_err().to_string();
    assert!(err.contains("cannot change"), "{err}");
    assert_eq!(dev.malloc_heap_size(), 2 << 20);
}

#[test]
fn freeing_what_malloc_did_not_return_faults_naming_the_address() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 p)\n{{\n.reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [p];\n{}ret;\n}}\n",
        free("%rd1")
    );
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "k");
    let buffer = dev.mem_alloc(16).unwrap();
    match run_err(&mut dev, f, cfg(1, 1), &Params::new().u64(buffer)) {
        LaunchError::IllegalAddress(fault) => {
            let text = format!("{}", LaunchError::IllegalAddress(fault));
            assert!(
                text.contains("not an address device malloc returned"),
                "{text}"
            );
            assert!(text.contains(&format!("{buffer:x}")), "{text}");
        }
        e => panic!("expected an illegal address, got {e}"),
    }
}
