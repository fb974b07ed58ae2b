//! Element types of `.kern` arguments and how output arrays print. The
//! types, numbers and their encodings are `prlx_values`', shared with the
//! RDNA emulator's `.s` headers.

use std::fmt::Write as _;

pub use prlx_values::{ElemType, Number, SplitMix, parse_number};

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

#[cfg(test)]
mod tests {
    use super::*;

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
