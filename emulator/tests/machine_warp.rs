//! Warp-level instructions in hand-written PTX, against the PTX ISA's
//! definitions: shfl.sync (all modes, clamp and segment masks, out-of-range
//! sources), vote.sync, match.sync, redux.sync, activemask under divergence.

mod machine_util;
use machine_util::*;

const HEADER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n";

fn kernel_with(body: &str, outs: usize) -> String {
    format!(
        "{HEADER}.visible .entry w(.param .u64 in, .param .u64 out)\n{{\n.reg .b32 %r<40>;\n.reg .b64 %rd<8>;\n.reg .pred %p<8>;\n\
         ld.param.u64 %rd1, [in];\nld.param.u64 %rd2, [out];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 4;\n\
         add.s64 %rd4, %rd1, %rd3;\nld.global.u32 %r2, [%rd4];\nmul.wide.u32 %rd5, %r1, {};\nadd.s64 %rd6, %rd2, %rd5;\n{body}\nret;\n}}\n",
        outs * 4
    )
}

fn run_warp(body: &str, outs: usize, input: &[u32]) -> Vec<Vec<u32>> {
    let mut dev = device();
    let f = kernel(&mut dev, &kernel_with(body, outs), "w");
    let pin = upload_u32(&mut dev, input);
    let pout = dev.mem_alloc((input.len() * outs * 4) as u64).unwrap();
    run(
        &mut dev,
        f,
        cfg(1, input.len() as u32),
        &Params::new().u64(pin).u64(pout),
    );
    download_u32(&dev, pout, input.len() * outs)
        .chunks(outs)
        .map(|c| c.to_vec())
        .collect()
}

/// The PTX ISA's shfl.sync source lane and predicate.
fn shfl_ref(mode: &str, lane: i32, b: i32, c: u32) -> (usize, bool) {
    let clamp = (c & 0x1f) as i32;
    let seg = ((c >> 8) & 0x1f) as i32;
    let max_lane = (lane & seg) | (clamp & !seg);
    let min_lane = lane & seg;
    let (j, p) = match mode {
        "up" => (lane - b, lane - b >= max_lane),
        "down" => (lane + b, lane + b <= max_lane),
        "bfly" => (lane ^ b, (lane ^ b) <= max_lane),
        _ => {
            let j = min_lane | (b & !seg);
            (j, j <= max_lane)
        }
    };
    (if p { j as usize } else { lane as usize }, p)
}

#[test]
fn shfl_all_modes_with_clamp_and_segments() {
    let input: Vec<u32> = (0..32).map(|i| 1000 + i * 7).collect();
    for (mode, b, c) in [
        ("up", 3, 0x0000),
        ("up", 1, 0x1c00),
        ("down", 5, 0x1f),
        ("down", 2, 0x1807),
        ("bfly", 6, 0x1f),
        ("bfly", 3, 0x1c03),
        ("idx", 17, 0x1f),
        ("idx", 5, 0x1807),
        ("idx", 40, 0x1f),
    ] {
        let body = format!(
            "shfl.sync.{mode}.b32 %r3|%p1, %r2, {b}, {c}, -1;\nselp.u32 %r4, 1, 0, %p1;\nst.global.v2.u32 [%rd6], {{%r3, %r4}};"
        );
        let got = run_warp(&body, 2, &input);
        for (lane, out) in got.iter().enumerate() {
            let (src, p) = shfl_ref(mode, lane as i32, b & 0x1f, c);
            assert_eq!(
                *out,
                vec![input[src], p as u32],
                "shfl.{mode} b={b} c={c:#x} lane {lane}"
            );
        }
    }
}

#[test]
fn vote_match_redux_and_activemask() {
    let input: Vec<u32> = (0..32)
        .map(|i| [5, 9, 5, 2][i % 4] + (i as u32 / 16) * 100)
        .collect();
    let body = "\
        and.b32 %r3, %r2, 1;\nsetp.eq.u32 %p1, %r3, 1;\n\
        vote.sync.ballot.b32 %r4, %p1, -1;\n\
        vote.sync.all.pred %p2, %p1, -1;\nselp.u32 %r5, 1, 0, %p2;\n\
        vote.sync.any.pred %p2, %p1, -1;\nselp.u32 %r6, 1, 0, %p2;\n\
        vote.sync.uni.pred %p2, %p1, 0x0000ffff;\nselp.u32 %r7, 1, 0, %p2;\n\
        match.any.sync.b32 %r8, %r2, -1;\n\
        match.all.sync.b32 %r9|%p3, %r2, -1;\nselp.u32 %r10, 1, 0, %p3;\n\
        redux.sync.add.u32 %r11, %r2, -1;\nredux.sync.min.u32 %r12, %r2, -1;\nredux.sync.max.s32 %r13, %r2, -1;\n\
        redux.sync.or.b32 %r14, %r2, -1;\nredux.sync.xor.b32 %r15, %r2, -1;\nredux.sync.and.b32 %r16, %r2, -1;\n\
        mov.u32 %r17, 0;\nsetp.lt.u32 %p4, %r1, 10;\n@%p4 bra $low;\nactivemask.b32 %r17;\n$low:\n\
        st.global.v4.u32 [%rd6], {%r4, %r5, %r6, %r7};\nst.global.v4.u32 [%rd6+16], {%r8, %r9, %r10, %r11};\n\
        st.global.v4.u32 [%rd6+32], {%r12, %r13, %r14, %r15};\nst.global.v2.u32 [%rd6+48], {%r16, %r17};";
    let got = run_warp(body, 16, &input);
    let ballot = input
        .iter()
        .enumerate()
        .fold(0u32, |m, (i, v)| m | ((v & 1) << i));
    for (lane, o) in got.iter().enumerate() {
        assert_eq!(o[0], ballot, "ballot");
        assert_eq!(o[1], (ballot == u32::MAX) as u32, "all");
        assert_eq!(o[2], (ballot != 0) as u32, "any");
        let low = ballot & 0xffff;
        assert_eq!(
            o[3],
            (low == 0 || low == 0xffff) as u32,
            "uni over the member mask"
        );
        let same = input
            .iter()
            .enumerate()
            .fold(0u32, |m, (i, v)| m | (((*v == input[lane]) as u32) << i));
        assert_eq!(o[4], same, "match.any lane {lane}");
        assert_eq!((o[5], o[6]), (0, 0), "match.all (values differ)");
        assert_eq!(o[7], input.iter().sum::<u32>(), "redux.add");
        assert_eq!(o[8], *input.iter().min().unwrap(), "redux.min");
        assert_eq!(o[9], *input.iter().max().unwrap(), "redux.max");
        assert_eq!(o[10], input.iter().fold(0, |a, v| a | v), "redux.or");
        assert_eq!(o[11], input.iter().fold(0, |a, v| a ^ v), "redux.xor");
        assert_eq!(
            o[12],
            input.iter().fold(u32::MAX, |a, v| a & v),
            "redux.and"
        );
        assert_eq!(
            o[13],
            if lane < 10 { 0 } else { !0x3ff },
            "activemask lane {lane}"
        );
    }
}

