//! HIP kernels compiled by clang-19 for gfx1100 (wave32 and wave64 builds)
//! run on the emulator through the public API; results are checked
//! against CPU references.

mod support;

use support::{Arg, Gpu, close, rng};

fn each_wave_size(f: impl Fn(bool)) {
    f(false);
    f(true);
}

#[test]
fn vadd_and_saxpy() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("basic", w64) else {
            return;
        };
        let n = 1000usize;
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
        let (pa, pb, pc) = (g.upload(&a), g.upload(&b), g.zeros(4 * n));
        g.launch(
            "vadd",
            [4, 1, 1],
            [256, 1, 1],
            0,
            &[Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(pc), Arg::I32(n as i32)],
        )
        .unwrap();
        let c: Vec<f32> = g.download(pc, n);
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "wave64={w64} vadd[{i}]");
        }
        // Grid-stride loop, 3 workgroups of 64 over 1000 elements.
        let py = g.upload(&b);
        g.launch(
            "saxpy_grid_stride",
            [3, 1, 1],
            [64, 1, 1],
            0,
            &[
                Arg::F32(1.5),
                Arg::Ptr(pa),
                Arg::Ptr(py),
                Arg::I32(n as i32),
            ],
        )
        .unwrap();
        let y: Vec<f32> = g.download(py, n);
        for i in 0..n {
            assert_eq!(y[i], 1.5f32.mul_add(a[i], b[i]), "wave64={w64} saxpy[{i}]");
        }
    });
}

#[test]
fn integer_math() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("basic", w64) else {
            return;
        };
        let n = 300usize;
        let mut r = rng(7);
        let a: Vec<i32> = (0..n).map(|_| (r() as i32) >> (r() % 24)).collect();
        let b: Vec<i32> = (0..n)
            .map(|i| {
                if i % 17 == 0 {
                    0
                } else {
                    (r() as i32) >> (r() % 28)
                }
            })
            .collect();
        let (pa, pb) = (g.upload(&a), g.upload(&b));
        let (pq, pr, pu, pw) = (
            g.zeros(4 * n),
            g.zeros(4 * n),
            g.zeros(4 * n),
            g.zeros(8 * n),
        );
        g.launch(
            "int_math",
            [3, 1, 1],
            [128, 1, 1],
            0,
            &[
                Arg::Ptr(pa),
                Arg::Ptr(pb),
                Arg::Ptr(pq),
                Arg::Ptr(pr),
                Arg::Ptr(pu),
                Arg::Ptr(pw),
                Arg::I32(n as i32),
            ],
        )
        .unwrap();
        let (q, rr, u, w): (Vec<i32>, Vec<i32>, Vec<u32>, Vec<i64>) = (
            g.download(pq, n),
            g.download(pr, n),
            g.download(pu, n),
            g.download(pw, n),
        );
        for i in 0..n {
            let (x, y) = (a[i], b[i]);
            assert_eq!(
                q[i],
                if y != 0 { x.wrapping_div(y) } else { 0 },
                "wave64={w64} q[{i}] {x}/{y}"
            );
            assert_eq!(
                rr[i],
                if y != 0 { x.wrapping_rem(y) } else { 0 },
                "wave64={w64} r[{i}]"
            );
            let (ux, uy) = (x as u32, y as u32 | 1);
            let want = (ux / uy)
                ^ (ux << (y & 31))
                ^ (ux >> 3)
                ^ ux.count_ones()
                ^ (ux | 1).leading_zeros();
            assert_eq!(u[i], want, "wave64={w64} u[{i}]");
            let wide = (x as i64)
                .wrapping_mul(y as i64)
                .wrapping_add((x as i64) << 33)
                .wrapping_sub((y as i64) >> 2);
            assert_eq!(w[i], wide, "wave64={w64} w[{i}]");
        }
    });
}

