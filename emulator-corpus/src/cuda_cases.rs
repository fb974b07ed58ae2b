//! CUDA C kernels compiled by clang-19 (sources in `kernels/cuda/`), each
//! with its CPU reference.

use super::harness::{Case, Rng, expect_eq, expect_f32_bits, expect_f64_bits};
use super::reference::{self, MODES, Round};

fn blocks(n: usize, block: usize) -> u32 {
    n.div_ceil(block) as u32
}

// ---- basic.cu ----

pub fn vector_add() -> Case {
    let n = 1000;
    let mut rng = Rng::new(1);
    let a = rng.vec_f32(n, -100.0, 100.0);
    let b = rng.vec_f32(n, -100.0, 100.0);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    Case::clang("basic.cu", "vector_add")
        .grid([blocks(n, 256), 1, 1])
        .block([256, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<f32>(n)
        .scalar(n as i32)
        .check(move |o| expect_f32_bits("c", &o.get::<f32>(2), &want))
}

pub fn saxpy() -> Case {
    let n = 777;
    let mut rng = Rng::new(2);
    let x = rng.vec_f32(n, -10.0, 10.0);
    let y = rng.vec_f32(n, -10.0, 10.0);
    let a = 2.5f32;
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a.mul_add(*x, *y)).collect();
    Case::clang("basic.cu", "saxpy")
        .grid([blocks(n, 128), 1, 1])
        .block([128, 1, 1])
        .scalar(n as i32)
        .scalar(a)
        .buf(&x)
        .buf(&y)
        .check(move |o| expect_f32_bits("y", &o.get::<f32>(1), &want))
}

pub fn grid_stride() -> Case {
    let n = 5000;
    let x = Rng::new(3).vec_i32(n, -1 << 20, 1 << 20);
    let want: Vec<i32> = x
        .iter()
        .enumerate()
        .map(|(i, v)| v.wrapping_mul(3).wrapping_add(i as i32))
        .collect();
    Case::clang("basic.cu", "grid_stride")
        .grid([3, 1, 1])
        .block([128, 1, 1])
        .buf(&x)
        .scalar(n as i32)
        .check(move |o| expect_eq("x", &o.get::<i32>(0), &want))
}

pub fn index_2d() -> Case {
    let (w, h) = (100usize, 37usize);
    let (bx, by) = (16usize, 8usize);
    let mut want = vec![0u32; w * h];
    for y in 0..h {
        for x in 0..w {
            let (gx, tx, gy, ty) = (x / bx, x % bx, y / by, y % by);
            want[y * w + x] = ((gy << 24) | (gx << 16) | (ty << 8) | tx) as u32;
        }
    }
    Case::clang("basic.cu", "index_2d")
        .grid([blocks(w, bx), blocks(h, by), 1])
        .block([bx as u32, by as u32, 1])
        .buf(&vec![0xdead_beefu32; w * h])
        .scalar(w as i32)
        .scalar(h as i32)
        .check(move |o| expect_eq("out", &o.get::<u32>(0), &want))
}

pub fn index_3d() -> Case {
    let grid = [3u32, 2, 2];
    let block = [4u32, 4, 2];
    let (w, h, d) = (12u32, 8u32, 4u32);
    let mut want = vec![0u32; (w * h * d) as usize];
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                want[((z * h + y) * w + x) as usize] = x + 1000 * y + 1_000_000 * z;
            }
        }
    }
    Case::clang("basic.cu", "index_3d")
        .grid(grid)
        .block(block)
        .zeros::<u32>(want.len())
        .check(move |o| expect_eq("out", &o.get::<u32>(0), &want))
}

