//! Execution of memory operations: `ld/st` (with the single-region fast path), atomics,
//! `cp.async`, local addresses, `cvta` and `isspacep`; and the bounds- and alignment-checked
//! access helpers every family uses.

use super::*;

#[inline(always)]
pub(crate) fn execute(
    w: &mut Warp,
    env: &mut Env<'_>,
    op: &Op,
    exec: u32,
) -> Result<(), LaneFault> {
    let v = &mut w.values;
    match op {
        Op::Ld {
            space,
            size,
            signed,
            n,
            d,
            addr,
        } => {
            let (size, n) = (*size as u32, *n as usize);
            let addrs = addresses(w, addr, *space, exec)?;
            check_aligned(&addrs, exec, size as u64 * n as u64)?;
            let ext_bits = 64 - size * 8;
            let region = fast_region(env, *space, &addrs, exec);
            let extend = |raw: u64| {
                if *signed && ext_bits > 0 {
                    (((raw << ext_bits) as i64) >> ext_bits) as u64
                } else {
                    raw
                }
            };
            // Scalar loads that stay inside one region: one tight loop.
            let mut pending = exec;
            if n == 1
                && let Some(region) = region
            {
                pending =
                    load_in_region(&mut w.values, r(d[0]), exec, &addrs, size, region, extend);
            }
            let mut m = pending;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for (i, dst) in d.iter().enumerate().take(n) {
                    let a = addrs[l] + (i as u64) * size as u64;
                    let raw = match region.and_then(|region| region.read(a, size)) {
                        Some(x) => x,
                        None => load(env, w, *space, a, size, l)?,
                    };
                    w.values[r(*dst) + l] = extend(raw);
                }
            }
        }
        Op::St {
            space,
            size,
            n,
            s: srcs,
            addr,
        } => store_lanes(
            w,
            env,
            *space,
            *size as u32,
            &srcs[..*n as usize],
            addr,
            exec,
        )?,
        Op::LdStRare(x) => rare_access(w, env, x, exec)?,
        Op::Atom {
            space,
            op,
            ty,
            d,
            addr,
            b,
            c,
        } => {
            let size = ty.size_bytes().unwrap_or(1);
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let a = effective(&w.values, addr, l, 0);
                check_align(a, size as u64, l)?;
                let (bv, cv) = (w.values[r(*b) + l], w.values[r(*c) + l]);
                let apply = |old: u64| {
                    if *op == AtomOp::Cas {
                        crate::semantics::atomic_apply(*op, *ty, old, cv, bv)
                    } else {
                        crate::semantics::atomic_apply(*op, *ty, old, bv, 0)
                    }
                };
                let old = atomic_rmw(env, w, *space, a, size, l, apply)?;
                if let Some(d) = d {
                    w.values[r(*d) + l] = old;
                }
            }
        }
        Op::AtomVector {
            space,
            op,
            ty,
            n,
            d,
            addr,
            b,
        } => {
            let size = ty.size_bytes().unwrap_or(1);
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let a = effective(&w.values, addr, l, 0);
                check_align(a, size as u64 * *n as u64, l)?;
                for i in 0..*n as usize {
                    let bv = w.values[r(b[i]) + l];
                    let apply = |old: u64| crate::semantics::atomic_apply(*op, *ty, old, bv, 0);
                    let at = a + (i as u64) * size as u64;
                    let old = atomic_rmw(env, w, *space, at, size, l, apply)?;
                    w.values[r(d[i]) + l] = old;
                }
            }
        }
        Op::LocalAddr { d, offset } => {
            let d = r(*d);
            for_lanes(exec, |l| v[d + l] = (w.local_fp[l] + offset) as u64);
        }
        Op::Cvta {
            to_generic,
            space,
            d,
            a,
            a32,
        } => convert_address(v, *to_generic, *space, *d, *a, *a32, exec),
        Op::Isspacep { space, d, a } => is_in_space(w, *space, *d, *a, exec),
        Op::CpAsync {
            dst,
            src,
            size,
            src_size,
        } => copy_async(w, env, dst, src, *size, *src_size, exec)?,
        _ => unreachable!("an operation of another family"),
    }
    Ok(())
}