#[test]
fn match_all_when_values_agree() {
    let input = vec![42u32; 32];
    let got = run_warp(
        "match.all.sync.b32 %r3|%p1, %r2, -1;\nselp.u32 %r4, 1, 0, %p1;\nst.global.v2.u32 [%rd6], {%r3, %r4};",
        2,
        &input,
    );
    assert!(got.iter().all(|o| o == &vec![u32::MAX, 1]));
}

#[test]
fn divergent_loop_reconverges_before_a_shuffle() {
    // Lanes loop a lane-dependent number of times, then shuffle: the warp
    // must be whole again at the shfl.
    let input: Vec<u32> = (0..32).collect();
    let body = "\
        mov.u32 %r3, 0;\n$loop:\nadd.u32 %r3, %r3, 1;\nsetp.lt.u32 %p1, %r3, %r2;\n@%p1 bra $loop;\n\
        activemask.b32 %r4;\nshfl.sync.down.b32 %r5, %r3, 1, 31, -1;\nst.global.v2.u32 [%rd6], {%r4, %r5};";
    let got = run_warp(body, 2, &input);
    for (lane, out) in got.iter().enumerate() {
        let iters = |l: usize| (l as u32).max(1);
        let expect = if lane < 31 {
            iters(lane + 1)
        } else {
            iters(lane)
        };
        assert_eq!(*out, vec![u32::MAX, expect], "lane {lane}");
    }
}

/// One convergent `redux`/`vote`/`match` whose lanes name different
/// membermasks (odd lanes the odd lanes, even lanes the even ones), as
/// cooperative groups' `binary_partition` followed by `reduce` compiles:
/// each lane's result covers the lanes of its own mask.
#[test]
fn warp_ops_with_a_membermask_per_lane() {
    let input: Vec<u32> = (0..32).map(|i| i * 3 + 1).collect();
    let body = "\
        and.b32 %r3, %r1, 1;\nsetp.eq.u32 %p1, %r3, 1;\n\
        selp.b32 %r4, 0xaaaaaaaa, 0x55555555, %p1;\n\
        redux.sync.add.u32 %r5, %r2, %r4;\n\
        setp.gt.u32 %p2, %r2, 40;\nvote.sync.ballot.b32 %r6, %p2, %r4;\n\
        vote.sync.all.pred %p3, %p1, %r4;\nselp.u32 %r7, 1, 0, %p3;\n\
        and.b32 %r8, %r2, 4;\nmatch.any.sync.b32 %r9, %r8, %r4;\n\
        st.global.v4.u32 [%rd6], {%r5, %r6, %r7, %r9};";
    let got = run_warp(body, 4, &input);
    for (lane, o) in got.iter().enumerate() {
        let members: u32 = if lane % 2 == 1 {
            0xaaaa_aaaa
        } else {
            0x5555_5555
        };
        let in_members = |i: usize| members >> i & 1 == 1;
        let sum: u32 = (0..32).filter(|&i| in_members(i)).map(|i| input[i]).sum();
        assert_eq!(o[0], sum, "redux.add lane {lane}");
        let ballot = (0..32)
            .filter(|&i| in_members(i) && input[i] > 40)
            .fold(0u32, |m, i| m | 1 << i);
        assert_eq!(o[1], ballot, "ballot lane {lane}");
        assert_eq!(
            o[2],
            (lane % 2) as u32,
            "all over the lane's own members, lane {lane}"
        );
        let same = (0..32)
            .filter(|&i| in_members(i) && input[i] & 4 == input[lane] & 4)
            .fold(0u32, |m, i| m | 1 << i);
        assert_eq!(o[3], same, "match.any lane {lane}");
    }
}
