//! Typed values as the emulator CLIs' input files write them, one parser
//! for both: the PTX emulator's `.kern` headers (`prlxctl emu run x.kern`)
//! and the RDNA emulator's `.s` headers (`prlx_rdna::asm`).
//!
//! - [`ElemType`]: the element types (`u8`..`u64`, `i8`..`i64` also spelled
//!   `s8`..`s64`, `f16`, `bf16`, `f32`, `f64`), their sizes, how a number
//!   encodes into one ([`ElemType::encode`] checks range and integrality,
//!   [`ElemType::encode_wrapping`] wraps to the width) and how device bytes
//!   print back ([`ElemType::format`]).
//! - [`Number`] and [`parse_number`]: a number as written (decimal, `0x`,
//!   `0b`, floats, `inf`, `nan`, optional sign), kept exact when it is an
//!   integer.
//! - [`SplitMix`]: the deterministic generator behind random initializers.

use std::fmt::Write as _;

/// An element type of a typed argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// A number as written: an integer (kept exact) or a float.
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

    /// The integer, when the number was written as one.
    pub fn as_int(self) -> Option<i128> {
        match self {
            Number::Int(i) => Some(i),
            Number::Float(_) => None,
        }
    }
}

impl ElemType {
    /// Parses a type name: `u8`..`u64`, `i8`..`i64` (or `s8`..`s64`),
    /// `f16`, `bf16`, `f32`, `f64`.
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

    /// Bytes per element.
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

    /// The inclusive range of an integer type (all of `i128` for floats).
    pub fn int_range(self) -> (i128, i128) {
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

    /// The little-endian bytes of a float type (rounded to nearest even).
    fn float_bytes(self, v: f64, out: &mut Vec<u8>) {
        match self {
            ElemType::F16 => out.extend(half::f16::from_f64(v).to_le_bytes()),
            ElemType::Bf16 => out.extend(half::bf16::from_f64(v).to_le_bytes()),
            ElemType::F32 => out.extend((v as f32).to_le_bytes()),
            _ => out.extend(v.to_le_bytes()),
        }
    }

    /// Appends `v` as little-endian bytes; integers must be whole and in
    /// range (the error says which and names the type).
    pub fn encode(self, v: Number, out: &mut Vec<u8>) -> Result<(), String> {
        if self.is_float() {
            self.float_bytes(v.as_f64(), out);
            return Ok(());
        }
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
        Ok(())
    }

    /// The little-endian bytes of `v`: floats rounded to nearest, integers
    /// wrapped to the width (a float truncated toward zero first, saturating).
    pub fn encode_wrapping(self, v: Number) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size());
        if self.is_float() {
            self.float_bytes(v.as_f64(), &mut out);
        } else {
            let i = v.as_int().unwrap_or(v.as_f64() as i128);
            out.extend(&i.to_le_bytes()[..self.size()]);
        }
        out
    }

    /// Appends one element (`bytes`, at least [`ElemType::size`] long) as
    /// text: integers in decimal, floats in their shortest round-trip form.
    pub fn format(self, bytes: &[u8], out: &mut String) {
        let mut raw = [0u8; 8];
        let n = bytes.len().min(8);
        raw[..n].copy_from_slice(&bytes[..n]);
        let u = u64::from_le_bytes(raw);
        let _ = match self {
            ElemType::U8 => write!(out, "{}", u as u8),
            ElemType::U16 => write!(out, "{}", u as u16),
            ElemType::U32 => write!(out, "{}", u as u32),
            ElemType::U64 => write!(out, "{u}"),
            ElemType::I8 => write!(out, "{}", u as u8 as i8),
            ElemType::I16 => write!(out, "{}", u as u16 as i16),
            ElemType::I32 => write!(out, "{}", u as u32 as i32),
            ElemType::I64 => write!(out, "{}", u as i64),
            ElemType::F16 => write!(out, "{}", half::f16::from_bits(u as u16).to_f32()),
            ElemType::Bf16 => write!(out, "{}", half::bf16::from_bits(u as u16).to_f32()),
            ElemType::F32 => write!(out, "{}", f32::from_bits(u as u32)),
            ElemType::F64 => write!(out, "{}", f64::from_bits(u)),
        };
    }

    /// One element as text ([`ElemType::format`] into a new string).
    pub fn decode(self, bytes: &[u8]) -> String {
        let mut s = String::new();
        self.format(bytes, &mut s);
        s
    }
}