/// Scalar loads of `size` bytes into row `dst` for the lanes whose address
/// lies in `region`: one tight loop per width, no dispatch on it per lane.
/// The lanes left to the slow path are returned.
#[inline(always)]
fn load_in_region(
    values: &mut [u64],
    dst: usize,
    exec: u32,
    addrs: &[u64; WARP],
    size: u32,
    region: FastRegion<'_>,
    extend: impl Fn(u64) -> u64,
) -> u32 {
    match region {
        FastRegion::Flat { base, bytes } => {
            let at = |a: u64| a.wrapping_sub(base);
            match size {
                4 => load_lanes(values, dst, exec, addrs, extend, |a| {
                    read_at(bytes, at(a), 4)
                }),
                8 => load_lanes(values, dst, exec, addrs, extend, |a| {
                    read_at(bytes, at(a), 8)
                }),
                _ => load_lanes(values, dst, exec, addrs, extend, |a| {
                    read_at(bytes, at(a), size)
                }),
            }
        }
        FastRegion::Global(g) => match size {
            4 => load_lanes(values, dst, exec, addrs, extend, |a| g.read_sized::<4>(a)),
            8 => load_lanes(values, dst, exec, addrs, extend, |a| g.read_sized::<8>(a)),
            2 => load_lanes(values, dst, exec, addrs, extend, |a| g.read_sized::<2>(a)),
            _ => load_lanes(values, dst, exec, addrs, extend, |a| g.read(a, size)),
        },
    }
}

/// `st`: each executing lane stores its `srcs` (one row per vector element)
/// at consecutive `size`-byte addresses.
fn store_lanes(
    w: &mut Warp,
    env: &mut Env<'_>,
    space: Space,
    size: u32,
    srcs: &[Row],
    addr: &Addr,
    exec: u32,
) -> Result<(), LaneFault> {
    env.wrote |= !matches!(space, Space::Local | Space::FrameParam);
    let addrs = addresses(w, addr, space, exec)?;
    check_aligned(&addrs, exec, size as u64 * srcs.len() as u64)?;
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        for (i, src) in srcs.iter().enumerate() {
            let a = addrs[l] + (i as u64) * size as u64;
            let val = w.values[r(*src) + l];
            if !write_fast(env, space, a, size, val) {
                store(env, w, space, a, size, val, l)?;
            }
        }
    }
    Ok(())
}

/// [`LdStRare`]: every lane's whole access (all `n` elements) is checked for
/// alignment first, then each element goes through the checked path.
#[inline(never)]
fn rare_access(w: &mut Warp, env: &mut Env<'_>, x: &LdStRare, exec: u32) -> Result<(), LaneFault> {
    let (size, n) = (x.size as u32, x.n as usize);
    if x.store {
        env.wrote |= !matches!(x.space, Space::Local | Space::FrameParam);
    }
    let addrs = addresses(w, &x.addr, x.space, exec)?;
    check_aligned(&addrs, exec, size as u64 * n as u64)?;
    let ext_bits = 64 - size * 8;
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        for i in 0..n {
            let a = addrs[l] + (i as u64) * size as u64;
            let row = r(x.rows[i]) + l;
            if x.store {
                let val = w.values[row].wrapping_add(x.adds[i]);
                store(env, w, x.space, a, size, val, l)?;
            } else {
                let raw = load(env, w, x.space, a, size, l)?;
                w.values[row] = if x.signed && ext_bits > 0 {
                    (((raw << ext_bits) as i64) >> ext_bits) as u64
                } else {
                    raw
                };
            }
        }
    }
    Ok(())
}

/// `cvta`: between a state space's addresses and the generic window that
/// holds it (global addresses are generic already).
#[inline(always)]
fn convert_address(
    v: &mut [u64],
    to_generic: bool,
    space: Space,
    d: Row,
    a: Row,
    a32: bool,
    exec: u32,
) {
    let (d, a) = (r(d), r(a));
    let window = match space {
        Space::Shared => memory::SHARED_WINDOW,
        Space::Local => memory::LOCAL_WINDOW,
        Space::KernelParam => memory::PARAM_WINDOW,
        _ => 0,
    };
    for_lanes(exec, |l| {
        let x = if a32 {
            v[a + l] & 0xffff_ffff
        } else {
            v[a + l]
        };
        v[d + l] = if window == 0 {
            x
        } else if to_generic {
            window | (x & (memory::WINDOW_SIZE - 1))
        } else {
            x.wrapping_sub(window)
        };
    });
}

