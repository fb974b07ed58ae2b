//! Per-wave architectural state: SGPRs (106 + VCC, TTMPs, M0, EXEC, indexed
//! by operand code), VGPRs (lane-major per register), SCC, PC, and the
//! outstanding memory operations that `s_waitcnt` retires.

use crate::decode::src;

/// SGPRs a gfx10+ wave owns (s0..s105).
pub const NUM_SGPRS: usize = 106;
/// The VGPR file a lane can address (v0..v255).
pub const MAX_VGPRS: usize = 256;

/// A load whose data has been read from memory but not yet written to its
/// destination VGPRs/SGPRs: the register write happens when an `s_waitcnt`
/// retires it (or when the counter overflows), so a missing wait reads the
/// registers' old contents, as on hardware.
#[derive(Debug, Clone)]
pub struct PendingWrite {
    pub counter: Counter,
    pub dest: PendingDest,
}

#[derive(Debug, Clone)]
pub enum PendingDest {
    /// (sgpr code, values)
    Sgprs(u16, Vec<u32>),
    /// (first vgpr, dwords per lane, lane mask, lane-major values)
    Vgprs {
        first: u16,
        dwords: u16,
        mask: u64,
        values: Vec<u32>,
    },
    /// A d16 load: 16-bit values merged into the low or high half of `reg`
    /// when retired (two such loads into one register both land).
    Half {
        reg: u16,
        hi: bool,
        mask: u64,
        values: Vec<u32>,
    },
    /// A store or an atomic without return: counted, nothing to write.
    Nothing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// VMEM loads and atomics with return (vmcnt).
    Vm,
    /// VMEM stores and atomics without return (vscnt).
    Vs,
    /// LDS, GDS, SMEM, messages (lgkmcnt).
    Lgkm,
}

#[derive(Debug, Clone)]
pub struct Wave {
    /// Index of the wave in its workgroup.
    pub id: u32,
    pub wave_size: u32,
    pub pc: u64,
    /// Operand-code-indexed scalar file: 0..105 SGPRs, 106/107 VCC,
    /// 108..123 TTMP, 124 null, 125 M0, 126/127 EXEC.
    pub sregs: [u32; 128],
    pub scc: bool,
    pub vgprs: Vec<u32>,
    pub num_vgprs: u32,
    /// Per-lane private (scratch) memory, grown on first use up to
    /// `scratch_limit` bytes (unwritten bytes read as zero).
    pub scratch: Vec<Vec<u8>>,
    pub scratch_limit: usize,
    pub pending: Vec<PendingWrite>,
    pub done: bool,
    pub at_barrier: bool,
    /// Work-item ids of each lane (x, y, z) and whether the lane exists.
    pub lane_ids: Vec<[u32; 3]>,
    pub lanes_present: u64,
    /// Instructions executed, for tracing and runaway detection.
    pub executed: u64,
    /// Hardware registers (`s_getreg`/`s_setreg`), by HW_REG id.
    pub hwregs: [u32; 64],
}

impl Wave {
    pub fn new(id: u32, wave_size: u32, num_vgprs: u32, scratch_bytes: usize) -> Wave {
        Wave {
            id,
            wave_size,
            pc: 0,
            sregs: [0; 128],
            scc: false,
            vgprs: vec![0; num_vgprs as usize * wave_size as usize],
            num_vgprs,
            scratch: vec![Vec::new(); wave_size as usize],
            scratch_limit: scratch_bytes,
            pending: Vec::new(),
            done: false,
            at_barrier: false,
            lane_ids: vec![[0; 3]; wave_size as usize],
            lanes_present: 0,
            executed: 0,
            hwregs: [0; 64],
        }
    }

    pub fn wave64(&self) -> bool {
        self.wave_size == 64
    }

    pub fn lane_mask(&self) -> u64 {
        if self.wave64() { u64::MAX } else { 0xFFFF_FFFF }
    }

    pub fn exec(&self) -> u64 {
        if self.wave64() {
            self.sregs[126] as u64 | ((self.sregs[127] as u64) << 32)
        } else {
            self.sregs[126] as u64
        }
    }

    pub fn set_exec(&mut self, v: u64) {
        self.sregs[126] = v as u32;
        if self.wave64() {
            self.sregs[127] = (v >> 32) as u32;
        }
    }

