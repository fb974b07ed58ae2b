//! ROCm's hostcall services for kernels: device `printf` and device
//! `malloc`/`free`.
//!
//! The device libraries (`ockl`: `__ockl_hostcall_internal`,
//! `__ockl_printf_begin`/`append_args`/`append_string_n`, `__ockl_dm_alloc`)
//! post requests into a *hostcall buffer* whose address the runtime passes
//! in the hidden kernarg `hidden_hostcall_buffer`, and spin until the host
//! answers. The layout is ROCm's (ockl `hostcall_impl.cl`, ROCclr
//! `devhostcall.cpp`):
//!
//! ```text
//! buffer: headers*  payloads*  doorbell(hsa_signal_t)  free_stack  ready_stack  index_mask
//! header: next u64, activemask u64, service u32, control u32 (bit 0: ready)
//! payload: 64 lanes x 8 u64
//! ```
//!
//! `free_stack`/`ready_stack` are lock-free stacks of tagged packet indices
//! (index in the low bits covered by `index_mask`, an ABA tag above). A wave
//! pops a free packet, fills its lanes' slots, sets the ready flag, pushes it
//! on the ready stack and increments the doorbell signal; the host takes the
//! whole ready stack, answers every active lane's slot, and clears the ready
//! flag; the wave reads its answers and pushes the packet back as free.
//!
//! Waves run inside the launching thread, so the service runs there too:
//! the emulator calls it between scheduling rounds (`Device::set_service`),
//! and a kernel's `printf` output reaches the process' C `stdout` (the same
//! `FILE` the host program's own `printf` uses) in request order.
//!
//! Services: `SERVICE_PRINTF` (2) carries a *message* per lane, in pieces of
//! up to 7 u64s: descriptor `[begin:1][end:1][rsvd:3][len:3][id:56]`, the
//! host allocating the message id at `begin` and returning the descriptor
//! with it; at `end` the message (control word, format string padded to 8
//! bytes, then one u64 per argument, strings inline and padded) is
//! formatted with C's printf semantics and the character count returned.
//! `SERVICE_DEVMEM` (3) hands out (`slot[1]` = size) or releases
//! (`slot[0]` = address) slabs for the device heap of `hidden_heap_v1`.

use prlx_rdna::device::Service;
use prlx_rdna::memory::GlobalMemory;
use std::collections::{HashMap, HashSet};
use std::ffi::{CString, c_char, c_int};

const SERVICE_FUNCTION_CALL: u32 = 1;
const SERVICE_PRINTF: u32 = 2;
const SERVICE_DEVMEM: u32 = 3;

/// Bytes of the buffer's own fields (buffer_t).
const BUFFER_HEADER_BYTES: u64 = 48;
const PACKET_HEADER_BYTES: u64 = 24;
const PAYLOAD_BYTES: u64 = 64 * 8 * 8;
/// `amd_signal_t` is 64 bytes; the device adds to `value` (offset 8) and
/// reads `event_mailbox_ptr` (offset 16), which stays 0: no interrupt.
const SIGNAL_BYTES: u64 = 64;
/// ROCclr's listener starts its doorbell at SIGNAL_INIT.
const SIGNAL_INIT: u64 = 1;
/// The device heap's control block (`hidden_heap_v1`); zero-filled, it has no
/// initial slabs, so the allocator asks SERVICE_DEVMEM for each slab.
const HEAP_BYTES: u64 = 1 << 20;
/// Slabs of this size are aligned to it (ROCclr does the same).
const SLAB_BYTES: u64 = 2 << 20;

/// Device addresses of the hostcall buffer and the device heap.
#[derive(Clone, Copy, Debug)]
pub struct HostcallAddrs {
    pub buffer: u64,
    pub heap: u64,
}

