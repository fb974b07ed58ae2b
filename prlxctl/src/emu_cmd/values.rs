//! Element types of `.kern` arguments: their sizes, how numbers encode into
//! them, and how device bytes print back.

use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElemType {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F16,
    Bf16,
    F32,
    F64,
}

/// A number as written in a `.kern` file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

impl ElemType {
    pub fn parse(s: &str) -> Option<ElemType> {
        Some(match s {
            "u8" => ElemType::U8,
            "u16" => ElemType::U16,
            "u32" => ElemType::U32,
            "u64" => ElemType::U64,
            "i8" | "s8" => ElemType::I8,
            "i16" | "s16" => ElemType::I16,
            "i32" | "s32" => ElemType::I32,
            "i64" | "s64" => ElemType::I64,
            "f16" => ElemType::F16,
            "bf16" => ElemType::Bf16,
            "f32" => ElemType::F32,
            "f64" => ElemType::F64,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ElemType::U8 => "u8",
            ElemType::U16 => "u16",
            ElemType::U32 => "u32",
            ElemType::U64 => "u64",
            ElemType::I8 => "i8",
            ElemType::I16 => "i16",
            ElemType::I32 => "i32",
            ElemType::I64 => "i64",
            ElemType::F16 => "f16",
            ElemType::Bf16 => "bf16",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    pub fn size(self) -> usize {
        match self {
            ElemType::U8 | ElemType::I8 => 1,
            ElemType::U16 | ElemType::I16 | ElemType::F16 | ElemType::Bf16 => 2,
            ElemType::U32 | ElemType::I32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::I64 | ElemType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::F16 | ElemType::Bf16 | ElemType::F32 | ElemType::F64
        )
    }

    /// The inclusive range of an integer type.
    fn int_range(self) -> (i128, i128) {
        match self {
            ElemType::U8 => (0, u8::MAX as i128),
            ElemType::U16 => (0, u16::MAX as i128),
            ElemType::U32 => (0, u32::MAX as i128),
            ElemType::U64 => (0, u64::MAX as i128),
            ElemType::I8 => (i8::MIN as i128, i8::MAX as i128),
            ElemType::I16 => (i16::MIN as i128, i16::MAX as i128),
            ElemType::I32 => (i32::MIN as i128, i32::MAX as i128),
            ElemType::I64 => (i64::MIN as i128, i64::MAX as i128),
            _ => (i128::MIN, i128::MAX),
        }
    }

    /// Appends `v` as little-endian bytes; integers must be whole and in range.
    pub fn encode(self, v: Number, out: &mut Vec<u8>) -> Result<(), String> {
        match self {
            ElemType::F16 => out.extend(f32_to_f16(v.as_f64() as f32).to_le_bytes()),
            ElemType::Bf16 => out.extend(f32_to_bf16(v.as_f64() as f32).to_le_bytes()),
            ElemType::F32 => out.extend((v.as_f64() as f32).to_le_bytes()),
            ElemType::F64 => out.extend(v.as_f64().to_le_bytes()),
            _ => {
                let i = match v {
                    Number::Int(i) => i,
                    Number::Float(f) if f.fract() == 0.0 && f.abs() < 1e38 => f as i128,
                    Number::Float(f) => {
                        return Err(format!(
                            "{f} is not an integer, but the type is {}",
                            self.name()
                        ));
                    }
                };
                let (lo, hi) = self.int_range();
                if i < lo || i > hi {
                    return Err(format!("{i} does not fit in {}", self.name()));
                }
                out.extend(&i.to_le_bytes()[..self.size()]);
            }
        }
        Ok(())
    }

    /// One element as text: integers in decimal, floats in their shortest
    /// round-trip form.
    pub fn format(self, bytes: &[u8], out: &mut String) {
        let mut raw = [0u8; 8];
        raw[..bytes.len()].copy_from_slice(bytes);
        let u = u64::from_le_bytes(raw);
        let _ = match self {
            ElemType::U8 | ElemType::U16 | ElemType::U32 | ElemType::U64 => write!(out, "{u}"),
            ElemType::I8 => write!(out, "{}", u as u8 as i8),
            ElemType::I16 => write!(out, "{}", u as u16 as i16),
            ElemType::I32 => write!(out, "{}", u as u32 as i32),
            ElemType::I64 => write!(out, "{}", u as i64),
            ElemType::F16 => write!(out, "{}", f16_to_f32(u as u16)),
            ElemType::Bf16 => write!(out, "{}", f32::from_bits((u as u32) << 16)),
            ElemType::F32 => write!(out, "{}", f32::from_bits(u as u32)),
            ElemType::F64 => write!(out, "{}", f64::from_bits(u)),
        };
    }
}

/// Prints an output array: short 1-D arrays on one line, longer ones 16
/// values to a line, 2-D and deeper arrays one row (last dimension) per line.
pub fn format_array(name: &str, ty: ElemType, shape: &[usize], bytes: &[u8]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let mut s = format!("{name}: {}[{}]", ty.name(), dims.join(", "));
    let values: Vec<String> = bytes
        .chunks_exact(ty.size())
        .map(|b| {
            let mut v = String::new();
            ty.format(b, &mut v);
            v
        })
        .collect();
    let row_len = if shape.len() > 1 {
        *shape.last().unwrap_or(&1)
    } else {
        16
    };
    if shape.len() == 1 && values.len() <= 16 {
        let _ = write!(s, " = [{}]", values.join(", "));
        return s;
    }
    let label = |r: usize| if shape.len() > 1 { r } else { r * row_len };
    let rows = values.len().div_ceil(row_len.max(1));
    let width = label(rows.saturating_sub(1)).to_string().len();
    for (r, row) in values.chunks(row_len.max(1)).enumerate() {
        let label = label(r);
        let _ = write!(s, "\n  [{label:>width$}] {}", row.join(" "));
    }
    s
}

/// f32 -> IEEE binary16, rounding to nearest even.
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    let round = |kept: u32, rem: u32, halfway: u32| {
        if rem > halfway || (rem == halfway && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        // Subnormal: the significand (with its implicit bit) shifted into 2^-24 units.
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let kept = m >> shift;
        return sign | round(kept, m & ((1 << shift) - 1), 1 << (shift - 1)) as u16;
    }
    // A carry out of the significand correctly bumps the exponent (up to inf).
    sign | round(((e as u32) << 10) | (man >> 13), man & 0x1fff, 0x1000) as u16
}

pub fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    match exp {
        0 => sign * man as f32 * f32::from_bits(0x3380_0000), // 2^-24
        31 => f32::from_bits(((h as u32 & 0x8000) << 16) | 0x7f80_0000 | (man << 13)),
        _ => f32::from_bits(((h as u32 & 0x8000) << 16) | ((exp + 112) << 23) | (man << 13)),
    }
}

/// f32 -> bfloat16, rounding to nearest even; NaNs stay quiet NaNs.
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) as u16) | 0x40;
    }
    (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

/// A small deterministic generator (splitmix64) for `random(seed, lo, hi)`.
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_range_checked() {
        let mut b = Vec::new();
        assert!(ElemType::U8.encode(Number::Int(255), &mut b).is_ok());
        assert_eq!(b, [255]);
        assert!(
            ElemType::U8
                .encode(Number::Int(256), &mut b)
                .unwrap_err()
                .contains("does not fit in u8")
        );
        assert!(
            ElemType::I32
                .encode(Number::Float(1.5), &mut b)
                .unwrap_err()
                .contains("not an integer")
        );
        b.clear();
        ElemType::I16.encode(Number::Int(-2), &mut b).unwrap();
        assert_eq!(b, [0xfe, 0xff]);
    }

    #[test]
    fn formats_typed_values() {
        let mut s = String::new();
        ElemType::F32.format(&1.5f32.to_le_bytes(), &mut s);
        s.push(' ');
        ElemType::I8.format(&[0xff], &mut s);
        s.push(' ');
        ElemType::Bf16.format(&f32_to_bf16(2.0).to_le_bytes(), &mut s);
        s.push(' ');
        ElemType::F16.format(&f32_to_f16(-0.5).to_le_bytes(), &mut s);
        assert_eq!(s, "1.5 -1 2 -0.5");
    }

    #[test]
    fn half_precision_rounds_to_nearest_even() {
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(65520.0), 0x7c00); // ties to even: overflows
        assert_eq!(f32_to_f16(1.0 + 1.0 / 2048.0), 0x3c00); // tie, even stays
        assert_eq!(f32_to_f16(1.0 + 3.0 / 2048.0), 0x3c02); // tie, odd rounds up
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001); // smallest subnormal
        assert_eq!(f32_to_f16(2.9e-8), 0x0000);
        assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f32_to_bf16(1.0 + 1.0 / 256.0), 0x3f80); // tie to even
        assert_eq!(f32_to_bf16(1.0 + 3.0 / 256.0), 0x3f82);
    }

    #[test]
    fn arrays_print_compactly() {
        let bytes: Vec<u8> = [1u32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            format_array("out_x", ElemType::U32, &[3], &bytes),
            "out_x: u32[3] = [1, 2, 3]"
        );
        let bytes: Vec<u8> = (0..6u32).flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            format_array("out_m", ElemType::U32, &[2, 3], &bytes),
            "out_m: u32[2, 3]\n  [0] 0 1 2\n  [1] 3 4 5"
        );
    }
}
