//! Memory instructions: SMEM scalar loads, DS (LDS, including the
//! cross-lane `ds_bpermute`/`ds_permute`/`ds_swizzle`), FLAT/GLOBAL/SCRATCH
//! loads, stores and atomics, and the MUBUF cache controls.
//!
//! Loads read memory when they issue; their results reach the registers
//! when an `s_waitcnt` retires them (see [`crate::wave::PendingWrite`]).
//! Stores and atomics update memory when they issue and count on vscnt /
//! vmcnt / lgkmcnt like the hardware does.

use super::{Ctx, Flow, Handler};
use crate::decode::{Format, Inst, src};
use crate::fault::ExecError;
use crate::memory::{APERTURE_SIZE, PRIVATE_APERTURE, SHARED_APERTURE};
use crate::wave::{Counter, PendingDest, PendingWrite};

type R = Result<Flow, ExecError>;

/// The most operations a counter tracks; issuing more retires the oldest.
const MAX_OUTSTANDING: usize = 63;

fn push(c: &mut Ctx<'_>, counter: Counter, dest: PendingDest) {
    c.wave.pending.push(PendingWrite { counter, dest });
    if c.wave.outstanding(counter) > MAX_OUTSTANDING {
        c.wave.retire(counter, MAX_OUTSTANDING);
    }
}

fn active_lanes(c: &Ctx<'_>) -> impl Iterator<Item = usize> + use<> {
    let exec = c.wave.exec();
    (0..c.wave.wave_size as usize).filter(move |l| exec >> l & 1 == 1)
}

// ---------------------------------------------------------------- SMEM

fn smem_load(c: &mut Ctx<'_>, i: &Inst, dwords: usize, buffer: bool) -> R {
    let base = if buffer {
        // V# in s[sbase:sbase+3]: base address is bits 47:0.
        c.wave.sreg64(i.saddr) & 0xFFFF_FFFF_FFFF
    } else {
        c.wave.sreg64(i.saddr)
    };
    let soff = if i.src[0] == src::NULL {
        0
    } else {
        c.wave.sreg(i.src[0]) as u64
    };
    let addr = base.wrapping_add(i.offset as i64 as u64).wrapping_add(soff) & !3;
    let mut buf = vec![0u8; dwords * 4];
    c.mem
        .read(addr, &mut buf)
        .map_err(|a| ExecError::memory("global (scalar)", false, buf.len() as u32, None, a))?;
    let vals = buf
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    push(c, Counter::Lgkm, PendingDest::Sgprs(i.dst, vals));
    Ok(Flow::Next)
}

// ---------------------------------------------------------------- LDS

fn lds_range(
    c: &Ctx<'_>,
    addr: u64,
    size: usize,
    lane: usize,
    write: bool,
) -> Result<usize, ExecError> {
    let a = addr as usize;
    if addr > u32::MAX as u64 || a + size > c.lds.len() {
        return Err(ExecError::memory(
            "LDS",
            write,
            size as u32,
            Some(lane as u32),
            addr,
        ));
    }
    Ok(a)
}

fn lds_read(c: &Ctx<'_>, addr: u64, out: &mut [u8], lane: usize) -> Result<(), ExecError> {
    let a = lds_range(c, addr, out.len(), lane, false)?;
    out.copy_from_slice(&c.lds[a..a + out.len()]);
    Ok(())
}

fn lds_write(c: &mut Ctx<'_>, addr: u64, data: &[u8], lane: usize) -> Result<(), ExecError> {
    let a = lds_range(c, addr, data.len(), lane, true)?;
    c.lds[a..a + data.len()].copy_from_slice(data);
    Ok(())
}

fn ds_base(c: &Ctx<'_>, i: &Inst, lane: usize) -> u64 {
    c.wave.vgpr(i.addr, lane) as u64
}

fn ds_offset16(i: &Inst) -> u64 {
    (i.offset as u64) | ((i.offset1 as u64) << 8)
}

