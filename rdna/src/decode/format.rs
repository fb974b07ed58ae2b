//! Prints decoded instructions in LLVM's AMDGPU assembly syntax (what
//! `llvm-objdump-19 -d --mcpu=gfx1100` prints), so the decoder can be
//! compared with LLVM's disassembler instruction by instruction.

use super::{Dpp, Format, Inst, src};

/// Register widths (in dwords) an instruction's operands have; `half`:
/// the sources are 16-bit values (literals print as 16 bits).
struct Widths {
    dst: u16,
    src: [u16; 3],
    half: bool,
}

/// Widths from the mnemonic's type suffixes (`_b64`, `_f64_i32`, ...).
fn widths(inst: &Inst) -> Widths {
    let name = inst.name;
    let parts: Vec<&str> = name.split('_').collect();
    let is_ty = |p: &str| {
        p.len() >= 2
            && matches!(p.as_bytes()[0], b'b' | b'f' | b'i' | b'u')
            && p[1..].chars().all(|c| c.is_ascii_digit())
    };
    let dw = |p: &str| {
        if p.ends_with("64") {
            2
        } else if p.ends_with("128") {
            4
        } else if p.ends_with("96") {
            3
        } else {
            1
        }
    };
    let tys: Vec<&str> = parts
        .iter()
        .rev()
        .take_while(|p| is_ty(p))
        .copied()
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let (d, s) = match tys.as_slice() {
        [] => (1, 1),
        [t] => (dw(t), dw(t)),
        [t1, t2, ..] => (dw(t1), dw(t2)),
    };
    let src_ty = tys.last().copied().unwrap_or("");
    let half = src_ty.ends_with("16") && !name.starts_with("v_pk_") && !name.starts_with("s_");
    let mut w = Widths {
        dst: d,
        src: [s; 3],
        half,
    };
    match name {
        "v_lshlrev_b64" | "v_lshrrev_b64" | "v_ashrrev_i64" => w.src[0] = 1,
        "v_ldexp_f64" | "v_trig_preop_f64" | "v_cmp_class_f64" | "v_cmpx_class_f64" => w.src[1] = 1,
        "v_mad_u64_u32" | "v_mad_i64_i32" => w.src[2] = 2,
        "s_lshl_b64" | "s_lshr_b64" | "s_ashr_i64" | "s_bfe_u64" | "s_bfe_i64"
        | "s_bitcmp0_b64" | "s_bitcmp1_b64" => w.src[1] = 1,
        "s_bfm_b64" => w.src = [1, 1, 1],
        "s_bitset0_b64" | "s_bitset1_b64" => w.src[0] = 1,
        "v_qsad_pk_u16_u8" | "v_mqsad_pk_u16_u8" => {
            w.dst = 2;
            w.src = [2, 1, 2];
        }
        "v_mqsad_u32_u8" => {
            w.dst = 4;
            w.src = [2, 1, 4];
        }
        _ => {}
    }
    if name.starts_with("v_cmp") {
        w.dst = 0; // a lane mask
    }
    w
}

fn sreg_name(code: u16, dwords: u16) -> String {
    let n = dwords.max(1);
    match code {
        0..=105 => {
            if n == 1 {
                format!("s{code}")
            } else {
                format!("s[{}:{}]", code, code + n - 1)
            }
        }
        src::VCC_LO => {
            if n == 2 {
                "vcc".into()
            } else {
                "vcc_lo".into()
            }
        }
        src::VCC_HI => "vcc_hi".into(),
        108..=123 => {
            let t = code - 108;
            if n == 1 {
                format!("ttmp{t}")
            } else {
                format!("ttmp[{}:{}]", t, t + n - 1)
            }
        }
        src::NULL => "null".into(),
        src::M0 => "m0".into(),
        src::EXEC_LO => {
            if n == 2 {
                "exec".into()
            } else {
                "exec_lo".into()
            }
        }
        src::EXEC_HI => "exec_hi".into(),
        _ => format!("<sreg {code}>"),
    }
}

pub fn vreg_name(reg: u16, dwords: u16) -> String {
    if dwords <= 1 {
        format!("v{reg}")
    } else {
        format!("v[{}:{}]", reg, reg + dwords - 1)
    }
}

