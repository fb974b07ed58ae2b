#!/usr/bin/env python3
"""Derives gfx1100 opcode -> mnemonic tables from LLVM's own disassembler.

For every encoding family it builds one instruction word per opcode value,
disassembles them all with `llvm-mc-19 --disassemble -show-encoding`, and keeps
the opcodes LLVM accepts. Output: rdna/src/decode/opcodes.rs (checked in;
re-run after an LLVM upgrade: `python3 rdna/scripts/gen_opcodes.py`).
"""
import concurrent.futures, re, struct, subprocess, sys, os

MC = os.environ.get("LLVM_MC", "llvm-mc-19")

def words_to_line(ws):
    b = b"".join(struct.pack("<I", w) for w in ws)
    return " ".join("0x%02x" % x for x in b)

def disasm_one(ws):
    """The mnemonic LLVM gives the instruction starting at the first word, or None."""
    p = subprocess.run([MC, "--disassemble", "-triple=amdgcn", "-mcpu=gfx1100"],
                       input=words_to_line(ws) + "\n", capture_output=True, text=True)
    if ":1:1: warning" in p.stderr:
        return None
    for line in p.stdout.splitlines():
        line = line.strip()
        if line and not line.startswith("."):
            return line.split()[0]
    return None

def disasm(items):
    """items: list of (key, [words]). Returns {key: mnemonic}."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        names = list(pool.map(lambda it: disasm_one(it[1]), items))
    return {key: n for (key, _), n in zip(items, names) if n}

LIT = 0x12345678
tables = {}

def gen(name, count, *makes):
    """Probes every opcode with the first operand layout; opcodes LLVM rejects
    are retried with the next layouts (unused fields must be zero)."""
    res = {}
    for make in makes:
        res.update(disasm([(op, make(op)) for op in range(count) if op not in res]))
    tables[name] = res

# SOP2: 10 op[29:23] sdst[22:16] ssrc1[15:8] ssrc0[7:0]
gen("SOP2", 128, lambda op: [(0b10 << 30) | (op << 23) | (4 << 16) | (2 << 8) | 0, LIT])
# SOPK: 1011 op[27:23] sdst simm16
gen("SOPK", 32, lambda op: [(0b1011 << 28) | (op << 23) | (4 << 16) | 0x10, LIT])
# SOP1: 101111101 sdst[22:16] op[15:8] ssrc0
gen("SOP1", 256, lambda op: [(0x17D << 23) | (4 << 16) | (op << 8) | 2, LIT])
# SOPC: 101111110 op[22:16] ssrc1 ssrc0
gen("SOPC", 128, lambda op: [(0x17E << 23) | (op << 16) | (2 << 8) | 0, LIT])
# SOPP: 101111111 op[22:16] simm16
gen("SOPP", 128, lambda op: [(0x17F << 23) | (op << 16) | 0x0, LIT])
# SMEM: 111101 op[25:18] ... sdata[12:6] sbase[5:0]; offset[20:0] soffset[31:25]
gen("SMEM", 256, lambda op: [(0b111101 << 26) | (op << 18) | (4 << 6) | 2, (124 << 25) | 0x10])
# VOP2: 0 op[30:25] vdst[24:17] vsrc1[16:9] src0[8:0]
gen("VOP2", 64, lambda op: [(op << 25) | (1 << 17) | (2 << 9) | (256 + 3), LIT])
# VOP1: 0111111 vdst op[16:9] src0
gen("VOP1", 256, lambda op: [(0b0111111 << 25) | (2 << 17) | (op << 9) | (256 + 4), LIT])
# VOPC: 0111110 op[24:17] vsrc1 src0
gen("VOPC", 256, lambda op: [(0b0111110 << 25) | (op << 17) | (2 << 9) | (256 + 4), LIT])
# VOP3: 110101 op[25:16] ... vdst[7:0]; src2[26:18] src1[17:9] src0[8:0]
gen("VOP3", 1024, lambda op: [(0b110101 << 26) | (op << 16) | 2, (256 + 6 << 18) | (256 + 4 << 9) | (256 + 2), LIT])
# Two-source VOP3 forms are only valid with src2 = 0.
vop3_two = disasm([(op, [(0b110101 << 26) | (op << 16) | 2, (256 + 4 << 9) | (256 + 2), LIT]) for op in range(1024) if op not in tables["VOP3"]])
tables["VOP3"].update(vop3_two)
# One-source forms (promoted VOP1) need src1 = src2 = 0 too.
vop3_one = disasm([(op, [(0b110101 << 26) | (op << 16) | 2, (256 + 2), LIT]) for op in range(1024) if op not in tables["VOP3"]])
tables["VOP3"].update(vop3_one)
# VOP3P: 11001100 op[22:16] vdst; same second dword as VOP3 with op_sel_hi bits
gen("VOP3P", 128, lambda op: [(0b11001100 << 24) | (op << 16) | (1 << 14) | 2, (0b11 << 27) | (256 + 6 << 18) | (256 + 4 << 9) | (256 + 2), LIT],
    lambda op: [(0b11001100 << 24) | (op << 16) | 2, (256 + 6 << 18) | (256 + 4 << 9) | (256 + 2), LIT],
    lambda op: [(0b11001100 << 24) | (op << 16) | 8, (256 + 16 << 18) | (256 + 4 << 9) | (256 + 2), LIT])
# DS: 110110 op[25:18] gds[17] offset1 offset0; vdst[31:24] data1[23:16] data0[15:8] addr[7:0]
def ds(vdst, data1, data0):
    return lambda op: [(0b110110 << 26) | (op << 18), (vdst << 24) | (data1 << 16) | (data0 << 8) | 1]
gen("DS", 256, ds(10, 4, 2), ds(0, 4, 2), ds(10, 0, 2), ds(0, 0, 2), ds(10, 0, 0), ds(0, 0, 0))
# FLAT/GLOBAL/SCRATCH: 110111 op[24:18] seg[17:16]; vdst[31:24] sve[23] saddr[22:16] data[15:8] addr[7:0]
def flat(seg, vdst, saddr, data, addr, sve=0):
    return lambda op: [(0b110111 << 26) | (op << 18) | (seg << 16), (vdst << 24) | (sve << 23) | (saddr << 16) | (data << 8) | addr]
for seg, nm in ((0, "FLAT"), (1, "SCRATCH"), (2, "GLOBAL")):
    gen(nm, 128, flat(seg, 10, 124, 4, 2), flat(seg, 0, 124, 4, 2), flat(seg, 10, 124, 0, 2), flat(seg, 10, 2, 0, 2),
        flat(seg, 0, 2, 4, 2), flat(seg, 10, 2, 4, 2), flat(seg, 10, 124, 0, 2, 1), flat(seg, 0, 124, 4, 2, 1),
        flat(seg, 0, 0, 0, 0))
# MUBUF: 111000 op[25:18] ...; second: soffset[31:24] ... srsrc[20:16] vdata[15:8] vaddr[7:0]
gen("MUBUF", 256, lambda op: [(0b111000 << 26) | (op << 18), (0x80 << 24) | (1 << 16) | (4 << 8) | 2],
    lambda op: [(0b111000 << 26) | (op << 18), 0])

# VOPD (gfx11 dual issue): 110010 opx[25:22] opy[21:17]. The opcode values are
# LLVM's VOPDOp<N> numbers; each is checked against the disassembler below
# (fmaak/fmamk take a literal, so every probe carries one).
VOPD_OPS = {0: "v_dual_fmac_f32", 1: "v_dual_fmaak_f32", 2: "v_dual_fmamk_f32", 3: "v_dual_mul_f32",
            4: "v_dual_add_f32", 5: "v_dual_sub_f32", 6: "v_dual_subrev_f32", 7: "v_dual_mul_dx9_zero_f32",
            8: "v_dual_mov_b32", 9: "v_dual_cndmask_b32", 10: "v_dual_max_f32", 11: "v_dual_min_f32",
            12: "v_dual_dot2acc_f32_f16", 16: "v_dual_add_nc_u32",
            17: "v_dual_lshlrev_b32", 18: "v_dual_and_b32"}
def vopd_probe(opx, opy, vsrc=4):
    return [(0b110010 << 26) | (opx << 22) | (opy << 17) | (vsrc << 9) | (256 + 1), (3 << 24) | (0 << 17) | (vsrc << 9) | (256 + 6), LIT]
def vopd_text(ws):
    p = subprocess.run([MC, "--disassemble", "-triple=amdgcn", "-mcpu=gfx1100"],
                       input=words_to_line(ws) + "\n", capture_output=True, text=True)
    return p.stdout
for op, nm in VOPD_OPS.items():
    if op < 16:
        t = vopd_text(vopd_probe(op, 4)) + vopd_text(vopd_probe(op, 4, 0))
        assert any(line.split("::")[0].split()[0] == nm for line in t.splitlines() if "::" in line), (op, nm, t)
    t = vopd_text(vopd_probe(4, op)) + vopd_text(vopd_probe(4, op, 0))
    assert any(nm + " " in line.split("::")[1] for line in t.splitlines() if "::" in line), (op, nm, t)
resx = {k: v for k, v in VOPD_OPS.items() if k < 16}
resy = VOPD_OPS

out = ["// @generated by rdna/scripts/gen_opcodes.py from llvm-mc-19 (gfx1100). Do not edit.",
       "//! Opcode -> mnemonic tables of every gfx1100 encoding family, as LLVM's",
       "//! disassembler names them (suffix-free base names; `_e32`/`_e64` are added",
       "//! when printing).", ""]

def strip(n):
    for s in ("_e32", "_e64", "_dpp", "_sdwa"):
        if n.endswith(s):
            n = n[: -len(s)]
    return n

for name, res in tables.items():
    size = max(res.keys()) + 1 if res else 0
    out.append("pub static %s: [Option<&str>; %d] = [" % (name, size))
    for op in range(size):
        out.append("    %s," % ('Some("%s")' % strip(res[op]) if op in res else "None"))
    out.append("];")
    out.append("")

def vopd_names(res):
    names = {}
    for k, v in res.items():
        names[k] = v
    return names
out.append("/// VOPD X opcodes (bits 25:22).")
out.append("pub static VOPD_X: [Option<&str>; 16] = [")
for i in range(16):
    out.append("    %s," % ('Some("%s")' % resx[i] if i in resx else "None"))
out.append("];")
out.append("/// VOPD Y opcodes (bits 21:17).")
out.append("pub static VOPD_Y: [Option<&str>; 32] = [")
for i in range(32):
    out.append("    %s," % ('Some("%s")' % resy[i] if i in resy else "None"))
out.append("];")
sys.stdout.write("\n".join(out) + "\n")