/// Bytes of a load/store element named by its suffix.
fn elem_size(name: &str) -> usize {
    for (suf, n) in [
        ("b128", 16),
        ("b96", 12),
        ("b64", 8),
        ("u64", 8),
        ("i64", 8),
        ("f64", 8),
        ("b16", 2),
        ("u16", 2),
        ("i16", 2),
        ("b8", 1),
        ("u8", 1),
        ("i8", 1),
    ] {
        if name.ends_with(suf) {
            return n;
        }
    }
    4
}

/// Register dwords a loaded value of `size` bytes fills.
fn extend(name: &str, bytes: &[u8]) -> Vec<u32> {
    let n = bytes.len();
    if n >= 4 {
        return bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
    }
    let raw = bytes.iter().rev().fold(0u32, |a, &b| (a << 8) | b as u32);
    let v = if name.ends_with("i8") {
        raw as u8 as i8 as i32 as u32
    } else if name.ends_with("i16") {
        raw as u16 as i16 as i32 as u32
    } else {
        raw
    };
    vec![v]
}

/// Where a load's values go: whole dwords, or one half for d16 loads.
fn load_dest(i: &Inst, dwords: usize, mask: u64, values: Vec<u32>) -> PendingDest {
    if i.name.contains("d16") {
        PendingDest::Half {
            reg: i.dst,
            hi: i.name.contains("d16_hi"),
            mask,
            values,
        }
    } else {
        PendingDest::Vgprs {
            first: i.dst,
            dwords: dwords as u16,
            mask,
            values,
        }
    }
}

fn ds_load(c: &mut Ctx<'_>, i: &Inst) -> R {
    let size = elem_size(i.name);
    let dwords = size.div_ceil(4);
    let n = c.wave.wave_size as usize;
    let mut values = vec![0u32; n * dwords];
    for lane in active_lanes(c) {
        let addr = ds_base(c, i, lane) + ds_offset16(i);
        let mut buf = vec![0u8; size];
        lds_read(c, addr, &mut buf, lane)?;
        let mut v = extend(i.name, &buf);
        if i.name.contains("d16") {
            v[0] &= 0xFFFF;
        }
        values[lane * dwords..lane * dwords + dwords].copy_from_slice(&v);
    }
    let mask = c.wave.exec();
    push(c, Counter::Lgkm, load_dest(i, dwords, mask, values));
    Ok(Flow::Next)
}

fn ds_load_2addr(c: &mut Ctx<'_>, i: &Inst) -> R {
    let size = if i.name.ends_with("b64") { 8 } else { 4 };
    let stride = if i.name.contains("stride64") {
        size as u64 * 64
    } else {
        size as u64
    };
    let dw = size / 4;
    let n = c.wave.wave_size as usize;
    let mut values = vec![0u32; n * dw * 2];
    for lane in active_lanes(c) {
        let base = ds_base(c, i, lane);
        for (k, off) in [i.offset as u64, i.offset1 as u64].into_iter().enumerate() {
            let mut buf = vec![0u8; size];
            lds_read(c, base + off * stride, &mut buf, lane)?;
            for (d, w) in buf.chunks_exact(4).enumerate() {
                values[lane * dw * 2 + k * dw + d] = u32::from_le_bytes(w.try_into().unwrap());
            }
        }
    }
    let mask = c.wave.exec();
    push(
        c,
        Counter::Lgkm,
        PendingDest::Vgprs {
            first: i.dst,
            dwords: (dw * 2) as u16,
            mask,
            values,
        },
    );
    Ok(Flow::Next)
}

fn vgpr_bytes(c: &Ctx<'_>, first: u16, lane: usize, size: usize, hi: bool) -> Vec<u8> {
    if size < 4 {
        let v = c.wave.vgpr(first, lane);
        let v = if hi { v >> 16 } else { v };
        return v.to_le_bytes()[..size].to_vec();
    }
    (0..size / 4)
        .flat_map(|d| c.wave.vgpr(first + d as u16, lane).to_le_bytes())
        .collect()
}