/// `isspacep`: whether each executing lane's generic address lies in `space`'s window.
fn is_in_space(w: &mut Warp, space: Space, d: PredIx, a: Row, exec: u32) {
    let a = r(a);
    let mut bits = 0u32;
    for_lanes(exec, |l| {
        let win = memory::window_of(w.values[a + l]);
        let yes = match space {
            Space::Shared => win == Window::Shared,
            Space::Local => win == Window::Local,
            Space::KernelParam => win == Window::Param,
            _ => win == Window::Global,
        };
        if yes {
            bits |= 1 << l;
        }
    });
    let p = &mut w.preds[d as usize];
    *p = (*p & !exec) | (bits & exec);
}

/// `cp.async` of `size` bytes from global to shared memory per executing lane;
/// bytes past `src_size` (when given) are zero.
fn copy_async(
    w: &mut Warp,
    env: &mut Env<'_>,
    dst: &Addr,
    src: &Addr,
    size: u8,
    src_size: Option<Row>,
    exec: u32,
) -> Result<(), LaneFault> {
    // Copies complete immediately: earlier than `cp.async.wait_*`
    // requires, which every correct kernel tolerates.
    let size = size as u64;
    env.wrote = true;
    let dsts = addresses(w, dst, Space::Shared, exec)?;
    let srcs = addresses(w, src, Space::Global, exec)?;
    check_aligned(&dsts, exec, size)?;
    check_aligned(&srcs, exec, size)?;
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let valid = src_size.map_or(size, |row| w.values[r(row) + l].min(size));
        for off in (0..size).step_by(4) {
            let x = if off < valid {
                let take = (valid - off).min(4) as u32;
                let v = load(env, w, Space::Global, srcs[l] + off, 1, l)?;
                let mut v = v;
                for b in 1..take {
                    v |= load(env, w, Space::Global, srcs[l] + off + b as u64, 1, l)? << (8 * b);
                }
                v
            } else {
                0
            };
            store(
                env,
                w,
                Space::Shared,
                dsts[l] + off,
                4.min(size as u32),
                x,
                l,
            )?;
        }
    }
    Ok(())
}

/// One atomic read-modify-write of `size` bytes at `a` for lane `l`;
/// returns the old value.
fn atomic_rmw(
    env: &mut Env<'_>,
    w: &mut Warp,
    space: Space,
    a: u64,
    size: u32,
    l: usize,
    apply: impl Fn(u64) -> u64,
) -> Result<u64, LaneFault> {
    let global = match space {
        Space::Global => true,
        Space::Generic => memory::window_of(a) == Window::Global,
        _ => false,
    };
    if global {
        // One atomic read-modify-write: CTAs on other threads may update
        // the same word (see `launch::needs_cta_order`).
        let old = env.global.fetch_update(a, size, &apply).map_err(|_| {
            fault(
                FaultKind::IllegalAddress,
                l,
                a,
                format!("{} atomic of {size} bytes out of bounds", space.name()),
            )
        })?;
        env.wrote |= apply(old) != old;
        Ok(old)
    } else {
        let old = load(env, w, space, a, size, l)?;
        let new = apply(old);
        env.wrote |= new != old;
        store(env, w, space, a, size, new, l)?;
        Ok(old)
    }
}

/// Computes `[base + offset]` for one lane.
#[inline]
pub(super) fn effective(values: &[u64], a: &Addr, lane: usize, frame_base: u32) -> u64 {
    let mut v = match a.base {
        Some(row) => {
            let x = values[r(row) + lane];
            if a.base32 { x & 0xffff_ffff } else { x }
        }
        None => 0,
    };
    v = v.wrapping_add(a.offset as u64);
    if a.frame {
        v = v.wrapping_add(frame_base as u64);
    }
    v
}

pub(super) fn fault(kind: FaultKind, lane: usize, addr: u64, msg: impl Into<String>) -> LaneFault {
    LaneFault {
        kind,
        lane: lane as u32,
        address: Some(addr),
        message: msg.into(),
    }
}

