//! Hand-written PTX (`kernels/ptx/`) for semantics compilers rarely emit.

use super::harness::{Case, Rng, expect_eq, expect_f32_bits};
use super::reference::{self, MODES, Shfl};

fn lanes(seed: u64) -> [u32; 32] {
    let mut rng = Rng::new(seed);
    std::array::from_fn(|_| rng.u32())
}

pub fn shfl_modes() -> Case {
    let v = lanes(40);
    type SourceLane = Box<dyn Fn(u32) -> u32>;
    let cases: [(Shfl, SourceLane, u32); 8] = [
        (Shfl::Up, Box::new(|_| 3), 0),
        (Shfl::Down, Box::new(|_| 5), 31),
        (Shfl::Bfly, Box::new(|_| 6), 31),
        (Shfl::Idx, Box::new(|l| (l * 7) & 31), 31),
        (Shfl::Up, Box::new(|_| 2), 0x1800),
        (Shfl::Down, Box::new(|_| 3), 0x1807),
        (Shfl::Idx, Box::new(|_| 5), 0x181f),
        (Shfl::Down, Box::new(|_| 4), 15),
    ];
    let results: Vec<Vec<(u32, bool)>> = cases
        .iter()
        .map(|(m, b, c)| reference::shfl(&v, *m, b, *c))
        .collect();
    let mut want = Vec::new();
    for lane in 0..32 {
        want.extend(results.iter().map(|r| r[lane].0));
        want.extend(results.iter().map(|r| r[lane].1 as u32));
    }
    Case::ptx("shfl_modes.ptx", "shfl_modes")
        .buf(&v)
        .zeros::<u32>(16 * 32)
        .check(move |o| {
            expect_eq(
                "out (8 values, 8 predicates per lane)",
                &o.get::<u32>(1),
                &want,
            )
        })
}

pub fn vote_modes() -> Case {
    let mut rng = Rng::new(41);
    let mut x = vec![5u32; 32];
    x.extend((0..32).map(|_| rng.u32() % 8));
    let mut want = Vec::new();
    for warp in x.chunks(32) {
        let uni = warp.iter().all(|v| *v == 5) == warp.contains(&5);
        let even: Vec<(usize, u32)> = warp
            .iter()
            .copied()
            .enumerate()
            .filter(|(l, _)| l % 2 == 0)
            .collect();
        let ballot = even
            .iter()
            .filter(|(_, v)| *v > 3)
            .fold(0u32, |m, (l, _)| m | 1 << l);
        let all = even.iter().all(|(_, v)| *v > 3);
        let any = even.iter().any(|(_, v)| *v > 3);
        let none = even.iter().all(|(_, v)| *v <= 3);
        for lane in 0..32 {
            if lane % 2 == 0 {
                want.extend([
                    uni as u32,
                    ballot,
                    all as u32,
                    any as u32,
                    (all || none) as u32,
                    none as u32,
                ]);
            } else {
                want.extend([uni as u32, 0, 0, 0, 0, 0]);
            }
        }
    }
    Case::ptx("vote.ptx", "vote_modes")
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<u32>(6 * 64)
        .check(move |o| expect_eq("out", &o.get::<u32>(1), &want))
}

pub fn match_b64() -> Case {
    let mut x: Vec<u64> = (0..32u64)
        .map(|l| (0x1234 << 32) | (l % 4) << 50 | (l % 4))
        .collect();
    x.extend((0..32u64).map(|l| ((l % 2) << 32) | (l % 3)));
    let mut want = Vec::new();
    for warp in x.chunks(32) {
        let masked: Vec<u64> = warp.iter().map(|v| v & 0xffff_0000_0000).collect();
        let all = masked.iter().all(|v| *v == masked[0]);
        for &v in warp {
            let any = warp
                .iter()
                .enumerate()
                .filter(|(_, u)| **u == v)
                .fold(0u32, |m, (l, _)| m | 1 << l);
            want.extend([any, if all { u32::MAX } else { 0 }, all as u32]);
        }
    }
    Case::ptx("warp_misc.ptx", "match_b64")
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<u32>(3 * 64)
        .check(move |o| expect_eq("out", &o.get::<u32>(1), &want))
}

pub fn redux_partial() -> Case {
    let x = lanes(42).to_vec();
    let odd: Vec<u32> = x.iter().copied().skip(1).step_by(2).collect();
    let r = [
        odd.iter().fold(u32::MAX, |a, v| a & v),
        odd.iter().fold(0, |a, v| a | v),
        odd.iter().map(|v| *v as i32).max().unwrap() as u32,
        *odd.iter().min().unwrap(),
        odd.iter().fold(0u32, |a, v| a.wrapping_add(*v)),
        odd.iter().map(|v| *v as i32).min().unwrap() as u32,
    ];
    let want: Vec<u32> = (0..32)
        .flat_map(|l| if l % 2 == 1 { r } else { [0; 6] })
        .collect();
    Case::ptx("warp_misc.ptx", "redux_partial")
        .buf(&x)
        .zeros::<u32>(6 * 32)
        .check(move |o| expect_eq("out", &o.get::<u32>(1), &want))
}

pub fn bar_red() -> Case {
    let mut rng = Rng::new(43);
    // Block 0: all positive; block 1: mixed; block 2: none positive.
    let mut x: Vec<i32> = rng.vec_i32(128, 1, 50);
    x.extend(rng.vec_i32(128, -50, 50));
    x.extend(rng.vec_i32(128, -50, 0));
    let mut want = Vec::new();
    for block in x.chunks(128) {
        let popc = block.iter().filter(|v| **v > 0).count() as u32;
        let row = [popc, (popc == 128) as u32, (popc > 0) as u32, 0];
        for _ in 0..128 {
            want.extend(row);
        }
    }
    Case::ptx("barriers.ptx", "bar_red")
        .grid([3, 1, 1])
        .block([128, 1, 1])
        .buf(&x)
        .zeros::<u32>(4 * 384)
        .check(move |o| expect_eq("out (popc, and, or, or-none)", &o.get::<u32>(1), &want))
}

pub fn producer_consumer() -> Case {
    let x = lanes(44)
        .repeat(4)
        .iter()
        .enumerate()
        .map(|(i, v)| v ^ i as u32)
        .collect::<Vec<u32>>();
    let want: Vec<u32> = x
        .iter()
        .enumerate()
        .map(|(i, v)| v.wrapping_mul(3).wrapping_add(i as u32 / 32))
        .collect();
    Case::ptx("barriers.ptx", "producer_consumer")
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<u32>(128)
        .check(move |o| expect_eq("out", &o.get::<u32>(1), &want))
}