fn ds_store(c: &mut Ctx<'_>, i: &Inst) -> R {
    let size = elem_size(i.name);
    let hi = i.name.contains("d16_hi");
    for lane in active_lanes(c) {
        let addr = ds_base(c, i, lane) + ds_offset16(i);
        let data = vgpr_bytes(c, i.data0, lane, size, hi);
        lds_write(c, addr, &data, lane)?;
    }
    push(c, Counter::Lgkm, PendingDest::Nothing);
    Ok(Flow::Next)
}

fn ds_store_2addr(c: &mut Ctx<'_>, i: &Inst) -> R {
    let size = if i.name.ends_with("b64") { 8 } else { 4 };
    let stride = if i.name.contains("stride64") {
        size as u64 * 64
    } else {
        size as u64
    };
    for lane in active_lanes(c) {
        let base = ds_base(c, i, lane);
        let d0 = vgpr_bytes(c, i.data0, lane, size, false);
        let d1 = vgpr_bytes(c, i.data1, lane, size, false);
        lds_write(c, base + i.offset as u64 * stride, &d0, lane)?;
        lds_write(c, base + i.offset1 as u64 * stride, &d1, lane)?;
    }
    push(c, Counter::Lgkm, PendingDest::Nothing);
    Ok(Flow::Next)
}

/// The read-modify-write of an atomic: returns the new value, or None
/// when it leaves memory unchanged (failed compare-swap still "writes").
fn atomic_op(op: &str, ty: &str, old: u64, src: u64, cmp: u64, wide: bool) -> u64 {
    let mask = if wide { u64::MAX } else { 0xFFFF_FFFF };
    let (o, s) = (old & mask, src & mask);
    let sx = |v: u64| {
        if wide {
            v as i64
        } else {
            v as u32 as i32 as i64
        }
    };
    let f = |v: u64| {
        if wide {
            f64::from_bits(v)
        } else {
            f32::from_bits(v as u32) as f64
        }
    };
    let tf = |v: f64| {
        if wide {
            v.to_bits()
        } else {
            (v as f32).to_bits() as u64
        }
    };
    let r = match (op, ty.starts_with('f')) {
        ("add", true) => tf(f(o) + f(s)),
        ("min", true) | ("fmin", _) => tf(f(o).min(f(s))),
        ("max", true) | ("fmax", _) => tf(f(o).max(f(s))),
        ("add", false) => o.wrapping_add(s),
        ("sub", _) => o.wrapping_sub(s),
        ("rsub", _) => s.wrapping_sub(o),
        ("csub", _) => o.saturating_sub(s),
        ("min", false) if ty.starts_with('i') => {
            if sx(o) < sx(s) {
                o
            } else {
                s
            }
        }
        ("max", false) if ty.starts_with('i') => {
            if sx(o) > sx(s) {
                o
            } else {
                s
            }
        }
        ("min", false) => o.min(s),
        ("max", false) => o.max(s),
        ("and", _) => o & s,
        ("or", _) => o | s,
        ("xor", _) => o ^ s,
        ("inc", _) => {
            if o >= s {
                0
            } else {
                o + 1
            }
        }
        ("dec", _) => {
            if o == 0 || o > s {
                s
            } else {
                o - 1
            }
        }
        ("swap", _) | ("storexchg", _) => s,
        ("cmpswap", _) => {
            if o == (cmp & mask) {
                s
            } else {
                o
            }
        }
        ("cmpstore", _) => {
            if o == (cmp & mask) {
                s
            } else {
                o
            }
        }
        ("mskor", _) => (o & !s) | cmp,
        _ => o,
    };
    r & mask
}

/// Splits `ds_add_rtn_u32` / `global_atomic_cmpswap_b64` into (op, type, returns).
fn atomic_parts(name: &str) -> (&str, &str, bool) {
    let rest = name
        .strip_prefix("ds_")
        .or_else(|| name.strip_prefix("global_atomic_"))
        .or_else(|| name.strip_prefix("flat_atomic_"))
        .or_else(|| name.strip_prefix("buffer_atomic_"))
        .unwrap_or(name);
    let (body, ty) = rest.rsplit_once('_').unwrap_or((rest, "b32"));
    match body.strip_suffix("_rtn") {
        Some(op) => (op, ty, true),
        None => (body, ty, false),
    }
}

