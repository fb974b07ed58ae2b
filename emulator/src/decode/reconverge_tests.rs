//! The reconvergence table the decoder attaches to a program
//! ([`crate::reconverge::table`] over the decoded code), for PTX control
//! flow written as compilers emit it.

use crate::config::DeviceConfig;
use crate::memory::GlobalMemory;
use crate::program::Program;
use crate::reconverge::NONE;

fn load(ptx: &str) -> Program {
    let mut memory = GlobalMemory::new(1 << 20);
    super::load(ptx, "t.ptx", &DeviceConfig::default(), &mut memory).expect("decode")
}

fn kernel(body: &str) -> Program {
    load(&format!(
        ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<8>;\n.reg .pred %p<4>;\n{body}\n}}\n"
    ))
}

/// The PC of the `n`-th instruction whose text contains `needle`.
fn pc_of(p: &Program, needle: &str) -> u32 {
    p.text
        .iter()
        .position(|t| t.contains(needle))
        .unwrap_or_else(|| panic!("{needle}")) as u32
}

#[test]
fn if_else_rejoins_after_both_sides() {
    let p = kernel(
        "mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 7;\n @%p1 bra ELSE;\n\
         add.u32 %r2, %r1, 1;\n bra.uni JOIN;\n ELSE:\n add.u32 %r2, %r1, 2;\n\
         JOIN:\n add.u32 %r3, %r2, 3;\n ret;",
    );
    let br = pc_of(&p, "@%p1 bra");
    assert_eq!(p.reconverge.rpc[br as usize], pc_of(&p, "add.u32 %r3"));
}

#[test]
fn loop_breaks_and_back_edge_rejoin_at_the_loop_exit() {
    // for (;;) { if (a) break; if (b) continue; ...; if (!c) break; }
    let p = kernel(
        "mov.u32 %r1, %tid.x;\n HEAD:\n add.u32 %r1, %r1, 1;\n setp.gt.u32 %p1, %r1, 40;\n\
         @%p1 bra EXIT;\n setp.eq.u32 %p2, %r1, 9;\n @%p2 bra LATCH;\n\
         add.u32 %r2, %r2, %r1;\n LATCH:\n setp.lt.u32 %p3, %r2, 100;\n @%p3 bra HEAD;\n\
         EXIT:\n st.global.u32 [%r1], %r2;\n ret;",
    );
    let exit = pc_of(&p, "st.global");
    assert_eq!(p.reconverge.rpc[pc_of(&p, "@%p1 bra") as usize], exit);
    assert_eq!(p.reconverge.rpc[pc_of(&p, "@%p3 bra") as usize], exit);
    // `continue`: rejoins at the latch, inside the loop.
    assert_eq!(
        p.reconverge.rpc[pc_of(&p, "@%p2 bra") as usize],
        pc_of(&p, "setp.lt.u32 %p3")
    );
}

#[test]
fn paths_that_only_meet_at_separate_exits_have_no_rpc() {
    let p = kernel(
        "mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 7;\n @%p1 bra OUT;\n\
         add.u32 %r2, %r1, 1;\n ret;\n OUT:\n exit;",
    );
    assert_eq!(p.reconverge.rpc[pc_of(&p, "@%p1 bra") as usize], NONE);
}

#[test]
fn both_paths_calling_one_function_share_the_call() {
    let p = load(
        ".version 7.5\n.target sm_80\n.address_size 64\n\
         .func (.param .b32 r) f(.param .b32 a)\n{\n.reg .b32 %x;\n\
         ld.param.b32 %x, [a];\n st.param.b32 [r], %x;\n ret;\n}\n\
         .visible .entry k()\n{\n.reg .b32 %r<4>;\n.reg .pred %p<2>;\n\
         mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 7;\n @%p1 bra B;\n\
         { .param .b32 a0; .param .b32 r0; st.param.b32 [a0], %r1;\n\
         call.uni (r0), f, (a0);\n ld.param.b32 %r2, [r0]; }\n bra.uni J;\n\
         B:\n { .param .b32 a1; .param .b32 r1; st.param.b32 [a1], 5;\n\
         call.uni (r1), f, (a1);\n ld.param.b32 %r2, [r1]; }\n J:\n ret;\n}\n",
    );
    let br = pc_of(&p, "@%p1 bra") as usize;
    let f = p.funcs.iter().position(|f| f.name == "f").unwrap() as u32;
    assert_eq!(p.reconverge.shared_call[br], f);
    assert_ne!(p.reconverge.rpc[br], NONE);
}