/// A source operand (register, inline constant or literal).
fn operand(inst: &Inst, code: u16, dwords: u16, fp: bool) -> String {
    match code {
        256..=511 => vreg_name(code - 256, dwords.max(1)),
        128..=192 => format!("{}", code - 128),
        193..=208 => format!("-{}", code - 192),
        240 => "0.5".into(),
        241 => "-0.5".into(),
        242 => "1.0".into(),
        243 => "-1.0".into(),
        244 => "2.0".into(),
        245 => "-2.0".into(),
        246 => "4.0".into(),
        247 => "-4.0".into(),
        248 => {
            if dwords == 2 {
                "0.15915494309189532".into()
            } else {
                "0.15915494".into()
            }
        }
        src::SHARED_BASE => "src_shared_base".into(),
        src::SHARED_LIMIT => "src_shared_limit".into(),
        src::PRIVATE_BASE => "src_private_base".into(),
        src::PRIVATE_LIMIT => "src_private_limit".into(),
        src::POPS_EXITING_WAVE_ID => "src_pops_exiting_wave_id".into(),
        src::VCCZ => "src_vccz".into(),
        src::EXECZ => "src_execz".into(),
        src::SCC => "src_scc".into(),
        src::LITERAL if dwords == 0 => literal_text(inst.literal.unwrap_or(0) & 0xFFFF, fp),
        src::LITERAL => literal_text(inst.literal.unwrap_or(0), fp),
        _ => sreg_name(code, dwords.max(1)),
    }
}

/// A literal as LLVM prints it: values an inline constant could hold print
/// like one (decimal or float), others in hex.
fn literal_text(v: u32, _fp: bool) -> String {
    let si = v as i32;
    if (-16..=64).contains(&si) {
        return si.to_string();
    }
    let f = match v {
        0x3f00_0000 => "0.5",
        0xbf00_0000 => "-0.5",
        0x3f80_0000 => "1.0",
        0xbf80_0000 => "-1.0",
        0x4000_0000 => "2.0",
        0xc000_0000 => "-2.0",
        0x4080_0000 => "4.0",
        0xc080_0000 => "-4.0",
        0x3e22_f983 => "0.15915494",
        _ => return format!("0x{v:x}"),
    };
    f.to_string()
}

fn modded(inst: &Inst, k: usize, text: String) -> String {
    let mut t = text;
    if inst.abs >> k & 1 == 1 {
        t = format!("|{t}|");
    }
    if inst.neg >> k & 1 == 1 {
        t = format!("-{t}");
    }
    t
}

fn mask_width(wave64: bool) -> u16 {
    if wave64 { 2 } else { 1 }
}

fn three_source(name: &str) -> bool {
    if name.starts_with("v_fmac") || name.starts_with("v_dot2acc") || name.starts_with("v_pk_fmac")
    {
        return false;
    }
    const P: &[&str] = &[
        "v_fma",
        "v_mad",
        "v_bfe",
        "v_bfi",
        "v_alignb",
        "v_min3",
        "v_max3",
        "v_med3",
        "v_sad",
        "v_lerp",
        "v_cube",
        "v_div_fixup",
        "v_div_fmas",
        "v_div_scale",
        "v_msad",
        "v_qsad",
        "v_mqsad",
        "v_xor3",
        "v_perm_b32",
        "v_xad",
        "v_lshl_add",
        "v_add_lshl",
        "v_add3",
        "v_lshl_or",
        "v_and_or",
        "v_or3",
        "v_maxmin",
        "v_minmax",
        "v_permlane",
        "v_cndmask",
        "v_dot4",
        "v_dot8",
        "v_dot2",
        "v_mullit",
        "v_cvt_pk_u8_f32",
        "v_add_co_ci",
        "v_sub_co_ci",
        "v_subrev_co_ci",
    ];
    P.iter().any(|p| name.starts_with(p))
}

/// `hwreg(NAME[, offset, size])` of s_getreg/s_setreg.
fn hwreg(simm: u16) -> String {
    let id = simm & 0x3F;
    let off = (simm >> 6) & 0x1F;
    let size = ((simm >> 11) & 0x1F) + 1;
    let name = match id {
        1 => "HW_REG_MODE".to_string(),
        2 => "HW_REG_STATUS".into(),
        3 => "HW_REG_TRAPSTS".into(),
        5 => "HW_REG_GPR_ALLOC".into(),
        6 => "HW_REG_LDS_ALLOC".into(),
        7 => "HW_REG_IB_STS".into(),
        15 => "HW_REG_SH_MEM_BASES".into(),
        20 => "HW_REG_FLAT_SCR_LO".into(),
        21 => "HW_REG_FLAT_SCR_HI".into(),
        23 => "HW_REG_HW_ID1".into(),
        24 => "HW_REG_HW_ID2".into(),
        25 => "HW_REG_POPS_PACKER".into(),
        29 => "HW_REG_SHADER_CYCLES".into(),
        _ => id.to_string(),
    };
    if off == 0 && size == 32 {
        format!("hwreg({name})")
    } else {
        format!("hwreg({name}, {off}, {size})")
    }
}

