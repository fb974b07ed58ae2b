//! Bulk payloads as a sealed memfd passed over the socket (`SCM_RIGHTS`).
//!
//! A client offered the `memfd` feature writes a launch's trace and site
//! table into an anonymous memory file, seals it, and sends one `Fd` frame
//! whose bytes carry the descriptor; the daemon maps the file instead of
//! reading the payload through the socket. The seals are the contract: with
//! `F_SEAL_SHRINK` and `F_SEAL_WRITE` in place the sender can neither
//! truncate the file under the daemon's mapping (no SIGBUS) nor change the
//! bytes after they were validated, so the daemon maps only a file that
//! carries both ([`check_sealed`]).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{IoSlice, IoSliceMut, Write};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};
use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};

use crate::frame::{FD_FRAME_PAYLOAD, FrameError, FrameHeader, FrameKind};

/// The seals a payload file must carry before the daemon maps it.
pub fn required_seals() -> SealFlag {
    SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_WRITE
}

/// Descriptors one read accepts; more means a misbehaving peer.
pub const MAX_FDS_PER_READ: usize = 4;

/// A sealed memfd holding `parts` back to back.
pub fn sealed_memfd(parts: &[&[u8]]) -> std::io::Result<OwnedFd> {
    let fd = memfd_create(
        c"prlx-launch",
        MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
    )?;
    let mut file = File::from(fd);
    for part in parts {
        file.write_all(part)?;
    }
    let seals = required_seals() | SealFlag::F_SEAL_GROW | SealFlag::F_SEAL_SEAL;
    fcntl(&file, FcntlArg::F_ADD_SEALS(seals))?;
    Ok(OwnedFd::from(file))
}

/// Sends an `Fd` frame announcing `len` payload bytes, with `fd` attached to
/// its first byte.
pub fn send_fd_frame(stream: &UnixStream, fd: BorrowedFd<'_>, len: u64) -> Result<(), FrameError> {
    let header = FrameHeader {
        version: crate::frame::PROTOCOL_VERSION,
        kind: FrameKind::Fd,
        len: FD_FRAME_PAYLOAD,
    }
    .encode();
    let mut frame = [0u8; crate::frame::HEADER_LEN + FD_FRAME_PAYLOAD as usize];
    frame[..header.len()].copy_from_slice(&header);
    frame[header.len()..].copy_from_slice(&len.to_le_bytes());
    let fds = [fd.as_raw_fd()];
    let sent = loop {
        match sendmsg::<()>(
            stream.as_raw_fd(),
            &[IoSlice::new(&frame)],
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::MSG_NOSIGNAL,
            None,
        ) {
            Err(nix::errno::Errno::EINTR) => continue,
            other => break other.map_err(std::io::Error::from)?,
        }
    };
    // The descriptor went with the first byte; the rest is plain data.
    (&mut &*stream).write_all(&frame[sent..])?;
    Ok(())
}

/// Checks that `fd` is a file of exactly `len` bytes carrying the
/// [`required_seals`]; the message says what is wrong. A larger file is
/// refused too: its pages are shared memory the receiver would keep alive
/// (a sparse file can claim gigabytes and be filled later).
pub fn check_sealed(fd: BorrowedFd<'_>, len: u64) -> Result<(), String> {
    let seals = fcntl(fd, FcntlArg::F_GET_SEALS).map_err(|e| {
        format!("the payload descriptor is not a sealable memfd (F_GET_SEALS: {e})")
    })?;
    let seals = SealFlag::from_bits_truncate(seals);
    if !seals.contains(required_seals()) {
        return Err(format!(
            "the payload memfd must be sealed with F_SEAL_SHRINK and F_SEAL_WRITE (has {seals:?})"
        ));
    }
    let size = nix::sys::stat::fstat(fd)
        .map_err(|e| format!("cannot stat the payload memfd: {e}"))?
        .st_size;
    if size as u64 != len {
        return Err(format!(
            "the payload memfd holds {size} bytes, {len} were announced"
        ));
    }
    Ok(())
}

/// One `recvmsg` into `buf`, queueing any descriptors that arrive with the
/// bytes (close-on-exec). A read bringing more than [`MAX_FDS_PER_READ`]
/// descriptors is an error: the kernel closes the excess, and the stream's
/// descriptors would no longer match its `Fd` frames.
pub fn recv_with_fds(
    socket: RawFd,
    buf: &mut [u8],
    fds: &mut VecDeque<OwnedFd>,
) -> std::io::Result<usize> {
    let mut space = nix::cmsg_space!([RawFd; MAX_FDS_PER_READ]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(
        socket,
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )?;
    let truncated = msg.flags.contains(MsgFlags::MSG_CTRUNC);
    for cmsg in msg.cmsgs()? {
        if let ControlMessageOwned::ScmRights(raw) = cmsg {
            for fd in raw {
                // SAFETY: the kernel just installed `fd` in this process for
                // us; nothing else owns it.
                fds.push_back(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    if truncated {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("more than {MAX_FDS_PER_READ} file descriptors sent at once"),
        ));
    }
    Ok(msg.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_sealed_memfd_passes_the_check_and_refuses_writes() {
        let fd = sealed_memfd(&[b"abc", b"defg"]).unwrap();
        assert_eq!(check_sealed(fd.as_fd(), 7), Ok(()));
        let err = check_sealed(fd.as_fd(), 8).unwrap_err();
        assert!(err.contains("holds 7 bytes, 8 were announced"), "{err}");
        let err = check_sealed(fd.as_fd(), 6).unwrap_err();
        assert!(err.contains("holds 7 bytes, 6 were announced"), "{err}");
        let mut file = File::from(fd);
        assert!(file.write_all(b"more").is_err(), "sealed against writes");
    }

    #[test]
    fn unsealed_files_are_refused_by_name() {
        let file = tempfile::tempfile().unwrap();
        let err = check_sealed(file.as_fd(), 0).unwrap_err();
        assert!(err.contains("not a sealable memfd"), "{err}");
        let fd = memfd_create(c"x", MFdFlags::MFD_ALLOW_SEALING).unwrap();
        let err = check_sealed(fd.as_fd(), 0).unwrap_err();
        assert!(err.contains("must be sealed"), "{err}");
    }

    #[test]
    fn descriptors_travel_with_their_frame() {
        let (a, b) = UnixStream::pair().unwrap();
        let fd = sealed_memfd(&[b"payload"]).unwrap();
        send_fd_frame(&a, fd.as_fd(), 7).unwrap();
        let mut buf = [0u8; 64];
        let mut fds = VecDeque::new();
        let n = recv_with_fds(b.as_raw_fd(), &mut buf, &mut fds).unwrap();
        assert_eq!(n, 20);
        let header = FrameHeader::decode(buf[..12].try_into().unwrap()).unwrap();
        assert_eq!(header.kind, FrameKind::Fd);
        assert_eq!(u64::from_le_bytes(buf[12..20].try_into().unwrap()), 7);
        let received = fds.pop_front().expect("one descriptor");
        assert_eq!(check_sealed(received.as_fd(), 7), Ok(()));
        // The descriptor shares the sender's file offset (at the end).
        let mut file = File::from(received);
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0)).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).unwrap();
        assert_eq!(text, "payload");
    }
}