/// A number as written, surrounding spaces ignored: decimal, `0x` hex, `0b`
/// binary (integers, kept exact), floats (`1.5`, `.5`, `1e3`), `inf`,
/// `infinity`, `nan`; an optional sign. `None` for anything else.
pub fn parse_number(s: &str) -> Option<Number> {
    let s = s.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let int = |v: i128| Number::Int(if neg { -v } else { v });
    let lower = body.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return i128::from_str_radix(hex, 16).ok().map(int);
    }
    if let Some(bin) = lower.strip_prefix("0b") {
        return i128::from_str_radix(bin, 2).ok().map(int);
    }
    if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
        return body.parse::<i128>().ok().map(int);
    }
    let f = match lower.as_str() {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ if body.starts_with(|c: char| c.is_ascii_digit() || c == '.') => {
            body.parse::<f64>().ok()?
        }
        _ => return None,
    };
    Some(Number::Float(if neg { -f } else { f }))
}

/// A small deterministic generator (splitmix64) for random initializers.
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

    fn bytes(ty: ElemType, v: Number) -> Vec<u8> {
        let mut b = Vec::new();
        ty.encode(v, &mut b).unwrap();
        b
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0b101"), Some(Number::Int(5)));
        assert_eq!(parse_number("-0x10"), Some(Number::Int(-16)));
        assert_eq!(parse_number("0XfF"), Some(Number::Int(255)));
        assert_eq!(parse_number(" +7 "), Some(Number::Int(7)));
        assert_eq!(parse_number("1e3"), Some(Number::Float(1000.0)));
        assert_eq!(parse_number("-.5"), Some(Number::Float(-0.5)));
        assert_eq!(parse_number("-inf"), Some(Number::Float(f64::NEG_INFINITY)));
        assert_eq!(parse_number("Infinity"), Some(Number::Float(f64::INFINITY)));
        assert!(matches!(parse_number("nan"), Some(Number::Float(f)) if f.is_nan()));
        for bad in ["abc", "", "-", "0x", "0b2", "1.5.2", "e5", "--1", "1_000"] {
            assert_eq!(parse_number(bad), None, "{bad:?}");
        }
        // Integers beyond f64's precision stay exact.
        assert_eq!(
            parse_number("18446744073709551615"),
            Some(Number::Int(u64::MAX as i128))
        );
    }

    #[test]
    fn type_names_round_trip() {
        for name in [
            "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64",
        ] {
            assert_eq!(ElemType::parse(name).unwrap().name(), name);
        }
        assert_eq!(ElemType::parse("s32"), Some(ElemType::I32));
        assert_eq!(ElemType::parse("f8"), None);
        assert_eq!(ElemType::parse("U32"), None);
    }

    #[test]
    fn integers_are_range_checked() {
        let mut b = Vec::new();
        assert!(ElemType::U8.encode(Number::Int(255), &mut b).is_ok());
        assert_eq!(b, [255]);
        let e = ElemType::U8.encode(Number::Int(256), &mut b).unwrap_err();
        assert_eq!(e, "256 does not fit in u8");
        let e = ElemType::I32
            .encode(Number::Float(1.5), &mut b)
            .unwrap_err();
        assert_eq!(e, "1.5 is not an integer, but the type is i32");
        assert_eq!(bytes(ElemType::I16, Number::Int(-2)), [0xfe, 0xff]);
        assert_eq!(bytes(ElemType::U16, Number::Float(3.0)), [3, 0]);
    }

    #[test]
    fn wrapping_encodes_wrap_to_the_width() {
        assert_eq!(ElemType::U8.encode_wrapping(Number::Int(256)), [0]);
        assert_eq!(ElemType::U32.encode_wrapping(Number::Int(-1)), [0xff; 4]);
        assert_eq!(
            ElemType::I16.encode_wrapping(Number::Float(-2.7)),
            [0xfe, 0xff]
        );
        assert_eq!(
            ElemType::F32.encode_wrapping(Number::Int(3)),
            3.0f32.to_le_bytes()
        );
    }

    #[test]
    fn formats_typed_values() {
        let mut s = String::new();
        ElemType::F32.format(&1.5f32.to_le_bytes(), &mut s);
        s.push(' ');
        ElemType::I8.format(&[0xff], &mut s);
        s.push(' ');
        ElemType::Bf16.format(&bytes(ElemType::Bf16, Number::Float(2.0)), &mut s);
        s.push(' ');
        ElemType::F16.format(&bytes(ElemType::F16, Number::Float(-0.5)), &mut s);
        s.push(' ');
        ElemType::U64.format(&u64::MAX.to_le_bytes(), &mut s);
        assert_eq!(s, "1.5 -1 2 -0.5 18446744073709551615");
        assert_eq!(ElemType::U8.decode(&[200, 1]), "200");
    }

    #[test]
    fn half_precision_rounds_to_nearest_even() {
        let f16 =
            |v: f64| u16::from_le_bytes(bytes(ElemType::F16, Number::Float(v)).try_into().unwrap());
        let bf16 = |v: f64| {
            u16::from_le_bytes(bytes(ElemType::Bf16, Number::Float(v)).try_into().unwrap())
        };
        assert_eq!(f16(1.0), 0x3c00);
        assert_eq!(f16(65504.0), 0x7bff);
        assert_eq!(f16(65520.0), 0x7c00); // ties to even: overflows
        assert_eq!(f16(1.0 + 1.0 / 2048.0), 0x3c00); // tie, even stays
        assert_eq!(f16(1.0 + 3.0 / 2048.0), 0x3c02); // tie, odd rounds up
        assert_eq!(f16(5.960_464_477_539_063e-8), 0x0001); // smallest subnormal
        assert_eq!(f16(2.9e-8), 0x0000);
        assert_eq!(ElemType::F16.decode(&f16(f64::NAN).to_le_bytes()), "NaN");
        assert_eq!(ElemType::F16.decode(&[1, 0]), "0.000000059604645");
        assert_eq!(ElemType::F16.decode(&0xc000u16.to_le_bytes()), "-2");
        assert_eq!(bf16(1.0 + 1.0 / 256.0), 0x3f80); // tie to even
        assert_eq!(bf16(1.0 + 3.0 / 256.0), 0x3f82);
    }

    #[test]
    fn splitmix_is_the_reference_sequence() {
        // splitmix64 from seed 0: the published first outputs.
        let mut r = SplitMix::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let u = SplitMix::new(7).unit();
        assert!((0.0..1.0).contains(&u));
    }

    proptest::proptest! {
        /// Every integer in range encodes and prints back as itself.
        #[test]
        fn integers_round_trip(v in proptest::num::i64::ANY) {
            for ty in [ElemType::I8, ElemType::I16, ElemType::I32, ElemType::I64,
                       ElemType::U8, ElemType::U16, ElemType::U32, ElemType::U64] {
                let (lo, hi) = ty.int_range();
                let mut b = Vec::new();
                let r = ty.encode(Number::Int(v as i128), &mut b);
                proptest::prop_assert_eq!(r.is_ok(), (lo..=hi).contains(&(v as i128)));
                if r.is_ok() {
                    proptest::prop_assert_eq!(ty.decode(&b), v.to_string());
                    proptest::prop_assert_eq!(ty.encode_wrapping(Number::Int(v as i128)), b);
                }
            }
        }

        /// Arbitrary text never panics the number parser.
        #[test]
        fn parse_number_never_panics(s in ".{0,24}") {
            let _ = parse_number(&s);
        }
    }
}
