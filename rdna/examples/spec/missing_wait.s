// A load whose result is used before `s_waitcnt vmcnt(0)`: the emulator
// writes load results to registers only when a wait retires them, so the
// first add sees the register's old value (7), the second the loaded one.
---
src: u32[32] = repeat(100)
out_early: u32[32]
out_late: u32[32]
local = 32
global = 1
---
    s_mov_b32 s6, s3
    s_mov_b32 s7, s4
    s_load_b128 s[8:11], s[6:7], 0x0       // src, out_early
    s_load_b64 s[12:13], s[6:7], 0x10      // out_late
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    v_mov_b32 v2, 7
    global_load_b32 v2, v1, s[8:9]
    v_add_nc_u32 v3, v2, v0                // no wait: v2 is still 7
    s_waitcnt vmcnt(0)
    v_add_nc_u32 v4, v2, v0                // after the wait: v2 is 100
    global_store_b32 v1, v3, s[10:11]
    global_store_b32 v1, v4, s[12:13]
    s_endpgm