/// Loads `size` bytes from `space` at `addr` for `lane`.
#[inline]
pub(super) fn load(
    env: &Env<'_>,
    w: &Warp,
    space: Space,
    addr: u64,
    size: u32,
    lane: usize,
) -> Result<u64, LaneFault> {
    let oob = |_: OutOfBounds| {
        fault(
            FaultKind::IllegalAddress,
            lane,
            addr,
            format!("{} load of {size} bytes out of bounds", space.name()),
        )
    };
    match space {
        Space::Global | Space::Const => env.global.load(addr, size).map_err(oob),
        Space::Shared => shared_load(env, addr & 0xffff_ffff, size)
            .map_err(|e| e.fault(space, "load", size, lane, addr))?
            .map_err(oob),
        Space::Local => w.local[lane].load(addr, size).map_err(oob),
        Space::FrameParam => w.param[lane].load(addr, size).map_err(oob),
        Space::KernelParam => {
            let off = addr & 0xffff_ffff;
            let end = off + size as u64;
            if end > env.kparams.len() as u64 {
                return Err(oob(OutOfBounds));
            }
            Ok(memory::read_le(&env.kparams[off as usize..end as usize]))
        }
        Space::Generic => match memory::window_of(addr) {
            Window::Global => env.global.load(addr, size).map_err(oob),
            Window::Shared => shared_load(env, addr - memory::SHARED_WINDOW, size)
                .map_err(|e| e.fault(space, "load", size, lane, addr))?
                .map_err(oob),
            Window::Local => w.local[lane]
                .load(addr - memory::LOCAL_WINDOW, size)
                .map_err(oob),
            Window::Param => load(
                env,
                w,
                Space::KernelParam,
                addr - memory::PARAM_WINDOW,
                size,
                lane,
            ),
        },
    }
}

#[inline]
pub(super) fn store(
    env: &mut Env<'_>,
    w: &mut Warp,
    space: Space,
    addr: u64,
    size: u32,
    value: u64,
    lane: usize,
) -> Result<(), LaneFault> {
    let oob = |_: OutOfBounds| {
        fault(
            FaultKind::IllegalAddress,
            lane,
            addr,
            format!("{} store of {size} bytes out of bounds", space.name()),
        )
    };
    match space {
        Space::Global => env.global.store(addr, size, value).map_err(oob),
        Space::Shared => shared_store(env, addr & 0xffff_ffff, size, value)
            .map_err(|e| e.fault(space, "store", size, lane, addr))?
            .map_err(oob),
        Space::Local => w.local[lane].store(addr, size, value).map_err(oob),
        Space::FrameParam => w.param[lane].store(addr, size, value).map_err(oob),
        Space::Const | Space::KernelParam => Err(fault(
            FaultKind::IllegalAddress,
            lane,
            addr,
            "store to read-only memory",
        )),
        Space::Generic => match memory::window_of(addr) {
            Window::Global => env.global.store(addr, size, value).map_err(oob),
            Window::Shared => shared_store(env, addr - memory::SHARED_WINDOW, size, value)
                .map_err(|e| e.fault(space, "store", size, lane, addr))?
                .map_err(oob),
            Window::Local => w.local[lane]
                .store(addr - memory::LOCAL_WINDOW, size, value)
                .map_err(oob),
            Window::Param => Err(fault(
                FaultKind::IllegalAddress,
                lane,
                addr,
                "store to kernel parameter memory",
            )),
        },
    }
}

/// A `.shared::cluster` access that reaches no CTA's shared memory.
pub(super) enum ClusterMiss {
    /// The rank the address carries is not a rank of the cluster.
    Rank { rank: u32, size: u32 },
    /// The offset lies outside the peer's shared memory.
    Window { rank: u32, offset: u64, len: usize },
}

impl ClusterMiss {
    fn fault(&self, space: Space, what: &str, size: u32, lane: usize, addr: u64) -> LaneFault {
        let message = match self {
            ClusterMiss::Rank { rank, size: n } => format!(
                "{} {what} of {size} bytes at a shared::cluster address of CTA rank {rank}, outside the cluster of {n} CTAs",
                space.name()
            ),
            ClusterMiss::Window { rank, offset, len } => format!(
                "{} {what} of {size} bytes at offset {offset:#x} of CTA rank {rank}'s shared memory, which has {len} bytes",
                space.name()
            ),
        };
        fault(FaultKind::IllegalAddress, lane, addr, message)
    }
}

