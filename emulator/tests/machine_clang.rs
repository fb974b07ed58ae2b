//! Kernels written in CUDA C, compiled to PTX by clang-19 during the test,
//! checked against CPU references.

mod machine_util;
use machine_util::*;

const REDUCE_SHARED: &str = r#"
__global__ void reduce(const float *in, float *out, int n) {
    __shared__ float buf[256];
    unsigned t = tid_x();
    unsigned i = ctaid_x() * ntid_x() + t;
    buf[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = ntid_x() / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) out[ctaid_x()] = buf[0];
}
"#;

#[test]
fn reduction_through_shared_memory() {
    let Some(ptx) = clang_ptx("reduce_shared", REDUCE_SHARED) else {
        return;
    };
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "_Z6reducePKfPfi");
    let n = 3000usize;
    let input: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    let pin = upload_f32(&mut dev, &input);
    let blocks = n.div_ceil(256);
    let pout = upload_f32(&mut dev, &vec![0.0; blocks]);
    run(
        &mut dev,
        f,
        cfg(blocks as u32, 256),
        &Params::new().u64(pin).u64(pout).u32(n as u32),
    );
    let out = download_f32(&dev, pout, blocks);
    for b in 0..blocks {
        let expect: f32 = input[b * 256..((b + 1) * 256).min(n)].iter().sum();
        assert_eq!(out[b], expect, "block {b}");
    }
}

const WARP_OPS: &str = r#"
__global__ void warp_ops(const int *in, int *out) {
    unsigned t = tid_x();
    int v = in[t];
    int sum = v;
    for (int o = 16; o > 0; o >>= 1) sum += __nvvm_shfl_sync_bfly_i32(0xffffffff, sum, o, 0x1f);
    int up = __nvvm_shfl_sync_up_i32(0xffffffff, v, 1, 0);
    int down = __nvvm_shfl_sync_down_i32(0xffffffff, v, 3, 0x1f);
    int idx = __nvvm_shfl_sync_idx_i32(0xffffffff, v, (t * 7) & 31, 0x1f);
    unsigned ballot = __nvvm_vote_ballot_sync(0xffffffff, v & 1);
    int any = __nvvm_vote_any_sync(0xffffffff, v == 5);
    int all = __nvvm_vote_all_sync(0xffffffff, v >= 0);
    unsigned am = 0;
    if (t & 1) am = __nvvm_activemask();
    int *o = out + t * 8;
    o[0] = sum; o[1] = up; o[2] = down; o[3] = idx;
    o[4] = (int)ballot; o[5] = any; o[6] = all; o[7] = (int)am;
}
"#;

#[test]
fn warp_shuffles_votes_and_activemask() {
    let Some(ptx) = clang_ptx("warp_ops", WARP_OPS) else {
        return;
    };
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "_Z8warp_opsPKiPi");
    let input: Vec<i32> = (0..64).map(|i| (i * 3 + 1) % 11).collect();
    let pin = upload_u32(
        &mut dev,
        &input.iter().map(|x| *x as u32).collect::<Vec<_>>(),
    );
    let pout = dev.mem_alloc(64 * 8 * 4).unwrap();
    run(&mut dev, f, cfg(1, 64), &Params::new().u64(pin).u64(pout));
    let out: Vec<i32> = download_u32(&dev, pout, 64 * 8)
        .into_iter()
        .map(|x| x as i32)
        .collect();
    for t in 0..64usize {
        let w = t / 32 * 32;
        let lane = t % 32;
        let warp = &input[w..w + 32];
        let o = &out[t * 8..t * 8 + 8];
        assert_eq!(o[0], warp.iter().sum::<i32>(), "bfly sum, thread {t}");
        assert_eq!(
            o[1],
            if lane >= 1 {
                warp[lane - 1]
            } else {
                warp[lane]
            },
            "up, thread {t}"
        );
        assert_eq!(
            o[2],
            if lane + 3 < 32 {
                warp[lane + 3]
            } else {
                warp[lane]
            },
            "down, thread {t}"
        );
        assert_eq!(o[3], warp[(t * 7) & 31], "idx, thread {t}");
        let ballot = warp
            .iter()
            .enumerate()
            .fold(0u32, |b, (i, v)| b | (((v & 1) as u32) << i));
        assert_eq!(o[4] as u32, ballot, "ballot, thread {t}");
        assert_eq!(o[5] != 0, warp.contains(&5), "any, thread {t}");
        assert_eq!(o[6], 1, "all, thread {t}");
        assert_eq!(
            o[7] as u32,
            if lane & 1 == 1 { 0xaaaa_aaaa } else { 0 },
            "activemask, thread {t}"
        );
    }
}