/// Three operand vectors for the bit-manipulation kernels.
fn abc(seed: u64) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let mut rng = Rng::new(seed);
    let a = rng.vec_u32(64);
    let b = rng.vec_u32(64);
    let mut c = rng.vec_u32(64);
    // Small selectors and shift counts around the edges, too.
    for (i, v) in c.iter_mut().enumerate().take(40) {
        *v = i as u32;
    }
    let mut a = a;
    a[40..46].copy_from_slice(&[0, 1, 0x8000_0000, u32::MAX, 0x7fff_ffff, 0x0001_0000]);
    (a, b, c)
}

fn abc_case(
    file: &'static str,
    kernel: &'static str,
    seed: u64,
    per: usize,
    f: impl Fn(u32, u32, u32) -> Vec<u32>,
) -> Case {
    let (a, b, c) = abc(seed);
    let want: Vec<u32> = (0..64).flat_map(|i| f(a[i], b[i], c[i])).collect();
    Case::ptx(file, kernel)
        .block([64, 1, 1])
        .buf(&a)
        .buf(&b)
        .buf(&c)
        .zeros::<u32>(per * 64)
        .check(move |o| expect_eq("out", &o.get::<u32>(3), &want))
}

pub fn prmt_modes() -> Case {
    abc_case("bits.ptx", "prmt_modes", 45, 7, |a, b, c| {
        [
            None,
            Some("f4e"),
            Some("b4e"),
            Some("rc8"),
            Some("ecl"),
            Some("ecr"),
            Some("rc16"),
        ]
        .iter()
        .map(|m| reference::prmt(a, b, c, *m))
        .collect()
    })
}

pub fn shf_modes() -> Case {
    abc_case("bits.ptx", "shf_modes", 46, 4, |a, b, c| {
        vec![
            reference::shf(a, b, c, true, false),
            reference::shf(a, b, c, true, true),
            reference::shf(a, b, c, false, false),
            reference::shf(a, b, c, false, true),
        ]
    })
}

pub fn lop3_tables() -> Case {
    abc_case("bits.ptx", "lop3_tables", 47, 6, |a, b, c| {
        [0x96, 0xe8, 0xca, 0x1e, 0x80, 0x5b]
            .iter()
            .map(|l| reference::lop3(a, b, c, *l))
            .collect()
    })
}

pub fn bfind_bfe_bfi() -> Case {
    abc_case("bits.ptx", "bfind_bfe_bfi", 48, 10, |a, b, c| {
        let (pos, len) = (b & 63, c & 63);
        let wide = ((b as u64) << 32) | a as u64;
        let bfind = |v: u32| {
            if v == 0 {
                u32::MAX
            } else {
                31 - v.leading_zeros()
            }
        };
        let s = a as i32;
        vec![
            bfind(a),
            bfind(if s < 0 { !a } else { a }),
            if a == 0 { u32::MAX } else { a.leading_zeros() },
            if wide == 0 {
                u32::MAX
            } else {
                63 - wide.leading_zeros()
            },
            reference::bfe(a as u64, pos, len, 32, false) as u32,
            reference::bfe(a as u64, pos, len, 32, true) as u32,
            reference::bfe(wide, pos, len, 64, false) as u32,
            reference::bfi_b32(b, a, pos, len),
            wide.count_ones(),
            wide.leading_zeros(),
        ]
    })
}

pub fn cvt_modes() -> Case {
    let mut rng = Rng::new(49);
    let mut f = vec![
        0.5f32,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        -0.3,
        0.0,
        -0.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3e9,
        -3e9,
        1e-40,
        8388607.5,
        4294967295.0,
        5e9,
    ];
    while f.len() < 64 {
        f.push(rng.wide_f32(-3, 33));
    }
    let mut k = vec![
        0i32,
        32767,
        32768,
        -32768,
        -32769,
        65535,
        65536,
        -1,
        i32::MAX,
        i32::MIN,
    ];
    while k.len() < 64 {
        k.push(rng.range_i32(-200_000, 200_000));
    }
    let mut want_u = Vec::new();
    let mut want_f = Vec::new();
    let mut want_i2f = Vec::new();
    for i in 0..64 {
        let x = f[i];
        want_u.extend([
            x.round_ties_even() as i32 as u32,
            x as i32 as u32,
            x.floor() as i32 as u32,
            x.ceil() as i32 as u32,
        ]);
        want_f.extend([x.round_ties_even(), x.trunc(), x.floor(), x.ceil()]);
        let v = k[i];
        want_u.extend([
            v.clamp(-32768, 32767) as u32,
            v.clamp(0, 65535) as u32,
            v as i16 as i32 as u32,
            x.round_ties_even() as u32,
        ]);
        want_i2f.extend(MODES.map(|m| reference::i32_to_f32(v, m)));
    }
    Case::ptx("float_ops.ptx", "cvt_modes")
        .block([64, 1, 1])
        .buf(&f)
        .buf(&k)
        .zeros::<u32>(16 * 64)
        .check(move |o| {
            let out = o.get::<u32>(2);
            let floats = |range: std::ops::Range<usize>| -> Vec<f32> {
                out.chunks(16)
                    .flat_map(|c| {
                        c[range.clone()]
                            .iter()
                            .map(|b| f32::from_bits(*b))
                            .collect::<Vec<_>>()
                    })
                    .collect()
            };
            let ints: Vec<u32> = out
                .chunks(16)
                .flat_map(|c| [&c[0..4], &c[8..12]].concat())
                .collect();
            expect_eq(
                "integer results (rni, rzi, rmi, rpi .s32; sat.s16, sat.u16, s16, rni.u32)",
                &ints,
                &want_u,
            )?;
            expect_f32_bits(
                "f32 round to integral (rni, rzi, rmi, rpi)",
                &floats(4..8),
                &want_f,
            )?;
            expect_f32_bits("s32 -> f32 (rn, rz, rm, rp)", &floats(12..16), &want_i2f)
        })
}

