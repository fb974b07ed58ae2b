//! Frame I/O on one client's socket (async): validated headers first, then
//! payloads, bulk payloads read straight into their destination buffer.

use prlx_proto::frame::{FrameError, FrameHeader, FrameKind, HEADER_LEN};
use prlx_proto::{Request, Response};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

/// Once a frame has started, the rest of it must arrive within this.
const FRAME_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Connection {
    reader: BufReader<OwnedReadHalf>,
    writer: BufWriter<OwnedWriteHalf>,
}

pub enum Incoming {
    Request(Request),
    /// A well-framed message that is not a valid request.
    Malformed(String),
}

impl Connection {
    pub fn new(stream: UnixStream) -> Connection {
        let (read, write) = stream.into_split();
        Connection {
            reader: BufReader::with_capacity(256 << 10, read),
            writer: BufWriter::new(write),
        }
    }

    async fn read_header(&mut self) -> Result<FrameHeader, FrameError> {
        let mut raw = [0u8; HEADER_LEN];
        if self.reader.read(&mut raw[..1]).await? == 0 {
            return Err(FrameError::Closed);
        }
        timed(self.reader.read_exact(&mut raw[1..])).await?;
        FrameHeader::decode(&raw)
    }

    /// Waits for the next request; `Closed` when the client hung up.
    pub async fn read_request(&mut self) -> Result<Incoming, FrameError> {
        let header = self.read_header().await?;
        let mut payload = vec![0u8; header.len as usize];
        timed(self.reader.read_exact(&mut payload)).await?;
        if header.kind != FrameKind::Message {
            return Ok(Incoming::Malformed(
                "expected a message frame, got a chunk with no request before it".into(),
            ));
        }
        Ok(match Request::from_payload(&payload) {
            Ok(request) => Incoming::Request(request),
            Err(e) => Incoming::Malformed(format!("malformed request: {e}")),
        })
    }

    /// Reads `len` bytes of chunks, appending them to `out`.
    pub async fn read_bulk(&mut self, len: u64, out: &mut Vec<u8>) -> Result<(), FrameError> {
        let mut left = len;
        while left > 0 {
            let header = self.read_header().await?;
            if header.kind != FrameKind::Chunk || u64::from(header.len) > left {
                return Err(FrameError::Io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "bulk payload: expected chunks totalling {len} bytes, got a {:?} frame of {} bytes with {left} left",
                        header.kind, header.len
                    ),
                )));
            }
            // Into the vector's spare capacity: no zero-fill of bytes about
            // to be overwritten (a trace can be hundreds of MiB).
            let want = out.len() + header.len as usize;
            out.reserve(header.len as usize);
            while out.len() < want {
                let mut chunk = (&mut self.reader).take((want - out.len()) as u64);
                if timed(chunk.read_buf(out)).await? == 0 {
                    return Err(FrameError::Closed);
                }
            }
            left -= u64::from(header.len);
        }
        Ok(())
    }

    /// Reads and discards `len` bytes of chunks (a refused upload).
    pub async fn discard_bulk(&mut self, len: u64) -> Result<(), FrameError> {
        let mut left = len;
        let mut scratch = Vec::new();
        while left > 0 {
            scratch.clear();
            let header = self.read_header().await?;
            if header.kind != FrameKind::Chunk || u64::from(header.len) > left {
                return Err(FrameError::Io(std::io::ErrorKind::InvalidData.into()));
            }
            scratch.resize(header.len as usize, 0);
            timed(self.reader.read_exact(&mut scratch)).await?;
            left -= u64::from(header.len);
        }
        Ok(())
    }

    pub async fn send(&mut self, response: &Response) -> Result<(), FrameError> {
        self.send_frame(FrameKind::Message, &response.to_payload())
            .await?;
        self.writer.flush().await?;
        Ok(())
    }

    /// Sends bulk bytes as chunks (after a `File` response).
    pub async fn send_bulk(&mut self, bytes: &[u8]) -> Result<(), FrameError> {
        for chunk in bytes.chunks(prlx_proto::frame::CHUNK_SIZE) {
            self.send_frame(FrameKind::Chunk, chunk).await?;
        }
        self.writer.flush().await?;
        Ok(())
    }

    async fn send_frame(&mut self, kind: FrameKind, payload: &[u8]) -> Result<(), FrameError> {
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|&n| n <= prlx_proto::frame::MAX_FRAME_PAYLOAD)
            .ok_or(FrameError::TooLarge {
                len: payload.len().min(u32::MAX as usize) as u32,
                max: prlx_proto::frame::MAX_FRAME_PAYLOAD,
            })?;
        let header = FrameHeader {
            version: prlx_proto::PROTOCOL_VERSION,
            kind,
            len,
        };
        timed(self.writer.write_all(&header.encode())).await?;
        timed(self.writer.write_all(payload)).await?;
        Ok(())
    }
}

async fn timed<T>(
    io: impl std::future::Future<Output = std::io::Result<T>>,
) -> Result<T, FrameError> {
    match tokio::time::timeout(FRAME_TIMEOUT, io).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(FrameError::Closed),
        Ok(Err(e)) => Err(FrameError::Io(e)),
        Err(_) => Err(FrameError::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("frame not completed within {FRAME_TIMEOUT:?}"),
        ))),
    }
}