fn ds_atomic(c: &mut Ctx<'_>, i: &Inst) -> R {
    let (op, ty, rtn) = atomic_parts(i.name);
    let wide = ty.ends_with("64");
    let size = if wide { 8 } else { 4 };
    let dw = size / 4;
    let n = c.wave.wave_size as usize;
    let mut values = vec![0u32; n * dw];
    for lane in active_lanes(c) {
        let addr = ds_base(c, i, lane) + ds_offset16(i);
        let mut buf = [0u8; 8];
        lds_read(c, addr, &mut buf[..size], lane)?;
        let old = u64::from_le_bytes(buf);
        let rd = |r: u16| {
            if wide {
                c.wave.vgpr64(r, lane)
            } else {
                c.wave.vgpr(r, lane) as u64
            }
        };
        // ds_cmpstore: data0 = compare... LLVM/ISA: DS_CMPSTORE: data0 is the source, data1 the compare.
        let (s, cmp) = (rd(i.data0), rd(i.data1));
        let new = atomic_op(op, ty, old, s, cmp, wide);
        lds_write(c, addr, &new.to_le_bytes()[..size], lane)?;
        values[lane * dw] = old as u32;
        if wide {
            values[lane * dw + 1] = (old >> 32) as u32;
        }
    }
    let mask = c.wave.exec();
    let dest = if rtn {
        PendingDest::Vgprs {
            first: i.dst,
            dwords: dw as u16,
            mask,
            values,
        }
    } else {
        PendingDest::Nothing
    };
    push(c, Counter::Lgkm, dest);
    Ok(Flow::Next)
}

/// `ds_bpermute_b32`: each lane reads `data0` of the lane its address names.
fn ds_bpermute(c: &mut Ctx<'_>, i: &Inst) -> R {
    let n = c.wave.wave_size as usize;
    let exec = c.wave.exec();
    let mut values = vec![0u32; n];
    for lane in active_lanes(c) {
        let a = (c.wave.vgpr(i.addr, lane) as u64 + ds_offset16(i)) as usize;
        let src_lane = (a / 4) % n;
        values[lane] = if exec >> src_lane & 1 == 1 {
            c.wave.vgpr(i.data0, src_lane)
        } else {
            0
        };
    }
    push(
        c,
        Counter::Lgkm,
        PendingDest::Vgprs {
            first: i.dst,
            dwords: 1,
            mask: exec,
            values,
        },
    );
    Ok(Flow::Next)
}

/// `ds_permute_b32`: each lane writes its `data0` to the lane its address names.
fn ds_permute(c: &mut Ctx<'_>, i: &Inst) -> R {
    let n = c.wave.wave_size as usize;
    let exec = c.wave.exec();
    let mut values = vec![0u32; n];
    for lane in active_lanes(c) {
        let a = (c.wave.vgpr(i.addr, lane) as u64 + ds_offset16(i)) as usize;
        values[(a / 4) % n] = c.wave.vgpr(i.data0, lane);
    }
    push(
        c,
        Counter::Lgkm,
        PendingDest::Vgprs {
            first: i.dst,
            dwords: 1,
            mask: exec,
            values,
        },
    );
    Ok(Flow::Next)
}

/// `ds_swizzle_b32 offset:swizzle(...)`: quad-permute mode (bit 15) or
/// bit-mask mode (and/or/xor masks within groups of 32).
fn ds_swizzle(c: &mut Ctx<'_>, i: &Inst) -> R {
    let n = c.wave.wave_size as usize;
    let exec = c.wave.exec();
    let off = ds_offset16(i) as u32;
    let mut values = vec![0u32; n];
    for lane in active_lanes(c) {
        let src_lane = if off & 0x8000 != 0 {
            (lane & !3) | ((off as usize >> (2 * (lane & 3))) & 3)
        } else {
            let and = (off & 0x1F) as usize;
            let or = ((off >> 5) & 0x1F) as usize;
            let xor = ((off >> 10) & 0x1F) as usize;
            (lane & !31) | ((((lane & 31) & and) | or) ^ xor)
        };
        // The swizzled value is the VGPR in the address field.
        values[lane] = if exec >> src_lane & 1 == 1 {
            c.wave.vgpr(i.addr, src_lane)
        } else {
            0
        };
    }
    push(
        c,
        Counter::Lgkm,
        PendingDest::Vgprs {
            first: i.dst,
            dwords: 1,
            mask: exec,
            values,
        },
    );
    Ok(Flow::Next)
}