/// Splits a shared-window offset into the peer rank it addresses (`None`:
/// the executing CTA) and the offset in that CTA's window (see
/// [`memory::CLUSTER_RANK_SHIFT`]).
#[inline]
fn cluster_target(env: &Env<'_>, off: u64) -> Result<(Option<usize>, u64), ClusterMiss> {
    let (Some(rank), within) = memory::split_cluster_address(off) else {
        return Ok((None, off));
    };
    if rank == env.cluster.rank {
        Ok((None, within))
    } else if rank < env.cluster.size && (rank as usize) < env.cluster.peers.len() {
        Ok((Some(rank as usize), within))
    } else {
        Err(ClusterMiss::Rank {
            rank,
            size: env.cluster.size,
        })
    }
}

/// Loads from the shared window at `off`: the CTA's own shared memory, or
/// a peer's of its cluster (a miss there is a [`ClusterMiss`]).
#[inline]
fn shared_load(
    env: &Env<'_>,
    off: u64,
    size: u32,
) -> Result<Result<u64, OutOfBounds>, ClusterMiss> {
    match cluster_target(env, off)? {
        (None, o) => Ok(env.shared.load(o, size)),
        (Some(rank), o) => {
            let peer = &env.cluster.peers[rank];
            peer.load(o, size).map(Ok).map_err(|_| ClusterMiss::Window {
                rank: rank as u32,
                offset: o,
                len: peer.bytes.len(),
            })
        }
    }
}

/// Stores to the shared window at `off` (see [`shared_load`]).
#[inline]
fn shared_store(
    env: &mut Env<'_>,
    off: u64,
    size: u32,
    value: u64,
) -> Result<Result<(), OutOfBounds>, ClusterMiss> {
    match cluster_target(env, off)? {
        (None, o) => Ok(env.shared.store(o, size, value)),
        (Some(rank), o) => {
            let peer = &mut env.cluster.peers[rank];
            let len = peer.bytes.len();
            peer.store(o, size, value)
                .map(Ok)
                .map_err(|_| ClusterMiss::Window {
                    rank: rank as u32,
                    offset: o,
                    len,
                })
        }
    }
}

pub(super) fn frame_base(w: &Warp, space: Space, lane: usize) -> u32 {
    match space {
        Space::Local => w.local_fp[lane],
        Space::FrameParam => w.param_fp[lane],
        _ => 0,
    }
}

#[inline]
pub(super) fn check_align(addr: u64, bytes: u64, lane: usize) -> Result<(), LaneFault> {
    if addr & (bytes - 1) != 0 {
        return Err(fault(
            FaultKind::Misaligned,
            lane,
            addr,
            format!("access of {bytes} bytes is not {bytes}-byte aligned"),
        ));
    }
    Ok(())
}

/// Effective addresses of every lane in `exec`.
#[inline(always)]
pub(super) fn addresses(
    w: &Warp,
    a: &Addr,
    space: Space,
    exec: u32,
) -> Result<[u64; WARP], LaneFault> {
    let mut out = [0u64; WARP];
    let base = a.base.map(|b| row(&w.values, b));
    let mask = if a.base32 { 0xffff_ffff } else { u64::MAX };
    for (l, slot) in out.iter_mut().enumerate() {
        let mut v = match &base {
            Some(b) => b[l] & mask,
            None => 0,
        };
        v = v.wrapping_add(a.offset as u64);
        if a.frame {
            v = v.wrapping_add(frame_base(w, space, l) as u64);
        }
        *slot = v;
    }
    let _ = exec;
    Ok(out)
}

#[inline(always)]
pub(super) fn check_aligned(addrs: &[u64; WARP], exec: u32, bytes: u64) -> Result<(), LaneFault> {
    let mask = bytes.next_power_of_two() - 1;
    let mut bad = 0u32;
    for (l, a) in addrs.iter().enumerate() {
        bad |= ((a & mask != 0) as u32) << l;
    }
    bad &= exec;
    if bad != 0 {
        let l = bad.trailing_zeros() as usize;
        return check_align(addrs[l], mask + 1, l);
    }
    Ok(())
}