const DIVERGENT: &str = r#"
__device__ __noinline__ int collatz(int x) {
    int steps = 0;
    while (x != 1) {
        x = (x & 1) ? 3 * x + 1 : x / 2;
        steps++;
    }
    return steps;
}
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__global__ void divergent(int *out, int n) {
    unsigned i = ctaid_x() * ntid_x() + tid_x();
    if (i >= n) return;
    int r;
    switch (i % 4) {
    case 0: r = collatz(i + 1); break;
    case 1: r = fib(i % 15); break;
    case 2: { int acc = 0; for (int k = 0; k < (int)(i % 37); k++) acc += k * k; r = acc; break; }
    default: r = -(int)i;
    }
    out[i] = r;
}
"#;

fn collatz(mut x: i64) -> i32 {
    let mut s = 0;
    while x != 1 {
        x = if x & 1 == 1 { 3 * x + 1 } else { x / 2 };
        s += 1;
    }
    s
}

fn fib(n: i32) -> i32 {
    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
}

#[test]
fn divergent_branches_loops_calls_and_recursion() {
    let Some(ptx) = clang_ptx("divergent", DIVERGENT) else {
        return;
    };
    assert!(ptx.contains("call.uni"), "expected real calls in:\n{ptx}");
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "_Z9divergentPii");
    let n = 500usize;
    let pout = dev.mem_alloc(n as u64 * 4).unwrap();
    run(
        &mut dev,
        f,
        cfg(4, 128),
        &Params::new().u64(pout).u32(n as u32),
    );
    let out: Vec<i32> = download_u32(&dev, pout, n)
        .into_iter()
        .map(|x| x as i32)
        .collect();
    for (i, got) in out.iter().enumerate() {
        let expect = match i % 4 {
            0 => collatz(i as i64 + 1),
            1 => fib((i % 15) as i32),
            2 => (0..(i % 37) as i32).map(|k| k * k).sum(),
            _ => -(i as i32),
        };
        assert_eq!(*got, expect, "element {i}");
    }
}

const HISTOGRAM: &str = r#"
__global__ void histogram(const unsigned *in, unsigned *hist, int n) {
    __shared__ unsigned local[16];
    unsigned t = tid_x();
    if (t < 16) local[t] = 0;
    __syncthreads();
    for (unsigned i = ctaid_x() * ntid_x() + t; i < n; i += ntid_x() * __nvvm_read_ptx_sreg_nctaid_x())
        atomicAdd_block_shared(&local[in[i] % 16]);
    __syncthreads();
    if (t < 16) __nvvm_atom_add_gen_i((int *)&hist[t], (int)local[t]);
}
"#;

#[test]
fn histogram_with_shared_and_global_atomics() {
    let src = HISTOGRAM.replace(
        "atomicAdd_block_shared(&local[in[i] % 16]);",
        "__nvvm_atom_add_gen_i((int *)&local[in[i] % 16], 1);",
    );
    let Some(ptx) = clang_ptx("histogram", &src) else {
        return;
    };
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "_Z9histogramPKjPji");
    let n = 5000usize;
    let input: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) >> 7)
        .collect();
    let pin = upload_u32(&mut dev, &input);
    let phist = upload_u32(&mut dev, &[0; 16]);
    run(
        &mut dev,
        f,
        cfg(3, 96),
        &Params::new().u64(pin).u64(phist).u32(n as u32),
    );
    let mut expect = [0u32; 16];
    for x in &input {
        expect[(x % 16) as usize] += 1;
    }
    assert_eq!(download_u32(&dev, phist, 16), expect.to_vec());
}

const LOCAL_AND_DYNAMIC_SHARED: &str = r#"
extern __shared__ float dyn[];
__device__ __noinline__ float pick(const float *arr, int k) { return arr[k]; }
__global__ void scratch(const int *idx, float *out) {
    float arr[24];
    unsigned t = tid_x();
    for (int k = 0; k < 24; k++) arr[k] = (float)(k * 10 + t);
    dyn[t] = pick(arr, idx[t] % 24);
    __syncthreads();
    float *generic = dyn;
    unsigned dsz;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsz));
    out[t] = generic[(t + 1) % ntid_x()] + dsz;
}
"#;