    pub fn vcc(&self) -> u64 {
        self.read_mask(src::VCC_LO)
    }

    /// A lane mask held in an SGPR (wave32) or SGPR pair (wave64).
    pub fn read_mask(&self, code: u16) -> u64 {
        if self.wave64() {
            self.sreg64(code)
        } else {
            self.sreg(code) as u64
        }
    }

    pub fn write_mask(&mut self, code: u16, v: u64) {
        if self.wave64() {
            self.set_sreg64(code, v)
        } else {
            self.set_sreg(code, v as u32)
        }
    }

    pub fn sreg(&self, code: u16) -> u32 {
        match code {
            0..=123 | 125..=127 => self.sregs[code as usize],
            src::SCC => self.scc as u32,
            src::VCCZ => (self.vcc() == 0) as u32,
            src::EXECZ => (self.exec() == 0) as u32,
            _ => 0,
        }
    }

    pub fn set_sreg(&mut self, code: u16, v: u32) {
        if code < 128 && code != src::NULL {
            self.sregs[code as usize] = v;
        }
    }

    pub fn sreg64(&self, code: u16) -> u64 {
        self.sreg(code) as u64 | ((self.sreg(code.wrapping_add(1)) as u64) << 32)
    }

    pub fn set_sreg64(&mut self, code: u16, v: u64) {
        if code == src::NULL {
            return;
        }
        self.set_sreg(code, v as u32);
        self.set_sreg(code.wrapping_add(1), (v >> 32) as u32);
    }

    #[inline]
    pub fn vgpr(&self, reg: u16, lane: usize) -> u32 {
        let r = reg as usize;
        if r >= self.num_vgprs as usize {
            return 0;
        }
        self.vgprs[r * self.wave_size as usize + lane]
    }

    #[inline]
    pub fn set_vgpr(&mut self, reg: u16, lane: usize, v: u32) {
        let r = reg as usize;
        if r < self.num_vgprs as usize {
            self.vgprs[r * self.wave_size as usize + lane] = v;
        }
    }

    pub fn vgpr64(&self, reg: u16, lane: usize) -> u64 {
        self.vgpr(reg, lane) as u64 | ((self.vgpr(reg.wrapping_add(1), lane) as u64) << 32)
    }

    pub fn set_vgpr64(&mut self, reg: u16, lane: usize, v: u64) {
        self.set_vgpr(reg, lane, v as u32);
        self.set_vgpr(reg.wrapping_add(1), lane, (v >> 32) as u32);
    }

    /// Outstanding operations on `counter`.
    pub fn outstanding(&self, counter: Counter) -> usize {
        self.pending.iter().filter(|p| p.counter == counter).count()
    }

    /// Retires the oldest operations on `counter` until at most `keep` remain.
    pub fn retire(&mut self, counter: Counter, keep: usize) {
        while self.outstanding(counter) > keep {
            let idx = self
                .pending
                .iter()
                .position(|p| p.counter == counter)
                .unwrap();
            let p = self.pending.remove(idx);
            self.apply(p.dest);
        }
    }

    pub fn retire_all(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            self.apply(p.dest);
        }
    }

    fn apply(&mut self, dest: PendingDest) {
        match dest {
            PendingDest::Sgprs(code, vals) => {
                for (k, v) in vals.into_iter().enumerate() {
                    self.set_sreg(code + k as u16, v);
                }
            }
            PendingDest::Vgprs {
                first,
                dwords,
                mask,
                values,
            } => {
                let n = self.wave_size as usize;
                for lane in 0..n {
                    if mask >> lane & 1 == 1 {
                        for d in 0..dwords as usize {
                            self.set_vgpr(
                                first + d as u16,
                                lane,
                                values[lane * dwords as usize + d],
                            );
                        }
                    }
                }
            }
            PendingDest::Half {
                reg,
                hi,
                mask,
                values,
            } => {
                for (lane, &value) in values.iter().enumerate().take(self.wave_size as usize) {
                    if mask >> lane & 1 == 1 {
                        let old = self.vgpr(reg, lane);
                        let v = value & 0xFFFF;
                        let new = if hi {
                            (old & 0xFFFF) | (v << 16)
                        } else {
                            (old & 0xFFFF_0000) | v
                        };
                        self.set_vgpr(reg, lane, new);
                    }
                }
            }
            PendingDest::Nothing => {}
        }
    }
}