/// Allocates and initializes the buffer (`packets` packets, at least one per
/// wave that can be resident) and the heap, and returns them with the service
/// that answers their requests.
pub fn create(memory: &mut GlobalMemory, packets: u32) -> Result<(HostcallAddrs, Service), String> {
    let packets = packets.max(2).next_power_of_two() as u64;
    let index_mask = packets - 1;
    let headers_at = BUFFER_HEADER_BYTES;
    let payloads_at = (headers_at + PACKET_HEADER_BYTES * packets).next_multiple_of(64);
    let size = payloads_at + PAYLOAD_BYTES * packets;
    let oom = |what: &str| format!("the device cannot allocate the hostcall {what}");
    let buffer = memory.alloc(size, 4096).ok_or_else(|| oom("buffer"))?;
    let doorbell = memory
        .alloc(SIGNAL_BYTES, 64)
        .ok_or_else(|| oom("signal"))?;
    let heap = memory.alloc(HEAP_BYTES, 4096).ok_or_else(|| oom("heap"))?;
    let fault = |at: u64| format!("hostcall buffer write at {at:#x} failed");
    memory
        .write(doorbell + 8, &SIGNAL_INIT.to_le_bytes())
        .map_err(fault)?;
    // The free stack as ROCclr builds it: packet ii links to ii-1, packet 0
    // ends the list, and the pointer to packet 0 carries tag 1 so that no
    // live pointer is ever 0 (the empty stack).
    let mut next = index_mask + 1;
    for ii in 0..packets {
        let link = if ii == 0 { 0 } else { next };
        memory
            .write(
                buffer + headers_at + ii * PACKET_HEADER_BYTES,
                &link.to_le_bytes(),
            )
            .map_err(fault)?;
        if ii != 0 {
            next = ii;
        }
    }
    let fields = [
        buffer + headers_at,
        buffer + payloads_at,
        doorbell,
        next,
        0,
        index_mask,
    ];
    for (i, v) in fields.iter().enumerate() {
        memory
            .write(buffer + 8 * i as u64, &v.to_le_bytes())
            .map_err(fault)?;
    }
    let mut state = Listener {
        buffer,
        headers: buffer + headers_at,
        payloads: buffer + payloads_at,
        index_mask,
        messages: HashMap::new(),
        free_ids: Vec::new(),
        next_id: 0,
        slabs: HashSet::new(),
    };
    let service: Service = Box::new(move |memory| state.process(memory));
    Ok((HostcallAddrs { buffer, heap }, service))
}

struct Listener {
    buffer: u64,
    headers: u64,
    payloads: u64,
    index_mask: u64,
    /// Printf messages being assembled, by id.
    messages: HashMap<u64, Vec<u64>>,
    free_ids: Vec<u64>,
    next_id: u64,
    /// Slabs handed out by SERVICE_DEVMEM (the only addresses it frees).
    slabs: HashSet<u64>,
}

fn read_u64(memory: &GlobalMemory, addr: u64) -> Result<u64, String> {
    let mut b = [0u8; 8];
    memory
        .read(addr, &mut b)
        .map_err(|at| format!("hostcall: read at {at:#x} is outside device memory"))?;
    Ok(u64::from_le_bytes(b))
}

fn write_u64(memory: &mut GlobalMemory, addr: u64, value: u64) -> Result<(), String> {
    memory
        .write(addr, &value.to_le_bytes())
        .map_err(|at| format!("hostcall: write at {at:#x} is outside device memory"))
}

impl Listener {
    /// Answers every packet on the ready stack.
    fn process(&mut self, memory: &mut GlobalMemory) -> Result<(), String> {
        let ready_at = self.buffer + 32;
        let top = read_u64(memory, ready_at)?;
        if top == 0 {
            return Ok(());
        }
        write_u64(memory, ready_at, 0)?;
        // The stack is newest-first; answer in submission order.
        let mut packets = Vec::new();
        let mut iter = top;
        while iter != 0 {
            let header = self.headers + (iter & self.index_mask) * PACKET_HEADER_BYTES;
            packets.push(iter & self.index_mask);
            iter = read_u64(memory, header)?;
            if packets.len() as u64 > self.index_mask + 1 {
                return Err("hostcall: the ready stack is corrupt (a cycle)".into());
            }
        }
        for index in packets.into_iter().rev() {
            let header = self.headers + index * PACKET_HEADER_BYTES;
            let activemask = read_u64(memory, header + 8)?;
            let mut word = [0u8; 8];
            memory
                .read(header + 16, &mut word)
                .map_err(|at| format!("hostcall: read at {at:#x} failed"))?;
            let service = u32::from_le_bytes(word[..4].try_into().unwrap());
            let control = u32::from_le_bytes(word[4..].try_into().unwrap());
            let payload = self.payloads + index * PAYLOAD_BYTES;
            for lane in 0..64u64 {
                if activemask & (1 << lane) == 0 {
                    continue;
                }
                let slot_at = payload + lane * 64;
                let mut slot = [0u64; 8];
                for (i, s) in slot.iter_mut().enumerate() {
                    *s = read_u64(memory, slot_at + 8 * i as u64)?;
                }
                self.handle(memory, service, &mut slot)?;
                for (i, s) in slot.iter().enumerate() {
                    write_u64(memory, slot_at + 8 * i as u64, *s)?;
                }
            }
            memory
                .write(header + 20, &(control & !1).to_le_bytes())
                .map_err(|at| format!("hostcall: write at {at:#x} failed"))?;
        }
        Ok(())
    }