pub fn testp_classes() -> Case {
    let f = [
        0.0f32,
        -0.0,
        1.0,
        -3.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-40,
        -1e-45,
        f32::MAX,
        f32::MIN_POSITIVE,
        1.1754942e-38,
    ];
    let d = [
        0.0f64,
        -1.0,
        f64::INFINITY,
        f64::NAN,
        5e-324,
        -2e-310,
        f64::MIN_POSITIVE,
        1e300,
        -0.0,
        f64::NEG_INFINITY,
        3.0,
        1e-320,
    ];
    let class = |finite: bool, inf: bool, nan: bool, normal: bool, sub: bool| -> u32 {
        finite as u32
            | (inf as u32) << 1
            | (!nan as u32) << 2
            | (nan as u32) << 3
            | (normal as u32) << 4
            | (sub as u32) << 5
    };
    let want: Vec<u32> = f
        .iter()
        .zip(&d)
        .map(|(x, y)| {
            class(
                x.is_finite(),
                x.is_infinite(),
                x.is_nan(),
                x.is_normal(),
                x.is_subnormal(),
            ) | class(
                y.is_finite(),
                y.is_infinite(),
                y.is_nan(),
                y.is_normal(),
                y.is_subnormal(),
            ) << 8
        })
        .collect();
    Case::ptx("float_ops.ptx", "testp_classes")
        .block([f.len() as u32, 1, 1])
        .buf(&f)
        .buf(&d)
        .zeros::<u32>(f.len())
        .check(move |o| expect_eq("class bits", &o.get::<u32>(2), &want))
}