// ---------------------------------------------------------------- FLAT / GLOBAL / SCRATCH

enum Space {
    Global(u64),
    Lds(u64),
    Scratch(u64),
}

fn vmem_address(c: &Ctx<'_>, i: &Inst, lane: usize) -> Space {
    let off = i.offset as i64 as u64;
    match i.format {
        Format::Scratch => {
            let mut a = off;
            if i.saddr != src::NULL {
                a = a.wrapping_add(c.wave.sreg(i.saddr) as u64);
            }
            if i.sve {
                a = a.wrapping_add(c.wave.vgpr(i.addr, lane) as u64);
            }
            Space::Scratch(a & 0xFFFF_FFFF)
        }
        _ => {
            let a = if i.format == Format::Global && i.saddr != src::NULL {
                c.wave
                    .sreg64(i.saddr)
                    .wrapping_add(c.wave.vgpr(i.addr, lane) as u64)
                    .wrapping_add(off)
            } else {
                c.wave.vgpr64(i.addr, lane).wrapping_add(off)
            };
            if i.format == Format::Flat {
                if (SHARED_APERTURE..SHARED_APERTURE + APERTURE_SIZE).contains(&a) {
                    return Space::Lds(a - SHARED_APERTURE);
                }
                if (PRIVATE_APERTURE..PRIVATE_APERTURE + APERTURE_SIZE).contains(&a) {
                    return Space::Scratch(a - PRIVATE_APERTURE);
                }
            }
            Space::Global(a)
        }
    }
}

/// Up to 16 loaded bytes, on the stack.
struct Bytes16([u8; 16]);

/// Reads `size` (at most 16) bytes for `lane`; the bytes are `.0[..size]`.
fn vmem_read(c: &Ctx<'_>, i: &Inst, lane: usize, size: usize) -> Result<Bytes16, ExecError> {
    let mut out = Bytes16([0u8; 16]);
    let buf = &mut out.0[..size];
    match vmem_address(c, i, lane) {
        Space::Global(a) => c
            .mem
            .read(a, buf)
            .map_err(|f| ExecError::memory("global", false, size as u32, Some(lane as u32), f))?,
        Space::Lds(a) => lds_read(c, a, buf, lane)?,
        Space::Scratch(a) => {
            let end = a as usize + size;
            if end > c.wave.scratch_limit {
                return Err(ExecError::memory(
                    "scratch",
                    false,
                    size as u32,
                    Some(lane as u32),
                    a,
                ));
            }
            let s = c
                .wave
                .scratch
                .get(lane)
                .map(|v| v.as_slice())
                .unwrap_or(&[]);
            for (k, b) in buf.iter_mut().enumerate() {
                *b = s.get(a as usize + k).copied().unwrap_or(0);
            }
        }
    }
    Ok(out)
}

fn vmem_write(c: &mut Ctx<'_>, i: &Inst, lane: usize, data: &[u8]) -> Result<(), ExecError> {
    match vmem_address(c, i, lane) {
        Space::Global(a) => c.mem.write(a, data).map_err(|f| {
            ExecError::memory("global", true, data.len() as u32, Some(lane as u32), f)
        }),
        Space::Lds(a) => lds_write(c, a, data, lane),
        Space::Scratch(a) => {
            let end = a as usize + data.len();
            let limit = c.wave.scratch_limit;
            match c.wave.scratch.get_mut(lane) {
                Some(s) if end <= limit => {
                    if s.len() < end {
                        // Grow in steps, never past the segment.
                        s.resize(end.next_power_of_two().max(256).min(limit), 0);
                    }
                    s[a as usize..end].copy_from_slice(data);
                    Ok(())
                }
                _ => Err(ExecError::memory(
                    "scratch",
                    true,
                    data.len() as u32,
                    Some(lane as u32),
                    a,
                )),
            }
        }
    }
}