#[test]
fn float_math() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("basic", w64) else {
            return;
        };
        let n = 256usize;
        let mut r = rng(11);
        let unit = |r: &mut dyn FnMut() -> u64| (r() >> 40) as f32 / (1u64 << 24) as f32;
        let a: Vec<f32> = (0..n).map(|_| (unit(&mut r) - 0.5) * 200.0).collect();
        let b: Vec<f32> = (0..n)
            .map(|i| {
                if i == 5 {
                    0.0
                } else {
                    (unit(&mut r) - 0.3) * 50.0
                }
            })
            .collect();
        let (pa, pb, po) = (g.upload(&a), g.upload(&b), g.zeros(32 * n));
        g.launch(
            "float_math",
            [2, 1, 1],
            [128, 1, 1],
            0,
            &[Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(po), Arg::I32(n as i32)],
        )
        .unwrap();
        let o: Vec<f32> = g.download(po, 8 * n);
        for i in 0..n {
            let (x, y) = (a[i], b[i]);
            let at = |k: usize| o[8 * i + k];
            // IEEE division through v_div_scale/v_rcp/v_div_fmas/v_div_fixup: correctly rounded.
            assert!(
                close(at(0), x / y, 0.0) || (at(0).is_infinite() && (x / y).is_infinite()),
                "wave64={w64} {x}/{y}: {}",
                at(0)
            );
            assert!(
                close(at(1), x.abs().sqrt(), 2e-7),
                "sqrt {} vs {}",
                at(1),
                x.abs().sqrt()
            );
            assert!(close(at(2), (y * 0.25).exp2(), 2e-7), "exp2");
            assert!(close(at(3), (x.abs() + 1.0).log2(), 2e-7), "log2");
            assert_eq!(at(4), x.mul_add(y, 1.5), "fma");
            let conv = ((x * 3.7) as i32) as f32 + ((y.abs() * 100.0) as u32) as f32;
            assert_eq!(at(5), conv, "conversions");
            let mm = x.min(y) - x.max(-y) + x.floor() + y.ceil() + (x * 1.5).trunc();
            assert!(close(at(6), mm, 1e-6), "min/max/round {} vs {mm}", at(6));
            let rr = (1.0 / y) * 0.5 + 1.0 / (y.abs() + 1.0).sqrt();
            assert!(
                close(at(7), rr, 1e-6) || y == 0.0,
                "rcp/rsq {} vs {rr}",
                at(7)
            );
        }
    });
}

#[test]
fn double_math() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("basic", w64) else {
            return;
        };
        let n = 100usize;
        let a: Vec<f64> = (0..n).map(|i| (i as f64 - 40.5) * 1.37).collect();
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.731) - 20.0).collect();
        let (pa, pb, po) = (g.upload(&a), g.upload(&b), g.zeros(24 * n));
        g.launch(
            "double_math",
            [1, 1, 1],
            [128, 1, 1],
            0,
            &[Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(po), Arg::I32(n as i32)],
        )
        .unwrap();
        let o: Vec<f64> = g.download(po, 3 * n);
        for i in 0..n {
            let (x, y) = (a[i], b[i]);
            let ulp = |u: f64, v: f64| (u - v).abs() <= v.abs() * 2.3e-16;
            assert!(
                ulp(o[3 * i], x / y),
                "wave64={w64} {x}/{y} = {} not {}",
                o[3 * i],
                x / y
            );
            assert_eq!(o[3 * i + 1], x.mul_add(y, 0.25) + (x as i32) as f64, "fma");
            assert!(
                ulp(o[3 * i + 2], y.abs().sqrt()),
                "sqrt {} vs {}",
                o[3 * i + 2],
                y.abs().sqrt()
            );
        }
    });
}