    fn handle(
        &mut self,
        memory: &mut GlobalMemory,
        service: u32,
        slot: &mut [u64; 8],
    ) -> Result<(), String> {
        match service {
            SERVICE_PRINTF => self.printf_piece(slot),
            SERVICE_DEVMEM => {
                if slot[0] != 0 {
                    if self.slabs.remove(&slot[0]) {
                        memory.free(slot[0]);
                    } else {
                        eprintln!(
                            "prlx hip: hostcall: device memory service asked to free unknown address {:#x}",
                            slot[0]
                        );
                    }
                } else if slot[1] != 0 {
                    let align = if slot[1] == SLAB_BYTES { SLAB_BYTES } else { 4096 };
                    // 0 tells the device allocator the request failed.
                    let addr = memory.alloc(slot[1], align).unwrap_or(0);
                    if addr != 0 {
                        self.slabs.insert(addr);
                    }
                    slot[0] = addr;
                } else {
                    return Err("hostcall: device memory request with neither size nor address".into());
                }
                Ok(())
            }
            SERVICE_FUNCTION_CALL => Err(
                "hostcall: SERVICE_FUNCTION_CALL (a host function pointer called from the device) is not supported by the emulated device".into(),
            ),
            other => Err(format!("hostcall: unknown service {other}")),
        }
    }

    /// One piece of a printf message (ROCclr's MessageHandler).
    fn printf_piece(&mut self, slot: &mut [u64; 8]) -> Result<(), String> {
        let mut desc = slot[0];
        let begin = desc & 1 != 0;
        let end = desc & 2 != 0;
        let len = ((desc >> 5) & 7).min(7) as usize;
        let id = if begin {
            let id = self.free_ids.pop().unwrap_or_else(|| {
                self.next_id += 1;
                self.next_id - 1
            });
            self.messages.insert(id, Vec::new());
            desc = (desc & !1 & 0xff) | (id << 8);
            slot[0] = desc;
            id
        } else {
            desc >> 8
        };
        let Some(message) = self.messages.get_mut(&id) else {
            return Err(format!("hostcall: printf message {id} was never begun"));
        };
        message.extend_from_slice(&slot[1..1 + len]);
        if !end {
            return Ok(());
        }
        let message = self.messages.remove(&id).unwrap_or_default();
        self.free_ids.push(id);
        slot[0] = print_message(&message) as u64;
        Ok(())
    }
}

/// Formats a complete message (control word, format, arguments) to C's
/// stdout (stderr when the control word's bit 0 is set); returns the
/// character count, or -1 for an unknown control word.
fn print_message(message: &[u64]) -> i64 {
    let Some((&control, rest)) = message.split_first() else {
        return -1;
    };
    if control & !1 != 0 {
        return -1;
    }
    let text = format_message(rest);
    write_c_stream(control & 1 != 0, &text);
    text.len() as i64
}

