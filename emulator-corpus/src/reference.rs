//! CPU reference semantics that the host's arithmetic does not give directly:
//! directed rounding, PTX's byte permute, funnel shifts, bit fields, shuffles.

use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    Nearest,
    Zero,
    Down,
    Up,
}

pub const MODES: [Round; 4] = [Round::Nearest, Round::Zero, Round::Down, Round::Up];

/// Rounds in `mode`, given the round-to-nearest result `rn` and how `rn`
/// compares with the exact value.
fn directed(rn: f32, rn_vs_exact: Ordering, mode: Round) -> f32 {
    match (mode, rn_vs_exact) {
        (Round::Nearest, _) | (_, Ordering::Equal) => rn,
        (Round::Down, Ordering::Greater) => next_down(rn),
        (Round::Up, Ordering::Less) => next_up(rn),
        (Round::Zero, Ordering::Greater) if rn > 0.0 => next_down(rn),
        (Round::Zero, Ordering::Less) if rn < 0.0 => next_up(rn),
        _ => rn,
    }
}

/// The next float toward +inf (`f32::next_up`, which needs Rust 1.86).
fn next_up(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let b = x.to_bits();
    f32::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

fn next_down(x: f32) -> f32 {
    -next_up(-x)
}

/// Error-free transformation: `s + e == a + b` exactly.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// `rn` compared with the exact value `s + e`.
fn compare_with(rn: f32, s: f64, e: f64) -> Ordering {
    if rn.is_infinite() {
        return if rn > 0.0 {
            Ordering::Greater
        } else {
            Ordering::Less
        };
    }
    (rn as f64 - s).partial_cmp(&e).unwrap_or(Ordering::Equal)
}

/// The sign of an exactly-zero sum `p + q`: two zeros of one sign keep it;
/// otherwise the result is +0, except when rounding down (-0).
fn zero_sum(p_negative_zero: Option<bool>, q: f32, mode: Round) -> f32 {
    match p_negative_zero {
        Some(neg) if q == 0.0 && neg == q.is_sign_negative() => q,
        _ if mode == Round::Down => -0.0,
        _ => 0.0,
    }
}

pub fn add_f32(x: f32, y: f32, mode: Round) -> f32 {
    let rn = x + y;
    if rn.is_nan() || x.is_infinite() || y.is_infinite() {
        return rn;
    }
    let (s, e) = two_sum(x as f64, y as f64);
    if s == 0.0 && e == 0.0 {
        return zero_sum((x == 0.0).then_some(x.is_sign_negative()), y, mode);
    }
    directed(rn, compare_with(rn, s, e), mode)
}

pub fn mul_f32(x: f32, y: f32, mode: Round) -> f32 {
    let rn = x * y;
    if rn.is_nan() || x.is_infinite() || y.is_infinite() {
        return rn;
    }
    let exact = x as f64 * y as f64;
    directed(rn, compare_with(rn, exact, 0.0), mode)
}

pub fn div_f32(x: f32, y: f32, mode: Round) -> f32 {
    let rn = x / y;
    if !rn.is_finite() && (x.is_infinite() || y == 0.0 || rn.is_nan()) {
        return rn;
    }
    if rn.is_infinite() {
        return directed(
            rn,
            if rn > 0.0 {
                Ordering::Greater
            } else {
                Ordering::Less
            },
            mode,
        );
    }
    // sign(rn - x/y) = sign(rn*y - x) * sign(y); rn*y is exact in f64.
    let c = (rn as f64 * y as f64)
        .partial_cmp(&(x as f64))
        .unwrap_or(Ordering::Equal);
    let c = if y < 0.0 { c.reverse() } else { c };
    directed(rn, c, mode)
}

pub fn fma_f32(x: f32, y: f32, z: f32, mode: Round) -> f32 {
    let rn = x.mul_add(y, z);
    if !(rn.is_finite() || x.is_finite() && y.is_finite() && z.is_finite()) {
        return rn;
    }
    let (s, e) = two_sum(x as f64 * y as f64, z as f64);
    if s == 0.0 && e == 0.0 {
        let product_zero = x == 0.0 || y == 0.0;
        let product_negative = x.is_sign_negative() != y.is_sign_negative();
        return zero_sum(product_zero.then_some(product_negative), z, mode);
    }
    directed(rn, compare_with(rn, s, e), mode)
}

pub fn i32_to_f32(v: i32, mode: Round) -> f32 {
    let rn = v as f32;
    directed(rn, (rn as f64).partial_cmp(&(v as f64)).unwrap(), mode)
}

/// `prmt.b32` in its default (selector) mode and its named modes.
pub fn prmt(a: u32, b: u32, c: u32, mode: Option<&str>) -> u32 {
    let bytes = ((b as u64) << 32) | a as u64;
    let byte = |i: u32| ((bytes >> (8 * (i & 7))) & 0xff) as u32;
    let Some(mode) = mode else {
        let mut d = 0;
        for k in 0..4 {
            let sel = (c >> (4 * k)) & 0xf;
            let mut v = byte(sel & 7);
            if sel & 8 != 0 {
                v = if v & 0x80 != 0 { 0xff } else { 0 };
            }
            d |= v << (8 * k);
        }
        return d;
    };
    // Source byte of d.b3, d.b2, d.b1, d.b0 for c[1:0] = 0..3 (PTX ISA, prmt).
    let table: [[u32; 4]; 4] = match mode {
        "f4e" => [[3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2], [6, 5, 4, 3]],
        "b4e" => [[5, 6, 7, 0], [6, 7, 0, 1], [7, 0, 1, 2], [0, 1, 2, 3]],
        "rc8" => [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
        "ecl" => [[3, 2, 1, 0], [3, 2, 1, 1], [3, 2, 2, 2], [3, 3, 3, 3]],
        "ecr" => [[0, 0, 0, 0], [1, 1, 1, 0], [2, 2, 1, 0], [3, 2, 1, 0]],
        "rc16" => [[1, 0, 1, 0], [3, 2, 3, 2], [1, 0, 1, 0], [3, 2, 3, 2]],
        other => panic!("no prmt mode {other}"),
    };
    let row = table[(c & 3) as usize];
    (byte(row[0]) << 24) | (byte(row[1]) << 16) | (byte(row[2]) << 8) | byte(row[3])
}

/// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c`.
pub fn shf(a: u32, b: u32, c: u32, left: bool, clamp: bool) -> u32 {
    let n = if clamp { c.min(32) } else { c & 31 } as u64;
    let v = ((b as u64) << 32) | a as u64;
    if left {
        ((v << n) >> 32) as u32
    } else {
        (v >> n) as u32
    }
}

pub fn lop3(a: u32, b: u32, c: u32, lut: u8) -> u32 {
    (0..32).fold(0, |d, i| {
        let idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        d | ((((lut >> idx) & 1) as u32) << i)
    })
}

/// `bfe` on a `bits`-wide value, `signed` for .s32/.s64.
pub fn bfe(a: u64, pos: u32, len: u32, bits: u32, signed: bool) -> u64 {
    let msb = bits - 1;
    let bit = |i: u32| (a >> i) & 1;
    let sbit = if !signed || len == 0 {
        0
    } else {
        bit((pos + len - 1).min(msb))
    };
    (0..=msb).fold(0, |d, i| {
        let v = if i < len && pos + i <= msb {
            bit(pos + i)
        } else {
            sbit
        };
        d | (v << i)
    })
}

pub fn bfi_b32(a: u32, b: u32, pos: u32, len: u32) -> u32 {
    let mut f = b;
    let mut i = 0;
    while i < len && pos + i <= 31 {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

#[derive(Clone, Copy)]
pub enum Shfl {
    Up,
    Down,
    Bfly,
    Idx,
}

/// `shfl.sync` for a full warp: (value, predicate) of every lane.
pub fn shfl(vals: &[u32; 32], mode: Shfl, b: impl Fn(u32) -> u32, c: u32) -> Vec<(u32, bool)> {
    (0..32u32)
        .map(|lane| {
            let bval = b(lane) & 31;
            let cval = c & 31;
            let segmask = (c >> 8) & 31;
            let max_lane = (lane & segmask) | (cval & !segmask);
            let min_lane = lane & segmask;
            let (j, p) = match mode {
                Shfl::Up => {
                    let j = lane as i32 - bval as i32;
                    (j, j >= max_lane as i32)
                }
                Shfl::Down => {
                    let j = (lane + bval) as i32;
                    (j, j <= max_lane as i32)
                }
                Shfl::Bfly => {
                    let j = (lane ^ bval) as i32;
                    (j, j <= max_lane as i32)
                }
                Shfl::Idx => {
                    let j = (min_lane | (bval & !segmask)) as i32;
                    (j, j <= max_lane as i32)
                }
            };
            let src = if p { j as usize } else { lane as usize };
            (vals[src], p)
        })
        .collect()
}
