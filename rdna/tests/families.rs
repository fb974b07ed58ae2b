//! Per-family instruction tests against CPU references: each case is a small
//! program in the spec's `.s` format (assembled by llvm-mc-19) that loads
//! per-lane inputs `a`, `b`, `c` into v1, v2, v3, runs the instructions under
//! test, and stores v4; the result of every lane is compared with a Rust
//! reference. Each case runs in wave32 and in wave64.

#![allow(clippy::needless_range_loop)] // lanes index several parallel arrays

use prlx_rdna::Device;
use prlx_rdna::asm;

const N: usize = 64;

/// Per-lane inputs: specials (zeros, infinities, NaN, denormals) and a spread.
fn inputs() -> [Vec<u32>; 3] {
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        1.5,
        -2.5,
        3.75,
        1e-40,
        -1e-40,
        f32::INFINITY,
        f32::NEG_INFINITY,
        65536.0,
        -7.0e9,
        0.1,
        100.25,
    ];
    let mut s = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let a = (0..N)
        .map(|i| {
            if i < 16 {
                specials[i].to_bits()
            } else {
                next() as u32
            }
        })
        .collect();
    let b = (0..N)
        .map(|i| {
            if i < 16 {
                specials[15 - i].to_bits()
            } else {
                next() as u32
            }
        })
        .collect();
    let c = (0..N).map(|_| next() as u32).collect();
    [a, b, c]
}

fn finite_inputs() -> [Vec<u32>; 3] {
    let [a, b, c] = inputs();
    let fix = |v: Vec<u32>| {
        v.into_iter()
            .enumerate()
            .map(|(i, x)| {
                let f = f32::from_bits(x);
                if f.is_finite() && f.abs() < 1e30 {
                    x
                } else {
                    ((i as f32 - 20.0) * 1.25).to_bits()
                }
            })
            .collect()
    };
    [fix(a), fix(b), fix(c)]
}