pub fn minmax_nan() -> Case {
    let vals = [
        1.0f32,
        -2.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        1e-40,
        -7.5,
    ];
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in vals {
        for y in vals {
            a.push(x);
            b.push(y);
        }
    }
    let mut want_f = Vec::new();
    let mut want_i = Vec::new();
    for (&x, &y) in a.iter().zip(&b) {
        let nan = x.is_nan() || y.is_nan();
        want_f.extend([
            x.min(y),
            x.max(y),
            if nan { f32::NAN } else { x.min(y) },
            if nan { f32::NAN } else { x.max(y) },
        ]);
        want_i.extend([
            (x.to_bits() as i32).min(y.to_bits() as i32) as u32,
            x.to_bits().max(y.to_bits()),
        ]);
    }
    Case::ptx("minmax.ptx", "minmax_nan")
        .block([64, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<u32>(6 * 64)
        .check(move |o| {
            let out = o.get::<u32>(2);
            let floats: Vec<f32> = out
                .chunks(6)
                .flat_map(|c| {
                    c[..4]
                        .iter()
                        .map(|b| f32::from_bits(*b))
                        .collect::<Vec<_>>()
                })
                .collect();
            let ints: Vec<u32> = out.chunks(6).flat_map(|c| c[4..].to_vec()).collect();
            expect_f32_bits("min, max, min.NaN, max.NaN", &floats, &want_f)?;
            expect_eq("min.s32, max.u32", &ints, &want_i)
        })
}

pub fn atom_inc_dec() -> Case {
    let n = 200u32;
    // The k-th inc (limit 5) returns k mod 6; dec (limit 7) from 0 wraps to 7.
    let mut inc = 0u32;
    let mut dec = 0u32;
    let mut olds_inc = Vec::new();
    let mut olds_dec = Vec::new();
    for _ in 0..n {
        olds_inc.push(inc);
        inc = if inc >= 5 { 0 } else { inc + 1 };
        olds_dec.push(dec);
        dec = if dec == 0 || dec > 7 { 7 } else { dec - 1 };
    }
    olds_inc.sort_unstable();
    olds_dec.sort_unstable();
    Case::ptx("atomics.ptx", "atom_inc_dec")
        .grid([4, 1, 1])
        .block([50, 1, 1])
        .zeros::<u32>(2)
        .zeros::<u32>(2 * n as usize)
        .check(move |o| {
            expect_eq("counters", &o.get::<u32>(0), &[inc, dec])?;
            let olds = o.get::<u32>(1);
            let mut i: Vec<u32> = olds.iter().step_by(2).copied().collect();
            let mut d: Vec<u32> = olds.iter().skip(1).step_by(2).copied().collect();
            i.sort_unstable();
            d.sort_unstable();
            expect_eq("sorted inc olds", &i, &olds_inc)?;
            expect_eq("sorted dec olds", &d, &olds_dec)
        })
}

pub fn red_ops() -> Case {
    let x = Rng::new(50).vec_i32(384, -1000, 1000);
    let mut init = vec![
        0u32,
        i32::MAX as u32,
        i32::MIN as u32,
        u32::MAX,
        0,
        0,
        0f32.to_bits(),
        0,
    ];
    init.extend([0, 0, 0, 0]);
    let mut want = init.clone();
    let mut fsum = 0f32;
    let (mut add64, mut max64) = (0u64, 0u64);
    for &v in &x {
        want[0] = want[0].wrapping_add(v as u32);
        want[1] = (want[1] as i32).min(v) as u32;
        want[2] = (want[2] as i32).max(v) as u32;
        want[3] &= v as u32;
        want[4] |= v as u32;
        want[5] ^= v as u32;
        fsum += v as f32;
        want[7] = want[7].wrapping_add(v as u32);
        let w = (v as i64).wrapping_mul(4294967311) as u64;
        add64 = add64.wrapping_add(w);
        max64 = max64.max(w);
    }
    want[6] = fsum.to_bits();
    want[8] = add64 as u32;
    want[9] = (add64 >> 32) as u32;
    want[10] = max64 as u32;
    want[11] = (max64 >> 32) as u32;
    Case::ptx("atomics.ptx", "red_ops")
        .grid([3, 1, 1])
        .block([128, 1, 1])
        .buf(&x)
        .buf(&init)
        .check(move |o| expect_eq("acc", &o.get::<u32>(1), &want))
}

pub fn carry_chain() -> Case {
    let mut rng = Rng::new(51);
    let mut a: Vec<u32> = rng.vec_u32(4 * 64);
    let b: Vec<u32> = rng.vec_u32(4 * 64);
    // Long carry and borrow propagation.
    a[0..4].copy_from_slice(&[u32::MAX; 4]);
    a[4..8].copy_from_slice(&[0; 4]);
    let limbs = |v: &[u32]| {
        v.iter()
            .rev()
            .fold(0u128, |acc, l| (acc << 32) | *l as u128)
    };
    let split = |v: u128| (0..4).map(move |i| (v >> (32 * i)) as u32);
    let mut want = Vec::new();
    for i in 0..64 {
        let x = limbs(&a[4 * i..4 * i + 4]);
        let y = limbs(&b[4 * i..4 * i + 4]);
        want.extend(split(x.wrapping_add(y)));
        want.extend(split(x.wrapping_sub(y)));
    }
    Case::ptx("atomics.ptx", "carry_chain")
        .block([64, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<u32>(8 * 64)
        .check(move |o| expect_eq("sum, difference limbs", &o.get::<u32>(2), &want))
}

pub fn generic_spaces() -> Case {
    let x = lanes(52).repeat(4);
    let want: Vec<u32> = x
        .iter()
        .flat_map(|v| {
            [
                0x421,
                v.wrapping_add(1000),
                v.wrapping_add(2000),
                v.wrapping_add(3000),
                1,
                1,
            ]
        })
        .collect();
    Case::ptx("spaces.ptx", "generic_spaces")
        .block([128, 1, 1])
        .buf(&x)
        .zeros::<u32>(6 * 128)
        .check(move |o| {
            expect_eq(
                "isspacep bits, shared/local round trips, cvta round trips",
                &o.get::<u32>(1),
                &want,
            )
        })
}

pub fn lanemasks() -> Case {
    let mut want = Vec::new();
    for linear in 0..80u32 {
        let lane = linear % 32;
        let eq = 1u32 << lane;
        let lt = eq - 1;
        want.extend([
            lane,
            eq,
            lt,
            lt | eq,
            !(lt | eq),
            !lt,
            (linear % 40) | (linear / 40) << 16,
            80,
        ]);
    }
    Case::ptx("spaces.ptx", "lanemasks")
        .block([40, 2, 1])
        .zeros::<u32>(8 * 80)
        .check(move |o| expect_eq("out", &o.get::<u32>(0), &want))
}

pub fn exit_divergent() -> Case {
    let x = Rng::new(53).vec_u32(64);
    let want: Vec<u32> = (0..64)
        .flat_map(|t| {
            if t % 2 == 1 {
                [111, x[t]]
            } else {
                [x[t ^ 2], 0x5555_5555]
            }
        })
        .collect();
    Case::ptx("spaces.ptx", "exit_divergent")
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<u32>(2 * 64)
        .check(move |o| expect_eq("out", &o.get::<u32>(1), &want))
}

pub fn int_ops() -> Case {
    let mut rng = Rng::new(54);
    let mut a = rng.vec_i32(64, i32::MIN, i32::MAX);
    let mut b = rng.vec_i32(64, i32::MIN, i32::MAX);
    let mut s: Vec<u32> = (0..64).map(|_| rng.u32() % 40).collect();
    let shifts = [0, 1, 31, 32, 33, 63, 64, 65, 100, u32::MAX, 0x8000_0000, 7];
    s[..shifts.len()].copy_from_slice(&shifts);
    let edges = [
        (i32::MIN, -1),
        (i32::MAX, 1),
        (i32::MIN, 1),
        (-1, i32::MAX),
        (0, 0),
        (-5, 3),
        (5, -3),
    ];
    for (i, (x, y)) in edges.into_iter().enumerate() {
        a[20 + i] = x;
        b[20 + i] = y;
    }
    let want: Vec<u32> = (0..64)
        .flat_map(|i| {
            let (a, b, s) = (a[i], b[i], s[i]);
            let (ua, ub) = (a as u32, b as u32);
            let wide = ((ua as u64) << 32) | ua as u64;
            let sra64 = (wide as i64 >> s.min(63)) as u64;
            let mulhi_s = ((a as i64 * b as i64) >> 32) as u32;
            let sat = |v: i64| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32;
            let p1 = a > 0;
            [
                if s >= 32 { 0 } else { ua << s },
                if s >= 32 { 0 } else { ua >> s },
                (a >> s.min(31)) as u32,
                sra64 as u32,
                sat(a as i64 + b as i64),
                sat(a as i64 - b as i64),
                mulhi_s,
                ((ua as u64 * ub as u64) >> 32) as u32,
                mulhi_s.wrapping_add(s),
                s.wrapping_add(if a < b {
                    ub.wrapping_sub(ua)
                } else {
                    ua.wrapping_sub(ub)
                }),
                s.wrapping_add(ua.abs_diff(ub)),
                a.wrapping_abs() as u32,
                a.wrapping_neg() as u32,
                (a & 3 == 0) as u32,
                if a < b { u32::MAX } else { 0 },
                (a < b && p1) as u32 | ((a < b || p1) as u32) << 1,
                if s as i32 >= 0 { ua } else { ub },
                (sra64 >> 32) as u32,
                if s >= 64 { 0 } else { (wide >> s) as u32 },
                if s >= 64 {
                    0
                } else {
                    ((wide << s) >> 32) as u32
                },
            ]
        })
        .collect();
    Case::ptx("int_ops.ptx", "int_ops")
        .block([64, 1, 1])
        .buf(&a)
        .buf(&b)
        .buf(&s)
        .zeros::<u32>(20 * 64)
        .check(move |o| expect_eq("out", &o.get::<u32>(3), &want))
}

pub fn mem_ops() -> Case {
    let n = 64usize;
    let mut rng = Rng::new(55);
    let bytes: Vec<u8> = (0..4 * n).map(|_| rng.u32() as u8).collect();
    let mut words = Vec::new();
    for t in 0..n {
        let cas_target = if t % 2 == 0 {
            0x1111_1111_2222_2222
        } else {
            rng.next_u64() | 1
        };
        words.extend([cas_target, rng.next_u64()]);
    }
    let total0 = 0.25f64;
    let word = |t: usize| {
        let b = &bytes[4 * t..4 * t + 4];
        let s8 = b[0] as i8 as i32;
        let u8_ = b[1] as u32;
        let s16 = i16::from_le_bytes([b[2], b[3]]) as i32;
        let u16_ = u16::from_le_bytes([b[0], b[1]]) as u32;
        (s8, u8_, s16, u16_)
    };
    let mut want_out = Vec::new();
    let mut want_bytes = bytes.clone();
    let mut want_words = words.clone();
    for t in 0..n {
        let (s8, u8_, s16, u16_) = word(t);
        let (_, _, ns16, nu16) = word(t ^ 1);
        let old = words[2 * t];
        want_out.extend([
            ns16 as u32,
            nu16,
            u16_,
            s8 as u32,
            old as u32,
            (old >> 32) as u32,
        ]);
        want_out.extend([words[2 * t + 1] as u32, u8_]);
        want_bytes[4 * t + 1] = s8.wrapping_add(0x123_4500) as u8;
        let half = (s16.wrapping_add(0x7_0001) as u32 as u16).to_le_bytes();
        want_bytes[4 * t + 2..4 * t + 4].copy_from_slice(&half);
        if t % 2 == 0 {
            want_words[2 * t] = t as u64 * 0x1_0000_0001;
        }
        want_words[2 * t + 1] = (words[2 * t + 1] & !0xffff_ffff) | t as u64;
    }
    let total = total0 + (0..n).map(|t| t as f64 + 0.5).sum::<f64>();
    Case::ptx("mem_ops.ptx", "mem_ops")
        .block([n as u32, 1, 1])
        .buf(&bytes)
        .buf(&words)
        .buf(&[total0])
        .zeros::<u32>(8 * n)
        .check(move |o| {
            expect_eq(
                "out (neighbour s16/u16 via shared, own u16/s8 via local, cas old, exch old, u8)",
                &o.get::<u32>(3),
                &want_out,
            )?;
            expect_eq("bytes after narrow stores", &o.get::<u8>(0), &want_bytes)?;
            expect_eq(
                "words after cas.b64 / exch.b32",
                &o.get::<u64>(1),
                &want_words,
            )?;
            expect_eq("f64 total", &o.get::<f64>(2), &[total])
        })
}

pub fn float_misc() -> Case {
    let vals = [
        1.5f32,
        -2.0,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NAN,
        1e-40,
        65504.0,
    ];
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in vals {
        for y in vals {
            a.push(x);
            b.push(y);
        }
    }
    let f16 = |v: f64| half::f16::from_f64(v);
    let mut want = Vec::new();
    for (t, (&x, &y)) in a.iter().zip(&b).enumerate() {
        let nan = x.is_nan() || y.is_nan();
        let bits = [
            x < y,
            x < y || nan,
            x >= y,
            x >= y || nan,
            x == y,
            x == y || nan,
            x != y && !nan,
            x != y,
            nan,
            !nan,
        ]
        .iter()
        .enumerate()
        .fold(0u32, |m, (i, p)| m | (*p as u32) << i);
        let (fa, fb) = (f16(x as f64), f16(y as f64));
        let sum = f16(fa.to_f64() + fb.to_f64()).to_bits() as u32;
        let sqrt64 = (y as f64).sqrt().to_bits();
        let div64 = (x as f64 / y as f64).to_bits();
        want.extend([
            bits,
            f32::from_bits((y.to_bits() & 0x7fff_ffff) | (x.to_bits() & 0x8000_0000)).to_bits(),
            x.abs().to_bits(),
            (-x).to_bits(),
            (1.0 / x).to_bits(),
            y.sqrt().to_bits(),
            (x / y).to_bits(),
            x.to_bits(),
            sqrt64 as u32,
            (sqrt64 >> 32) as u32,
            div64 as u32,
            (div64 >> 32) as u32,
            (fa.to_bits() as u32) << 16 | fb.to_bits() as u32,
            sum << 16 | sum,
            f16(fb.to_f64() * fa.to_f64() + fb.to_f64()).to_bits() as u32,
            t as u32,
        ]);
    }
    // Columns are compared with NaN-equivalence in their own format.
    let canon = move |v: Vec<u32>| -> Vec<u32> {
        v.chunks(16)
            .flat_map(|c| {
                let mut c = c.to_vec();
                for v in &mut c[1..8] {
                    if f32::from_bits(*v).is_nan() {
                        *v = 0x7fc0_0000;
                    }
                }
                for k in [8, 10] {
                    let d = (c[k + 1] as u64) << 32 | c[k] as u64;
                    if f64::from_bits(d).is_nan() {
                        (c[k], c[k + 1]) = (0, 0x7ff8_0000);
                    }
                }
                for k in [12, 13, 14] {
                    let mut v = c[k];
                    for shift in [0, 16] {
                        let h = (v >> shift) & 0xffff;
                        if h & 0x7c00 == 0x7c00 && h & 0x3ff != 0 {
                            v = (v & !(0xffff << shift)) | (0x7e00 << shift);
                        }
                    }
                    c[k] = v;
                }
                c
            })
            .collect()
    };
    Case::ptx("float_misc.ptx", "float_misc")
        .block([64, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<u32>(16 * 64)
        .check(move |o| {
            expect_eq(
                "out (NaNs canonicalised)",
                &canon(o.get::<u32>(2)),
                &canon(want.clone()),
            )
        })
}

pub fn calls_and_control() -> Case {
    let n = 64usize;
    let mut x = Rng::new(56).vec_u32(n);
    x[..4].copy_from_slice(&[0, 1, 2, 3]);
    let (k, scale) = (5u32, 0.75f32);
    let mut cfg = Vec::new();
    cfg.extend(k.to_le_bytes());
    cfg.extend(scale.to_le_bytes());
    cfg.extend(0u64.to_le_bytes());
    let want: Vec<u32> = (0..n)
        .flat_map(|i| {
            let v = x[i];
            let lane = i % 32;
            [
                if i % 2 == 0 {
                    v.wrapping_add(k)
                } else {
                    v.wrapping_mul(k)
                },
                match v % 4 {
                    0 => 100,
                    1 => v.wrapping_mul(3),
                    2 => v ^ 0x5a5a,
                    _ => !v,
                },
                (v as f32 * scale).to_bits(),
                if lane % 2 == 0 {
                    x[i - lane + (lane + 2) % 32]
                } else {
                    0
                },
                v.swap_bytes(),
                v.rotate_left(k),
                1,
                v,
            ]
        })
        .collect();
    Case::ptx("calls.ptx", "calls_and_control")
        .block([n as u32, 1, 1])
        .raw_param(cfg)
        .buf(&x)
        .zeros::<u32>(8 * n)
        .check(move |o| expect_eq("out", &o.get::<u32>(1), &want))
}

pub fn dp4a_ops() -> Case {
    let mut x = Rng::new(57).vec_u32(64);
    x[..3].copy_from_slice(&[0, u32::MAX, 0x8080_8080]);
    let dp4a = |a: u32, b: u32, c: i32, signed: bool| -> u32 {
        let byte = |v: u32, i: u32| {
            let b = (v >> (8 * i)) as u8;
            if signed { b as i8 as i32 } else { b as i32 }
        };
        (0..4).fold(c, |acc, i| {
            acc.wrapping_add(byte(a, i).wrapping_mul(byte(b, i)))
        }) as u32
    };
    // mul24/mad24: the low 32 bits of the product of the operands' low 24
    // bits (sign-extended for .s32).
    let mul24_u = |a: u32, b: u32| (a & 0xff_ffff).wrapping_mul(b & 0xff_ffff);
    let sext24 = |v: u32| ((v << 8) as i32) >> 8;
    let mad24_s = |a: u32, b: i32, c: i32| sext24(a).wrapping_mul(b).wrapping_add(c) as u32;
    let want: Vec<u32> = x
        .iter()
        .flat_map(|&v| {
            [
                dp4a(v, 0x0102_0304, 7, false),
                dp4a(v, 0xff01_ff02, -3, true),
                mul24_u(v, 0x0102_0304),
                mad24_s(v, -3, 7),
            ]
        })
        .collect();
    Case::ptx("dp4a.ptx", "dp4a_ops")
        .block([64, 1, 1])
        .buf(&x)
        .zeros::<u32>(4 * 64)
        .check(move |o| expect_eq("dp4a, mul24, mad24", &o.get::<u32>(1), &want))
}

/// Buffers hold exactly n elements: an unpredicated access past the end
/// would fault, so this also checks that a false guard suppresses the access.
pub fn triton_style_add() -> Case {
    let n = 1000usize;
    let mut rng = Rng::new(58);
    let x = rng.vec_f32(n, -10.0, 10.0);
    let y = rng.vec_f32(n, -10.0, 10.0);
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    Case::ptx("triton_style.ptx", "add_kernel")
        .grid([n.div_ceil(128) as u32, 1, 1])
        .block([32, 1, 1])
        .buf(&x)
        .buf(&y)
        .zeros::<f32>(n)
        .scalar(n as i32)
        .scalar(0u64)
        .scalar(0u64)
        .check(move |o| expect_f32_bits("z", &o.get::<f32>(2), &want))
}

/// A per-thread spin lock contended by lanes of the same warp: terminates
/// only with independent thread scheduling.
pub fn its_lock() -> Case {
    let (grid, block) = (2u32, 32u32);
    let want_sum: u32 = (0..block).sum::<u32>() * grid;
    Case::ptx("its.ptx", "its_lock")
        .grid([grid, 1, 1])
        .block([block, 1, 1])
        .zeros::<u32>(1)
        .zeros::<u32>(1)
        .zeros::<u32>(1)
        .check(move |o| {
            expect_eq("lock (released)", &o.get::<u32>(0), &[0])?;
            expect_eq("sum of thread indices", &o.get::<u32>(1), &[want_sum])?;
            expect_eq(
                "threads in the critical section",
                &o.get::<u32>(2),
                &[grid * block],
            )
        })
}

/// The spin lock again, with the spinning lanes split into two groups
/// inside the loop: the running group changes all the time, yet the holder
/// must run.
pub fn its_lock_split() -> Case {
    let block = 32u32;
    let want_sum: u32 = (0..block).sum();
    Case::ptx("its.ptx", "its_lock_split")
        .block([block, 1, 1])
        .zeros::<u32>(1)
        .zeros::<u32>(1)
        .zeros::<u32>(1)
        .check(move |o| {
            expect_eq("lock (released)", &o.get::<u32>(0), &[0])?;
            expect_eq("sum of thread indices", &o.get::<u32>(1), &[want_sum])?;
            expect_eq(
                "threads in the critical section",
                &o.get::<u32>(2),
                &[block],
            )
        })
}

/// Lanes spin on a flag another lane of their warp sets, then the warp
/// meets at a full-mask `shfl.sync`, which must wait for every lane.
pub fn its_flag_then_shfl() -> Case {
    let data: Vec<u32> = (0..64u32).map(|i| i * 7 + 3).collect();
    let want: Vec<u32> = (0..64usize)
        .map(|t| data[t] + data[(t & !31) + 31])
        .collect();
    Case::ptx("its.ptx", "its_flag_then_shfl")
        .block([64, 1, 1])
        .zeros::<u32>(2)
        .zeros::<u32>(64)
        .zeros::<u32>(64)
        .check(move |o| {
            expect_eq("flags", &o.get::<u32>(0), &[1, 1])?;
            expect_eq("data (lane 0's writes)", &o.get::<u32>(1), &data)?;
            expect_eq("out = data + lane 31's data", &o.get::<u32>(2), &want)
        })
}

// ---- PTX ISA conformance (`kernels/ptx/conformance.ptx`) --------------------

/// `%`-less and vector registers with components, WARP_SZ, a `.global`
/// declared inside the kernel.
pub fn conf_regs() -> Case {
    let v = Rng::new(60).vec_u32(4 * 64);
    let want: Vec<u32> = v
        .chunks(4)
        .flat_map(|c| {
            let (x, y, z, w) = (c[0], c[1], c[2], c[3]);
            [w, z + (z < x) as u32, y ^ w, x.wrapping_add(32), 64]
        })
        .collect();
    Case::ptx("conformance.ptx", "conf_regs")
        .block([64, 1, 1])
        .buf(&v)
        .zeros::<u32>(5 * 64)
        .check(move |o| expect_eq("{w, z', y', x', visits}", &o.get::<u32>(1), &want))
}

/// `.reg` parameters, multiple returns, register and immediate arguments.
pub fn conf_calls() -> Case {
    let mut rng = Rng::new(61);
    let x = rng.vec_u32(64);
    let mut y = rng.vec_u32(64);
    y[0] = 0;
    y[1] = 6;
    let want: Vec<u32> = x
        .iter()
        .zip(&y)
        .flat_map(|(&x, &y)| {
            [
                x / 7,
                x % 7,
                x / (y | 1),
                x % (y | 1),
                x.wrapping_add(y),
                x.wrapping_sub(y),
            ]
        })
        .collect();
    Case::ptx("conformance.ptx", "conf_calls")
        .block([64, 1, 1])
        .buf(&x)
        .buf(&y)
        .zeros::<u32>(6 * 64)
        .check(move |o| expect_eq("{x/7, x%7, x/y', x%y', x+y, x-y}", &o.get::<u32>(2), &want))
}

/// The value of an FP8 code (`e4m3`: 4 exponent bits; `e5m2`: 5).
fn fp8_value(e4m3: bool, code: u8) -> f64 {
    let (man_bits, bias) = if e4m3 { (3, 7) } else { (2, 15) };
    let exp = ((code & 0x7f) >> man_bits) as i32;
    let man = (code & ((1 << man_bits) - 1)) as f64;
    let top = (1 << (7 - man_bits)) - 1;
    let v = if e4m3 && exp == top && man == 7.0 {
        f64::NAN
    } else if !e4m3 && exp == top {
        if man == 0.0 { f64::INFINITY } else { f64::NAN }
    } else if exp == 0 {
        man * 2f64.powi(1 - bias - man_bits)
    } else {
        (man + 2f64.powi(man_bits)) * 2f64.powi(exp - bias - man_bits)
    };
    if code & 0x80 != 0 { -v } else { v }
}

/// `cvt.rn.satfinite{.relu}` to FP8, by searching every code for the
/// nearest (ties to the even code) and saturating to the largest finite.
fn fp8_ref(e4m3: bool, x: f64, relu: bool) -> u32 {
    if x.is_nan() {
        return 0x7f;
    }
    if relu && x.is_sign_negative() {
        return 0;
    }
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    // `.satfinite`: infinity becomes the largest finite value.
    let a = x.abs().min(if e4m3 { 448.0 } else { 57344.0 });
    let mut best = 0u8;
    for code in 0..0x80u8 {
        let v = fp8_value(e4m3, code);
        if !v.is_finite() {
            continue;
        }
        let (d, db) = ((v - a).abs(), (fp8_value(e4m3, best) - a).abs());
        if d < db || (d == db && code % 2 == 0) {
            best = code;
        }
    }
    // Past the largest finite value the nearest finite is the largest one.
    (sign | best) as u32
}

fn f16_bits_of(v: f64) -> u32 {
    if v.is_nan() {
        0x7fff
    } else {
        half::f16::from_f64(v).to_bits() as u32
    }
}

/// Conversions into wider registers, FP8 pairs, bf16x2, tf32.
pub fn conf_cvt() -> Case {
    let mut rng = Rng::new(62);
    let mut f = vec![
        0.0f32,
        -0.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        448.0,
        449.0,
        464.0,
        480.0,
        1e6,
        57344.0,
        61440.0,
        2f32.powi(-9),
        2f32.powi(-10),
        1.0625,
        -1.0625,
        -3.3,
        1.5e-5,
        -200.5,
        32767.5,
        -40000.0,
        0.3,
    ];
    while f.len() < 64 {
        f.push(rng.wide_f32(-12, 17));
    }
    let mut k = vec![
        0i32,
        -1,
        127,
        128,
        -128,
        -129,
        255,
        256,
        i32::MIN,
        i32::MAX,
        0x1ff80,
    ];
    while k.len() < 64 {
        k.push(rng.range_i32(-100_000, 100_000));
    }
    let mut want = Vec::new();
    for (&x, &k) in f.iter().zip(&k) {
        let g = x * 0.375;
        let (xd, gd) = (x as f64, g as f64);
        let e4 = fp8_ref(true, xd, false) << 8 | fp8_ref(true, gd, false);
        let back = |code: u32| f16_bits_of(fp8_value(true, code as u8));
        let e5 = fp8_ref(false, xd, false) << 8 | fp8_ref(false, gd, false);
        let bf_of = |v: f64| {
            if v.is_nan() {
                0x7fff
            } else {
                half::bf16::from_f64(v).to_bits() as u32
            }
        };
        let bf_pair = |e4m3: bool, pair: u32| {
            bf_of(fp8_value(e4m3, (pair >> 8) as u8)) << 16 | bf_of(fp8_value(e4m3, pair as u8))
        };
        let relu_f16 = |code: u32| {
            let v = fp8_value(false, code as u8);
            if v.is_sign_negative() && !v.is_nan() {
                0
            } else {
                f16_bits_of(v)
            }
        };
        let tf32_rz = if x.is_nan() {
            0x7fff_ffff
        } else if x.is_sign_negative() {
            0
        } else if x.is_infinite() {
            0x7f7f_e000
        } else {
            x.to_bits() & !0x1fff
        };
        let bf = |v: f32| {
            if v.is_nan() {
                0x7fff
            } else {
                half::bf16::from_f32(v).to_bits() as u32
            }
        };
        let tf32 = if x.is_nan() {
            0x7fff_ffff
        } else if x.is_infinite() {
            x.to_bits()
        } else {
            (x.to_bits() + 0x1000) & !0x1fff
        };
        let h = |v: f32| half::f16::from_f32(v).to_f64();
        let rni = if x.is_nan() {
            0
        } else {
            x.round_ties_even().clamp(-32768.0, 32767.0) as i32 as u32
        };
        want.extend([
            k as i8 as i32 as u32,
            k as u8 as u32,
            k.clamp(-128, 127) as u32,
            rni,
            e4,
            back(e4 >> 8) << 16 | back(e4 & 0xff),
            e5,
            fp8_ref(true, xd, true) << 8 | fp8_ref(true, gd, true),
            bf(x) << 16 | bf(g),
            tf32,
            fp8_ref(true, h(x), false) << 8 | fp8_ref(true, h(g), false),
            k as i8 as i32 as u32,
            bf_pair(true, e4),
            bf_pair(false, e5),
            tf32_rz,
            relu_f16(e5 >> 8) << 16 | relu_f16(e5 & 0xff),
        ]);
    }
    Case::ptx("conformance.ptx", "conf_cvt")
        .block([64, 1, 1])
        .buf(&f)
        .buf(&k)
        .zeros::<u32>(16 * 64)
        .check(move |o| {
            let got = o.get::<u32>(2);
            let names = [
                "cvt.s8.s32",
                "cvt.u8.s32",
                "cvt.sat.s8.s32",
                "cvt.rni.s16.f32",
                "e4m3x2.f32",
                "f16x2.e4m3x2",
                "e5m2x2.f32",
                "relu e4m3x2.f32",
                "bf16x2.f32",
                "rna.tf32.f32",
                "e4m3x2.f16x2",
                "cvt.s64.s8",
                "bf16x2.e4m3x2",
                "bf16x2.e5m2x2",
                "rz.relu.satfinite.tf32.f32",
                "relu.f16x2.e5m2x2",
            ];
            for (i, name) in names.iter().enumerate() {
                let pick =
                    |v: &[u32]| -> Vec<u32> { v.iter().skip(i).step_by(16).copied().collect() };
                expect_eq(name, &pick(&got), &pick(&want))?;
            }
            Ok(())
        })
}

/// Comparisons and selection in their less common forms, and mad.cc/madc.
pub fn conf_cmp() -> Case {
    let halves: [u16; 10] = [
        0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x4200, 0x3555,
    ];
    let mut rng = Rng::new(63);
    let mut pick = || halves[(rng.u32() % 10) as usize] as u32;
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..64 {
        let (al, ah, bl, bh) = (pick(), pick(), pick(), pick());
        a.push(ah << 16 | al);
        b.push(if i % 8 == 0 {
            ah << 16 | al
        } else {
            bh << 16 | bl
        });
    }
    let f16 = |x: u32| half::f16::from_bits(x as u16).to_f32();
    let bf16 = |x: u32| half::bf16::from_bits(x as u16).to_f32();
    let mut want = Vec::new();
    for t in 0..64 {
        let (x, y, c) = (a[t], b[t], t % 2 == 1);
        let lt = |s: u32| f16(x >> s) < f16(y >> s);
        let gt = |s: u32| f16(x >> s) > f16(y >> s);
        let ge = |s: u32| f16(x >> s) >= f16(y >> s);
        let chosen = if (x as i32) < (y as i32) { x } else { y };
        let slct = if (y as i32) >= 0 { x } else { y };
        let full = (x as u64)
            .wrapping_mul(y as u64)
            .wrapping_add((y as u64) << 32 | x as u64);
        want.extend([
            lt(0) as u32 | (lt(16) as u32) << 1,
            (gt(0) && c) as u32 | ((gt(16) && c) as u32) << 1,
            if lt(0) { 0xffff } else { 0 } | if lt(16) { 0xffff_0000 } else { 0 },
            if ge(0) { 0x3c00 } else { 0 } | if ge(16) { 0x3c00_0000 } else { 0 },
            if x == y || c { u32::MAX } else { 0 },
            if (x as i16) < (y as i16) {
                1.0f32.to_bits()
            } else {
                0
            },
            if lt(0) { u32::MAX } else { 0 },
            chosen as i16 as i32 as u32,
            slct as u16 as u32,
            (bf16(x) < bf16(y)) as u32,
            if x != y { 0x3f80 } else { 0 },
            full as u32 ^ (full >> 32) as u32,
        ]);
    }
    Case::ptx("conformance.ptx", "conf_cmp")
        .block([64, 1, 1])
        .buf(&a)
        .buf(&b)
        .zeros::<u32>(12 * 64)
        .check(move |o| {
            let got = o.get::<u32>(2);
            let names = [
                "setp.lt.f16x2 p|q",
                "setp.gt.and.f16x2 p|q",
                "set.lt.u32.f16x2",
                "set.ge.f16x2.f16x2",
                "set.eq.or.s32.s32",
                "set.lt.f32.s16",
                "set.lt.s16.f16 (into .b32)",
                "selp.s16 (into .b32)",
                "slct.u16.s32 (into .b32)",
                "setp.lt.bf16",
                "set.ne.bf16.u32",
                "mad.lo.cc/madc.hi",
            ];
            for (i, name) in names.iter().enumerate() {
                let pick =
                    |v: &[u32]| -> Vec<u32> { v.iter().skip(i).step_by(12).copied().collect() };
                expect_eq(name, &pick(&got), &pick(&want))?;
            }
            Ok(())
        })
}

/// `bmsk` and `szext`, from the PTX ISA's pseudocode.
pub fn conf_bits() -> Case {
    let mut rng = Rng::new(64);
    let x = rng.vec_u32(64);
    let mut y = rng.vec_u32(64);
    for (i, v) in y.iter_mut().enumerate().take(40) {
        *v = [0, 1, 31, 32, 33, 63][i % 6] + (i as u32 / 6) * 64;
    }
    let bmsk = |a: u32, b: u32, clamp: bool| -> u32 {
        let a1 = a & 31;
        let mut mask0 = u32::MAX << a1;
        let b1 = b & 31;
        let sum = a1 + b1;
        let mut mask1 = if sum >= 32 { 0 } else { u32::MAX << sum };
        let (mut pos_ovf, mut width_ovf) = (false, false);
        if clamp {
            if a >= 32 {
                pos_ovf = true;
                mask0 = 0;
            }
            width_ovf = b >= 32;
        }
        if sum >= 32 || pos_ovf || width_ovf {
            mask1 = 0;
        } else if b1 == 0 {
            mask1 = u32::MAX;
        }
        mask0 & !mask1
    };
    let szext = |a: u32, b: u32, clamp: bool, signed: bool| -> u32 {
        let b1 = b & 31;
        let too_large = b >= 32 && clamp;
        let mask = if too_large { 0 } else { u32::MAX << b1 };
        let sign_pos = b1.wrapping_sub(1) & 31;
        let sign = !(b1 == 0 || too_large || !signed) && (a >> sign_pos) & 1 == 1;
        (a & !mask) | if sign { mask } else { 0 }
    };
    let want: Vec<u32> = x
        .iter()
        .zip(&y)
        .flat_map(|(&x, &y)| {
            let (a, b) = (x & 63, y & 63);
            [
                bmsk(a, b, true),
                bmsk(a, b, false),
                szext(x, b, true, true),
                szext(x, b, false, false),
            ]
        })
        .collect();
    Case::ptx("conformance.ptx", "conf_bits")
        .block([64, 1, 1])
        .buf(&x)
        .buf(&y)
        .zeros::<u32>(4 * 64)
        .check(move |o| {
            expect_eq(
                "{bmsk.clamp, bmsk.wrap, szext.clamp.s32, szext.wrap.u32}",
                &o.get::<u32>(2),
                &want,
            )
        })
}

/// `cvt.pack.sat` and a function-scope `.const` with an initializer.
pub fn conf_pack() -> Case {
    let mut rng = Rng::new(66);
    let mut x: Vec<i32> = (0..64).map(|_| rng.range_i32(-70_000, 70_000)).collect();
    let mut y: Vec<i32> = (0..64).map(|_| rng.range_i32(-40, 40)).collect();
    x[..6].copy_from_slice(&[0, 15, 16, -1, 32767, -32769]);
    y[..6].copy_from_slice(&[i32::MIN, i32::MAX, 7, -8, 3, 20]);
    let sat = |v: i32, lo: i32, hi: i32| v.clamp(lo, hi) as u32;
    let want: Vec<u32> = (0..64)
        .flat_map(|t| {
            let (a, b) = (x[t], y[t]);
            let s16 = (sat(a, -32768, 32767) & 0xffff) << 16 | (sat(b, -32768, 32767) & 0xffff);
            let u4 = sat(b, 0, 15) | sat(a, 0, 15) << 4 | (t as u32) << 8;
            [s16, u4, (a as u32).wrapping_add(5)]
        })
        .collect();
    Case::ptx("conformance.ptx", "conf_pack")
        .block([64, 1, 1])
        .buf(&x)
        .buf(&y)
        .zeros::<u32>(3 * 64)
        .check(move |o| {
            expect_eq(
                "{pack.sat.s16.s32, pack.sat.u4.s32.b32, x + .const bias}",
                &o.get::<u32>(2),
                &want,
            )
        })
}