fn delay_alu(simm: u16) -> String {
    let id = |v: u16| match v {
        0 => "NO_DEP".to_string(),
        1..=4 => format!("VALU_DEP_{v}"),
        5..=7 => format!("TRANS32_DEP_{}", v - 4),
        8 => "FMA_ACCUM_CYCLE_1".into(),
        9..=11 => format!("SALU_CYCLE_{}", v - 8),
        _ => format!("{v}"),
    };
    let skip = |v: u16| match v {
        0 => "SAME".to_string(),
        1 => "NEXT".into(),
        2..=6 => format!("SKIP_{}", v - 1),
        _ => format!("{v}"),
    };
    let mut s = format!("instid0({})", id(simm & 0xF));
    let sk = (simm >> 4) & 7;
    let i1 = (simm >> 7) & 0xF;
    if sk != 0 {
        s += &format!(" | instskip({})", skip(sk));
    }
    if i1 != 0 {
        s += &format!(" | instid1({})", id(i1));
    }
    s
}

fn waitcnt(simm: u16) -> String {
    let vm = (simm >> 10) & 0x3F;
    let lgkm = (simm >> 4) & 0x3F;
    let exp = simm & 7;
    let mut parts = Vec::new();
    if vm != 0x3F {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 7 {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 0x3F {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    if parts.is_empty() {
        format!("0x{simm:x}")
    } else {
        parts.join(" ")
    }
}

fn swizzle(off: u16) -> String {
    if off & 0x8000 != 0 {
        let q: Vec<String> = (0..4).map(|k| ((off >> (2 * k)) & 3).to_string()).collect();
        return format!("offset:swizzle(QUAD_PERM,{})", q.join(","));
    }
    let and = off & 0x1F;
    let or = (off >> 5) & 0x1F;
    let xor = (off >> 10) & 0x1F;
    if and == 0x1F && or == 0 && xor.is_power_of_two() {
        return format!("offset:swizzle(SWAP,{xor})");
    }
    if and == 0x1F && or == 0 && (xor + 1).is_power_of_two() && xor != 0 {
        return format!("offset:swizzle(REVERSE,{})", xor + 1);
    }
    if xor == 0 && (0x20 - and).is_power_of_two() && and != 0 && or < 0x20 - and {
        return format!("offset:swizzle(BROADCAST,{},{})", 0x20 - and, or);
    }
    let mut mask = String::new();
    for bit in (0..5).rev() {
        let (a, o, x) = (and >> bit & 1, or >> bit & 1, xor >> bit & 1);
        mask.push(match (a, o, x) {
            (0, _, _) | (_, 1, _) => {
                if o ^ x == 1 {
                    '1'
                } else {
                    '0'
                }
            }
            (_, _, 0) => 'p',
            _ => 'i',
        });
    }
    format!("offset:swizzle(BITMASK_PERM,\"{mask}\")")
}

fn dpp_text(d: &Dpp) -> String {
    match *d {
        Dpp::Dpp8 { sel, .. } => {
            let s: Vec<String> = sel.iter().map(|v| v.to_string()).collect();
            format!(" dpp8:[{}]", s.join(","))
        }
        Dpp::Dpp16 {
            ctrl,
            row_mask,
            bank_mask,
            bound_ctrl,
            fi,
        } => {
            let c = match ctrl {
                0x000..=0x0FF => {
                    let q: Vec<String> = (0..4)
                        .map(|k| ((ctrl >> (2 * k)) & 3).to_string())
                        .collect();
                    format!("quad_perm:[{}]", q.join(","))
                }
                0x101..=0x10F => format!("row_shl:{}", ctrl & 0xF),
                0x111..=0x11F => format!("row_shr:{}", ctrl & 0xF),
                0x121..=0x12F => format!("row_ror:{}", ctrl & 0xF),
                0x140 => "row_mirror".into(),
                0x141 => "row_half_mirror".into(),
                0x150..=0x15F => format!("row_share:{}", ctrl & 0xF),
                0x160..=0x16F => format!("row_xmask:{}", ctrl & 0xF),
                _ => format!("dpp_ctrl:0x{ctrl:x}"),
            };
            let mut s = format!(" {c} row_mask:0x{row_mask:x} bank_mask:0x{bank_mask:x}");
            if bound_ctrl {
                s += " bound_ctrl:1";
            }
            if fi {
                s += " fi:1";
            }
            s
        }
    }
}

fn vop3_suffix_mods(inst: &Inst) -> String {
    let mut s = String::new();
    if inst.clamp {
        s += " clamp";
    }
    match inst.omod {
        1 => s += " mul:2",
        2 => s += " mul:4",
        3 => s += " div:2",
        _ => {}
    }
    s
}

fn mem_flags(inst: &Inst) -> String {
    let mut s = String::new();
    if inst.glc {
        s += " glc";
    }
    if inst.slc {
        s += " slc";
    }
    if inst.dlc {
        s += " dlc";
    }
    s
}

/// The instruction in LLVM syntax. `wave64` selects how lane masks print
/// (`vcc` vs `vcc_lo`), as `llvm-objdump --mattr=+wavefrontsize64` does.
pub fn format_wave(inst: &Inst, wave64: bool) -> String {
    let w = widths(inst);
    let name = inst.name;
    let mw = mask_width(wave64);
    let src = |k: usize| salu_src(inst, &w, k);
    match inst.format {
        Format::Sop2 => format!(
            "{name} {}, {}, {}",
            sreg_name(inst.dst, w.dst),
            src(0),
            src(1)
        ),
        Format::Sopc => format!("{name} {}, {}", src(0), src(1)),
        Format::Sop1 => format_sop1(inst, &w),
        Format::Sopk => format_sopk(inst),
        Format::Sopp => format_sopp(inst),
        Format::Smem => format_smem(inst),
        Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 => format_valu(inst, &w, mw),
        Format::Vop3p if name.starts_with("v_wmma") => format_wmma(inst, mw),
        Format::Vop3p => format_vop3p(inst),
        Format::Vopd => format_vopd(inst),
        Format::Ds => format_ds(inst),
        Format::Flat | Format::Global | Format::Scratch => format_flat(inst),
        Format::Mubuf => format_mubuf(inst),
    }
}

/// Source `k` of a scalar ALU instruction (a float literal where the name
/// says `_f`).
fn salu_src(inst: &Inst, w: &Widths, k: usize) -> String {
    operand(inst, inst.src[k], w.src[k], inst.name.contains("_f"))
}

fn format_sop1(inst: &Inst, w: &Widths) -> String {
    let name = inst.name;
    let src = |k: usize| salu_src(inst, w, k);
    match name {
        "s_sendmsg_rtn_b32" | "s_sendmsg_rtn_b64" => {
            let msg = match inst.src[0] {
                128 => "MSG_RTN_GET_DOORBELL".to_string(),
                129 => "MSG_RTN_GET_DDID".into(),
                130 => "MSG_RTN_GET_TMA".into(),
                131 => "MSG_RTN_GET_REALTIME".into(),
                132 => "MSG_RTN_SAVE_WAVE".into(),
                133 => "MSG_RTN_GET_TBA".into(),
                v => v.to_string(),
            };
            format!("{name} {}, sendmsg({msg})", sreg_name(inst.dst, w.dst))
        }
        "s_getpc_b64" => format!("{name} {}", sreg_name(inst.dst, 2)),
        "s_setpc_b64" | "s_rfe_b64" => format!("{name} {}", src(0)),
        _ => format!("{name} {}, {}", sreg_name(inst.dst, w.dst), src(0)),
    }
}

fn format_sopk(inst: &Inst) -> String {
    let name = inst.name;
    match name {
        "s_version" => format!("{name} 0x{:x}", inst.simm16),
        "s_call_b64" => format!("{name} {}, {}", sreg_name(inst.dst, 2), inst.simm16),
        "s_setreg_imm32_b32" => format!(
            "{name} {}, 0x{:x}",
            hwreg(inst.simm16),
            inst.literal.unwrap_or(0)
        ),
        "s_getreg_b32" => format!("{name} {}, {}", sreg_name(inst.dst, 1), hwreg(inst.simm16)),
        "s_setreg_b32" => format!("{name} {}, {}", hwreg(inst.simm16), sreg_name(inst.dst, 1)),
        "s_subvector_loop_begin" | "s_subvector_loop_end" => {
            format!("{name} {}, {}", sreg_name(inst.dst, 1), inst.simm16)
        }
        _ => format!("{name} {}, 0x{:x}", sreg_name(inst.dst, 1), inst.simm16),
    }
}

fn format_sopp(inst: &Inst) -> String {
    let name = inst.name;
    match name {
        "s_endpgm" if inst.simm16 != 0 => format!("{name} {}", inst.simm16),
        "s_endpgm" | "s_barrier" | "s_code_end" | "s_icache_inv" | "s_wait_idle"
        | "s_endpgm_saved" | "s_ttracedata" => name.to_string(),
        "s_waitcnt" => format!("{name} {}", waitcnt(inst.simm16)),
        "s_delay_alu" => format!("{name} {}", delay_alu(inst.simm16)),
        "s_sendmsg" | "s_sendmsghalt" => match inst.simm16 {
            3 => format!("{name} sendmsg(MSG_DEALLOC_VGPRS)"),
            1 => format!("{name} sendmsg(MSG_INTERRUPT)"),
            v => format!("{name} sendmsg({v})"),
        },
        "s_nop" | "s_sleep" | "s_setprio" | "s_trap" | "s_setkill" | "s_branch" | "s_sethalt"
        | "s_denorm_mode" | "s_incperflevel" | "s_decperflevel" => {
            format!("{name} {}", inst.simm16)
        }
        n if n.starts_with("s_cbranch") => format!("{name} {}", inst.simm16),
        _ => format!("{name} 0x{:x}", inst.simm16),
    }
}

fn format_smem(inst: &Inst) -> String {
    let name = inst.name;
    let dw = match name.rsplit('_').next() {
        Some("b64") => 2,
        Some("b128") => 4,
        Some("b256") => 8,
        Some("b512") => 16,
        _ => 1,
    };
    if name == "s_dcache_inv" || name == "s_gl1_inv" {
        return name.to_string();
    }
    let base = sreg_name(inst.saddr, if name.starts_with("s_buffer") { 4 } else { 2 });
    let off = match (inst.src[0] != src::NULL, inst.offset != 0) {
        (true, true) => format!("{} offset:0x{:x}", sreg_name(inst.src[0], 1), inst.offset),
        (true, false) => sreg_name(inst.src[0], 1),
        (false, true) => format!("0x{:x}", inst.offset),
        (false, false) => "null".into(),
    };
    format!(
        "{name} {}, {base}, {off}{}",
        sreg_name(inst.dst, dw),
        mem_flags(inst)
    )
}

/// `v_wmma_*`, whose operands are register tuples.
fn format_wmma(inst: &Inst, mw: u16) -> String {
    let name = inst.name;
    // Register tuples: A and B per element type, C/D per wave size.
    let ab = if name.ends_with("iu4") {
        2
    } else if name.ends_with("iu8") {
        4
    } else {
        8
    };
    let cd = if mw == 2 { 4 } else { 8 };
    let r = |code: u16, n: u16| operand(inst, code, n, true);
    let mut mods = String::new();
    // Only the f16/bf16-result forms take op_sel and negation.
    if name.starts_with("v_wmma_f16") || name.starts_with("v_wmma_bf16") {
        let bits = |v: u8| {
            (0..3)
                .map(|k| (v >> k & 1).to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        for (label, v) in [
            ("op_sel", inst.opsel),
            ("op_sel_hi", inst.opsel_hi),
            ("neg_lo", inst.neg),
            ("neg_hi", inst.neg_hi),
        ] {
            let default = if label == "op_sel_hi" { 7 } else { 0 };
            if v & 7 != default {
                mods += &format!(" {label}:[{}]", bits(v));
            }
        }
    }
    format!(
        "{name} {}, {}, {}, {}",
        vreg_name(inst.dst, cd),
        r(inst.src[0], ab),
        r(inst.src[1], ab),
        r(inst.src[2], cd)
    ) + &mods
}

fn format_vop3p(inst: &Inst) -> String {
    let name = inst.name;
    let n = if three_source(name) || name.starts_with("v_pk_fma") || name.starts_with("v_pk_mad") {
        3
    } else {
        2
    };
    let mix = name.starts_with("v_fma_mix");
    let srcs: Vec<String> = (0..n)
        .map(|k| {
            let t = operand(inst, inst.src[k], 1, true);
            if !mix {
                return t;
            }
            // v_fma_mix: neg_lo negates and neg_hi takes |x|, per source.
            let t = if inst.neg_hi >> k & 1 == 1 {
                format!("|{t}|")
            } else {
                t
            };
            if inst.neg >> k & 1 == 1 {
                format!("-{t}")
            } else {
                t
            }
        })
        .collect();
    let bits = |v: u8| {
        (0..n)
            .map(|k| (v >> k & 1).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let all = (1u8 << n) - 1;
    let mut mods = String::new();
    if inst.opsel & all != 0 {
        mods += &format!(" op_sel:[{}]", bits(inst.opsel));
    }
    let default_hi = if mix { 0 } else { all };
    if inst.opsel_hi & all != default_hi {
        mods += &format!(" op_sel_hi:[{}]", bits(inst.opsel_hi));
    }
    if inst.neg & all != 0 && !mix {
        mods += &format!(" neg_lo:[{}]", bits(inst.neg));
    }
    if inst.neg_hi & all != 0 && !mix {
        mods += &format!(" neg_hi:[{}]", bits(inst.neg_hi));
    }
    if inst.clamp {
        mods += " clamp";
    }
    format!(
        "{name} {}, {}{mods}",
        vreg_name(inst.dst, 1),
        srcs.join(", ")
    )
}

/// Both halves of a VOPD pair, joined by `::`.
fn format_vopd(inst: &Inst) -> String {
    let halves = inst.vopd.as_ref().expect("VOPD carries its halves");
    let lit = literal_text(inst.literal.unwrap_or(0), true);
    let texts: Vec<String> = halves
        .iter()
        .map(|h| {
            let s0 = operand(inst, h.src0, 1, true);
            let s1 = format!("v{}", h.vsrc1);
            let d = format!("v{}", h.vdst);
            match h.name {
                "v_dual_mov_b32" => format!("{} {d}, {s0}", h.name),
                "v_dual_fmaak_f32" => format!("{} {d}, {s0}, {s1}, {lit}", h.name),
                "v_dual_fmamk_f32" => format!("{} {d}, {s0}, {lit}, {s1}", h.name),
                _ => format!("{} {d}, {s0}, {s1}", h.name),
            }
        })
        .collect();
    texts.join(" :: ")
}

/// [`format_wave`] for wave32 code.
pub fn format(inst: &Inst, _pc: u64) -> String {
    format_wave(inst, false)
}

fn format_valu(inst: &Inst, w: &Widths, mw: u16) -> String {
    let name = inst.name;
    let src = |k: usize| {
        let d = if w.half && inst.src[k] == src::LITERAL {
            0
        } else {
            w.src[k]
        };
        operand(inst, inst.src[k], d, true)
    };
    // Only floating-point operands print abs/neg (and v_cndmask, which takes them).
    let float_mods = name.contains("_f16")
        || name.contains("_f32")
        || name.contains("_f64")
        || name.contains("_bf16")
        || name.starts_with("v_cndmask");
    let vsrc = |k: usize| {
        if float_mods {
            modded(inst, k, src(k))
        } else {
            src(k)
        }
    };
    let vdst = vreg_name(inst.dst, w.dst);
    let mnemonic = match (inst.format, &inst.dpp) {
        (_, Some(_)) if inst.format != Format::Vop3 => format!("{name}_dpp"),
        (Format::Vop3, Some(_)) => format!("{name}_e64_dpp"),
        (Format::Vop1, _)
            if matches!(
                name,
                "v_readfirstlane_b32"
                    | "v_nop"
                    | "v_swap_b32"
                    | "v_swaprel_b32"
                    | "v_permlane64_b32"
            ) =>
        {
            name.to_string()
        }
        (Format::Vop2, _) if matches!(name, "v_pk_fmac_f16" | "v_dot2acc_f32_f16") => {
            name.to_string()
        }
        (Format::Vop2, _) if name.starts_with("v_fmaak") || name.starts_with("v_fmamk") => {
            name.to_string()
        }
        (Format::Vop1 | Format::Vop2 | Format::Vopc, _) => format!("{name}_e32"),
        (Format::Vop3, _) if inst.op < 512 => format!("{name}_e64"),
        _ => name.to_string(),
    };
    let dpp = inst.dpp.as_ref().map(dpp_text).unwrap_or_default();
    let mods = if inst.format == Format::Vop3 {
        vop3_suffix_mods(inst)
    } else {
        String::new()
    };
    let ops: Vec<String> = match inst.format {
        Format::Vop1 => match name {
            "v_nop" => vec![],
            "v_readfirstlane_b32" => vec![sreg_name(inst.dst, 1), src(0)],
            _ => vec![vdst, vsrc(0)],
        },
        Format::Vop2 => match name {
            n if n.ends_with("_co_ci_u32") => {
                let vcc = sreg_name(src::VCC_LO, mw);
                vec![vdst, vcc.clone(), vsrc(0), vsrc(1), vcc]
            }
            "v_cndmask_b32" => vec![vdst, vsrc(0), vsrc(1), sreg_name(src::VCC_LO, mw)],
            n if n.starts_with("v_fmamk") => vec![
                vdst,
                vsrc(0),
                literal_text(inst.literal.unwrap_or(0), true),
                vsrc(1),
            ],
            n if n.starts_with("v_fmaak") => vec![
                vdst,
                vsrc(0),
                vsrc(1),
                literal_text(inst.literal.unwrap_or(0), true),
            ],
            _ => vec![vdst, vsrc(0), vsrc(1)],
        },
        Format::Vopc => {
            if name.starts_with("v_cmpx") {
                vec![vsrc(0), vsrc(1)]
            } else {
                vec![sreg_name(src::VCC_LO, mw), vsrc(0), vsrc(1)]
            }
        }
        _ => {
            // VOP3
            let nsrc = if inst.op < 256 {
                2
            } else if inst.op < 384 {
                if three_source(name) { 3 } else { 2 }
            } else if inst.op < 512 {
                1
            } else if three_source(name) {
                3
            } else {
                2
            };
            let mut v: Vec<String> = Vec::new();
            if inst.op < 256 {
                if !name.starts_with("v_cmpx") {
                    v.push(sreg_name(inst.sdst, mw));
                }
            } else if matches!(name, "v_readlane_b32" | "v_readfirstlane_b32") {
                v.push(sreg_name(inst.dst, 1));
            } else {
                v.push(vdst);
                if super::is_vop3_sd(name) {
                    v.push(sreg_name(inst.sdst, mw));
                }
            }
            for k in 0..nsrc {
                let is_mask = k == 2 && (name == "v_cndmask_b32" || name.ends_with("_co_ci_u32"));
                let t = if is_mask {
                    sreg_name(inst.src[k], mw)
                } else {
                    vsrc(k)
                };
                v.push(t);
            }
            v
        }
    };
    let mut s = mnemonic;
    if !ops.is_empty() {
        s += " ";
        s += &ops.join(", ");
    }
    s + &mods + &dpp
}

fn format_ds(inst: &Inst) -> String {
    let name = inst.name;
    let dw = |n: &str| match n.rsplit('_').next() {
        Some("b64" | "u64" | "i64" | "f64") => 2u16,
        Some("b96") => 3,
        Some("b128") => 4,
        _ => 1,
    };
    let d = dw(name);
    let addr = format!("v{}", inst.addr);
    let data0 = vreg_name(inst.data0, d);
    let data1 = vreg_name(inst.data1, d);
    let off16 = (inst.offset as u16) | ((inst.offset1 as u16) << 8);
    let single_off = if off16 != 0 {
        format!(" offset:{off16}")
    } else {
        String::new()
    };
    let two_off = {
        let mut s = String::new();
        if inst.offset != 0 {
            s += &format!(" offset0:{}", inst.offset);
        }
        if inst.offset1 != 0 {
            s += &format!(" offset1:{}", inst.offset1);
        }
        s
    };
    let gds = if inst.gds { " gds" } else { "" };
    let body = if name == "ds_swizzle_b32" {
        format!(
            "{name} {}, {addr} {}",
            vreg_name(inst.dst, 1),
            swizzle(off16)
        )
    } else if name == "ds_bpermute_b32" || name == "ds_permute_b32" {
        format!(
            "{name} {}, {addr}, {data0}{single_off}",
            vreg_name(inst.dst, 1)
        )
    } else if name.starts_with("ds_load_2addr") {
        format!("{name} {}, {addr}{two_off}", vreg_name(inst.dst, 2 * d))
    } else if name.starts_with("ds_load") {
        format!("{name} {}, {addr}{single_off}", vreg_name(inst.dst, d))
    } else if name.starts_with("ds_storexchg_2addr") {
        format!(
            "{name} {}, {addr}, {data0}, {data1}{two_off}",
            vreg_name(inst.dst, 2 * d)
        )
    } else if name.starts_with("ds_store_2addr") {
        format!("{name} {addr}, {data0}, {data1}{two_off}")
    } else if name.starts_with("ds_store_b") {
        format!("{name} {addr}, {data0}{single_off}")
    } else if name == "ds_nop" {
        name.to_string()
    } else {
        let two_data = ["cmpstore", "mskor", "2addr", "wrap"]
            .iter()
            .any(|k| name.contains(k));
        let mut s = format!("{name} ");
        if name.contains("_rtn_") {
            s += &format!("{}, ", vreg_name(inst.dst, d));
        }
        s += &format!("{addr}, {data0}");
        if two_data {
            s += &format!(", {data1}");
        }
        s + &single_off
    };
    body + gds
}

fn format_flat(inst: &Inst) -> String {
    let name = inst.name;
    let size = |n: &str| match n.rsplit('_').next() {
        Some("b64" | "u64" | "i64" | "f64") => 2u16,
        Some("b96") => 3,
        Some("b128") => 4,
        _ => 1,
    };
    let d = size(name);
    let saddr_null = inst.saddr == src::NULL || inst.saddr == 0x7F;
    let vaddr = match inst.format {
        _ if name.contains("addtid") => String::new(),
        Format::Scratch => {
            if inst.sve {
                format!("v{}", inst.addr)
            } else {
                "off".into()
            }
        }
        Format::Global if !saddr_null => format!("v{}", inst.addr),
        _ => vreg_name(inst.addr, 2),
    };
    let saddr = match inst.format {
        Format::Flat => None,
        _ => Some(if saddr_null {
            "off".to_string()
        } else {
            sreg_name(
                inst.saddr,
                if inst.format == Format::Global { 2 } else { 1 },
            )
        }),
    };
    let tail = {
        let mut s = saddr.map(|s| format!(", {s}")).unwrap_or_default();
        if inst.offset != 0 {
            s += &format!(" offset:{}", inst.offset);
        }
        s + &mem_flags(inst)
    };
    if name.contains("addtid") {
        let reg = if name.contains("_load_") {
            inst.dst
        } else {
            inst.data0
        };
        let tail = tail.strip_prefix(", ").unwrap_or(&tail).to_string();
        format!("{name} {}, {tail}", vreg_name(reg, d))
    } else if name.contains("_load_") {
        format!("{name} {}, {vaddr}{tail}", vreg_name(inst.dst, d))
    } else if name.contains("_store_") {
        format!("{name} {vaddr}, {}{tail}", vreg_name(inst.data0, d))
    } else {
        let data_dw = if name.contains("cmpswap") { 2 * d } else { d };
        let ret = if inst.glc {
            format!("{}, ", vreg_name(inst.dst, d))
        } else {
            String::new()
        };
        format!(
            "{name} {ret}{vaddr}, {}{tail}",
            vreg_name(inst.data0, data_dw)
        )
    }
}

fn format_mubuf(inst: &Inst) -> String {
    let name = inst.name;
    if name.starts_with("buffer_gl")
        || name.starts_with("buffer_wbinv")
        || name.starts_with("buffer_inv")
    {
        return name.to_string();
    }
    let d = match name.rsplit('_').next() {
        Some("b64" | "u64" | "i64" | "f64") => 2u16,
        Some("b96") => 3,
        Some("b128") => 4,
        _ => 1,
    };
    let d = if name.contains("cmpswap") { 2 * d } else { d };
    // Format loads/stores carry one register per component (d16: two per register).
    let d = match name.rsplit('_').next() {
        Some(c @ ("x" | "xy" | "xyz" | "xyzw")) if name.contains("format") => {
            let n = c.len() as u16;
            if name.contains("d16") {
                n.div_ceil(2)
            } else {
                n
            }
        }
        _ => d,
    };
    let vaddr = match (inst.idxen, inst.offen) {
        (true, true) => vreg_name(inst.addr, 2),
        (false, false) => "off".to_string(),
        _ => format!("v{}", inst.addr),
    };
    // buffer_load_lds_* write LDS (at M0) and have no VGPR data.
    let data = if name.starts_with("buffer_load_lds") {
        String::new()
    } else {
        format!("{}, ", vreg_name(inst.data0, d))
    };
    let mut s = format!(
        "{name} {data}{vaddr}, {}, {}",
        sreg_name(inst.saddr, 4),
        operand(inst, inst.src[0], 1, false)
    );
    if inst.idxen {
        s += " idxen";
    }
    if inst.offen {
        s += " offen";
    }
    if inst.offset != 0 {
        s += &format!(" offset:{}", inst.offset);
    }
    s + &mem_flags(inst)
}
