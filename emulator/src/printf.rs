//! Device-side `printf` (`vprintf`): formats a C format string against the
//! argument buffer the compiler packs (each argument at its natural
//! alignment; `float` promoted to `double`).

/// Formats `fmt`; `arg(size)` returns the next argument of `size` bytes
/// (4 or 8) from the buffer, `string(ptr)` the C string at a device address.
pub fn format(
    fmt: &[u8],
    mut arg: impl FnMut(u32) -> u64,
    string: impl Fn(u64) -> String,
) -> (String, u32) {
    let mut out = String::new();
    let mut count = 0u32;
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c as char);
            i += 1;
            continue;
        }
        i += 1;
        if fmt.get(i) == Some(&b'%') {
            out.push('%');
            i += 1;
            continue;
        }
        // %[flags][width][.precision][length]conversion
        let mut flags = String::new();
        while let Some(&f) = fmt.get(i) {
            if b"-+ #0".contains(&f) {
                flags.push(f as char);
                i += 1;
            } else {
                break;
            }
        }
        let mut width: Option<usize> = None;
        if fmt.get(i) == Some(&b'*') {
            width = Some(arg(4) as u32 as i32 as usize);
            count += 1;
            i += 1;
        } else {
            while let Some(d) = fmt.get(i).filter(|d| d.is_ascii_digit()) {
                width = Some(width.unwrap_or(0) * 10 + (d - b'0') as usize);
                i += 1;
            }
        }
        let mut precision: Option<usize> = None;
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            precision = Some(0);
            if fmt.get(i) == Some(&b'*') {
                precision = Some(arg(4) as u32 as i32 as usize);
                count += 1;
                i += 1;
            } else {
                while let Some(d) = fmt.get(i).filter(|d| d.is_ascii_digit()) {
                    precision = Some(precision.unwrap_or(0) * 10 + (d - b'0') as usize);
                    i += 1;
                }
            }
        }
        let mut long = 0;
        while let Some(&l) = fmt.get(i) {
            match l {
                b'l' | b'L' | b'q' | b'j' | b'z' | b't' => {
                    long += 1;
                    i += 1;
                }
                b'h' => i += 1,
                _ => break,
            }
        }
        let Some(&conv) = fmt.get(i) else {
            out.push('%');
            break;
        };
        i += 1;
        count += 1;
        let int_size = if long > 0 { 8 } else { 4 };
        let left = flags.contains('-');
        let zero = flags.contains('0') && !left;
        let body = match conv {
            b'd' | b'i' => {
                let v = arg(int_size);
                let v = if int_size == 8 {
                    v as i64
                } else {
                    v as u32 as i32 as i64
                };
                let mut s = v.unsigned_abs().to_string();
                if let Some(p) = precision {
                    while s.len() < p {
                        s.insert(0, '0');
                    }
                }
                let sign = if v < 0 {
                    "-"
                } else if flags.contains('+') {
                    "+"
                } else if flags.contains(' ') {
                    " "
                } else {
                    ""
                };
                pad_number(sign, &s, width, left, zero && precision.is_none())
            }
            b'u' | b'x' | b'X' | b'o' => {
                let v = arg(int_size);
                let v = if int_size == 8 { v } else { v as u32 as u64 };
                let mut s = match conv {
                    b'u' => v.to_string(),
                    b'x' => format!("{v:x}"),
                    b'X' => format!("{v:X}"),
                    _ => format!("{v:o}"),
                };
                if let Some(p) = precision {
                    while s.len() < p {
                        s.insert(0, '0');
                    }
                }
                let prefix = match (flags.contains('#'), conv, v) {
                    (true, b'x', 1..) => "0x",
                    (true, b'X', 1..) => "0X",
                    (true, b'o', _) => "0",
                    _ => "",
                };
                pad_number(prefix, &s, width, left, zero && precision.is_none())
            }
            b'c' => pad(&((arg(4) as u8) as char).to_string(), width, left),
            b's' => {
                let mut s = string(arg(8));
                if let Some(p) = precision {
                    s = s.chars().take(p).collect();
                }
                pad(&s, width, left)
            }
            b'p' => pad(&format!("0x{:x}", arg(8)), width, left),
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(arg(8));
                let p = precision.unwrap_or(6);
                let s = match conv {
                    _ if v.is_nan() => "nan".to_string(),
                    _ if v.is_infinite() => "inf".to_string(),
                    b'f' | b'F' => format!("{:.*}", p, v.abs()),
                    b'e' | b'E' => c_exp(v.abs(), p),
                    _ => c_general(v.abs(), p, flags.contains('#')),
                };
                let s = if conv.is_ascii_uppercase() {
                    s.to_uppercase()
                } else {
                    s
                };
                let sign = if v.is_sign_negative() && !v.is_nan() {
                    "-"
                } else if flags.contains('+') {
                    "+"
                } else if flags.contains(' ') {
                    " "
                } else {
                    ""
                };
                pad_number(sign, &s, width, left, zero && v.is_finite())
            }
            other => {
                count -= 1;
                format!("%{}", other as char)
            }
        };
        out.push_str(&body);
    }
    (out, count)
}

