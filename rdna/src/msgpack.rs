//! A small MessagePack reader for the `NT_AMDGPU_METADATA` note
//! (`amdhsa.kernels`, `amdhsa.version`, ...).

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(m) => m
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::UInt(v) => Some(v),
            Value::Int(v) if v >= 0 => Some(v as u64),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

#[derive(Debug)]
pub struct MsgpackError(pub usize, pub &'static str);

impl fmt::Display for MsgpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "msgpack at byte {}: {}", self.0, self.1)
    }
}

pub fn parse(data: &[u8]) -> Result<Value, MsgpackError> {
    let mut r = Reader {
        d: data,
        pos: 0,
        depth: 0,
    };
    r.value()
}

struct Reader<'a> {
    d: &'a [u8],
    pos: usize,
    depth: u32,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], MsgpackError> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(MsgpackError(self.pos, "length overflow"))?;
        let s = self
            .d
            .get(self.pos..end)
            .ok_or(MsgpackError(self.pos, "truncated"))?;
        self.pos = end;
        Ok(s)
    }
    fn uint(&mut self, n: usize) -> Result<u64, MsgpackError> {
        Ok(self.take(n)?.iter().fold(0u64, |a, &b| (a << 8) | b as u64))
    }
    fn str(&mut self, n: usize) -> Result<Value, MsgpackError> {
        Ok(Value::Str(
            String::from_utf8_lossy(self.take(n)?).into_owned(),
        ))
    }
    fn array(&mut self, n: usize) -> Result<Value, MsgpackError> {
        let mut v = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            v.push(self.value()?);
        }
        Ok(Value::Array(v))
    }
    fn map(&mut self, n: usize) -> Result<Value, MsgpackError> {
        let mut v = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            let k = self.value()?;
            v.push((k, self.value()?));
        }
        Ok(Value::Map(v))
    }
    fn value(&mut self) -> Result<Value, MsgpackError> {
        self.depth += 1;
        if self.depth > 64 {
            return Err(MsgpackError(self.pos, "nesting too deep"));
        }
        let at = self.pos;
        let t = self.take(1)?[0];
        let v = match t {
            0x00..=0x7f => Value::UInt(t as u64),
            0x80..=0x8f => self.map((t & 0xf) as usize)?,
            0x90..=0x9f => self.array((t & 0xf) as usize)?,
            0xa0..=0xbf => self.str((t & 0x1f) as usize)?,
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.uint(1 << (t - 0xc4))? as usize;
                Value::Bin(self.take(n)?.to_vec())
            }
            0xca => Value::Float(f32::from_bits(self.uint(4)? as u32) as f64),
            0xcb => Value::Float(f64::from_bits(self.uint(8)?)),
            0xcc..=0xcf => Value::UInt(self.uint(1 << (t - 0xcc))?),
            0xd0 => Value::Int(self.uint(1)? as u8 as i8 as i64),
            0xd1 => Value::Int(self.uint(2)? as u16 as i16 as i64),
            0xd2 => Value::Int(self.uint(4)? as u32 as i32 as i64),
            0xd3 => Value::Int(self.uint(8)? as i64),
            0xd9..=0xdb => {
                let n = self.uint(1 << (t - 0xd9))? as usize;
                self.str(n)?
            }
            0xdc | 0xdd => {
                let n = self.uint(if t == 0xdc { 2 } else { 4 })? as usize;
                self.array(n)?
            }
            0xde | 0xdf => {
                let n = self.uint(if t == 0xde { 2 } else { 4 })? as usize;
                self.map(n)?
            }
            0xe0..=0xff => Value::Int(t as i8 as i64),
            _ => return Err(MsgpackError(at, "unsupported type byte")),
        };
        self.depth -= 1;
        Ok(v)
    }
}
