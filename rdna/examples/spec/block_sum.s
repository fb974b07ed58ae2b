// Sum of 256 values per workgroup: LDS, barriers, EXEC-mask divergence
// (s_and_saveexec / s_cbranch_execz), a loop on SCC, and one store by lane 0.
---
data: i32[512] = arange(512)
out_sum: i32[2]
local = 256
global = 2
wave = 64
---
    s_mov_b32 s6, s3
    s_mov_b32 s7, s4
    s_load_b128 s[8:11], s[6:7], 0x0        // data, out_sum
    s_waitcnt lgkmcnt(0)
    s_lshl_b32 s12, s0, 8                   // first element of this workgroup
    v_add_nc_u32 v1, s12, v0
    v_lshlrev_b32 v1, 2, v1
    global_load_b32 v2, v1, s[8:9]
    v_lshlrev_b32 v3, 2, v0                 // LDS address of this work-item
    s_waitcnt vmcnt(0)
    ds_store_b32 v3, v2
    s_movk_i32 s13, 0x80                    // stride
loop:
    s_waitcnt lgkmcnt(0)
    s_barrier
    v_cmp_gt_u32 vcc, s13, v0               // tid < stride
    s_and_saveexec_b64 s[14:15], vcc
    s_cbranch_execz skip
    v_lshl_add_u32 v4, s13, 2, v3           // address of tid + stride
    ds_load_b32 v5, v4
    ds_load_b32 v6, v3
    s_waitcnt lgkmcnt(0)
    v_add_nc_u32 v5, v5, v6
    ds_store_b32 v3, v5
skip:
    s_or_b64 exec, exec, s[14:15]
    s_lshr_b32 s13, s13, 1
    s_cmp_lg_u32 s13, 0
    s_cbranch_scc1 loop
    s_waitcnt lgkmcnt(0)
    s_barrier
    v_cmpx_eq_u32 0, v0
    s_cbranch_execz done
    v_mov_b32 v7, 0
    ds_load_b32 v8, v7
    s_lshl_b32 s16, s0, 2
    v_mov_b32 v9, s16
    s_waitcnt lgkmcnt(0)
    global_store_b32 v9, v8, s[10:11]
done:
    s_endpgm