#[test]
fn out_of_bounds_store_faults_precisely() {
    let Some(mut g) = Gpu::load("basic", false) else {
        return;
    };
    let p = g.zeros(4 * 64);
    let err = g
        .launch(
            "oob_write",
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Ptr(p), Arg::I32(60)],
        )
        .unwrap_err();
    // Lanes 0..3 write p[60..63]; lane 4 writes p[64], the first byte past the buffer.
    assert_eq!(err.lane, Some(4), "{err}");
    assert_eq!(err.addr, Some(p + 256), "{err}");
    assert_eq!(err.wave, Some(0));
    let text = err.to_string();
    assert!(
        text.contains("oob_write") && text.contains("lane 4") && text.contains("global_store_b32"),
        "{text}"
    );
    assert!(matches!(
        err.kind,
        prlx_rdna::FaultKind::Memory { write: true, .. }
    ));
    let where_ = format!("0 bytes past the end of the 256-byte allocation at {p:#x}");
    assert_eq!(err.detail.as_deref(), Some(where_.as_str()), "{err}");
    assert!(text.contains(&where_), "{text}");
}

#[test]
fn lds_reduction_transpose_histogram_atomics() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("lds", w64) else {
            return;
        };
        // block_sum: 5 workgroups of 256, tree reduction in LDS with barriers, atomic float add.
        let n = 1200usize;
        let a: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 4.0).collect();
        let (pa, pout, ptot) = (g.upload(&a), g.zeros(4 * 5), g.zeros(4));
        g.launch(
            "block_sum",
            [5, 1, 1],
            [256, 1, 1],
            0,
            &[
                Arg::Ptr(pa),
                Arg::Ptr(pout),
                Arg::Ptr(ptot),
                Arg::I32(n as i32),
            ],
        )
        .unwrap();
        let out: Vec<f32> = g.download(pout, 5);
        for (b, v) in out.iter().enumerate() {
            let want: f32 = a.iter().skip(256 * b).take(256).sum();
            assert_eq!(*v, want, "wave64={w64} block {b}");
        }
        assert_eq!(g.download::<f32>(ptot, 1)[0], a.iter().sum::<f32>());

        // transpose: 2D grid and block (work-item ids y, workgroup ids y).
        let (w, h) = (37usize, 29usize);
        let m: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
        let (pm, pt) = (g.upload(&m), g.zeros(4 * w * h));
        g.launch(
            "transpose",
            [3, 2, 1],
            [16, 16, 1],
            0,
            &[
                Arg::Ptr(pm),
                Arg::Ptr(pt),
                Arg::I32(w as i32),
                Arg::I32(h as i32),
            ],
        )
        .unwrap();
        let t: Vec<f32> = g.download(pt, w * h);
        for y in 0..h {
            for x in 0..w {
                assert_eq!(
                    t[x * h + y],
                    m[y * w + x],
                    "wave64={w64} transpose ({x},{y})"
                );
            }
        }

        // histogram: dynamic LDS, LDS atomics, global atomics.
        let nbins = 64usize;
        let vals: Vec<u32> = (0..5000u32)
            .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
            .collect();
        let (pv, pbins) = (g.upload(&vals), g.zeros(4 * nbins));
        g.launch(
            "histogram",
            [4, 1, 1],
            [128, 1, 1],
            (4 * nbins) as u32,
            &[
                Arg::Ptr(pv),
                Arg::Ptr(pbins),
                Arg::I32(5000),
                Arg::I32(nbins as i32),
            ],
        )
        .unwrap();
        let bins: Vec<u32> = g.download(pbins, nbins);
        let mut want = vec![0u32; nbins];
        for v in &vals {
            want[(*v % nbins as u32) as usize] += 1;
        }
        assert_eq!(bins, want, "wave64={w64} histogram");

        // atomics: add, max, compare-and-swap loop.
        let xs: Vec<i32> = (0..700).map(|i| (i * 37 % 1001) - 300).collect();
        let (px, pc, pmax, pcas) = (g.upload(&xs), g.zeros(4), g.upload(&[i32::MIN]), g.zeros(4));
        g.launch(
            "atomics",
            [3, 1, 1],
            [256, 1, 1],
            0,
            &[
                Arg::Ptr(pc),
                Arg::Ptr(pmax),
                Arg::Ptr(pcas),
                Arg::Ptr(px),
                Arg::I32(700),
            ],
        )
        .unwrap();
        assert_eq!(g.download::<i32>(pc, 1)[0], 700);
        assert_eq!(g.download::<i32>(pmax, 1)[0], *xs.iter().max().unwrap());
        let sum = xs.iter().fold(0u32, |s, &x| s.wrapping_add(x as u32));
        assert_eq!(g.download::<u32>(pcas, 1)[0], sum, "wave64={w64} CAS loop");
    });
}

