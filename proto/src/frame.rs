//! Frames: a 12-byte header (magic, version, kind, flags, payload length)
//! followed by the payload. Headers are validated before any payload is read,
//! so an oversized or garbage frame costs the reader 12 bytes, never a huge
//! allocation.

use std::io::{Read, Write};

/// The protocol version spoken; frames and `Hello` carry it, and a peer
/// speaking another version gets a clear error.
pub const PROTOCOL_VERSION: u16 = 1;

/// `PRXD`: the first four bytes of every frame.
pub const FRAME_MAGIC: [u8; 4] = *b"PRXD";
pub const HEADER_LEN: usize = 12;
/// The largest payload one frame may carry (4 MiB). Messages are far
/// smaller; bulk data is split into chunks of at most [`CHUNK_SIZE`].
pub const MAX_FRAME_PAYLOAD: u32 = 4 << 20;
/// The chunk size bulk senders use.
pub const CHUNK_SIZE: usize = 1 << 20;
/// An `Fd` frame's payload: the length of the bulk payload in the memfd.
pub const FD_FRAME_PAYLOAD: u32 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A serde-JSON [`crate::Request`] or [`crate::Response`].
    Message = 1,
    /// Raw bytes of a bulk payload announced by the preceding message.
    Chunk = 2,
    /// A whole bulk payload as a sealed memfd: the payload is the payload's
    /// length (8 bytes, little-endian) and the frame's bytes carry the
    /// descriptor (`SCM_RIGHTS`); see [`crate::memfd`].
    Fd = 3,
}

impl FrameKind {
    fn from_u8(raw: u8) -> Option<FrameKind> {
        match raw {
            1 => Some(FrameKind::Message),
            2 => Some(FrameKind::Chunk),
            3 => Some(FrameKind::Fd),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub version: u16,
    pub kind: FrameKind,
    pub len: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error(
        "bad frame magic {0:02x?} (expected \"PRXD\"): the peer does not speak the prlxd protocol"
    )]
    BadMagic([u8; 4]),
    #[error("unsupported protocol version {found} (this side speaks {expected})")]
    Version { found: u16, expected: u16 },
    #[error("unknown frame kind {0}")]
    BadKind(u8),
    #[error("reserved frame flags {0:#04x} are set")]
    BadFlags(u8),
    #[error("frame of {len} bytes exceeds the {max}-byte limit")]
    TooLarge { len: u32, max: u32 },
    #[error("fd frame: {0}")]
    BadFdFrame(String),
    #[error("connection closed")]
    Closed,
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

impl FrameHeader {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[..4].copy_from_slice(&FRAME_MAGIC);
        out[4..6].copy_from_slice(&self.version.to_le_bytes());
        out[6] = self.kind as u8;
        out[7] = 0; // flags, reserved
        out[8..12].copy_from_slice(&self.len.to_le_bytes());
        out
    }

    /// Parses and validates a header: magic, version, kind, flags, size.
    pub fn decode(raw: &[u8; HEADER_LEN]) -> Result<FrameHeader, FrameError> {
        let magic = [raw[0], raw[1], raw[2], raw[3]];
        if magic != FRAME_MAGIC {
            return Err(FrameError::BadMagic(magic));
        }
        let version = u16::from_le_bytes([raw[4], raw[5]]);
        if version != PROTOCOL_VERSION {
            return Err(FrameError::Version {
                found: version,
                expected: PROTOCOL_VERSION,
            });
        }
        let kind = FrameKind::from_u8(raw[6]).ok_or(FrameError::BadKind(raw[6]))?;
        if raw[7] != 0 {
            return Err(FrameError::BadFlags(raw[7]));
        }
        let len = u32::from_le_bytes([raw[8], raw[9], raw[10], raw[11]]);
        if len > MAX_FRAME_PAYLOAD {
            return Err(FrameError::TooLarge {
                len,
                max: MAX_FRAME_PAYLOAD,
            });
        }
        if kind == FrameKind::Fd && len != FD_FRAME_PAYLOAD {
            return Err(FrameError::BadFdFrame(format!(
                "an fd frame carries {FD_FRAME_PAYLOAD} bytes, not {len}"
            )));
        }
        Ok(FrameHeader { version, kind, len })
    }
}

/// One whole frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: FrameKind,
    pub payload: Vec<u8>,
}

impl Frame {
    pub fn header(&self) -> Result<FrameHeader, FrameError> {
        let len = u32::try_from(self.payload.len())
            .ok()
            .filter(|&n| n <= MAX_FRAME_PAYLOAD)
            .ok_or(FrameError::TooLarge {
                len: self.payload.len().min(u32::MAX as usize) as u32,
                max: MAX_FRAME_PAYLOAD,
            })?;
        Ok(FrameHeader {
            version: PROTOCOL_VERSION,
            kind: self.kind,
            len,
        })
    }