/// The bytes of a message's words, as the device laid them out.
fn bytes_of(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Reads a NUL-terminated string starting at word `at`; returns it and the
/// number of words it occupies (NUL included, padded to 8 bytes).
fn string_at(words: &[u64], at: usize) -> (Vec<u8>, usize) {
    let bytes = bytes_of(&words[at.min(words.len())..]);
    let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    (bytes[..len].to_vec(), (len + 1).div_ceil(8))
}

/// Formats a message body (format string, then its arguments) with C's
/// `printf` semantics: each conversion is handed to the C library's
/// `snprintf` with its flags, width and precision, and its argument
/// converted to the type the length modifier names.
pub fn format_message(words: &[u64]) -> Vec<u8> {
    let (fmt, used) = string_at(words, 0);
    let mut args = words.get(used..).unwrap_or(&[]).iter().copied();
    let mut arg_words = words.len().saturating_sub(used);
    let mut pos = used;
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        if fmt.get(i + 1) == Some(&b'%') {
            out.push(b'%');
            i += 2;
            continue;
        }
        // Like ROCclr: stop at the first conversion without an argument.
        if arg_words == 0 {
            break;
        }
        let Some(conv_at) = fmt[i + 1..]
            .iter()
            .position(|c| b"diouxXfFeEgGaAcspn".contains(c))
            .map(|p| i + 1 + p)
        else {
            break;
        };
        let spec = &fmt[i..=conv_at];
        i = conv_at + 1;
        let conv = *spec.last().unwrap();
        // Flags, width and precision, with `*` taken from the arguments.
        let mut stars = Vec::new();
        for _ in spec.iter().filter(|&&c| c == b'*') {
            stars.push(args.next().unwrap_or(0) as c_int);
            pos += 1;
            arg_words = arg_words.saturating_sub(1);
        }
        let body: Vec<u8> = spec[..spec.len() - 1]
            .iter()
            .copied()
            .filter(|c| !b"hlLqjzt".contains(c))
            .collect();
        let length: Vec<u8> = spec[..spec.len() - 1]
            .iter()
            .copied()
            .filter(|c| b"hlLqjzt".contains(c))
            .collect();
        if conv == b's' {
            let (s, n) = string_at(words, pos);
            pos += n;
            for _ in 0..n {
                args.next();
            }
            arg_words = arg_words.saturating_sub(n);
            let s = CString::new(s).unwrap_or_default();
            out.extend(c_format(&body, b"s", &stars, CArg::Str(&s)));
            continue;
        }
        let raw = args.next().unwrap_or(0);
        pos += 1;
        arg_words = arg_words.saturating_sub(1);
        let arg = match conv {
            b'd' | b'i' => CArg::Int(match length.as_slice() {
                b"hh" => raw as i8 as i64,
                b"h" => raw as i16 as i64,
                b"" => raw as i32 as i64,
                _ => raw as i64,
            }),
            b'o' | b'u' | b'x' | b'X' => CArg::Uint(match length.as_slice() {
                b"hh" => raw as u8 as u64,
                b"h" => raw as u16 as u64,
                b"" => raw as u32 as u64,
                _ => raw,
            }),
            b'c' => CArg::Char(raw as c_int),
            b'p' => CArg::Ptr(raw),
            b'n' => continue,
            _ => CArg::Double(f64::from_bits(raw)),
        };
        let conv_with_length: Vec<u8> = match arg {
            CArg::Int(_) | CArg::Uint(_) => [b"ll".as_slice(), &[conv]].concat(),
            _ => vec![conv],
        };
        out.extend(c_format(&body, &conv_with_length, &stars, arg));
    }
    out
}

enum CArg<'a> {
    Int(i64),
    Uint(u64),
    Char(c_int),
    Double(f64),
    Ptr(u64),
    Str(&'a CString),
}