fn pad(s: &str, width: Option<usize>, left: bool) -> String {
    let w = width.unwrap_or(0);
    let n = s.chars().count();
    if n >= w {
        return s.to_string();
    }
    let fill = " ".repeat(w - n);
    if left {
        format!("{s}{fill}")
    } else {
        format!("{fill}{s}")
    }
}

fn pad_number(prefix: &str, digits: &str, width: Option<usize>, left: bool, zero: bool) -> String {
    let w = width.unwrap_or(0);
    let n = prefix.len() + digits.len();
    if n >= w {
        return format!("{prefix}{digits}");
    }
    if zero {
        format!("{prefix}{}{digits}", "0".repeat(w - n))
    } else {
        pad(&format!("{prefix}{digits}"), width, left)
    }
}

/// `%e`: `d.ddde±XX`.
fn c_exp(v: f64, p: usize) -> String {
    let s = format!("{:.*e}", p, v);
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    format!(
        "{mantissa}e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    )
}

/// `%g`: `%e` or `%f` by exponent, trailing zeros removed (unless `#`).
fn c_general(v: f64, p: usize, keep_zeros: bool) -> String {
    let p = p.max(1);
    let exp = if v == 0.0 {
        0
    } else {
        v.log10().floor() as i32
    };
    let s = if exp < -4 || exp >= p as i32 {
        c_exp(v, p - 1)
    } else {
        format!("{:.*}", (p as i32 - 1 - exp).max(0) as usize, v)
    };
    if keep_zeros {
        return s;
    }
    let (num, exp_part) = match s.find('e') {
        Some(k) => (&s[..k], &s[k..]),
        None => (&s[..], ""),
    };
    let num = if num.contains('.') {
        num.trim_end_matches('0').trim_end_matches('.')
    } else {
        num
    };
    format!("{num}{exp_part}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(fmt: &str, args: &[u64]) -> String {
        let mut it = args.iter();
        format(
            fmt.as_bytes(),
            |_| *it.next().unwrap_or(&0),
            |p| format!("<{p}>"),
        )
        .0
    }

    #[test]
    fn formats_like_c() {
        assert_eq!(
            run("x=%d y=%u\n", &[(-5i32) as u32 as u64, 7]),
            "x=-5 y=7\n"
        );
        assert_eq!(run("%5d|%-4d|%05d", &[42, 7, 3]), "   42|7   |00003");
        assert_eq!(run("%x %X %#x %o", &[255, 255, 255, 8]), "ff FF 0xff 10");
        assert_eq!(
            run("%lld %llu", &[(-1i64) as u64, u64::MAX]),
            "-1 18446744073709551615"
        );
        assert_eq!(
            run("%f %.2f", &[1.5f64.to_bits(), 1.23456f64.to_bits()]),
            "1.500000 1.23"
        );
        assert_eq!(run("%e", &[12345.678f64.to_bits()]), "1.234568e+04");
        assert_eq!(
            run("%g %g", &[0.0001f64.to_bits(), 100000.0f64.to_bits()]),
            "0.0001 100000"
        );
        assert_eq!(run("%c%s%%", &[b'A' as u64, 99]), "A<99>%");
        assert_eq!(run("%f", &[f64::NAN.to_bits()]), "nan");
        assert_eq!(run("%8.3f|", &[(-2.5f64).to_bits()]), "  -2.500|");
    }

    #[test]
    fn counts_arguments() {
        let (_, n) = format(b"%d %s %f", |_| 0, |_| String::new());
        assert_eq!(n, 3);
    }
}