    /// The frame's bytes: header then payload.
    pub fn to_bytes(&self) -> Result<Vec<u8>, FrameError> {
        let header = self.header()?;
        let mut out = Vec::with_capacity(HEADER_LEN + self.payload.len());
        out.extend_from_slice(&header.encode());
        out.extend_from_slice(&self.payload);
        Ok(out)
    }

    /// Parses exactly one frame from `bytes`; returns it and the bytes used.
    pub fn from_bytes(bytes: &[u8]) -> Result<(Frame, usize), FrameError> {
        let raw: &[u8; HEADER_LEN] = bytes
            .get(..HEADER_LEN)
            .and_then(|h| h.try_into().ok())
            .ok_or(FrameError::Closed)?;
        let header = FrameHeader::decode(raw)?;
        let end = HEADER_LEN + header.len as usize;
        let payload = bytes.get(HEADER_LEN..end).ok_or(FrameError::Closed)?;
        Ok((
            Frame {
                kind: header.kind,
                payload: payload.to_vec(),
            },
            end,
        ))
    }
}

/// Writes one frame (header and payload) to a blocking writer.
pub fn write_frame(
    out: &mut impl Write,
    kind: FrameKind,
    payload: &[u8],
) -> Result<(), FrameError> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|&n| n <= MAX_FRAME_PAYLOAD)
        .ok_or(FrameError::TooLarge {
            len: payload.len().min(u32::MAX as usize) as u32,
            max: MAX_FRAME_PAYLOAD,
        })?;
    let header = FrameHeader {
        version: PROTOCOL_VERSION,
        kind,
        len,
    };
    out.write_all(&header.encode())?;
    out.write_all(payload)?;
    Ok(())
}

/// Reads one frame from a blocking reader; `Closed` on a clean EOF before
/// the header.
pub fn read_frame(input: &mut impl Read) -> Result<Frame, FrameError> {
    let mut raw = [0u8; HEADER_LEN];
    let mut got = 0;
    while got < HEADER_LEN {
        match input.read(&mut raw[got..]) {
            Ok(0) => return Err(FrameError::Closed),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let header = FrameHeader::decode(&raw)?;
    let mut payload = vec![0u8; header.len as usize];
    input.read_exact(&mut payload).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            FrameError::Closed
        } else {
            FrameError::Io(e)
        }
    })?;
    Ok(Frame {
        kind: header.kind,
        payload,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let h = FrameHeader {
            version: PROTOCOL_VERSION,
            kind: FrameKind::Chunk,
            len: 1234,
        };
        assert_eq!(FrameHeader::decode(&h.encode()).unwrap(), h);
    }

    #[test]
    fn bad_headers_are_named() {
        let good = FrameHeader {
            version: PROTOCOL_VERSION,
            kind: FrameKind::Message,
            len: 8,
        }
        .encode();
        let mut raw = good;
        raw[0] = b'X';
        assert!(matches!(
            FrameHeader::decode(&raw),
            Err(FrameError::BadMagic(_))
        ));
        let mut raw = good;
        raw[4] = 99;
        assert_eq!(
            FrameHeader::decode(&raw).unwrap_err().to_string(),
            "unsupported protocol version 99 (this side speaks 1)"
        );
        let mut raw = good;
        raw[6] = 7;
        assert!(matches!(
            FrameHeader::decode(&raw),
            Err(FrameError::BadKind(7))
        ));
        let mut raw = good;
        raw[7] = 1;
        assert!(matches!(
            FrameHeader::decode(&raw),
            Err(FrameError::BadFlags(1))
        ));
        let mut raw = good;
        raw[6] = FrameKind::Fd as u8;
        assert_eq!(FrameHeader::decode(&raw).unwrap().kind, FrameKind::Fd);
        raw[8..12].copy_from_slice(&9u32.to_le_bytes());
        assert!(matches!(
            FrameHeader::decode(&raw),
            Err(FrameError::BadFdFrame(_))
        ));
        let mut raw = good;
        raw[8..12].copy_from_slice(&(MAX_FRAME_PAYLOAD + 1).to_le_bytes());
        assert!(matches!(
            FrameHeader::decode(&raw),
            Err(FrameError::TooLarge { .. })
        ));
    }

    #[test]
    fn oversized_payloads_are_refused_when_writing() {
        let big = vec![0u8; MAX_FRAME_PAYLOAD as usize + 1];
        let mut out = Vec::new();
        assert!(matches!(
            write_frame(&mut out, FrameKind::Chunk, &big),
            Err(FrameError::TooLarge { .. })
        ));
        assert!(out.is_empty());
    }

    #[test]
    fn truncated_payload_reads_as_closed() {
        let mut bytes = Frame {
            kind: FrameKind::Chunk,
            payload: vec![1, 2, 3, 4],
        }
        .to_bytes()
        .unwrap();
        bytes.pop();
        assert!(matches!(
            read_frame(&mut &bytes[..]),
            Err(FrameError::Closed)
        ));
        assert!(matches!(Frame::from_bytes(&bytes), Err(FrameError::Closed)));
    }
}