#[test]
fn wave_level_operations() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("wave", w64) else {
            return;
        };
        let ws = if w64 { 64 } else { 32 };
        let n = 256usize;
        let nw = n / ws;
        let xs: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 1000 - 500).collect();
        let px = g.upload(&xs);

        let po = g.zeros(4 * nw);
        g.launch(
            "wave_reduce",
            [2, 1, 1],
            [128, 1, 1],
            0,
            &[Arg::Ptr(px), Arg::Ptr(po)],
        )
        .unwrap();
        let sums: Vec<i32> = g.download(po, nw);
        for w in 0..nw {
            assert_eq!(
                sums[w],
                xs[w * ws..(w + 1) * ws].iter().sum::<i32>(),
                "wave64={w64} wave {w}"
            );
        }

        let fx: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let (pf, prot) = (g.upload(&fx), g.zeros(4 * n));
        g.launch(
            "wave_rotate",
            [2, 1, 1],
            [128, 1, 1],
            0,
            &[Arg::Ptr(pf), Arg::Ptr(prot)],
        )
        .unwrap();
        let rot: Vec<f32> = g.download(prot, n);
        for i in 0..n {
            let base = i / ws * ws;
            assert_eq!(
                rot[i],
                fx[base + (i - base + 1) % ws],
                "wave64={w64} rotate {i}"
            );
        }

        let (pm, pcnt) = (g.zeros(8 * nw), g.zeros(4 * nw));
        g.launch(
            "ballots",
            [2, 1, 1],
            [128, 1, 1],
            0,
            &[Arg::Ptr(px), Arg::Ptr(pm), Arg::Ptr(pcnt)],
        )
        .unwrap();
        let masks: Vec<u64> = g.download(pm, nw);
        let counts: Vec<i32> = g.download(pcnt, nw);
        for w in 0..nw {
            let want = (0..ws)
                .filter(|&l| xs[w * ws + l] > 0)
                .fold(0u64, |m, l| m | 1 << l);
            assert_eq!(masks[w], want, "wave64={w64} ballot {w}");
            assert_eq!(counts[w], want.count_ones() as i32);
        }

        let pd = g.zeros(4 * 5 * n);
        g.launch(
            "dpp_ops",
            [2, 1, 1],
            [128, 1, 1],
            0,
            &[Arg::Ptr(px), Arg::Ptr(pd)],
        )
        .unwrap();
        let d: Vec<i32> = g.download(pd, 5 * n);
        for i in 0..n {
            let l = i % ws;
            let base = i - l;
            let v = |lane: usize| xs[base + lane];
            assert_eq!(
                d[5 * i],
                if l % 16 == 0 { 0 } else { v(l - 1) },
                "wave64={w64} row_shr:1 lane {i}"
            );
            assert_eq!(d[5 * i + 1], v(l ^ 1), "quad_perm lane {i}");
            assert_eq!(
                d[5 * i + 2],
                v((l & !15) | (15 - l % 16)),
                "row_mirror lane {i}"
            );
            assert_eq!(d[5 * i + 3], v(l ^ 1), "ds_swizzle SWAP,1 lane {i}");
            assert_eq!(
                d[5 * i + 4],
                v(0) + v(3),
                "readfirstlane + readlane lane {i}"
            );
        }

        let starts: Vec<u32> = (1..=n as u32).collect();
        let (ps, pst) = (g.upload(&starts), g.zeros(4 * n));
        g.launch(
            "divergent_loop",
            [2, 1, 1],
            [128, 1, 1],
            0,
            &[Arg::Ptr(ps), Arg::Ptr(pst)],
        )
        .unwrap();
        let steps: Vec<u32> = g.download(pst, n);
        for i in 0..n {
            let (mut x, mut k) = (starts[i], 0u32);
            while x != 1 && k < 1000 {
                x = if x & 1 == 1 { 3 * x + 1 } else { x / 2 };
                k += 1;
            }
            assert_eq!(
                steps[i],
                if k & 1 == 1 { k } else { k + 1_000_000 },
                "wave64={w64} collatz {}",
                starts[i]
            );
        }
    });
}