fn list(v: &[u32]) -> String {
    v.iter()
        .map(|x| format!("{x:#x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs each body (one after another in a single program) with v1..v3 =
/// a, b, c and EXEC restored before each, and returns v4 of every lane after
/// each body.
fn run_many(bodies: &[String], wave: u32, ins: &[Vec<u32>; 3]) -> Option<Vec<Vec<u32>>> {
    if prlx_tests::find_tool(asm::LLVM_MC).is_none() {
        prlx_tests::missing(asm::LLVM_MC);
        return None;
    }
    let (exec, save) = if wave == 64 {
        ("exec", "s[40:41]")
    } else {
        ("exec_lo", "s40")
    };
    let mov = if wave == 64 { "s_mov_b64" } else { "s_mov_b32" };
    let mut code = String::new();
    for (k, body) in bodies.iter().enumerate() {
        code += &format!(
            "{mov} {exec}, {save}\nv_mov_b32 v1, v11\nv_mov_b32 v2, v12\nv_mov_b32 v3, v13\nv_mov_b32 v4, 0\n{}\n\
             {mov} {exec}, {save}\nglobal_store_b32 v10, v4, s[14:15]\ns_add_u32 s14, s14, {}\ns_addc_u32 s15, s15, 0\n",
            body.replace("skip", &format!("skip{k}")),
            4 * N
        );
    }
    let text = format!(
        "---\na: u32[{N}] = {}\nb: u32[{N}] = {}\nc: u32[{N}] = {}\nout_r: u32[{}]\nlocal = {N}\nglobal = 1\nwave = {wave}\n---\n\
         s_mov_b32 s6, s3\ns_mov_b32 s7, s4\ns_load_b256 s[8:15], s[6:7], 0x0\ns_waitcnt lgkmcnt(0)\n{mov} {save}, {exec}\n\
         v_lshlrev_b32 v10, 2, v0\nglobal_load_b32 v11, v10, s[8:9]\nglobal_load_b32 v12, v10, s[10:11]\n\
         global_load_b32 v13, v10, s[12:13]\ns_waitcnt vmcnt(0)\n{code}s_endpgm\n",
        list(&ins[0]),
        list(&ins[1]),
        list(&ins[2]),
        N * bodies.len()
    );
    let prog = asm::parse("case.s", &text, std::path::Path::new("."))
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut dev = Device::new();
    let loaded = prog.load(&mut dev).unwrap();
    prog.run(&mut dev, &loaded)
        .unwrap_or_else(|f| panic!("{f}"));
    let mut bytes = vec![0u8; 4 * N * bodies.len()];
    dev.read(loaded.addrs[3], &mut bytes).unwrap();
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    Some(words.chunks(N).map(|c| c.to_vec()).collect())
}

fn run(body: &str, wave: u32, ins: &[Vec<u32>; 3]) -> Option<Vec<u32>> {
    run_many(&[body.to_string()], wave, ins).map(|mut v| v.remove(0))
}

type LaneRef = fn(u32, u32, u32) -> u32;

fn same(got: u32, want: u32) -> bool {
    got == want || (f32::from_bits(got).is_nan() && f32::from_bits(want).is_nan())
}

fn check_lanes(cases: &[(&str, LaneRef)], ins: &[Vec<u32>; 3]) {
    for wave in [32, 64] {
        let bodies: Vec<String> = cases
            .iter()
            .map(|(b, _)| b.replace("vcc_lo", if wave == 64 { "vcc" } else { "vcc_lo" }))
            .collect();
        let Some(results) = run_many(&bodies, wave, ins) else {
            return;
        };
        for ((body, reference), got) in cases.iter().zip(results) {
            for l in 0..N {
                let want = reference(ins[0][l], ins[1][l], ins[2][l]);
                assert!(
                    same(got[l], want),
                    "wave{wave} `{body}` lane {l}: a={:#x} b={:#x} c={:#x}: got {:#x}, want {want:#x}",
                    ins[0][l],
                    ins[1][l],
                    ins[2][l],
                    got[l]
                );
            }
        }
    }
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

#[test]
fn vector_float() {
    let cases: &[(&str, LaneRef)] = &[
        ("v_add_f32 v4, v1, v2", |a, b, _| (f(a) + f(b)).to_bits()),
        ("v_sub_f32 v4, v1, v2", |a, b, _| (f(a) - f(b)).to_bits()),
        ("v_subrev_f32 v4, v1, v2", |a, b, _| (f(b) - f(a)).to_bits()),
        ("v_mul_f32 v4, v1, v2", |a, b, _| (f(a) * f(b)).to_bits()),
        ("v_min_f32 v4, v1, v2", |a, b, _| f(a).min(f(b)).to_bits()),
        ("v_max_f32 v4, v1, v2", |a, b, _| f(a).max(f(b)).to_bits()),
        ("v_fma_f32 v4, v1, v2, v3", |a, b, c| {
            f(a).mul_add(f(b), f(c)).to_bits()
        }),
        ("v_mov_b32 v4, v3\nv_fmac_f32 v4, v1, v2", |a, b, c| {
            f(a).mul_add(f(b), f(c)).to_bits()
        }),
        ("v_fmaak_f32 v4, v1, v2, 0x40490fdb", |a, b, _| {
            f(a).mul_add(f(b), std::f32::consts::PI).to_bits()
        }),
        ("v_fmamk_f32 v4, v1, 0x40490fdb, v2", |a, b, _| {
            f(a).mul_add(std::f32::consts::PI, f(b)).to_bits()
        }),
        ("v_add_f32_e64 v4, -|v1|, v2", |a, b, _| {
            (-f(a).abs() + f(b)).to_bits()
        }),
        ("v_mul_f32_e64 v4, v1, 2.0 clamp", |a, _, _| {
            let v = f(a) * 2.0;
            (if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) }).to_bits()
        }),
        ("v_add_f32_e64 v4, v1, v2 mul:2", |a, b, _| {
            ((f(a) + f(b)) * 2.0).to_bits()
        }),
        ("v_floor_f32 v4, v1", |a, _, _| f(a).floor().to_bits()),
        ("v_ceil_f32 v4, v1", |a, _, _| f(a).ceil().to_bits()),
        ("v_trunc_f32 v4, v1", |a, _, _| f(a).trunc().to_bits()),
        ("v_rndne_f32 v4, v1", |a, _, _| {
            f(a).round_ties_even().to_bits()
        }),
        ("v_cvt_i32_f32 v4, v1", |a, _, _| f(a) as i32 as u32),
        ("v_cvt_u32_f32 v4, v1", |a, _, _| f(a) as u32),
        ("v_cvt_f32_i32 v4, v1", |a, _, _| {
            (a as i32 as f32).to_bits()
        }),
        ("v_cvt_f32_u32 v4, v1", |a, _, _| (a as f32).to_bits()),
        ("v_cvt_f32_ubyte2 v4, v1", |a, _, _| {
            (((a >> 16) & 0xFF) as f32).to_bits()
        }),
        ("v_ldexp_f32 v4, v1, 3", |a, _, _| (f(a) * 8.0).to_bits()),
        ("v_cvt_f16_f32 v4, v1\nv_cvt_f32_f16 v4, v4", |a, _, _| {
            half::f16::from_f32(f(a)).to_f32().to_bits()
        }),
    ];
    check_lanes(cases, &inputs());
    let finite: &[(&str, LaneRef)] = &[
        ("v_med3_f32 v4, v1, v2, v3", |a, b, c| {
            let mut v = [f(a), f(b), f(c)];
            v.sort_by(|x, y| x.partial_cmp(y).unwrap());
            v[1].to_bits()
        }),
        ("v_min3_f32 v4, v1, v2, v3", |a, b, c| {
            f(a).min(f(b)).min(f(c)).to_bits()
        }),
        ("v_max3_f32 v4, v1, v2, v3", |a, b, c| {
            f(a).max(f(b)).max(f(c)).to_bits()
        }),
        ("v_fract_f32 v4, v1", |a, _, _| {
            (f(a) - f(a).floor())
                .min(f32::from_bits(0x3f7f_ffff))
                .to_bits()
        }),
        // Division as clang emits it for IEEE fdiv: scale, reciprocal, refine, fmas, fixup.
        (
            "v_div_scale_f32 v5, null, v2, v2, v1\nv_div_scale_f32 v8, vcc_lo, v1, v2, v1\nv_rcp_f32 v6, v5\n\
             v_fma_f32 v7, -v5, v6, 1.0\nv_fmac_f32 v6, v7, v6\nv_mul_f32 v7, v8, v6\nv_fma_f32 v9, -v5, v7, v8\n\
             v_fmac_f32 v7, v9, v6\nv_fma_f32 v5, -v5, v7, v8\nv_div_fmas_f32 v5, v5, v6, v7\nv_div_fixup_f32 v4, v5, v2, v1",
            |a, b, _| (f(a) / f(b)).to_bits(),
        ),
    ];
    check_lanes(finite, &finite_inputs());
}

#[test]
fn vector_transcendental_precision() {
    // Within 1 ulp of the correctly rounded value (documented precision).
    let ins = finite_inputs();
    type Reference = fn(f64) -> f64;
    let cases: &[(&str, Reference)] = &[
        ("v_exp_f32 v4, v1", |x| (x / 64.0).exp2()),
        ("v_log_f32 v4, v1", |x| x.abs().log2()),
        ("v_rcp_f32 v4, v1", |x| 1.0 / x),
        ("v_sqrt_f32 v4, v1", |x| x.abs().sqrt()),
        ("v_rsq_f32 v4, v1", |x| 1.0 / x.abs().sqrt()),
        ("v_sin_f32 v4, v1", |x| {
            (x / 64.0 * std::f64::consts::TAU).sin()
        }),
    ];
    for (body, reference) in cases {
        let pre = match *body {
            "v_exp_f32 v4, v1" | "v_sin_f32 v4, v1" => "v_mul_f32 v1, 0x3c800000, v1\n", // x/64
            "v_log_f32 v4, v1" | "v_sqrt_f32 v4, v1" | "v_rsq_f32 v4, v1" => {
                "v_and_b32 v1, 0x7fffffff, v1\n"
            }
            _ => "",
        };
        let Some(got) = run(&format!("{pre}{body}"), 32, &ins) else {
            return;
        };
        for l in 0..N {
            let want = reference(f(ins[0][l]) as f64) as f32;
            let (g, w) = (f(got[l]), want);
            let ulps = (g.to_bits() as i64 - w.to_bits() as i64).abs();
            assert!(
                g == w
                    || ulps <= 1
                    || (g.is_nan() && w.is_nan())
                    || (w.abs() < 1e-6 && (g - w).abs() < 1e-6),
                "`{body}` lane {l}: x={} got {g} want {w}",
                f(ins[0][l])
            );
        }
    }
}

#[test]
fn vector_integer() {
    let cases: &[(&str, LaneRef)] = &[
        ("v_add_nc_u32 v4, v1, v2", |a, b, _| a.wrapping_add(b)),
        ("v_sub_nc_u32 v4, v1, v2", |a, b, _| a.wrapping_sub(b)),
        ("v_subrev_nc_u32 v4, v1, v2", |a, b, _| b.wrapping_sub(a)),
        ("v_add_nc_u32_e64 v4, v1, v2 clamp", |a, b, _| {
            a.saturating_add(b)
        }),
        ("v_mul_lo_u32 v4, v1, v2", |a, b, _| a.wrapping_mul(b)),
        ("v_mul_hi_u32 v4, v1, v2", |a, b, _| {
            ((a as u64 * b as u64) >> 32) as u32
        }),
        ("v_mul_hi_i32 v4, v1, v2", |a, b, _| {
            ((a as i32 as i64 * b as i32 as i64) >> 32) as u32
        }),
        ("v_mul_u32_u24 v4, v1, v2", |a, b, _| {
            (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF)
        }),
        ("v_mul_i32_i24 v4, v1, v2", |a, b, _| {
            let s = |x: u32| ((x << 8) as i32 >> 8) as i64;
            (s(a) * s(b)) as u32
        }),
        ("v_mad_u32_u24 v4, v1, v2, v3", |a, b, c| {
            (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF).wrapping_add(c)
        }),
        ("v_lshlrev_b32 v4, v1, v2", |a, b, _| b << (a & 31)),
        ("v_lshrrev_b32 v4, v1, v2", |a, b, _| b >> (a & 31)),
        ("v_ashrrev_i32 v4, v1, v2", |a, b, _| {
            ((b as i32) >> (a & 31)) as u32
        }),
        ("v_and_b32 v4, v1, v2", |a, b, _| a & b),
        ("v_or_b32 v4, v1, v2", |a, b, _| a | b),
        ("v_xor_b32 v4, v1, v2", |a, b, _| a ^ b),
        ("v_xnor_b32 v4, v1, v2", |a, b, _| !(a ^ b)),
        ("v_not_b32 v4, v1", |a, _, _| !a),
        ("v_bfrev_b32 v4, v1", |a, _, _| a.reverse_bits()),
        ("v_clz_i32_u32 v4, v1", |a, _, _| {
            if a == 0 { u32::MAX } else { a.leading_zeros() }
        }),
        ("v_ctz_i32_b32 v4, v1", |a, _, _| {
            if a == 0 { u32::MAX } else { a.trailing_zeros() }
        }),
        ("v_bcnt_u32_b32 v4, v1, v2", |a, b, _| {
            a.count_ones().wrapping_add(b)
        }),
        ("v_min_i32 v4, v1, v2", |a, b, _| {
            (a as i32).min(b as i32) as u32
        }),
        ("v_max_u32 v4, v1, v2", |a, b, _| a.max(b)),
        ("v_med3_i32 v4, v1, v2, v3", |a, b, c| {
            let mut v = [a as i32, b as i32, c as i32];
            v.sort();
            v[1] as u32
        }),
        ("v_min3_u32 v4, v1, v2, v3", |a, b, c| a.min(b).min(c)),
        ("v_max3_i32 v4, v1, v2, v3", |a, b, c| {
            (a as i32).max(b as i32).max(c as i32) as u32
        }),
        (
            "v_and_b32 v5, 31, v2\nv_and_b32 v6, 31, v3\nv_bfe_u32 v4, v1, v5, v6",
            |a, b, c| {
                let (o, w) = (b & 31, c & 31);
                if w == 0 {
                    0
                } else {
                    ((a as u64 >> o) & ((1u64 << w) - 1)) as u32
                }
            },
        ),
        ("v_bfe_i32 v4, v1, 4, 9", |a, _, _| {
            ((a << 19) as i32 >> 23) as u32
        }),
        ("v_bfi_b32 v4, v1, v2, v3", |a, b, c| (a & b) | (!a & c)),
        ("v_alignbit_b32 v4, v1, v2, v3", |a, b, c| {
            ((((a as u64) << 32) | b as u64) >> (c & 31)) as u32
        }),
        ("v_alignbyte_b32 v4, v1, v2, v3", |a, b, c| {
            ((((a as u64) << 32) | b as u64) >> (8 * (c & 3))) as u32
        }),
        ("v_lshl_add_u32 v4, v1, 3, v3", |a, _, c| {
            (a << 3).wrapping_add(c)
        }),
        ("v_add_lshl_u32 v4, v1, v2, 2", |a, b, _| {
            a.wrapping_add(b) << 2
        }),
        ("v_add3_u32 v4, v1, v2, v3", |a, b, c| {
            a.wrapping_add(b).wrapping_add(c)
        }),
        ("v_lshl_or_b32 v4, v1, 5, v3", |a, _, c| (a << 5) | c),
        ("v_and_or_b32 v4, v1, v2, v3", |a, b, c| (a & b) | c),
        ("v_or3_b32 v4, v1, v2, v3", |a, b, c| a | b | c),
        ("v_xor3_b32 v4, v1, v2, v3", |a, b, c| a ^ b ^ c),
        ("v_xad_u32 v4, v1, v2, v3", |a, b, c| {
            (a ^ b).wrapping_add(c)
        }),
        ("v_sad_u32 v4, v1, v2, v3", |a, b, c| {
            a.abs_diff(b).wrapping_add(c)
        }),
        ("v_perm_b32 v4, v1, v2, 0x0c050a03", |a, b, _| {
            let bytes = ((a as u64) << 32) | b as u64;
            let sel = |s: u32| -> u32 {
                match s {
                    0..=7 => ((bytes >> (8 * s)) & 0xFF) as u32,
                    10 => {
                        if a >> 15 & 1 == 1 {
                            0xFF
                        } else {
                            0
                        }
                    }
                    12 => 0,
                    _ => unreachable!(),
                }
            };
            sel(3) | (sel(10) << 8) | (sel(5) << 16) | (sel(12) << 24)
        }),
        // 64-bit address arithmetic as clang emits it.
        (
            "v_add_co_u32 v4, vcc_lo, v1, v2\nv_add_co_ci_u32 v5, vcc_lo, v3, v3, vcc_lo\nv_mov_b32 v4, v5",
            |a, b, c| {
                let carry = (a as u64 + b as u64) >> 32;
                c.wrapping_add(c).wrapping_add(carry as u32)
            },
        ),
        ("v_mad_u64_u32 v[4:5], null, v1, v2, v[2:3]", |a, b, c| {
            (a as u64 * b as u64).wrapping_add((c as u64) << 32 | b as u64) as u32
        }),
        (
            "v_mad_u64_u32 v[6:7], null, v1, v2, v[2:3]\nv_mov_b32 v4, v7",
            |a, b, c| {
                ((a as u64 * b as u64).wrapping_add((c as u64) << 32 | b as u64) >> 32) as u32
            },
        ),
        ("v_lshlrev_b64 v[4:5], 7, v[1:2]", |a, _, _| a << 7),
        // Two d16 loads into one register, both outstanding: each lands in its half.
        (
            "global_load_d16_b16 v4, v10, s[8:9]\nglobal_load_d16_hi_b16 v4, v10, s[10:11]\ns_waitcnt vmcnt(0)",
            |a, b, _| (a & 0xFFFF) | (b << 16),
        ),
        ("v_mov_b32 v4, v3\nv_med3_u16 v4, v1, v2, v3", |a, b, c| {
            let mut v = [a & 0xFFFF, b & 0xFFFF, c & 0xFFFF];
            v.sort();
            (c & 0xFFFF_0000) | v[1]
        }),
        ("v_mov_b32 v4, v3\nv_med3_i16 v4, v1, v2, v3", |a, b, c| {
            let mut v = [a as i16, b as i16, c as i16];
            v.sort();
            (c & 0xFFFF_0000) | v[1] as u16 as u32
        }),
        ("v_dot4_u32_u8 v4, v1, v2, v3", |a, b, c| {
            (0..4).fold(c, |s, k| {
                s.wrapping_add(((a >> (8 * k)) & 0xFF) * ((b >> (8 * k)) & 0xFF))
            })
        }),
        ("v_dot4_i32_iu8 v4, v1, v2, v3 neg_lo:[1,1,0]", |a, b, c| {
            (0..4).fold(c as i32, |s, k| {
                s.wrapping_add((a >> (8 * k)) as i8 as i32 * (b >> (8 * k)) as i8 as i32)
            }) as u32
        }),
        ("v_dot8_u32_u4 v4, v1, v2, v3", |a, b, c| {
            (0..8).fold(c, |s, k| {
                s.wrapping_add(((a >> (4 * k)) & 0xF) * ((b >> (4 * k)) & 0xF))
            })
        }),
        (
            "v_lshrrev_b64 v[6:7], 7, v[1:2]\nv_mov_b32 v4, v7",
            |_, b, _| b >> 7,
        ),
        ("v_ashrrev_i64 v[4:5], 35, v[1:2]", |_, b, _| {
            ((b as i32) >> 3) as u32
        }),
    ];
    check_lanes(cases, &inputs());
}

#[test]
fn compares_ballots_and_cross_lane() {
    let ins = inputs();
    for wave in [32u32, 64] {
        let ws = wave as usize;
        let mask_of = |p: &dyn Fn(usize) -> bool, base: usize| {
            (0..ws)
                .filter(|&l| p(base + l))
                .fold(0u64, |m, l| m | 1 << l)
        };
        let (vcc, sp) = if wave == 64 {
            ("vcc", "s[20:21]")
        } else {
            ("vcc_lo", "s20")
        };
        // v_cmp writes a lane mask (ballot) to an SGPR; read it back per lane.
        type LanePred<'a> = Box<dyn Fn(usize) -> bool + 'a>;
        let cases: Vec<(String, LanePred)> = vec![
            (
                format!("v_cmp_lt_f32 {vcc}, v1, v2"),
                Box::new(|l| f(ins[0][l]) < f(ins[1][l])),
            ),
            (
                format!("v_cmp_neq_f32_e64 {sp}, v1, v2"),
                Box::new(|l| f(ins[0][l]) != f(ins[1][l])),
            ),
            (
                format!("v_cmp_nge_f32_e64 {sp}, v1, v2"),
                Box::new(|l| {
                    f(ins[0][l])
                        .partial_cmp(&f(ins[1][l]))
                        .is_none_or(|o| o.is_lt())
                }),
            ),
            (
                format!("v_cmp_u_f32_e64 {sp}, v1, v2"),
                Box::new(|l| f(ins[0][l]).is_nan() || f(ins[1][l]).is_nan()),
            ),
            (
                format!("v_cmp_gt_i32_e64 {sp}, v1, v2"),
                Box::new(|l| (ins[0][l] as i32) > (ins[1][l] as i32)),
            ),
            (
                format!("v_cmp_le_u32 {vcc}, v1, v2"),
                Box::new(|l| ins[0][l] <= ins[1][l]),
            ),
            (
                format!("v_cmp_class_f32_e64 {sp}, v1, 0x264"),
                Box::new(|l| {
                    let x = f(ins[0][l]);
                    // 0x264: -inf (2), -0 (5), +0 (6), +inf (9)
                    x.is_infinite() || x == 0.0
                }),
            ),
            (
                format!("v_cmp_class_f16_e64 {sp}, v1, 0x90"),
                // 0x90: -denormal (4), +denormal (7) of the low half.
                Box::new(|l| {
                    let h = ins[0][l] & 0xFFFF;
                    h & 0x7C00 == 0 && h & 0x3FF != 0
                }),
            ),
        ];
        for (cmp, pred) in &cases {
            let dst = if cmp.contains("_e64") { sp } else { vcc };
            let lo = dst.replace("s[20:21]", "s20");
            let hi = if wave == 64 {
                if dst == "vcc" { "vcc_hi" } else { "s21" }
            } else {
                ""
            };
            let lo = if dst == "vcc" {
                "vcc_lo".to_string()
            } else {
                lo
            };
            let body = if wave == 64 {
                format!(
                    "{cmp}\nv_mov_b32 v5, {lo}\nv_mov_b32 v6, {hi}\nv_cmp_gt_u32 vcc, 32, v0\nv_cndmask_b32 v4, v6, v5, vcc"
                )
            } else {
                format!("{cmp}\nv_mov_b32 v4, {lo}")
            };
            let Some(got) = run(&body, wave, &ins) else {
                return;
            };
            for base in (0..N).step_by(ws) {
                let m = mask_of(pred.as_ref(), base);
                for l in 0..ws {
                    let want = if wave == 64 {
                        if l < 32 { m as u32 } else { (m >> 32) as u32 }
                    } else {
                        m as u32
                    };
                    assert_eq!(got[base + l], want, "wave{wave} `{cmp}` lane {}", base + l);
                }
            }
        }
        // v_cmpx narrows EXEC: inactive lanes keep v4 = 0.
        let Some(got) = run("v_cmpx_gt_u32 v1, v2\nv_mov_b32 v4, 1", wave, &ins) else {
            return;
        };
        for l in 0..N {
            assert_eq!(
                got[l],
                (ins[0][l] > ins[1][l]) as u32,
                "wave{wave} v_cmpx lane {l}"
            );
        }
        // readlane / readfirstlane / writelane, mbcnt, permlane16, permlanex16.
        let Some(got) = run(
            "v_readlane_b32 s20, v1, 5\nv_readfirstlane_b32 s21, v2\nv_mov_b32 v4, s20\nv_add_nc_u32 v4, s21, v4\nv_writelane_b32 v4, s21, 2",
            wave,
            &ins,
        ) else {
            return;
        };
        for base in (0..N).step_by(ws) {
            for l in 0..ws {
                let want = if l == 2 {
                    ins[1][base]
                } else {
                    ins[0][base + 5].wrapping_add(ins[1][base])
                };
                assert_eq!(
                    got[base + l],
                    want,
                    "wave{wave} readlane/writelane lane {}",
                    base + l
                );
            }
        }
        let mbcnt = if wave == 64 {
            "v_mbcnt_lo_u32_b32 v5, -1, 0\nv_mbcnt_hi_u32_b32 v4, -1, v5"
        } else {
            "v_mbcnt_lo_u32_b32 v4, -1, 0"
        };
        let Some(got) = run(mbcnt, wave, &ins) else {
            return;
        };
        for l in 0..N {
            assert_eq!(got[l] as usize, l % ws, "wave{wave} mbcnt lane {l}");
        }
        let Some(got) = run(
            "s_mov_b32 s20, 0x01234567\ns_mov_b32 s21, 0x89abcdef\nv_permlane16_b32 v4, v1, s20, s21",
            wave,
            &ins,
        ) else {
            return;
        };
        let sel: u64 = 0x89ab_cdef_0123_4567;
        for l in 0..N {
            let src = (l & !15) | ((sel >> (4 * (l & 15))) & 0xF) as usize;
            assert_eq!(got[l], ins[0][src], "wave{wave} permlane16 lane {l}");
        }
        let Some(got) = run(
            "s_mov_b32 s20, 0x01234567\ns_mov_b32 s21, 0x89abcdef\nv_permlanex16_b32 v4, v1, s20, s21",
            wave,
            &ins,
        ) else {
            return;
        };
        for l in 0..N {
            // The other row of 16 within the same wave.
            let row = (l % ws) / 16;
            let src = (l / ws) * ws + (row ^ 1) * 16 + ((sel >> (4 * (l & 15))) & 0xF) as usize;
            assert_eq!(got[l], ins[0][src], "wave{wave} permlanex16 lane {l}");
        }
    }
}

#[test]
fn scalar_alu_and_scc() {
    let ins = inputs();
    // (body computing s22 from s20 = a[first lane], s21 = b[first lane], reference)
    type SRef = fn(u32, u32) -> u32;
    let cases: &[(&str, SRef)] = &[
        (
            "s_add_u32 s22, s20, s21\ns_cselect_b32 s23, 1, 0\ns_lshl_b32 s23, s23, 31\ns_xor_b32 s22, s22, s23",
            |a, b| {
                let (r, c) = a.overflowing_add(b);
                r ^ ((c as u32) << 31)
            },
        ),
        ("s_sub_u32 s22, s20, s21\ns_subb_u32 s22, s22, 0", |a, b| {
            let (r, borrow) = a.overflowing_sub(b);
            r.wrapping_sub(borrow as u32)
        }),
        ("s_mul_i32 s22, s20, s21", |a, b| a.wrapping_mul(b)),
        ("s_mul_hi_u32 s22, s20, s21", |a, b| {
            ((a as u64 * b as u64) >> 32) as u32
        }),
        ("s_lshl_b32 s22, s20, s21", |a, b| a << (b & 31)),
        ("s_ashr_i32 s22, s20, s21", |a, b| {
            ((a as i32) >> (b & 31)) as u32
        }),
        ("s_and_not1_b32 s22, s20, s21", |a, b| a & !b),
        ("s_bfe_u32 s22, s20, 0x80004", |a, _| (a >> 4) & 0xFF),
        ("s_bfe_i32 s22, s20, 0x80004", |a, _| {
            ((a << 20) as i32 >> 24) as u32
        }),
        ("s_min_i32 s22, s20, s21", |a, b| {
            (a as i32).min(b as i32) as u32
        }),
        ("s_max_u32 s22, s20, s21", |a, b| a.max(b)),
        (
            "s_cmp_lt_i32 s20, s21\ns_cselect_b32 s22, s20, s21",
            |a, b| if (a as i32) < (b as i32) { a } else { b },
        ),
        ("s_bcnt1_i32_b32 s22, s20", |a, _| a.count_ones()),
        ("s_ctz_i32_b32 s22, s20", |a, _| {
            if a == 0 { u32::MAX } else { a.trailing_zeros() }
        }),
        ("s_brev_b32 s22, s20", |a, _| a.reverse_bits()),
        ("s_sext_i32_i16 s22, s20", |a, _| a as i16 as i32 as u32),
        (
            "s_mov_b32 s24, s20\ns_mov_b32 s25, s21\ns_lshr_b64 s[26:27], s[24:25], 12\ns_mov_b32 s22, s26",
            |a, b| ((((b as u64) << 32) | a as u64) >> 12) as u32,
        ),
        ("s_movk_i32 s22, 0x8001\ns_addk_i32 s22, 0x10", |_, _| {
            (0xFFFF_8001u32).wrapping_add(0x10)
        }),
        (
            "s_mov_b32 s22, 0\ns_cmp_eq_u32 s20, s20\ns_cbranch_scc0 skip\ns_mov_b32 s22, 77\nskip:",
            |_, _| 77,
        ),
    ];
    for wave in [32u32, 64] {
        let ws = wave as usize;
        let bodies: Vec<String> = cases
            .iter()
            .map(|(body, _)| format!("v_readfirstlane_b32 s20, v1\nv_readfirstlane_b32 s21, v2\n{body}\nv_mov_b32 v4, s22"))
            .collect();
        let Some(results) = run_many(&bodies, wave, &ins) else {
            return;
        };
        for ((body, reference), got) in cases.iter().zip(results) {
            for base in (0..N).step_by(ws) {
                let want = reference(ins[0][base], ins[1][base]);
                for l in 0..ws {
                    assert_eq!(got[base + l], want, "wave{wave} `{body}` lane {}", base + l);
                }
            }
        }
    }
}

#[test]
fn exec_divergence_and_lds_permutes() {
    let ins = inputs();
    for wave in [32u32, 64] {
        let (mask, exec, vcc) = if wave == 64 {
            ("s[20:21]", "exec", "vcc")
        } else {
            ("s20", "exec_lo", "vcc_lo")
        };
        let sx = if wave == 64 { "b64" } else { "b32" };
        // if (a < b) r = 1 else r = 2, through saveexec / xor / or, as clang lowers if-else.
        let body = format!(
            "v_cmp_lt_u32 {vcc}, v1, v2\ns_and_saveexec_{sx} {mask}, {vcc}\ns_xor_{sx} {mask}, {exec}, {mask}\n\
             v_mov_b32 v4, 1\ns_or_saveexec_{sx} {mask}, {mask}\nv_mov_b32 v4, 2\ns_or_{sx} {exec}, {exec}, {mask}"
        );
        // First block runs for a<b, the else block (lanes in mask) for the others.
        let Some(got) = run(&body, wave, &ins) else {
            return;
        };
        for l in 0..N {
            // s_or_saveexec restores exec to (mask | exec) = the else lanes plus the then lanes? No:
            // after s_xor, mask = lanes that failed; s_or_saveexec sets exec = mask | exec(then lanes) = all.
            assert_eq!(got[l], 2, "wave{wave} lane {l}: {body}");
        }
        let body = format!(
            "v_cmp_lt_u32 {vcc}, v1, v2\ns_and_saveexec_{sx} {mask}, {vcc}\ns_xor_{sx} {mask}, {exec}, {mask}\n\
             v_mov_b32 v4, 1\ns_and_not1_saveexec_{sx} {mask}, {mask}\nv_mov_b32 v4, 2\ns_or_{sx} {exec}, {exec}, {mask}"
        );
        let Some(got) = run(&body, wave, &ins) else {
            return;
        };
        for l in 0..N {
            // s_and_not1_saveexec: exec = mask & ~exec = the else lanes.
            assert_eq!(
                got[l],
                if ins[0][l] < ins[1][l] { 1 } else { 2 },
                "wave{wave} lane {l}: if/else"
            );
        }
        // ds_swizzle modes and ds_permute.
        let ws = wave as usize;
        type LaneMap = fn(usize) -> usize;
        let swz: &[(&str, LaneMap)] = &[
            ("offset:swizzle(QUAD_PERM,3,2,1,0)", |l| {
                (l & !3) | (3 - (l & 3))
            }),
            ("offset:swizzle(SWAP,4)", |l| l ^ 4),
            ("offset:swizzle(REVERSE,8)", |l| l ^ 7),
            ("offset:swizzle(BROADCAST,16,5)", |l| (l & !15) | 5),
        ];
        for (mode, src) in swz {
            let Some(got) = run(
                &format!("ds_swizzle_b32 v4, v1 {mode}\ns_waitcnt lgkmcnt(0)"),
                wave,
                &ins,
            ) else {
                return;
            };
            for l in 0..N {
                assert_eq!(got[l], ins[0][src(l)], "wave{wave} swizzle {mode} lane {l}");
            }
        }
        let Some(got) = run(
            "v_sub_nc_u32 v5, 0, v0\nv_and_b32 v5, 0x3f, v5\nv_lshlrev_b32 v5, 2, v5\nds_permute_b32 v4, v5, v1\ns_waitcnt lgkmcnt(0)",
            wave,
            &ins,
        ) else {
            return;
        };
        for l in 0..N {
            // lane l sends a[l] to lane (-l) mod wave size (addresses wrap at the wave size).
            let from = (ws - (l % ws)) % ws + l / ws * ws;
            assert_eq!(got[l], ins[0][from], "wave{wave} ds_permute lane {l}");
        }
    }
}

#[test]
fn faults_name_wave_lane_pc_address_and_instruction() {
    let ins = inputs();
    if prlx_tests::find_tool(asm::LLVM_MC).is_none() {
        return;
    }
    // LDS is 64 KiB: lane l reads 0xfff0 + 4l, lanes 4.. fault; the first is lane 4.
    let text = "---\nlocal = 64\nglobal = 1\nwave = 32\n---\nv_lshlrev_b32 v1, 2, v0\nv_add_nc_u32 v1, 0xfff0, v1\nds_load_b32 v2, v1\ns_endpgm\n";
    let prog = asm::parse("lds.s", text, std::path::Path::new(".")).unwrap();
    let mut dev = Device::new();
    let loaded = prog.load(&mut dev).unwrap();
    let f = prog.run(&mut dev, &loaded).unwrap_err();
    assert_eq!(
        (f.wave, f.lane, f.addr, f.pc),
        (Some(0), Some(4), Some(0x10000), Some(12)),
        "{f}"
    );
    assert!(f.to_string().contains("ds_load_b32 v2, v1"), "{f}");
    assert_eq!(prog.lines.get(&12), Some(&8));
    // Instructions the emulator does not execute are refused by name, with the PC.
    let text =
        "---\nlocal = 32\n---\ns_nop 0\nbuffer_load_format_x v1, off, s[8:11], 0\ns_endpgm\n";
    let prog = asm::parse("u.s", text, std::path::Path::new(".")).unwrap();
    let loaded = prog.load(&mut dev).unwrap();
    let f = prog.run(&mut dev, &loaded).unwrap_err();
    assert_eq!(
        f.kind,
        prlx_rdna::FaultKind::Unsupported("buffer_load_format_x".into()),
        "{f}"
    );
    assert_eq!(f.pc, Some(4));
    let _ = ins;
}

#[test]
fn scratch_is_per_lane_and_bounded() {
    let ins = inputs();
    for wave in [32u32, 64] {
        // Each lane stores a[l] at its own offset and reads it back, plus an
        // untouched offset (zero).
        let body = "v_lshlrev_b32 v5, 2, v0\nscratch_store_b32 v5, v1, off offset:512\n\
                    scratch_load_b32 v4, v5, off offset:512\nscratch_load_b32 v6, v5, off offset:8\n\
                    s_waitcnt vmcnt(0)\nv_add_nc_u32 v4, v4, v6";
        let Some(got) = run(body, wave, &ins) else {
            return;
        };
        assert_eq!(got, ins[0], "wave{wave} scratch round trip");
    }
    // 1 KiB per lane in the spec runner: lane 0 writes past it.
    let text =
        "---\nlocal = 32\n---\nv_mov_b32 v1, 0x400\nscratch_store_b32 v1, v0, off\ns_endpgm\n";
    if prlx_tests::find_tool(asm::LLVM_MC).is_none() {
        return;
    }
    let prog = asm::parse("s.s", text, std::path::Path::new(".")).unwrap();
    let mut dev = Device::new();
    let loaded = prog.load(&mut dev).unwrap();
    let f = prog.run(&mut dev, &loaded).unwrap_err();
    assert_eq!((f.lane, f.addr), (Some(0), Some(0x400)), "{f}");
    assert!(f.to_string().contains("scratch memory fault"), "{f}");
}

#[test]
fn buffer_loads_and_stores_through_a_descriptor() {
    let ins = inputs();
    // V# over `a` (s[8:9]) with 248 bytes of records: lanes 62 and 63 are out
    // of range, so their loads read 0 and their stores are dropped.
    let vsharp = "s_mov_b32 s16, s8\ns_and_b32 s17, s9, 0xffff\ns_movk_i32 s18, 0xf8\ns_mov_b32 s19, 0\nv_lshlrev_b32 v5, 2, v0\n";
    for wave in [32u32, 64] {
        let Some(got) = run(
            &format!("{vsharp}buffer_load_b32 v4, v5, s[16:19], 0 offen\ns_waitcnt vmcnt(0)"),
            wave,
            &ins,
        ) else {
            return;
        };
        for l in 0..N {
            assert_eq!(
                got[l],
                if l < 62 { ins[0][l] } else { 0 },
                "wave{wave} buffer_load lane {l}"
            );
        }
        let body = format!(
            "{vsharp}buffer_store_b32 v3, v5, s[16:19], 0 offen\ns_waitcnt_vscnt null, 0x0\n\
             buffer_load_b32 v4, v5, s[16:19], 4 offen offset:4\ns_waitcnt vmcnt(0)"
        );
        let Some(got) = run(&body, wave, &ins) else {
            return;
        };
        let ws = wave as usize;
        for l in 0..N {
            // Reads a[l + 2] (soffset 4 + offset 4) after the lanes of its own
            // wave stored c[...] (other waves' stores are unordered with it).
            if l + 2 < N && (l + 2) / ws != l / ws {
                continue;
            }
            // The range check covers VGPR offset + instruction offset, not
            // soffset: lane 60 (244 + 4 <= 248) reads a[62], which lane 62's
            // dropped store left alone; lane 61 is out of range.
            let want = match l {
                0..=59 => ins[2][l + 2],
                60 => ins[0][62],
                _ => 0,
            };
            assert_eq!(got[l], want, "wave{wave} buffer store/load lane {l}");
        }
    }
}