fn vmem_load(c: &mut Ctx<'_>, i: &Inst) -> R {
    let size = elem_size(i.name);
    let dwords = size.div_ceil(4);
    let n = c.wave.wave_size as usize;
    let mut values = vec![0u32; n * dwords];
    for lane in active_lanes(c) {
        let buf = vmem_read(c, i, lane, size)?;
        let mut v = extend(i.name, &buf.0[..size]);
        if i.name.contains("d16") {
            v[0] &= 0xFFFF;
        }
        values[lane * dwords..lane * dwords + dwords].copy_from_slice(&v);
    }
    let mask = c.wave.exec();
    push(c, Counter::Vm, load_dest(i, dwords, mask, values));
    Ok(Flow::Next)
}

fn vmem_store(c: &mut Ctx<'_>, i: &Inst) -> R {
    let size = elem_size(i.name);
    let hi = i.name.contains("d16_hi");
    for lane in active_lanes(c) {
        let data = vgpr_bytes(c, i.data0, lane, size, hi);
        vmem_write(c, i, lane, &data)?;
    }
    push(c, Counter::Vs, PendingDest::Nothing);
    Ok(Flow::Next)
}

fn vmem_atomic(c: &mut Ctx<'_>, i: &Inst) -> R {
    let (op, ty, _) = atomic_parts(i.name);
    let wide = ty.ends_with("64");
    let size = if wide { 8 } else { 4 };
    let dw = size / 4;
    let n = c.wave.wave_size as usize;
    let mut values = vec![0u32; n * dw];
    for lane in active_lanes(c) {
        let buf = vmem_read(c, i, lane, size)?;
        let mut b8 = [0u8; 8];
        b8[..size].copy_from_slice(&buf.0[..size]);
        let old = u64::from_le_bytes(b8);
        let rd = |r: u16| {
            if wide {
                c.wave.vgpr64(r, lane)
            } else {
                c.wave.vgpr(r, lane) as u64
            }
        };
        // cmpswap: data = {new, compare}.
        let (s, cmp) = if op == "cmpswap" {
            (rd(i.data0), rd(i.data0 + dw as u16))
        } else {
            (rd(i.data0), 0)
        };
        let new = atomic_op(op, ty, old, s, cmp, wide);
        vmem_write(c, i, lane, &new.to_le_bytes()[..size])?;
        values[lane * dw] = old as u32;
        if wide {
            values[lane * dw + 1] = (old >> 32) as u32;
        }
    }
    let mask = c.wave.exec();
    if i.glc {
        push(
            c,
            Counter::Vm,
            PendingDest::Vgprs {
                first: i.dst,
                dwords: dw as u16,
                mask,
                values,
            },
        );
    } else {
        push(c, Counter::Vs, PendingDest::Nothing);
    }
    Ok(Flow::Next)
}

// ---------------------------------------------------------------- MUBUF

/// The global address of a buffer access for `lane`, or None when it is out
/// of the buffer's range (loads then read zero, stores are dropped: robust
/// buffer access, as the hardware does). V#: base [47:0], stride [61:48],
/// num_records [95:64].
fn buffer_address(c: &Ctx<'_>, i: &Inst, lane: usize, size: u64) -> Option<u64> {
    let r = i.saddr;
    let (w0, w1, w2) = (c.wave.sreg(r), c.wave.sreg(r + 1), c.wave.sreg(r + 2));
    let base = w0 as u64 | ((w1 as u64 & 0xFFFF) << 32);
    let stride = ((w1 >> 16) & 0x3FFF) as u64;
    let records = w2 as u64;
    let index = if i.idxen {
        c.wave.vgpr(i.addr, lane) as u64
    } else {
        0
    };
    let voff = if i.offen {
        c.wave.vgpr(i.addr + i.idxen as u16, lane) as u64
    } else {
        0
    };
    let soff = c.scalar32(i, i.src[0]) as u64;
    let offset = voff + i.offset as u64;
    let in_range = if stride != 0 && i.idxen {
        index < records
    } else {
        offset + size <= records
    };
    in_range.then(|| {
        base.wrapping_add(soff)
            .wrapping_add(index * stride)
            .wrapping_add(offset)
    })
}