pub fn int_divmod() -> Case {
    let n = 512;
    let mut rng = Rng::new(4);
    let mut a = rng.vec_i32(n, i32::MIN, i32::MAX);
    let mut b: Vec<i32> = (0..n)
        .map(|i| match i % 4 {
            0 => rng.range_i32(-9, 9),
            1 => rng.range_i32(-100_000, 100_000),
            _ => rng.range_i32(i32::MIN, i32::MAX),
        })
        .map(|v| if v == 0 { 7 } else { v })
        .collect();
    for (i, v) in [
        (-7, 2),
        (7, -2),
        (-7, -2),
        (i32::MIN, 1),
        (i32::MIN, 3),
        (5, i32::MIN),
    ]
    .into_iter()
    .enumerate()
    {
        a[i] = v.0;
        b[i] = v.1;
    }
    let q: Vec<i32> = a.iter().zip(&b).map(|(x, y)| x.wrapping_div(*y)).collect();
    let r: Vec<i32> = a.iter().zip(&b).map(|(x, y)| x.wrapping_rem(*y)).collect();
    let uq: Vec<u32> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| {
            let (x, y) = (*x as u32, *y as u32);
            (x / y).wrapping_add(x % y)
        })
        .collect();
    Case::clang("basic.cu", "int_divmod")
        .grid([blocks(n, 128), 1, 1])
        .block([128, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<i32>(n)
        .zeros::<i32>(n)
        .zeros::<u32>(n)
        .scalar(n as i32)
        .check(move |o| {
            expect_eq("q", &o.get::<i32>(2), &q)?;
            expect_eq("r", &o.get::<i32>(3), &r)?;
            expect_eq("unsigned q + r", &o.get::<u32>(4), &uq)
        })
}

pub fn min_max_selp() -> Case {
    let n = 300;
    let mut rng = Rng::new(5);
    let a = rng.vec_i32(n, i32::MIN, i32::MAX);
    let b = rng.vec_i32(n, -1000, 1000);
    let mut want = Vec::new();
    for (&x, &y) in a.iter().zip(&b) {
        want.extend([
            x.min(y),
            x.max(y),
            (x as u32).min(y as u32) as i32,
            if x > y {
                x.wrapping_sub(y)
            } else {
                y.wrapping_sub(x)
            },
            if x & 1 != 0 { 17 } else { -4 },
        ]);
    }
    Case::clang("basic.cu", "min_max_selp")
        .grid([blocks(n, 64), 1, 1])
        .block([64, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<i32>(5 * n)
        .scalar(n as i32)
        .check(move |o| expect_eq("out", &o.get::<i32>(2), &want))
}

// ---- reduce.cu ----

pub fn reduce_shared() -> Case {
    let n = 1000;
    let x = Rng::new(6).vec_i32(n, -1 << 24, 1 << 24);
    let want: Vec<i32> = x
        .chunks(256)
        .map(|c| c.iter().fold(0i32, |s, v| s.wrapping_add(*v)))
        .collect();
    Case::clang("reduce.cu", "reduce_shared")
        .grid([4, 1, 1])
        .block([256, 1, 1])
        .buf(&x)
        .zeros::<i32>(4)
        .scalar(n as i32)
        .check(move |o| expect_eq("partial", &o.get::<i32>(1), &want))
}

pub fn reduce_shared_f32() -> Case {
    let x = Rng::new(7).vec_f32(1024, -1.0, 1.0);
    let want: Vec<f32> = x
        .chunks(256)
        .map(|c| {
            let mut s = c.to_vec();
            let mut stride = 128;
            while stride > 0 {
                for t in 0..stride {
                    s[t] += s[t + stride];
                }
                stride /= 2;
            }
            s[0]
        })
        .collect();
    Case::clang("reduce.cu", "reduce_shared_f32")
        .grid([4, 1, 1])
        .block([256, 1, 1])
        .buf(&x)
        .zeros::<f32>(4)
        .check(move |o| expect_f32_bits("partial", &o.get::<f32>(1), &want))
}

pub fn reduce_shfl() -> Case {
    let n = 1000;
    let x = Rng::new(8).vec_i32(n, -1 << 20, 1 << 20);
    let want = vec![x.iter().fold(0i32, |s, v| s.wrapping_add(*v))];
    Case::clang("reduce.cu", "reduce_shfl")
        .grid([4, 1, 1])
        .block([256, 1, 1])
        .buf(&x)
        .zeros::<i32>(1)
        .scalar(n as i32)
        .check(move |o| expect_eq("total", &o.get::<i32>(1), &want))
}

pub fn allreduce_xor_f32() -> Case {
    let x = Rng::new(9).vec_f32(128, -4.0, 4.0);
    let mut want = Vec::new();
    for warp in x.chunks(32) {
        let mut v = warp.to_vec();
        for m in [16, 8, 4, 2, 1] {
            v = (0..32).map(|l| v[l] + v[l ^ m]).collect();
        }
        want.extend(v);
    }
    Case::clang("reduce.cu", "allreduce_xor_f32")
        .grid([2, 1, 1])
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<f32>(128)
        .check(move |o| expect_f32_bits("out", &o.get::<f32>(1), &want))
}

fn inclusive_scan(c: &[i32]) -> Vec<i32> {
    c.iter()
        .scan(0i32, |s, v| {
            *s = s.wrapping_add(*v);
            Some(*s)
        })
        .collect()
}

pub fn scan_hillis_steele() -> Case {
    let x = Rng::new(10).vec_i32(768, -1000, 1000);
    let want: Vec<i32> = x.chunks(256).flat_map(inclusive_scan).collect();
    Case::clang("reduce.cu", "scan_hillis_steele")
        .grid([3, 1, 1])
        .block([256, 1, 1])
        .buf(&x)
        .zeros::<i32>(768)
        .check(move |o| expect_eq("out", &o.get::<i32>(1), &want))
}

pub fn scan_blelloch() -> Case {
    let x = Rng::new(11).vec_i32(1024, -1000, 1000);
    let want: Vec<i32> = x
        .chunks(512)
        .flat_map(|c| {
            let inc = inclusive_scan(c);
            let mut ex = vec![0];
            ex.extend_from_slice(&inc[..511]);
            ex
        })
        .collect();
    Case::clang("reduce.cu", "scan_blelloch")
        .grid([2, 1, 1])
        .block([256, 1, 1])
        .buf(&x)
        .zeros::<i32>(1024)
        .check(move |o| expect_eq("out", &o.get::<i32>(1), &want))
}

pub fn warp_scan_shfl_up() -> Case {
    let x = Rng::new(12).vec_i32(192, -1 << 24, 1 << 24);
    let want: Vec<i32> = x.chunks(32).flat_map(inclusive_scan).collect();
    Case::clang("reduce.cu", "warp_scan_shfl_up")
        .grid([2, 1, 1])
        .block([96, 1, 1])
        .buf(&x)
        .zeros::<i32>(192)
        .check(move |o| expect_eq("out", &o.get::<i32>(1), &want))
}

// ---- atomics.cu ----

fn histogram_input() -> (Vec<u32>, Vec<u32>) {
    let mut rng = Rng::new(13);
    // Skewed so that some bins see heavy contention.
    let data: Vec<u32> = (0..5000)
        .map(|_| if rng.u32() % 4 == 0 { 7 } else { rng.u32() })
        .collect();
    let mut bins = vec![0u32; 64];
    for d in &data {
        bins[(d % 64) as usize] += 1;
    }
    (data, bins)
}

pub fn histogram_global() -> Case {
    let (data, want) = histogram_input();
    Case::clang("atomics.cu", "histogram_global")
        .grid([8, 1, 1])
        .block([128, 1, 1])
        .buf(&data)
        .zeros::<u32>(64)
        .scalar(data.len() as i32)
        .check(move |o| expect_eq("bins", &o.get::<u32>(1), &want))
}

pub fn histogram_shared() -> Case {
    let (data, want) = histogram_input();
    Case::clang("atomics.cu", "histogram_shared")
        .grid([5, 1, 1])
        .block([96, 1, 1])
        .buf(&data)
        .zeros::<u32>(64)
        .scalar(data.len() as i32)
        .check(move |o| expect_eq("bins", &o.get::<u32>(1), &want))
}

pub fn atomic_cas_max_f32() -> Case {
    let n = 700;
    let x = Rng::new(14).vec_f32(n, -1000.0, 1000.0);
    let want = vec![x.iter().copied().fold(f32::NEG_INFINITY, f32::max)];
    Case::clang("atomics.cu", "atomic_cas_max_f32")
        .grid([blocks(n, 128), 1, 1])
        .block([128, 1, 1])
        .buf(&x)
        .buf(&[f32::NEG_INFINITY])
        .scalar(n as i32)
        .check(move |o| expect_f32_bits("max", &o.get::<f32>(1), &want))
}

pub fn atomics_misc() -> Case {
    let n = 600;
    let x = Rng::new(15).vec_i32(n, i32::MIN, i32::MAX);
    let init: Vec<i32> = vec![i32::MAX, i32::MIN, -1, 0, 0, 0, -1, 0, 0, 0];
    let mut want = init.clone();
    let mut sum64 = 0i64;
    for &v in &x {
        want[0] = want[0].min(v);
        want[1] = want[1].max(v);
        want[2] &= v | 0x10000;
        want[3] |= v & 0xff0;
        want[4] ^= v;
        want[5] = want[5].wrapping_sub(v);
        want[6] = (want[6] as u32).min(v as u32) as i32;
        want[7] = (want[7] as u32).max(v as u32) as i32;
        sum64 = sum64.wrapping_add(v as i64 * 100_000);
    }
    want[8] = sum64 as i32;
    want[9] = (sum64 >> 32) as i32;
    Case::clang("atomics.cu", "atomics_misc")
        .grid([blocks(n, 256), 1, 1])
        .block([256, 1, 1])
        .buf(&x)
        .buf(&init)
        .scalar(n as i32)
        .check(move |o| expect_eq("acc", &o.get::<i32>(1), &want))
}

pub fn atomic_tickets() -> Case {
    let n = 500usize;
    Case::clang("atomics.cu", "atomic_tickets")
        .grid([blocks(n, 64), 1, 1])
        .block([64, 1, 1])
        .zeros::<u32>(1)
        .zeros::<u32>(n)
        .scalar(n as i32)
        .check(move |o| {
            expect_eq("counter", &o.get::<u32>(0), &[n as u32])?;
            // Each slot holds one thread's id + 1: a permutation of 1..=n.
            let mut slots = o.get::<u32>(1);
            slots.sort_unstable();
            let want: Vec<u32> = (1..=n as u32).collect();
            expect_eq("sorted slots", &slots, &want)
        })
}

/// `while (atomicCAS(&lock, 0, 1) != 0);` contended inside each warp:
/// terminates only with independent thread scheduling.
pub fn spin_lock_sum() -> Case {
    let n = 80usize;
    let x = Rng::new(65).vec_u32(n);
    let sum = x.iter().fold(0u32, |a, v| a.wrapping_add(*v));
    Case::clang("atomics.cu", "spin_lock_sum")
        .grid([blocks(n, 64), 1, 1])
        .block([64, 1, 1])
        .zeros::<u32>(1)
        .buf(&x)
        .zeros::<u32>(1)
        .zeros::<u32>(1)
        .scalar(n as i32)
        .check(move |o| {
            expect_eq("lock (released)", &o.get::<u32>(0), &[0])?;
            expect_eq("total", &o.get::<u32>(2), &[sum])?;
            expect_eq("threads counted", &o.get::<u32>(3), &[n as u32])
        })
}

// ---- matrix.cu ----

pub fn transpose_shared() -> Case {
    let (w, h) = (70usize, 45usize);
    let x = Rng::new(16).vec_f32(w * h, -1.0, 1.0);
    let mut want = vec![0f32; w * h];
    for y in 0..h {
        for xx in 0..w {
            want[xx * h + y] = x[y * w + xx];
        }
    }
    Case::clang("matrix.cu", "transpose_shared")
        .grid([blocks(w, 32), blocks(h, 32), 1])
        .block([32, 8, 1])
        .buf(&x)
        .zeros::<f32>(w * h)
        .scalar(w as i32)
        .scalar(h as i32)
        .check(move |o| expect_f32_bits("out", &o.get::<f32>(1), &want))
}

/// `c = a * b`, accumulating each dot product with fma in k order.
pub fn matmul_reference(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![0f32; n * n];
    for row in 0..n {
        for col in 0..n {
            let mut acc = 0f32;
            for k in 0..n {
                acc = a[row * n + k].mul_add(b[k * n + col], acc);
            }
            c[row * n + col] = acc;
        }
    }
    c
}

pub fn matmul_tiled() -> Case {
    let n = 64;
    let mut rng = Rng::new(17);
    let a = rng.vec_f32(n * n, -1.0, 1.0);
    let b = rng.vec_f32(n * n, -1.0, 1.0);
    let want = matmul_reference(&a, &b, n);
    Case::clang("matrix.cu", "matmul_tiled")
        .grid([(n / 16) as u32, (n / 16) as u32, 1])
        .block([16, 16, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<f32>(n * n)
        .scalar(n as i32)
        .check(move |o| expect_f32_bits("c", &o.get::<f32>(2), &want))
}

// ---- sort.cu ----

pub fn bitonic_sort() -> Case {
    let keys = Rng::new(18).vec_i32(1024, -5000, 5000);
    let want: Vec<i32> = keys
        .chunks(512)
        .flat_map(|c| {
            let mut c = c.to_vec();
            c.sort_unstable();
            c
        })
        .collect();
    Case::clang("sort.cu", "bitonic_sort")
        .grid([2, 1, 1])
        .block([512, 1, 1])
        .buf(&keys)
        .check(move |o| expect_eq("keys", &o.get::<i32>(0), &want))
}

// ---- control.cu ----

pub fn divergent_branches() -> Case {
    let n = 400;
    let x = Rng::new(19).vec_i32(n, -100, 100);
    let want: Vec<i32> = x
        .iter()
        .map(|&x| match x % 3 {
            0 => x * 7,
            1 => (0..(x & 15)).fold(0i32, |r, k| r.wrapping_add(k * x)),
            _ => {
                let r = -x;
                if x & 4 != 0 { r ^ 0x5a5a } else { r }
            }
        })
        .collect();
    Case::clang("control.cu", "divergent_branches")
        .grid([blocks(n, 128), 1, 1])
        .block([128, 1, 1])
        .buf(&x)
        .zeros::<i32>(n)
        .scalar(n as i32)
        .check(move |o| expect_eq("out", &o.get::<i32>(1), &want))
}

pub fn collatz_steps() -> Case {
    let n = 256;
    let mut rng = Rng::new(20);
    let x: Vec<u32> = (0..n).map(|_| 1 + rng.u32() % 5000).collect();
    let want: Vec<u32> = x
        .iter()
        .map(|&v| {
            let (mut v, mut s) = (v as u64, 0u32);
            while v > 1 {
                v = if v & 1 == 1 { 3 * v + 1 } else { v / 2 };
                s += 1;
            }
            s
        })
        .collect();
    Case::clang("control.cu", "collatz_steps")
        .grid([2, 1, 1])
        .block([128, 1, 1])
        .buf(&x)
        .zeros::<u32>(n)
        .scalar(n as i32)
        .check(move |o| expect_eq("steps", &o.get::<u32>(1), &want))
}

pub fn switch_stmt() -> Case {
    let n = 320;
    let x = Rng::new(21).vec_i32(n, -100_000, 100_000);
    let want: Vec<i32> = x
        .iter()
        .map(|&x| match x & 15 {
            0 => 11,
            1 => x + 3,
            2 => x.wrapping_mul(x),
            3 => x << 4,
            5 => !x,
            7 => x / 7,
            8 | 9 => x ^ 0x1234,
            13 => 1300,
            _ => x - 100,
        })
        .collect();
    Case::clang("control.cu", "switch_stmt")
        .grid([blocks(n, 64), 1, 1])
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<i32>(n)
        .scalar(n as i32)
        .check(move |o| expect_eq("out", &o.get::<i32>(1), &want))
}

pub fn device_calls() -> Case {
    let n = 96;
    let mut rng = Rng::new(22);
    let a = rng.vec_i32(n, 1, 100_000);
    let b: Vec<i32> = a
        .iter()
        .map(|v| v * rng.range_i32(1, 50) / rng.range_i32(1, 9) + 1)
        .collect();
    let gcd = |mut a: i32, mut b: i32| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    fn fib(n: u32) -> u32 {
        if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
    }
    let g: Vec<i32> = a.iter().zip(&b).map(|(x, y)| gcd(*x, *y)).collect();
    let f: Vec<u32> = (0..n as u32).map(|i| fib(i % 16)).collect();
    let fact: Vec<u64> = (0..n as u64)
        .map(|i| (1..=i % 21).product::<u64>().max(1))
        .collect();
    Case::clang("control.cu", "device_calls")
        .grid([3, 1, 1])
        .block([32, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<i32>(n)
        .zeros::<u32>(n)
        .zeros::<u64>(n)
        .scalar(n as i32)
        .check(move |o| {
            expect_eq("gcd", &o.get::<i32>(2), &g)?;
            expect_eq("fib", &o.get::<u32>(3), &f)?;
            expect_eq("factorial", &o.get::<u64>(4), &fact)
        })
}

pub fn local_array() -> Case {
    let n = 200;
    let x = Rng::new(23).vec_i32(n, -1000, 1000);
    let want: Vec<i32> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let i = i as i32;
            let mut arr = [0i32; 16];
            for k in 0..16 {
                arr[k as usize] = v.wrapping_mul(k).wrapping_add(k ^ i);
            }
            let mut acc = 0i32;
            for k in 0..16 {
                let idx = (v.wrapping_add(k * 5) & 15) as usize;
                acc = acc.wrapping_add(arr[idx].wrapping_mul(k + 1));
            }
            arr[(v & 15) as usize] = acc;
            arr[((i * 7) & 15) as usize].wrapping_add(acc)
        })
        .collect();
    Case::clang("control.cu", "local_array")
        .grid([blocks(n, 64), 1, 1])
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<i32>(n)
        .scalar(n as i32)
        .check(move |o| expect_eq("out", &o.get::<i32>(1), &want))
}

// ---- math.cu ----

pub fn int64_math() -> Case {
    let n = 256;
    let mut rng = Rng::new(24);
    let a: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let b: Vec<u64> = (0..n)
        .map(|i| match i % 3 {
            0 => rng.next_u64() >> (rng.u32() % 64),
            1 => (rng.range_i32(-1000, 1000) as i64) as u64,
            _ => rng.next_u64(),
        })
        .map(|v| if v == 0 || v == u64::MAX { 3 } else { v })
        .collect();
    let mut want = Vec::new();
    for (&x, &y) in a.iter().zip(&b) {
        let (sx, sy) = (x as i64, y as i64);
        want.extend([
            x.wrapping_mul(y),
            x / y,
            x % y,
            sx.wrapping_div(sy) as u64,
            sx.wrapping_rem(sy) as u64,
            x >> (y & 63),
            (sx >> (y & 63)) as u64,
            x << (y & 63),
            ((x as u128 * y as u128) >> 64) as u64,
            (((sx as i128 * sy as i128) >> 64) as u64) ^ x.rotate_left(13),
        ]);
    }
    Case::clang("math.cu", "int64_math")
        .grid([2, 1, 1])
        .block([128, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<u64>(10 * n)
        .scalar(n as i32)
        .check(move |o| expect_eq("out", &o.get::<u64>(2), &want))
}

const F32_SPECIALS: [f32; 16] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    1e-45, // smallest denormal
    1e-40,
    -1.1e-41,
    f32::MAX,
    f32::MIN_POSITIVE,
    3.0,
    1e30,
    -1e-30,
    0.1,
];

pub fn fp_edge_f32() -> Case {
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in F32_SPECIALS {
        for y in F32_SPECIALS {
            a.push(x);
            b.push(y);
        }
    }
    let n = a.len();
    let mut want = Vec::new();
    for (&x, &y) in a.iter().zip(&b) {
        want.extend([x + y, x - y, x * y, x / y, x.mul_add(y, x), x.abs() + -y]);
    }
    Case::clang("math.cu", "fp_edge_f32")
        .grid([blocks(n, 128), 1, 1])
        .block([128, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<f32>(6 * n)
        .scalar(n as i32)
        .check(move |o| expect_f32_bits("out", &o.get::<f32>(2), &want))
}

pub fn fp_edge_f64() -> Case {
    let specials: [f64; 14] = [
        0.0,
        -0.0,
        1.0,
        -2.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        5e-324,
        2.5e-310,
        f64::MAX,
        f64::MIN_POSITIVE,
        1e300,
        -1e-300,
        0.1,
    ];
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in specials {
        for y in specials {
            a.push(x);
            b.push(y);
        }
    }
    let n = a.len();
    let mut want = Vec::new();
    for (&x, &y) in a.iter().zip(&b) {
        want.extend([x + y, x * y, x / y, x.mul_add(y, -x), x.abs().sqrt()]);
    }
    Case::clang("math.cu", "fp_edge_f64")
        .grid([blocks(n, 64), 1, 1])
        .block([64, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<f64>(5 * n)
        .scalar(n as i32)
        .check(move |o| expect_f64_bits("out", &o.get::<f64>(2), &want))
}

pub fn rounding_modes() -> Case {
    let n = 512;
    let mut rng = Rng::new(25);
    let mut a: Vec<f32> = (0..n).map(|_| rng.wide_f32(-30, 30)).collect();
    let mut b: Vec<f32> = (0..n).map(|_| rng.wide_f32(-30, 30)).collect();
    let c: Vec<f32> = (0..n).map(|_| rng.wide_f32(-60, 60)).collect();
    // Cancellation, overflow, underflow into denormals and exact results.
    let edges = [
        (1.0, -1.0),
        (3.0, 1e-30),
        (-3.0, 1e-30),
        (f32::MAX, f32::MAX),
        (-f32::MAX, 2.0),
        (1e-30, 1e-15),
        (-1e-38, 1e-7),
        (1.5, 2.0),
        (1.0, 3.0),
        (-1.0, 3.0),
        (0.0, -5.0),
        (-0.0, 5.0),
    ];
    for (i, (x, y)) in edges.into_iter().enumerate() {
        a[i] = x;
        b[i] = y;
    }
    let mut want = Vec::new();
    for i in 0..n {
        let (x, y, z) = (a[i], b[i], c[i]);
        for m in MODES {
            want.push(reference::add_f32(x, y, m));
        }
        for m in MODES {
            want.push(reference::mul_f32(x, y, m));
        }
        for m in MODES {
            want.push(reference::div_f32(x, y, m));
        }
        for m in MODES {
            want.push(reference::fma_f32(x, y, z, m));
        }
    }
    Case::clang("math.cu", "rounding_modes")
        .grid([blocks(n, 128), 1, 1])
        .block([128, 1, 1])
        .buf(&a)
        .buf(&b)
        .buf(&c)
        .zeros::<f32>(16 * n)
        .scalar(n as i32)
        .check(move |o| {
            expect_f32_bits(
                "out (per element: add, mul, div, fma x rn, rz, rm, rp)",
                &o.get::<f32>(3),
                &want,
            )
        })
}

pub fn conversions() -> Case {
    let mut rng = Rng::new(26);
    let mut f: Vec<f32> = vec![
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        2147483648.0,
        -2147484000.0,
        2.5,
        -2.5,
        0.5,
        1.5,
        -0.0,
        3e9,
        -1.5,
        1e20,
        4294967296.0,
        -0.7,
        0.49999997,
    ];
    let mut k: Vec<i32> = vec![
        i32::MAX,
        i32::MIN,
        16777217,
        -16777217,
        16777219,
        -16777219,
        0,
        -1,
    ];
    while f.len() < 128 {
        f.push(rng.wide_f32(-4, 34));
    }
    while k.len() < 128 {
        k.push(rng.range_i32(i32::MIN, i32::MAX));
    }
    let n = 128;
    let mut oi = Vec::new();
    let mut ou = Vec::new();
    let mut ol = Vec::new();
    let mut of = Vec::new();
    for i in 0..n {
        let x = f[i];
        oi.extend([
            x as i32,
            x.round_ties_even() as i32,
            x.floor() as i32,
            x.ceil() as i32,
        ]);
        ou.extend([x as u32, x.round_ties_even() as u32]);
        // PTX ISA (cvt): NaN converts to 0, except from .f64 or into a 64-bit
        // integer, where it gives 1 << (width - 1).
        ol.push(if x.is_nan() { i64::MIN } else { x as i64 });
        // clang-19 lowers __nvvm_i2f_rz to cvt.rn.f32.s32 (see its PTX), so the
        // second column rounds to nearest; ptx::cvt_modes covers cvt.rz.f32.s32.
        for m in [Round::Nearest, Round::Nearest, Round::Down, Round::Up] {
            of.push(reference::i32_to_f32(k[i], m));
        }
        of.push(if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) });
    }
    Case::clang("math.cu", "conversions")
        .grid([2, 1, 1])
        .block([64, 1, 1])
        .buf(&f)
        .buf(&k)
        .zeros::<i32>(4 * n)
        .zeros::<u32>(2 * n)
        .zeros::<i64>(n)
        .zeros::<f32>(5 * n)
        .scalar(n as i32)
        .check(move |o| {
            expect_eq("f32 -> s32 (rz, rn, rm, rp)", &o.get::<i32>(2), &oi)?;
            expect_eq("f32 -> u32 (rz, rn)", &o.get::<u32>(3), &ou)?;
            expect_eq("f32 -> s64 rz", &o.get::<i64>(4), &ol)?;
            // cvt.sat.f32.f32 of -0.0 may give either zero: compare zeros by value.
            let got: Vec<f32> = o
                .get::<f32>(5)
                .into_iter()
                .map(|v| if v == 0.0 { 0.0 } else { v })
                .collect();
            let want: Vec<f32> = of.iter().map(|&v| if v == 0.0 { 0.0 } else { v }).collect();
            expect_f32_bits(
                "s32 -> f32 (rn, rz as compiled: rn, rm, rp), saturate",
                &got,
                &want,
            )
        })
}

pub fn half_conversions() -> Case {
    let mut rng = Rng::new(27);
    let mut x: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        65504.0,
        65519.0,
        65520.0,
        -70000.0,
        f32::INFINITY,
        f32::NAN,
        6e-8,
        3e-8,
        2.9e-8,
        1e-5,
        3.3895314e38,
        3.4e38,
        1e-40,
        0.1,
        1.0 + 1.0 / 1024.0, // one f16 ulp above 1
        1.0 + 1.0 / 2048.0, // half an ulp: ties to even (1.0)
        1.0 + 3.0 / 2048.0, // 1.5 ulps: ties to even (1 + 2 ulps)
    ];
    while x.len() < 160 {
        x.push(rng.wide_f32(-30, 20));
    }
    let n = x.len();
    let h: Vec<u16> = x
        .iter()
        .map(|v| half::f16::from_f32(*v).to_bits())
        .collect();
    let bf: Vec<u16> = x
        .iter()
        .map(|v| half::bf16::from_f32(*v).to_bits())
        .collect();
    let back: Vec<f32> = x
        .iter()
        .flat_map(|v| {
            [
                half::f16::from_f32(*v).to_f32(),
                half::bf16::from_f32(*v).to_f32(),
            ]
        })
        .collect();
    let nan16 = |b: u16, exp_mask: u16| b & exp_mask == exp_mask && b & !(exp_mask | 0x8000) != 0;
    Case::clang("math.cu", "half_conversions")
        .grid([blocks(n, 64), 1, 1])
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<u16>(n)
        .zeros::<u16>(n)
        .zeros::<f32>(2 * n)
        .scalar(n as i32)
        .check(move |o| {
            // NaN payloads may differ: map every NaN to one pattern first.
            let canon = |v: Vec<u16>, m: u16| -> Vec<u16> {
                v.into_iter()
                    .map(|b| if nan16(b, m) { m | 1 } else { b })
                    .collect()
            };
            expect_eq(
                "f16 bits",
                &canon(o.get::<u16>(1), 0x7c00),
                &canon(h.clone(), 0x7c00),
            )?;
            expect_eq(
                "bf16 bits",
                &canon(o.get::<u16>(2), 0x7f80),
                &canon(bf.clone(), 0x7f80),
            )?;
            expect_f32_bits("back to f32", &o.get::<f32>(3), &back)
        })
}

// ---- warp.cu ----

/// Two warps: the first all positive, the second mixed.
fn warp_inputs(seed: u64) -> Vec<i32> {
    let mut rng = Rng::new(seed);
    let mut x = rng.vec_i32(32, 1, 100);
    x.extend(rng.vec_i32(32, -20, 150));
    x
}

fn ballot(warp: &[i32], pred: impl Fn(i32) -> bool) -> u32 {
    warp.iter()
        .enumerate()
        .filter(|(_, v)| pred(**v))
        .fold(0, |m, (l, _)| m | 1 << l)
}

pub fn vote_ballot() -> Case {
    let x = warp_inputs(28);
    let mut want = Vec::new();
    for warp in x.chunks(32) {
        let odd = ballot(warp, |v| v & 1 != 0);
        let gt50 = ballot(warp, |v| v > 50);
        for (l, &v) in warp.iter().enumerate() {
            want.extend([
                warp.iter().all(|v| *v > 0) as u32,
                warp.iter().any(|v| *v > 100) as u32,
                odd,
                if v & 1 != 0 { odd } else { 0 },
                gt50 & ((1u32 << l) - 1),
            ]);
        }
    }
    Case::clang("warp.cu", "vote_ballot")
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<u32>(5 * 64)
        .check(move |o| expect_eq("out", &o.get::<u32>(1), &want))
}

pub fn match_any_all() -> Case {
    let mut rng = Rng::new(29);
    let mut x: Vec<i32> = (0..32)
        .map(|_| [1, 2, 3, 77][(rng.u32() % 4) as usize])
        .collect();
    x.extend((0..32).map(|_| [5, 0x105, 9, 0x109, 5][(rng.u32() % 5) as usize]));
    let mut want = Vec::new();
    for warp in x.chunks(32) {
        let all_same = warp.iter().all(|v| v & 0x100 == warp[0] & 0x100);
        for &v in warp {
            want.extend([
                ballot(warp, |u| u == v),
                if all_same { u32::MAX } else { 0 },
                all_same as u32,
            ]);
        }
    }
    Case::clang("warp.cu", "match_any_all")
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<u32>(3 * 64)
        .check(move |o| expect_eq("out", &o.get::<u32>(1), &want))
}

pub fn bit_ops() -> Case {
    let n = 200;
    let mut rng = Rng::new(30);
    let mut x = rng.vec_u32(n);
    x[0] = 0;
    x[1] = u32::MAX;
    x[2] = 1;
    x[3] = 0x8000_0000;
    let mut want = Vec::new();
    for (i, &v) in x.iter().enumerate() {
        let i = i as u32;
        want.extend([
            v.count_ones(),
            v.leading_zeros(),
            v.reverse_bits(),
            (v >> (i & 31)) & 31,
            if v == 0 { 0 } else { v.trailing_zeros() + 1 },
            reference::prmt(v, !v, 0x3210u32.wrapping_add(i.wrapping_mul(0x1111)), None),
        ]);
        want.push((((v as u64) << 32) | v.wrapping_mul(2654435761) as u64).count_ones());
    }
    Case::clang("warp.cu", "bit_ops")
        .grid([blocks(n, 64), 1, 1])
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<u32>(7 * n)
        .scalar(n as i32)
        .check(move |o| expect_eq("out", &o.get::<u32>(1), &want))
}

pub fn redux_sync() -> Case {
    let x = Rng::new(31).vec_i32(96, i32::MIN, i32::MAX);
    let mut want = Vec::new();
    for warp in x.chunks(32) {
        let add = warp.iter().fold(0i32, |s, v| s.wrapping_add(*v));
        let min = *warp.iter().min().unwrap();
        let umax = warp.iter().map(|v| *v as u32).max().unwrap() as i32;
        let xor = warp.iter().fold(0, |s, v| s ^ v);
        for _ in warp {
            want.extend([add, min, umax, xor]);
        }
    }
    Case::clang("warp.cu", "redux_sync")
        .block([96, 1, 1])
        .buf(&x)
        .zeros::<i32>(4 * 96)
        .check(move |o| expect_eq("out", &o.get::<i32>(1), &want))
}

// ---- memory.cu ----

pub fn dyn_shared_reverse() -> Case {
    let n = 100;
    let x = Rng::new(32).vec_i32(3 * n, -1000, 1000);
    let want: Vec<i32> = x
        .chunks(n)
        .flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>())
        .collect();
    Case::clang("memory.cu", "dyn_shared_reverse")
        .grid([3, 1, 1])
        .block([128, 1, 1])
        .dynamic_shared(4 * n as u32)
        .buf(&x)
        .zeros::<i32>(3 * n)
        .scalar(n as i32)
        .check(move |o| expect_eq("out", &o.get::<i32>(1), &want))
}

pub fn const_poly() -> Case {
    let n = 150;
    let x = Rng::new(33).vec_f32(n, -2.0, 2.0);
    let coeffs = [0.5f32, -1.25, 2.0, 0.75, -0.125, 0.0625, 1.5, -0.25];
    let lut = [3, 1, 4, 1, 5, 9, 2, 6];
    let want: Vec<f32> = x
        .iter()
        .map(|&v| {
            (0..7)
                .rev()
                .fold(coeffs[7], |acc, k| acc.mul_add(v, coeffs[k]))
        })
        .collect();
    let want_lut: Vec<i32> = (0..n)
        .map(|i| lut[i & 7] * 10 + lut[(i >> 3) & 7])
        .collect();
    Case::clang("memory.cu", "const_poly")
        .grid([blocks(n, 64), 1, 1])
        .block([64, 1, 1])
        .set_global("poly_coeffs", &coeffs)
        .buf(&x)
        .zeros::<f32>(n)
        .zeros::<i32>(n)
        .scalar(n as i32)
        .check(move |o| {
            expect_f32_bits("poly", &o.get::<f32>(1), &want)?;
            expect_eq("lut", &o.get::<i32>(2), &want_lut)
        })
}

pub fn global_vars() -> Case {
    let n = 300;
    let want: Vec<i32> = (0..n).map(|i| [10, 20, 30, 40][i & 3] + i as i32).collect();
    let sum = (0..n as u32).sum::<u32>();
    Case::clang("memory.cu", "global_vars")
        .grid([blocks(n, 128), 1, 1])
        .block([128, 1, 1])
        .zeros::<i32>(n)
        .scalar(n as i32)
        .read_global("global_counter")
        .check(move |o| {
            expect_eq("out", &o.get::<i32>(0), &want)?;
            expect_eq("global_counter", &o.global::<u32>(0), &[sum])
        })
}

/// `|got - exact| <= bound(exact)` for every element (exact computed in f64).
fn expect_within(
    what: &str,
    got: &[f32],
    exact: &[f64],
    bound: impl Fn(f64) -> f64,
) -> Result<(), String> {
    let bad: Vec<String> = got
        .iter()
        .zip(exact)
        .enumerate()
        .filter(|(_, (g, e))| {
            // NaN errors fail too: only an error known to be within bounds passes.
            let error = (**g as f64 - **e).abs();
            error
                .partial_cmp(&bound(**e))
                .is_none_or(|o| o == std::cmp::Ordering::Greater)
        })
        .take(5)
        .map(|(i, (g, e))| {
            format!(
                "[{i}] got {g:e}, exact {e:e}, error {:e}",
                (*g as f64 - e).abs()
            )
        })
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!("{what}: {}", bad.join("; ")))
    }
}

/// The f32 ulp at `x`'s magnitude.
fn ulp(x: f64) -> f64 {
    let x = (x.abs() as f32).max(f32::MIN_POSITIVE);
    (f32::from_bits(x.to_bits() + 1) - x) as f64
}

/// Error bounds as the PTX ISA states them: sin/cos.approx absolute 2^-20.5
/// on [-pi, pi], ex2.approx 2 ulp, lg2.approx 2^-22 (absolute near 1,
/// relative elsewhere), rsqrt.approx relative 2^-22.9, rcp.approx 1 ulp;
/// `__builtin_sqrtf` compiles to sqrt.rn.f32, which must be exact.
pub fn approx_math() -> Case {
    let n = 256;
    let mut rng = Rng::new(34);
    let x: Vec<f32> = (0..n)
        .map(|i| {
            let v = rng.f32(-std::f32::consts::PI, std::f32::consts::PI);
            if i % 2 == 0 { v } else { v * 3.0 }
        })
        .map(|v| if v.abs() < 1e-3 { 0.5 } else { v })
        .collect();
    Case::clang("math.cu", "approx_math")
        .grid([2, 1, 1])
        .block([128, 1, 1])
        .buf(&x)
        .zeros::<f32>(7 * n)
        .scalar(n as i32)
        .check(move |o| {
            let got = o.get::<f32>(1);
            let col = |k: usize| got.iter().skip(k).step_by(7).copied().collect::<Vec<f32>>();
            let exact =
                |f: &dyn Fn(f64) -> f64| x.iter().map(|v| f(*v as f64)).collect::<Vec<f64>>();
            let in_pi: Vec<usize> = (0..n)
                .filter(|i| x[*i].abs() <= std::f32::consts::PI)
                .collect();
            let pick = |v: Vec<f32>| in_pi.iter().map(|i| v[*i]).collect::<Vec<f32>>();
            let pick64 = |v: Vec<f64>| in_pi.iter().map(|i| v[*i]).collect::<Vec<f64>>();
            let sin_bound = |_: f64| 2f64.powf(-20.5);
            expect_within(
                "sin.approx",
                &pick(col(0)),
                &pick64(exact(&f64::sin)),
                sin_bound,
            )?;
            expect_within(
                "cos.approx",
                &pick(col(1)),
                &pick64(exact(&f64::cos)),
                sin_bound,
            )?;
            expect_within("ex2.approx", &col(2), &exact(&f64::exp2), |e| 2.0 * ulp(e))?;
            expect_within(
                "lg2.approx",
                &col(3),
                &exact(&|v| (v.abs() + 0.25).log2()),
                |e| 2f64.powf(-22.0) * e.abs().max(1.0),
            )?;
            let sqrt: Vec<f32> = x.iter().map(|v| v.abs().sqrt()).collect();
            expect_f32_bits("sqrt.rn", &col(4), &sqrt)?;
            expect_within(
                "rsqrt.approx",
                &col(5),
                &exact(&|v| 1.0 / (v.abs() + 0.5).sqrt()),
                |e| 2f64.powf(-22.9) * e.abs(),
            )?;
            expect_within("rcp.approx", &col(6), &exact(&|v| 1.0 / v), ulp)
        })
}
