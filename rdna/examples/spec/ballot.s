// Ballot and shuffle: v_cmp writes a lane mask to an SGPR, s_bcnt1 counts
// it, v_writelane and ds_bpermute move values across lanes; two `print`
// directives show the ballot and one lane's value.
---
vals: i32[32] = 5, -1, 3, 0, -7, 8, 9, -2, 1, 1, -1, 0, 4, -5, 6, 2, 0, 0, 3, -3, 7, 7, -8, 1, 2, -2, 5, 5, -9, 4, 0, 1
out_mask: u32[2]
out_rev: i32[32]
local = 32
global = 1
wave = 32
---
    s_mov_b32 s6, s3
    s_mov_b32 s7, s4
    s_load_b128 s[8:11], s[6:7], 0x0       // vals, out_mask
    s_load_b64 s[12:13], s[6:7], 0x10      // out_rev
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    global_load_b32 v2, v1, s[8:9]
    s_waitcnt vmcnt(0)
    v_cmp_lt_i32 s14, 0, v2                // ballot(vals > 0)
    s_bcnt1_i32_b32 s15, s14
    print wave=0, s[14:15], exec, scc
    print thread=3, v2
    v_mov_b32 v3, s14
    v_writelane_b32 v3, s15, 1             // lane 1 holds the count
    v_cmp_gt_u32 vcc_lo, 2, v0
    s_and_saveexec_b32 s16, vcc_lo         // lanes 0 and 1 store the mask and count
    global_store_b32 v1, v3, s[10:11]
    s_or_b32 exec_lo, exec_lo, s16
    v_sub_nc_u32 v4, 31, v0                // reverse the wave: read lane 31 - i
    v_lshlrev_b32 v4, 2, v4
    ds_bpermute_b32 v5, v4, v2
    s_waitcnt lgkmcnt(0)
    global_store_b32 v1, v5, s[12:13]
    s_endpgm