#[test]
fn kernels_on_the_real_hip_headers_and_device_libraries() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("hip_api", w64) else {
            return;
        };
        // ocml math, __shfl_xor, __ballot.
        let n = 200usize;
        let a: Vec<f32> = (0..n).map(|i| (i as f32 - 97.0) * 0.173).collect();
        let (pa, po) = (g.upload(&a), g.zeros(16 * n));
        g.launch(
            "math_lib",
            [4, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Ptr(pa), Arg::Ptr(po), Arg::I32(n as i32)],
        )
        .unwrap_or_else(|f| panic!("{f}"));
        let o: Vec<f32> = g.download(po, 4 * n);
        let ws = if w64 { 64 } else { 32 };
        for i in 0..n {
            let x = a[i];
            // ocml's sinf/cosf are within ~1 ulp each; their sum may cancel.
            let sc = x.sin() + x.cos();
            assert!(
                (o[4 * i] - sc).abs() <= 4e-7,
                "wave64={w64} sin+cos({x}) = {} not {sc}",
                o[4 * i]
            );
            assert!(
                close(o[4 * i + 1], (x * 0.1).exp() + (x.abs() + 1.0).ln(), 2e-6),
                "exp+log({x})"
            );
            assert!(
                close(o[4 * i + 2], x.abs().powf(1.5) + x.abs().sqrt(), 2e-6),
                "pow+sqrt({x})"
            );
            // The block of 64 holds 1 or 2 waves; lanes past n are inactive, not in the ballot.
            let base = i / ws * ws;
            let pos = (base..(base + ws).min(n)).filter(|&j| a[j] > 0.0).count();
            assert_eq!(
                o[4 * i + 3],
                a[i ^ 1] + pos as f32,
                "wave64={w64} shfl_xor+ballot lane {i}"
            );
        }
        // 2D blocks and grid, blockDim from the hidden arguments, __syncthreads, atomicAdd.
        let (w, h) = (45usize, 21usize);
        let m: Vec<i32> = (0..(w * h) as i32).map(|v| v % 97 - 40).collect();
        let (pm, ps) = (g.upload(&m), g.zeros(4));
        g.launch(
            "block_reduce_2d",
            [3, 2, 1],
            [16, 16, 1],
            0,
            &[
                Arg::Ptr(pm),
                Arg::Ptr(ps),
                Arg::I32(w as i32),
                Arg::I32(h as i32),
            ],
        )
        .unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(
            g.download::<i32>(ps, 1)[0],
            m.iter().sum::<i32>(),
            "wave64={w64} 2D reduction"
        );
        // f64 library code.
        let d: Vec<f64> = (0..64).map(|i| i as f64 * 0.75 - 20.0).collect();
        let (pd, pdo) = (g.upload(&d), g.zeros(8 * 64));
        g.launch(
            "double_lib",
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Ptr(pd), Arg::Ptr(pdo), Arg::I32(64)],
        )
        .unwrap_or_else(|f| panic!("{f}"));
        let r: Vec<f64> = g.download(pdo, 64);
        for i in 0..64 {
            let want = d[i].abs().sqrt() / (d[i] + 3.0) + (d[i] * 0.5).floor();
            assert!(
                (r[i] - want).abs() <= want.abs() * 1e-15,
                "wave64={w64} double_lib[{i}] {} vs {want}",
                r[i]
            );
        }
    });
}