fn buffer_op(c: &mut Ctx<'_>, i: &Inst) -> R {
    let n = i.name;
    let size = elem_size(n);
    let dwords = size.div_ceil(4);
    let wave_size = c.wave.wave_size as usize;
    let mask = c.wave.exec();
    if n.contains("_load_") {
        let mut values = vec![0u32; wave_size * dwords];
        for lane in active_lanes(c) {
            let mut buf = [0u8; 16];
            if let Some(a) = buffer_address(c, i, lane, size as u64) {
                c.mem.read(a, &mut buf[..size]).map_err(|f| {
                    ExecError::memory("global (buffer)", false, size as u32, Some(lane as u32), f)
                })?;
            }
            let mut v = extend(n, &buf[..size]);
            if n.contains("d16") {
                v[0] &= 0xFFFF;
            }
            values[lane * dwords..lane * dwords + dwords].copy_from_slice(&v);
        }
        push(c, Counter::Vm, load_dest(i, dwords, mask, values));
    } else if n.contains("_store_") {
        let hi = n.contains("d16_hi");
        for lane in active_lanes(c) {
            if let Some(a) = buffer_address(c, i, lane, size as u64) {
                let data = vgpr_bytes(c, i.data0, lane, size, hi);
                c.mem.write(a, &data).map_err(|f| {
                    ExecError::memory("global (buffer)", true, size as u32, Some(lane as u32), f)
                })?;
            }
        }
        push(c, Counter::Vs, PendingDest::Nothing);
    } else {
        let (op, ty, _) = atomic_parts(n);
        let wide = ty.ends_with("64");
        let size = if wide { 8 } else { 4 };
        let dw = size / 4;
        let mut values = vec![0u32; wave_size * dw];
        for lane in active_lanes(c) {
            let Some(a) = buffer_address(c, i, lane, size as u64) else {
                continue;
            };
            let mut b8 = [0u8; 8];
            c.mem.read(a, &mut b8[..size]).map_err(|f| {
                ExecError::memory("global (buffer)", false, size as u32, Some(lane as u32), f)
            })?;
            let old = u64::from_le_bytes(b8);
            let rd = |r: u16| {
                if wide {
                    c.wave.vgpr64(r, lane)
                } else {
                    c.wave.vgpr(r, lane) as u64
                }
            };
            let (src, cmp) = if op == "cmpswap" {
                (rd(i.data0), rd(i.data0 + dw as u16))
            } else {
                (rd(i.data0), 0)
            };
            let new = atomic_op(op, ty, old, src, cmp, wide);
            c.mem.write(a, &new.to_le_bytes()[..size]).map_err(|f| {
                ExecError::memory("global (buffer)", true, size as u32, Some(lane as u32), f)
            })?;
            values[lane * dw] = old as u32;
            if wide {
                values[lane * dw + 1] = (old >> 32) as u32;
            }
        }
        if i.glc {
            push(
                c,
                Counter::Vm,
                PendingDest::Vgprs {
                    first: i.dst,
                    dwords: dw as u16,
                    mask,
                    values,
                },
            );
        } else {
            push(c, Counter::Vs, PendingDest::Nothing);
        }
    }
    Ok(Flow::Next)
}

fn is_known_buffer(n: &str) -> bool {
    let rest = n.strip_prefix("buffer_atomic_").unwrap_or("");
    let op = rest.rsplit_once('_').map_or("", |(o, _)| o);
    ((n.starts_with("buffer_load_") || n.starts_with("buffer_store_"))
        && !n.contains("format")
        && !n.contains("lds"))
        || matches!(
            op,
            "swap"
                | "cmpswap"
                | "add"
                | "sub"
                | "csub"
                | "min"
                | "max"
                | "and"
                | "or"
                | "xor"
                | "inc"
                | "dec"
        )
}