/// One conversion through the C library's `snprintf`.
fn c_format(body: &[u8], conv: &[u8], stars: &[c_int], arg: CArg<'_>) -> Vec<u8> {
    let spec = CString::new([body, conv].concat()).unwrap_or_default();
    let call = |buf: *mut c_char, n: usize| -> c_int {
        let f = spec.as_ptr();
        // SAFETY: `spec` is one conversion whose argument type matches
        // `arg` (the length modifier was rewritten to match), preceded by as
        // many `int`s as it has `*`s; `buf` holds `n` bytes (or is null
        // with n == 0).
        unsafe {
            match (stars, &arg) {
                ([], CArg::Int(v)) => libc::snprintf(buf, n, f, *v),
                ([], CArg::Uint(v)) => libc::snprintf(buf, n, f, *v),
                ([], CArg::Char(v)) => libc::snprintf(buf, n, f, *v),
                ([], CArg::Double(v)) => libc::snprintf(buf, n, f, *v),
                ([], CArg::Ptr(v)) => libc::snprintf(buf, n, f, *v as *const u8),
                ([], CArg::Str(s)) => libc::snprintf(buf, n, f, s.as_ptr()),
                ([a], CArg::Int(v)) => libc::snprintf(buf, n, f, *a, *v),
                ([a], CArg::Uint(v)) => libc::snprintf(buf, n, f, *a, *v),
                ([a], CArg::Char(v)) => libc::snprintf(buf, n, f, *a, *v),
                ([a], CArg::Double(v)) => libc::snprintf(buf, n, f, *a, *v),
                ([a], CArg::Ptr(v)) => libc::snprintf(buf, n, f, *a, *v as *const u8),
                ([a], CArg::Str(s)) => libc::snprintf(buf, n, f, *a, s.as_ptr()),
                ([a, b], CArg::Int(v)) => libc::snprintf(buf, n, f, *a, *b, *v),
                ([a, b], CArg::Uint(v)) => libc::snprintf(buf, n, f, *a, *b, *v),
                ([a, b], CArg::Char(v)) => libc::snprintf(buf, n, f, *a, *b, *v),
                ([a, b], CArg::Double(v)) => libc::snprintf(buf, n, f, *a, *b, *v),
                ([a, b], CArg::Ptr(v)) => libc::snprintf(buf, n, f, *a, *b, *v as *const u8),
                ([a, b], CArg::Str(s)) => libc::snprintf(buf, n, f, *a, *b, s.as_ptr()),
                // More than two `*`s is undefined; print nothing.
                _ => 0,
            }
        }
    };
    let needed = call(std::ptr::null_mut(), 0);
    if needed <= 0 {
        return Vec::new();
    }
    let mut buf = vec![0u8; needed as usize + 1];
    call(buf.as_mut_ptr() as *mut c_char, buf.len());
    buf.truncate(needed as usize);
    buf
}

unsafe extern "C" {
    static mut stdout: *mut libc::FILE;
    static mut stderr: *mut libc::FILE;
}