#[test]
fn unoptimized_builds_with_calls_and_a_scratch_stack() {
    // -O0 code keeps locals on the scratch stack, reaches them through flat
    // pointers in the private aperture, and calls functions (s_swappc_b64).
    let Some(mut g) = Gpu::load_opt("lds", false, "-O0") else {
        return;
    };
    let n = 600usize;
    let a: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let (pa, pout, ptot) = (g.upload(&a), g.zeros(4 * 3), g.zeros(4));
    g.launch(
        "block_sum",
        [3, 1, 1],
        [256, 1, 1],
        0,
        &[
            Arg::Ptr(pa),
            Arg::Ptr(pout),
            Arg::Ptr(ptot),
            Arg::I32(n as i32),
        ],
    )
    .unwrap_or_else(|f| panic!("{f}"));
    let out: Vec<f32> = g.download(pout, 3);
    for (b, v) in out.iter().enumerate() {
        assert_eq!(
            *v,
            a.iter().skip(256 * b).take(256).sum::<f32>(),
            "-O0 block {b}"
        );
    }
    let Some(mut g) = Gpu::load_opt("wave", true, "-O0") else {
        return;
    };
    let xs: Vec<i32> = (0..128).map(|i| i * 3 - 100).collect();
    let (px, po) = (g.upload(&xs), g.zeros(4 * 2));
    g.launch(
        "wave_reduce",
        [1, 1, 1],
        [128, 1, 1],
        0,
        &[Arg::Ptr(px), Arg::Ptr(po)],
    )
    .unwrap_or_else(|f| panic!("{f}"));
    let sums: Vec<i32> = g.download(po, 2);
    assert_eq!(
        sums,
        vec![xs[..64].iter().sum::<i32>(), xs[64..].iter().sum::<i32>()],
        "-O0 wave64 shuffles"
    );
}

#[test]
fn module_variables_through_pc_relative_addresses() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("basic", w64) else {
            return;
        };
        let (counter, size) = g
            .dev
            .symbol_address(g.module, "g_counter")
            .expect("g_counter symbol");
        assert_eq!(size, 4);
        g.dev.write(counter, &5i32.to_le_bytes()).unwrap();
        let po = g.zeros(4 * 96);
        g.launch("globals", [3, 1, 1], [32, 1, 1], 0, &[Arg::Ptr(po)])
            .unwrap_or_else(|f| panic!("{f}"));
        let out: Vec<f32> = g.download(po, 96);
        let coef = [1.5f32, -2.0, 3.25, 4.0];
        for (i, v) in out.iter().enumerate() {
            assert_eq!(*v, coef[i & 3] * i as f32, "wave64={w64} out[{i}]");
        }
        assert_eq!(
            g.download::<i32>(counter, 1)[0],
            5 + 96,
            "wave64={w64} g_counter"
        );
        assert!(
            !g.code.relocations.is_empty(),
            "table_ptr needs a relocation"
        );
        let pv = g.zeros(4 * 32);
        g.launch("via_pointer", [1, 1, 1], [32, 1, 1], 0, &[Arg::Ptr(pv)])
            .unwrap_or_else(|f| panic!("{f}"));
        let v: Vec<i32> = g.download(pv, 32);
        for (i, x) in v.iter().enumerate() {
            assert_eq!(*x, [20, 30, 40][i % 3], "wave64={w64} via_pointer[{i}]");
        }
    });
}

