// c[i] = a[i] + b[i] over two workgroups of 64 work-items (two waves each).
---
arg_a: f32[128] = arange(128)
arg_b: f32[128] = repeat(2.5)
out_c: f32[128]
local = 64, 1, 1
global = 2, 1, 1
wave = 32
---
    s_mov_b32 s6, s3                   // kernarg table pointer (s[3:4] is not an aligned pair)
    s_mov_b32 s7, s4
    s_load_b128 s[8:11], s[6:7], 0x0   // table[0] = arg_a, table[1] = arg_b
    s_load_b64 s[12:13], s[6:7], 0x10  // table[2] = out_c
    s_waitcnt lgkmcnt(0)
    s_lshl_b32 s14, s0, 6              // workgroup id * 64
    v_add_nc_u32 v1, s14, v0
    v_lshlrev_b32 v1, 2, v1            // byte offset
    global_load_b32 v2, v1, s[8:9]
    global_load_b32 v3, v1, s[10:11]
    s_waitcnt vmcnt(0)
    v_add_f32 v2, v2, v3
    global_store_b32 v1, v2, s[12:13]
    s_endpgm