/// Writes to the C library's stdout/stderr `FILE`, so the kernel's output
/// interleaves with the host program's own `printf` in program order.
fn write_c_stream(to_stderr: bool, text: &[u8]) {
    // SAFETY: glibc's `stdout`/`stderr` are initialized before any code of
    // the program runs and are only read here; fwrite locks the FILE.
    unsafe {
        let stream = if to_stderr { stderr } else { stdout };
        libc::fwrite(text.as_ptr() as *const libc::c_void, 1, text.len(), stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(fmt: &str, args: &[u64]) -> Vec<u64> {
        let mut bytes = fmt.as_bytes().to_vec();
        bytes.push(0);
        while bytes.len() % 8 != 0 {
            bytes.push(0);
        }
        let mut w: Vec<u64> = bytes
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        w.extend_from_slice(args);
        w
    }

    fn fmt(f: &str, args: &[u64]) -> String {
        String::from_utf8(format_message(&words(f, args))).unwrap()
    }

    #[test]
    fn conversions_follow_c() {
        assert_eq!(fmt("a%db", &[(-5i64) as u64]), "a-5b");
        assert_eq!(fmt("%5d|%-4u|", &[42, 7]), "   42|7   |");
        assert_eq!(fmt("%x %X %o", &[255, 255, 8]), "ff FF 10");
        assert_eq!(fmt("%ld", &[(-1i64) as u64]), "-1");
        assert_eq!(fmt("%d", &[0xffff_ffff]), "-1");
        assert_eq!(fmt("%u", &[0x1_0000_0002]), "2");
        assert_eq!(
            fmt("%.3f %e", &[1.5f64.to_bits(), 1e10f64.to_bits()]),
            "1.500 1.000000e+10"
        );
        assert_eq!(
            fmt("%g|%8.2f", &[0.0001f64.to_bits(), 2.5151f64.to_bits()]),
            "0.0001|    2.52"
        );
        assert_eq!(fmt("%c%c", &[b'o' as u64, b'k' as u64]), "ok");
        assert_eq!(
            fmt("%*d|%.*f", &[6, 12, 2, 2.5f64.to_bits()]),
            "    12|2.50"
        );
        assert_eq!(fmt("100%%", &[]), "100%");
        assert_eq!(fmt("%p", &[0x1234]), "0x1234");
        assert_eq!(fmt("no args %d", &[]), "no args ");
    }

    #[test]
    fn strings_are_inline_and_padded() {
        let mut w = words("[%s|%-6s|%d]", &[]);
        w.extend(words("hello world", &[]));
        w.extend(words("ab", &[]));
        w.push(9);
        assert_eq!(format_message(&w), b"[hello world|ab    |9]");
    }

    /// Plays the device's side of `__ockl_hostcall_internal` against the
    /// buffer `create` laid out: pop a free packet, fill it, push it ready.
    fn post(
        memory: &mut GlobalMemory,
        buffer: u64,
        service: u32,
        lanes: &[(u64, [u64; 8])],
    ) -> u64 {
        let headers = read_u64(memory, buffer).unwrap();
        let payloads = read_u64(memory, buffer + 8).unwrap();
        let mask = read_u64(memory, buffer + 40).unwrap();
        let top = read_u64(memory, buffer + 24).unwrap();
        assert_ne!(top, 0, "free stack empty");
        let index = top & mask;
        let header = headers + index * PACKET_HEADER_BYTES;
        let next = read_u64(memory, header).unwrap();
        write_u64(memory, buffer + 24, next).unwrap();
        let active = lanes.iter().fold(0u64, |m, (lane, _)| m | 1 << lane);
        write_u64(memory, header + 8, active).unwrap();
        let word = (service as u64) | (1u64 << 32);
        write_u64(memory, header + 16, word).unwrap();
        for (lane, slot) in lanes {
            for (i, v) in slot.iter().enumerate() {
                write_u64(
                    memory,
                    payloads + index * PAYLOAD_BYTES + lane * 64 + 8 * i as u64,
                    *v,
                )
                .unwrap();
            }
        }
        let ready = read_u64(memory, buffer + 32).unwrap();
        write_u64(memory, header, ready).unwrap();
        write_u64(memory, buffer + 32, top).unwrap();
        index
    }

    fn answer(memory: &GlobalMemory, buffer: u64, index: u64, lane: u64) -> (u32, [u64; 2]) {
        let headers = read_u64(memory, buffer).unwrap();
        let payloads = read_u64(memory, buffer + 8).unwrap();
        let control = read_u64(memory, headers + index * PACKET_HEADER_BYTES + 16).unwrap() >> 32;
        let slot = payloads + index * PAYLOAD_BYTES + lane * 64;
        (
            control as u32,
            [
                read_u64(memory, slot).unwrap(),
                read_u64(memory, slot + 8).unwrap(),
            ],
        )
    }

    #[test]
    fn packets_are_answered_per_lane_and_released() {
        let mut memory = GlobalMemory::new();
        let (addrs, mut service) = create(&mut memory, 4).unwrap();
        let b = addrs.buffer;
        // Two waves' packets on the ready stack: a device-memory request from
        // lanes 0 and 5, a printf piece (begin, not end) from lane 3.
        let mut alloc = [0u64; 8];
        alloc[1] = 6000;
        let devmem = post(&mut memory, b, SERVICE_DEVMEM, &[(0, alloc), (5, alloc)]);
        let mut piece = [0u64; 8];
        piece[0] = 1 | (1 << 5); // begin, one word
        let printf = post(&mut memory, b, SERVICE_PRINTF, &[(3, piece)]);
        assert_ne!(devmem, printf);
        service(&mut memory).unwrap();
        assert_eq!(read_u64(&memory, b + 32).unwrap(), 0, "ready stack taken");
        let (control, [a0, _]) = answer(&memory, b, devmem, 0);
        let (_, [a5, _]) = answer(&memory, b, devmem, 5);
        assert_eq!(control & 1, 0, "ready flag cleared");
        assert!(a0 != 0 && a5 != 0 && a0 != a5);
        assert_eq!(memory.allocation_of(a0), Some((a0, 6000)));
        let (control, [desc, _]) = answer(&memory, b, printf, 3);
        assert_eq!(control & 1, 0);
        assert_eq!(desc & 1, 0, "begin flag reset in the returned descriptor");
        // Freeing what the service handed out releases it.
        let mut free = [0u64; 8];
        free[0] = a0;
        let again = post(&mut memory, b, SERVICE_DEVMEM, &[(0, free)]);
        service(&mut memory).unwrap();
        assert_eq!(answer(&memory, b, again, 0).0 & 1, 0);
        assert_eq!(memory.allocation_of(a0), None);
        // A host function call is refused by name.
        post(&mut memory, b, SERVICE_FUNCTION_CALL, &[(0, [0; 8])]);
        let err = service(&mut memory).unwrap_err();
        assert!(err.contains("SERVICE_FUNCTION_CALL"), "{err}");
    }
}