#[test]
fn half_precision_packed_and_16_bit_integer_kernels() {
    use half::f16;
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("half", w64) else {
            return;
        };
        let n = 300usize;
        let fx: Vec<f32> = (0..n).map(|i| (i as f32 - 150.0) * 0.37).collect();
        let fy: Vec<f32> = (0..n).map(|i| (i % 17) as f32 * 0.5 - 3.0).collect();
        let hx: Vec<u16> = fx.iter().map(|&v| f16::from_f32(v).to_bits()).collect();
        let hy: Vec<u16> = fy.iter().map(|&v| f16::from_f32(v).to_bits()).collect();
        let hf = |b: u16| f16::from_bits(b).to_f32() as f64;
        let round = |v: f64| f16::from_f64(v).to_bits();
        // haxpy: y = a*x + y (contracted to one f16 fma).
        let (px, py) = (g.upload(&hx), g.upload(&hy));
        let a = f16::from_f32(1.25).to_bits();
        g.launch(
            "haxpy",
            [5, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Ptr(px), Arg::Ptr(py), Arg::U16(a), Arg::I32(n as i32)],
        )
        .unwrap_or_else(|f| panic!("{f}"));
        let y: Vec<u16> = g.download(py, n);
        for i in 0..n {
            let want = round(hf(a) * hf(hx[i]) + hf(hy[i]));
            assert_eq!(
                y[i],
                want,
                "wave64={w64} haxpy[{i}]: {} vs {}",
                hf(y[i]),
                hf(want)
            );
        }
        // h2ops: y = fma(x, y, 0.5) on both halves (v_pk_fma_f16).
        let (px2, py2) = (g.upload(&hx), g.upload(&hy));
        g.launch(
            "h2ops",
            [3, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Ptr(px2), Arg::Ptr(py2), Arg::I32((n / 2) as i32)],
        )
        .unwrap_or_else(|f| panic!("{f}"));
        let y2: Vec<u16> = g.download(py2, n);
        for i in 0..n {
            assert_eq!(
                y2[i],
                round(hf(hx[i]) * hf(hy[i]) + 0.5),
                "wave64={w64} h2ops[{i}]"
            );
        }
        // mixed: f16 -> f32 with integer conversions (v_fma_mix_f32, 16-bit multiplies).
        let po = g.zeros(4 * n);
        g.launch(
            "mixed",
            [5, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Ptr(px), Arg::Ptr(po), Arg::I32(n as i32)],
        )
        .unwrap_or_else(|f| panic!("{f}"));
        let m: Vec<f32> = g.download(po, n);
        for i in 0..n {
            let want = hf(hx[i]) as f32 * 2.0 + (i as i16) as f32 + ((i * 7) as u8) as f32;
            assert!(
                close(m[i], want, 1e-6),
                "wave64={w64} mixed[{i}] {} vs {want}",
                m[i]
            );
        }
        // shorts: 16-bit integer arithmetic.
        let xs: Vec<i16> = (0..n as i32)
            .map(|i| (i * 977 % 4001 - 2000) as i16)
            .collect();
        let (pxs, pys) = (g.upload(&xs), g.zeros(2 * n));
        g.launch(
            "shorts",
            [5, 1, 1],
            [64, 1, 1],
            0,
            &[
                Arg::Ptr(pxs),
                Arg::Ptr(pys),
                Arg::U16(1234),
                Arg::I32(n as i32),
            ],
        )
        .unwrap_or_else(|f| panic!("{f}"));
        let ys: Vec<i16> = g.download(pys, n);
        let k16 = 1234u16;
        for i in 0..n {
            let x = xs[i];
            let want = (x.wrapping_mul(k16 as i16) as i32 + (x >> 2) as i32
                - (k16 / 3) as i16 as i32) as i16;
            assert_eq!(ys[i], want, "wave64={w64} shorts[{i}]");
        }
    });
}

#[test]
fn clocks_advance() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("wave", w64) else {
            return;
        };
        let po = g.zeros(24);
        g.launch("clocks", [1, 1, 1], [32, 1, 1], 0, &[Arg::Ptr(po)])
            .unwrap_or_else(|f| panic!("{f}"));
        let v: Vec<u64> = g.download(po, 3);
        assert!(
            v[0] > 0 && v[0] < 1 << 20,
            "wave64={w64} cycle counter delta {}",
            v[0]
        );
        assert!(v[1] > 0, "wave64={w64} realtime delta {}", v[1]);
    });
}