/// Routes by name: every DS/FLAT/GLOBAL/SCRATCH opcode of a kind shares a handler.
pub fn dispatch(c: &mut Ctx<'_>, i: &Inst) -> R {
    let n = i.name;
    match i.format {
        Format::Ds => {
            if n.starts_with("ds_load_2addr") {
                ds_load_2addr(c, i)
            } else if n.starts_with("ds_load") {
                ds_load(c, i)
            } else if n.starts_with("ds_store_2addr") {
                ds_store_2addr(c, i)
            } else if n.starts_with("ds_store_b") {
                ds_store(c, i)
            } else if n == "ds_bpermute_b32" {
                ds_bpermute(c, i)
            } else if n == "ds_permute_b32" {
                ds_permute(c, i)
            } else if n == "ds_swizzle_b32" {
                ds_swizzle(c, i)
            } else if n == "ds_nop" {
                Ok(Flow::Next)
            } else {
                ds_atomic(c, i)
            }
        }
        _ => {
            if n.contains("_load_") {
                vmem_load(c, i)
            } else if n.contains("_store_") {
                vmem_store(c, i)
            } else {
                vmem_atomic(c, i)
            }
        }
    }
}

fn is_known_ds(n: &str) -> bool {
    let (op, _, _) = atomic_parts(n);
    n.starts_with("ds_load")
        || n.starts_with("ds_store_b")
        || n.starts_with("ds_store_2addr")
        || matches!(
            n,
            "ds_bpermute_b32" | "ds_permute_b32" | "ds_swizzle_b32" | "ds_nop"
        )
        || (matches!(
            op,
            "add"
                | "sub"
                | "rsub"
                | "inc"
                | "dec"
                | "min"
                | "max"
                | "and"
                | "or"
                | "xor"
                | "mskor"
                | "storexchg"
                | "cmpstore"
        ) && !n.contains("2addr"))
}

fn is_known_vmem(n: &str) -> bool {
    let (op, _, _) = atomic_parts(n);
    (n.contains("_load_") && !n.contains("lds") && !n.contains("addtid"))
        || (n.contains("_store_") && !n.contains("addtid"))
        || (n.contains("_atomic_")
            && matches!(
                op,
                "swap"
                    | "cmpswap"
                    | "add"
                    | "sub"
                    | "csub"
                    | "min"
                    | "max"
                    | "and"
                    | "or"
                    | "xor"
                    | "inc"
                    | "dec"
                    | "fmin"
                    | "fmax"
            ))
}

/// Memory handlers resolve by family; `handler_for` asks here for names
/// outside the `OPS` table.
pub fn handler(i: &Inst) -> Option<Handler> {
    match i.format {
        Format::Ds if is_known_ds(i.name) => Some(dispatch),
        Format::Flat | Format::Global | Format::Scratch if is_known_vmem(i.name) => Some(dispatch),
        Format::Mubuf if is_known_buffer(i.name) => Some(buffer_op),
        _ => None,
    }
}

pub static OPS: &[(&str, Handler)] = &[
    ("s_load_b32", |c, i| smem_load(c, i, 1, false)),
    ("s_load_b64", |c, i| smem_load(c, i, 2, false)),
    ("s_load_b128", |c, i| smem_load(c, i, 4, false)),
    ("s_load_b256", |c, i| smem_load(c, i, 8, false)),
    ("s_load_b512", |c, i| smem_load(c, i, 16, false)),
    ("s_buffer_load_b32", |c, i| smem_load(c, i, 1, true)),
    ("s_buffer_load_b64", |c, i| smem_load(c, i, 2, true)),
    ("s_buffer_load_b128", |c, i| smem_load(c, i, 4, true)),
    ("s_buffer_load_b256", |c, i| smem_load(c, i, 8, true)),
    ("s_buffer_load_b512", |c, i| smem_load(c, i, 16, true)),
    ("s_dcache_inv", |_c, _i| Ok(Flow::Next)),
    ("s_gl1_inv", |_c, _i| Ok(Flow::Next)),
    ("buffer_gl0_inv", |_c, _i| Ok(Flow::Next)),
    ("buffer_gl1_inv", |_c, _i| Ok(Flow::Next)),
];
