//! The MessagePack of the `NT_AMDGPU_METADATA` note (`amdhsa.kernels`,
//! `amdhsa.version`, ...), read with `rmpv`; errors say at which byte and
//! what is wrong.

use std::fmt;
use std::io::ErrorKind;

pub use rmpv::Value;

/// Nesting the metadata may have (`rmpv` counts two levels per array or
/// map); real notes nest four deep.
const MAX_DEPTH: usize = 128;

/// Looking a string key up in a map value.
pub trait Lookup {
    /// The value under `key` when `self` is a map holding it.
    fn get(&self, key: &str) -> Option<&Value>;
}

impl Lookup for Value {
    fn get(&self, key: &str) -> Option<&Value> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }
}

#[derive(Debug)]
pub struct MsgpackError(pub usize, pub String);

impl fmt::Display for MsgpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "msgpack at byte {}: {}", self.0, self.1)
    }
}

/// The first value of `data` (what follows it is ignored).
pub fn parse(data: &[u8]) -> Result<Value, MsgpackError> {
    use rmpv::decode::Error as E;
    let mut rest = data;
    rmpv::decode::read_value_with_max_depth(&mut rest, MAX_DEPTH).map_err(|e| {
        let at = data.len() - rest.len();
        let what = match &e {
            E::InvalidMarkerRead(io) | E::InvalidDataRead(io)
                if io.kind() == ErrorKind::UnexpectedEof =>
            {
                "truncated".to_string()
            }
            E::DepthLimitExceeded => "nesting too deep".to_string(),
            other => other.to_string(),
        };
        MsgpackError(at, what)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_arrays_and_scalars() {
        // {"a": [1, -2, "x"], "b": true, "c": 300}
        let bytes = [
            0x83, 0xa1, b'a', 0x93, 0x01, 0xfe, 0xa1, b'x', 0xa1, b'b', 0xc3, 0xa1, b'c', 0xcd,
            0x01, 0x2c,
        ];
        let v = parse(&bytes).unwrap();
        let a = v.get("a").and_then(Value::as_array).unwrap();
        assert_eq!(a[0].as_u64(), Some(1));
        assert_eq!(a[1].as_i64(), Some(-2));
        assert_eq!(a[1].as_u64(), None);
        assert_eq!(a[2].as_str(), Some("x"));
        assert_eq!(v.get("b").and_then(Value::as_bool), Some(true));
        assert_eq!(v.get("c").and_then(Value::as_u64), Some(300));
        assert!(v.get("d").is_none());
        assert!(a[0].get("a").is_none());
    }

    #[test]
    fn bad_input_names_the_byte_and_the_problem() {
        let e = parse(&[0x92, 0x01]).unwrap_err().to_string();
        assert_eq!(e, "msgpack at byte 2: truncated");
        let e = parse(&[0xa5, b'a', b'b']).unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
        let e = parse(&[]).unwrap_err().to_string();
        assert_eq!(e, "msgpack at byte 0: truncated");
        // A length that claims 4 GiB of array elements ends at the input's end.
        let e = parse(&[0xdd, 0xff, 0xff, 0xff, 0xff, 0x01])
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated"), "{e}");
        let deep = vec![0x91u8; 1000];
        let e = parse(&deep).unwrap_err().to_string();
        assert!(e.contains("nesting too deep"), "{e}");
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..2000usize {
            let bytes: Vec<u8> = (0..len % 64)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let _ = parse(&bytes);
        }
    }
}
