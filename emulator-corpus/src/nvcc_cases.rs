//! Kernels compiled by nvcc 13 at test time (`kernels/nvcc/kernels.cu`).

use super::cuda_cases::matmul_reference;
use super::harness::{Case, Rng, expect_eq, expect_f32_bits, expect_f32_ulps, expect_f64_ulps};

const FILE: &str = "kernels.cu";

pub fn nv_vector_add() -> Case {
    let n = 1000;
    let mut rng = Rng::new(60);
    let a = rng.vec_f32(n, -100.0, 100.0);
    let b = rng.vec_f32(n, -100.0, 100.0);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    Case::nvcc(FILE, "nv_vector_add")
        .grid([4, 1, 1])
        .block([256, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<f32>(n)
        .scalar(n as i32)
        .check(move |o| expect_f32_bits("c", &o.get::<f32>(2), &want))
}

pub fn nv_reduce() -> Case {
    let n = 1000;
    let x = Rng::new(61).vec_i32(n, -1 << 20, 1 << 20);
    let want: Vec<i32> = x
        .chunks(256)
        .map(|c| c.iter().fold(0i32, |s, v| s.wrapping_add(*v)))
        .collect();
    Case::nvcc(FILE, "nv_reduce")
        .grid([4, 1, 1])
        .block([256, 1, 1])
        .buf(&x)
        .zeros::<i32>(4)
        .scalar(n as i32)
        .check(move |o| expect_eq("partial", &o.get::<i32>(1), &want))
}

pub fn nv_matmul() -> Case {
    let n = 48;
    let mut rng = Rng::new(62);
    let a = rng.vec_f32(n * n, -1.0, 1.0);
    let b = rng.vec_f32(n * n, -1.0, 1.0);
    let want = matmul_reference(&a, &b, n);
    Case::nvcc(FILE, "nv_matmul")
        .grid([(n / 16) as u32, (n / 16) as u32, 1])
        .block([16, 16, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<f32>(n * n)
        .scalar(n as i32)
        .check(move |o| expect_f32_bits("c", &o.get::<f32>(2), &want))
}

pub fn nv_histogram() -> Case {
    let mut rng = Rng::new(63);
    let data: Vec<u32> = (0..3000).map(|_| rng.u32() % 1000).collect();
    let mut want = vec![0u32; 64];
    for d in &data {
        want[(d % 64) as usize] += 1;
    }
    Case::nvcc(FILE, "nv_histogram")
        .grid([4, 1, 1])
        .block([128, 1, 1])
        .buf(&data)
        .zeros::<u32>(64)
        .scalar(data.len() as i32)
        .check(move |o| expect_eq("bins", &o.get::<u32>(1), &want))
}

/// libdevice's full-precision functions: CUDA documents 2 ulp for sinf,
/// cosf, expf and tanhf, 1 ulp for logf, and sqrtf (nvcc emits sqrt.rn.f32)
/// is correctly rounded. One more ulp covers the host libm's own error.
pub fn nv_math() -> Case {
    let n = 256;
    let mut rng = Rng::new(64);
    let mut x = rng.vec_f32(n, -10.0, 10.0);
    x[..6].copy_from_slice(&[0.0, -0.0, 1.0, std::f32::consts::PI, 88.0, -87.0]);
    let mut want = Vec::new();
    for &v in &x {
        want.extend([
            v.sin(),
            v.cos(),
            v.exp(),
            (v.abs() + 1.0).ln(),
            v.abs().sqrt(),
            v.tanh(),
        ]);
    }
    Case::nvcc(FILE, "nv_math")
        .grid([2, 1, 1])
        .block([128, 1, 1])
        .buf(&x)
        .zeros::<f32>(6 * n)
        .scalar(n as i32)
        .check(move |o| {
            let got = o.get::<f32>(1);
            let column =
                |v: &[f32], k: usize| v.iter().skip(k).step_by(6).copied().collect::<Vec<f32>>();
            for (k, (name, ulps)) in [
                ("sinf", 3),
                ("cosf", 3),
                ("expf", 3),
                ("logf", 2),
                ("sqrtf", 0),
                ("tanhf", 3),
            ]
            .iter()
            .enumerate()
            {
                expect_f32_ulps(name, &column(&got, k), &column(&want, k), *ulps)?;
            }
            Ok(())
        })
}

pub fn nv_warp_ops() -> Case {
    let mut rng = Rng::new(65);
    let mut x = rng.vec_i32(96, -50, 50);
    x[32..64].iter_mut().for_each(|v| *v = v.abs() + 1); // warp 1: all positive
    x[70] = 7;
    x[64..96]
        .iter_mut()
        .filter(|v| **v == 0)
        .for_each(|v| *v = 1);
    x[80] = 0;
    let mut want = Vec::new();
    for warp in x.chunks(32) {
        let sum = warp.iter().fold(0i32, |s, v| s.wrapping_add(*v)) as u32;
        let ballot = warp
            .iter()
            .enumerate()
            .filter(|(_, v)| **v > 0)
            .fold(0u32, |m, (l, _)| m | 1 << l);
        let any7 = warp.contains(&7) as u32;
        let all_nonzero = warp.iter().all(|v| *v != 0) as u32;
        for &v in warp {
            want.extend([
                sum,
                ballot,
                ballot.count_ones(),
                if ballot == 0 {
                    0
                } else {
                    ballot.trailing_zeros() + 1
                },
                (v as u32).reverse_bits(),
                v.leading_zeros() + any7 * 100 + all_nonzero * 1000,
            ]);
        }
    }
    Case::nvcc(FILE, "nv_warp_ops")
        .block([96, 1, 1])
        .buf(&x)
        .zeros::<u32>(6 * 96)
        .check(move |o| expect_eq("out", &o.get::<u32>(1), &want))
}

/// CUDA's documented bounds plus one ulp for the host libm.
pub fn nv_double_math() -> Case {
    let n = 128;
    let mut rng = Rng::new(66);
    let mut x: Vec<f64> = (0..n)
        .map(|_| rng.f32(-20.0, 20.0) as f64 + rng.f32(0.0, 1.0) as f64 * 1e-7)
        .collect();
    x[..6].copy_from_slice(&[0.0, -0.0, 1e6 + 0.25, -3.0e7, 1e15, std::f64::consts::PI]);
    let mut want = Vec::new();
    for &v in &x {
        want.extend([
            v.sin(),
            v.cos(),
            (v / 64.0).exp(),
            (v.abs() + 1.0).ln(),
            (v.abs() + 0.5).powf(1.25),
        ]);
    }
    Case::nvcc("double_math.cu", "nv_double_math")
        .grid([2, 1, 1])
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<f64>(5 * n)
        .scalar(n as i32)
        .check(move |o| {
            let got = o.get::<f64>(1);
            let column =
                |v: &[f64], k: usize| v.iter().skip(k).step_by(5).copied().collect::<Vec<f64>>();
            for (k, (name, ulps)) in [("sin", 3), ("cos", 3), ("exp", 2), ("log", 2), ("pow", 3)]
                .iter()
                .enumerate()
            {
                expect_f64_ulps(name, &column(&got, k), &column(&want, k), *ulps)?;
            }
            Ok(())
        })
}