#[test]
fn recursion_on_a_dynamic_stack() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("basic", w64) else {
            return;
        };
        assert!(g.code.kernel("recursive").unwrap().uses_dynamic_stack);
        let po = g.zeros(4 * 64);
        g.launch("recursive", [1, 1, 1], [64, 1, 1], 0, &[Arg::Ptr(po)])
            .unwrap_or_else(|f| panic!("{f}"));
        let fib = |n: i32| {
            let (mut a, mut b) = (0, 1);
            for _ in 0..n {
                (a, b) = (b, a + b);
            }
            a
        };
        let out: Vec<i32> = g.download(po, 64);
        for (i, v) in out.iter().enumerate() {
            assert_eq!(*v, fib(i as i32 % 12), "wave64={w64} fib({})", i % 12);
        }
    });
}

#[test]
fn double_precision_trigonometry_with_large_arguments() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("hip_api", w64) else {
            return;
        };
        let xs: Vec<f64> = (0..64)
            .map(|i| match i % 4 {
                0 => i as f64 * 0.37,
                1 => 1.0e6 + i as f64,
                2 => 3.0e15 * (i as f64 + 1.0),
                _ => -1.0e300 / (i as f64),
            })
            .collect();
        let (px, po) = (g.upload(&xs), g.zeros(8 * 64));
        g.launch(
            "double_trig",
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[Arg::Ptr(px), Arg::Ptr(po), Arg::I32(64)],
        )
        .unwrap_or_else(|f| panic!("{f}"));
        let out: Vec<f64> = g.download(po, 64);
        for (i, x) in xs.iter().enumerate() {
            let want = x.sin() + 2.0 * x.cos();
            assert!(
                (out[i] - want).abs() <= 1e-14 * want.abs().max(1.0),
                "wave64={w64} sin+2cos({x}) = {} not {want}",
                out[i]
            );
        }
    });
}

#[test]
fn resident_workgroups_make_progress_for_each_other() {
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("lds", w64) else {
            return;
        };
        let (flag, out) = (g.zeros(4), g.zeros(4));
        let stats = g
            .launch(
                "handoff",
                [8, 1, 1],
                [64, 1, 1],
                0,
                &[Arg::Ptr(flag), Arg::Ptr(out)],
            )
            .unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(g.download::<i32>(out, 1)[0], 42, "wave64={w64}");
        assert_eq!(stats.workgroups, 8);
    });
}

#[test]
fn wmma_matrix_multiply_accumulate() {
    use half::f16;
    each_wave_size(|w64| {
        let Some(mut g) = Gpu::load("wmma", w64) else {
            return;
        };
        let a: Vec<u16> = (0..256)
            .map(|i| f16::from_f32(((i * 7) % 13) as f32 * 0.25 - 1.0).to_bits())
            .collect();
        let b: Vec<u16> = (0..256)
            .map(|i| f16::from_f32(((i * 5) % 11) as f32 * 0.5 - 2.0).to_bits())
            .collect();
        let c: Vec<f32> = (0..256).map(|i| i as f32 * 0.125).collect();
        let (pa, pb, pc, pd) = (g.upload(&a), g.upload(&b), g.upload(&c), g.zeros(4 * 256));
        let block = if w64 { 64 } else { 32 };
        g.launch(
            "wmma_f16",
            [1, 1, 1],
            [block, 1, 1],
            0,
            &[Arg::Ptr(pa), Arg::Ptr(pb), Arg::Ptr(pc), Arg::Ptr(pd)],
        )
        .unwrap_or_else(|f| panic!("{f}"));
        let d: Vec<f32> = g.download(pd, 256);
        let hf = |x: u16| f16::from_bits(x).to_f32();
        for r in 0..16 {
            for col in 0..16 {
                let want = (0..16).fold(c[16 * r + col], |s, k| {
                    s + hf(a[16 * r + k]) * hf(b[16 * k + col])
                });
                assert!(
                    (d[16 * r + col] - want).abs() <= 1e-4 * want.abs().max(1.0),
                    "wave64={w64} D[{r}][{col}] = {} not {want}",
                    d[16 * r + col]
                );
            }
        }
    });
}