#[test]
fn local_arrays_stack_frames_and_dynamic_shared_memory() {
    let Some(ptx) = clang_ptx("scratch", LOCAL_AND_DYNAMIC_SHARED) else {
        return;
    };
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "_Z7scratchPKiPf");
    let n = 64usize;
    let idx: Vec<u32> = (0..n as u32).map(|t| t * 5 + 3).collect();
    let pidx = upload_u32(&mut dev, &idx);
    let pout = dev.mem_alloc(n as u64 * 4).unwrap();
    let c = prlx_emulator::LaunchConfig {
        grid: [1, 1, 1],
        block: [n as u32, 1, 1],
        dynamic_shared_bytes: 256,
    };
    run(&mut dev, f, c, &Params::new().u64(pidx).u64(pout));
    let out = download_f32(&dev, pout, n);
    for (t, got) in out.iter().enumerate() {
        let u = (t + 1) % n;
        let k = (idx[u] % 24) as usize;
        assert_eq!(*got, (k * 10 + u) as f32 + 256.0, "thread {t}");
    }
}

const POINTERS_AND_SWITCH: &str = r#"
typedef float (*op_t)(float);
__device__ __noinline__ float twice(float x) { return 2.0f * x; }
__device__ __noinline__ float square(float x) { return x * x; }
__device__ __noinline__ float negate(float x) { return -x; }
__device__ op_t table[3] = { twice, square, negate };
__global__ void dispatch(float *out, int n) {
    unsigned i = ctaid_x() * ntid_x() + tid_x();
    if (i >= n) return;
    op_t f = table[i % 3];
    float v = f((float)i);
    int k;
    switch (i % 7) {
    case 0: k = 11; break;
    case 1: k = 23; break;
    case 2: k = 5; break;
    case 3: k = 78; break;
    case 4: k = 1; break;
    case 5: k = 40; break;
    default: k = 9;
    }
    out[i] = v + k;
}
"#;

#[test]
fn function_pointers_and_jump_tables() {
    let Some(ptx) = clang_ptx("dispatch", POINTERS_AND_SWITCH) else {
        return;
    };
    let mut dev = device();
    let f = kernel(&mut dev, &ptx, "_Z8dispatchPfi");
    let n = 200usize;
    let pout = dev.mem_alloc(n as u64 * 4).unwrap();
    run(
        &mut dev,
        f,
        cfg(2, 128),
        &Params::new().u64(pout).u32(n as u32),
    );
    let out = download_f32(&dev, pout, n);
    let ks = [11.0, 23.0, 5.0, 78.0, 1.0, 40.0, 9.0];
    for i in 0..n {
        let x = i as f32;
        let v = match i % 3 {
            0 => 2.0 * x,
            1 => x * x,
            _ => -x,
        };
        assert_eq!(out[i], v + ks[i % 7], "element {i}");
    }
}

const PRINTF_AND_ASSERT: &str = r#"
extern "C" __device__ int printf(const char *, ...);
extern "C" __device__ void __assertfail(const char *message, const char *file, unsigned line,
                                        const char *function, unsigned long char_size);
__global__ void report(const float *x, int n) {
    unsigned t = tid_x();
    if (t < 3) printf("t=%u x=%.2f n=%d %s\n", t, x[t], n, t == 1 ? "one" : "other");
}
__global__ void check(int v) {
    if (v > 3 && tid_x() == 2) __assertfail("v <= 3", "check.cu", 42, "check", 1);
}
"#;

#[test]
fn device_printf_and_assert() {
    let Some(ptx) = clang_ptx("printf", PRINTF_AND_ASSERT) else {
        return;
    };
    let mut dev = device();
    dev.capture_printf(true);
    let m = load(&mut dev, &ptx);
    let report = dev.get_function(m, "_Z6reportPKfi").unwrap();
    let x = upload_f32(&mut dev, &[1.5, -2.25, 3.0, 4.0]);
    run(&mut dev, report, cfg(1, 32), &Params::new().u64(x).u32(7));
    assert_eq!(
        dev.take_printf_output(),
        "t=0 x=1.50 n=7 other\nt=1 x=-2.25 n=7 one\nt=2 x=3.00 n=7 other\n"
    );
    let check = dev.get_function(m, "_Z5checki").unwrap();
    run(&mut dev, check, cfg(1, 32), &Params::new().u32(3));
    let err = run_err(&mut dev, check, cfg(1, 32), &Params::new().u32(4));
    let prlx_emulator::LaunchError::Assert(fault) = &err else {
        panic!("{err}")
    };
    assert_eq!(fault.thread, [2, 0, 0]);
    assert!(
        err.to_string()
            .contains("assertion `v <= 3` failed (check.cu:42)"),
        "{err}"
    );
}