#[inline(always)]
pub(super) fn read_at(bytes: &[u8], off: u64, size: u32) -> Option<u64> {
    let off = usize::try_from(off).ok()?;
    Some(match size {
        4 => u32::from_le_bytes(bytes.get(off..off + 4)?.try_into().ok()?) as u64,
        8 => u64::from_le_bytes(bytes.get(off..off + 8)?.try_into().ok()?),
        2 => u16::from_le_bytes(bytes.get(off..off + 2)?.try_into().ok()?) as u64,
        1 => *bytes.get(off)? as u64,
        _ => return None,
    })
}

/// Loads `values[dst + lane] = extend(read(addrs[lane]))` for the lanes in
/// `exec`; returns the lanes `read` refused (outside the region).
#[inline(always)]
fn load_lanes(
    values: &mut [u64],
    dst: usize,
    exec: u32,
    addrs: &[u64; WARP],
    extend: impl Fn(u64) -> u64,
    read: impl Fn(u64) -> Option<u64>,
) -> u32 {
    let mut slow = 0u32;
    for_lanes(exec, |l| match read(addrs[l]) {
        Some(x) => values[dst + l] = extend(x),
        None => slow |= 1 << l,
    });
    slow
}

/// A memory region most lanes of a load will hit: the CTA's shared memory
/// (plain bytes: only this CTA's thread touches them) or one global
/// allocation (atomic accesses: CTAs on other threads share it).
#[derive(Clone, Copy)]
pub(super) enum FastRegion<'e> {
    Flat { base: u64, bytes: &'e [u8] },
    Global(memory::Region<'e>),
}

impl FastRegion<'_> {
    /// The `size`-byte value at `addr`; `None` outside the region.
    #[inline(always)]
    pub(super) fn read(&self, addr: u64, size: u32) -> Option<u64> {
        match self {
            FastRegion::Flat { base, bytes } => read_at(bytes, addr.wrapping_sub(*base), size),
            FastRegion::Global(g) => g.read(addr, size),
        }
    }
}

/// The region holding the first active lane's address. Lanes outside it
/// take the checked slow path.
#[inline(always)]
pub(super) fn fast_region<'e>(
    env: &'e Env<'_>,
    space: Space,
    addrs: &[u64; WARP],
    exec: u32,
) -> Option<FastRegion<'e>> {
    if exec == 0 {
        return None;
    }
    let first = addrs[exec.trailing_zeros() as usize];
    let shared = |base| FastRegion::Flat {
        base,
        bytes: &env.shared.bytes[..],
    };
    match space {
        Space::Shared => Some(shared(0)),
        Space::KernelParam => None,
        Space::Global | Space::Const => env.global.region_of(first).map(FastRegion::Global),
        Space::Generic => match memory::window_of(first) {
            Window::Global => env.global.region_of(first).map(FastRegion::Global),
            Window::Shared => Some(shared(memory::SHARED_WINDOW)),
            _ => None,
        },
        Space::Local | Space::FrameParam => None,
    }
}

/// Stores to shared or global memory without the fault bookkeeping; `false`
/// when the access needs the checked path.
#[inline(always)]
pub(super) fn write_fast(
    env: &mut Env<'_>,
    space: Space,
    addr: u64,
    size: u32,
    value: u64,
) -> bool {
    let (bytes, off): (&mut [u8], u64) = match space {
        Space::Shared => (&mut env.shared.bytes[..], addr & 0xffff_ffff),
        Space::Global => return env.global.store(addr, size, value).is_ok(),
        Space::Generic => match memory::window_of(addr) {
            Window::Shared => (&mut env.shared.bytes[..], addr - memory::SHARED_WINDOW),
            Window::Global => return env.global.store(addr, size, value).is_ok(),
            _ => return false,
        },
        _ => return false,
    };
    let Ok(off) = usize::try_from(off) else {
        return false;
    };
    let Some(dst) = bytes.get_mut(off..off + size as usize) else {
        return false;
    };
    memory::write_le(dst, value);
    true
}

/// A NUL-terminated string at a generic address (at most 4 KiB).
pub(super) fn read_cstr(
    env: &Env<'_>,
    w: &Warp,
    addr: u64,
    lane: usize,
) -> Result<String, LaneFault> {
    let mut bytes = Vec::new();
    for k in 0..4096 {
        let b = load(env, w, Space::Generic, addr + k, 1, lane)? as u8;
        if b == 0 {
            break;
        }
        bytes.push(b);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
