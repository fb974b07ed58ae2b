//! The observer hook: every warp-instruction, with its active mask and the
//! lanes' registers; aborting a launch.

mod machine_util;
use machine_util::*;
use prlx_emulator::{Control, LaunchError, Observer, WarpStep};

const HEADER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n";

fn divergent() -> String {
    format!(
        "{HEADER}.visible .entry div(.param .u64 out)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\n\
         mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 1;\nsetp.eq.u32 %p1, %r2, 0;\n@%p1 bra $even;\n\
         mov.u32 %r3, 100;\nbra $join;\n$even:\nmov.u32 %r3, 200;\n$join:\n\
         ld.param.u64 %rd1, [out];\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r3;\nret;\n}}\n"
    )
}

#[derive(Default)]
struct Recorder {
    steps: Vec<(u32, u32, u32, String)>,
    r3_lane1_at_store: Option<u64>,
    registers_seen: usize,
}

impl Observer for Recorder {
    fn on_warp_instruction(&mut self, step: &WarpStep<'_>) -> Control {
        self.steps.push((
            step.warp_in_block,
            step.ptx_line,
            step.active_mask,
            step.text.to_string(),
        ));
        if step.text.starts_with("st.global") {
            self.r3_lane1_at_store = step.register(1, "%r3").map(|v| v.bits);
            self.registers_seen = step.registers(0).len();
            assert_eq!(step.function, "div");
            assert!(step.register(0, "%nope").is_none());
            assert!(step.register(40, "%r3").is_none());
        }
        Control::Continue
    }
}

#[test]
fn observer_sees_divergence_and_reconvergence_in_order() {
    let mut dev = device();
    let f = kernel(&mut dev, &divergent(), "div");
    let out = dev.mem_alloc(64 * 4).unwrap();
    let mut rec = Recorder::default();
    let stats = dev
        .launch_observed(f, &cfg(1, 64), &Params::new().u64(out).0, &mut rec)
        .unwrap();
    assert_eq!(rec.steps.len() as u64, stats.warp_instructions);
    // Warp 0 runs to completion before warp 1 (fixed schedule).
    let w0: Vec<_> = rec.steps.iter().take_while(|s| s.0 == 0).collect();
    assert!(rec.steps[w0.len()..].iter().all(|s| s.0 == 1));
    // The odd lanes' path (lower PC) runs first with the odd mask, then the
    // even lanes, then the full warp again after the join.
    let masks: Vec<(u32, &str)> = w0.iter().map(|s| (s.2, s.3.as_str())).collect();
    let odd = masks.iter().find(|m| m.1 == "mov.u32 %r3, 100;").unwrap();
    let even = masks.iter().find(|m| m.1 == "mov.u32 %r3, 200;").unwrap();
    assert_eq!(odd.0, 0xaaaa_aaaa);
    assert_eq!(even.0, 0x5555_5555);
    let store = masks.iter().find(|m| m.1.starts_with("st.global")).unwrap();
    assert_eq!(store.0, u32::MAX);
    let lines: Vec<u32> = w0.iter().map(|s| s.1).collect();
    assert_eq!(lines.first(), Some(&9));
    assert_eq!(rec.r3_lane1_at_store, Some(100));
    assert_eq!(rec.registers_seen, 10);
    assert_eq!(download_u32(&dev, out, 4), vec![200, 100, 200, 100]);
}

struct StopAfter(usize);

impl Observer for StopAfter {
    fn on_warp_instruction(&mut self, _: &WarpStep<'_>) -> Control {
        if self.0 == 0 {
            return Control::Abort;
        }
        self.0 -= 1;
        Control::Continue
    }
}

#[test]
fn observer_can_abort_a_launch() {
    let mut dev = device();
    let f = kernel(&mut dev, &divergent(), "div");
    let out = dev.mem_alloc(64 * 4).unwrap();
    let err = dev
        .launch_observed(f, &cfg(1, 64), &Params::new().u64(out).0, &mut StopAfter(3))
        .unwrap_err();
    let LaunchError::Aborted(msg) = &err else {
        panic!("{err}")
    };
    assert!(msg.contains("test.ptx:12"), "{msg}");
}

#[test]
fn observed_and_plain_launches_agree() {
    let mut a = device();
    let mut b = device();
    let fa = kernel(&mut a, &divergent(), "div");
    let fb = kernel(&mut b, &divergent(), "div");
    let oa = a.mem_alloc(256).unwrap();
    let ob = b.mem_alloc(256).unwrap();
    let sa = a.launch(fa, &cfg(1, 64), &Params::new().u64(oa).0).unwrap();
    let sb = b
        .launch_observed(
            fb,
            &cfg(1, 64),
            &Params::new().u64(ob).0,
            &mut Recorder::default(),
        )
        .unwrap();
    assert_eq!(sa, sb);
    assert_eq!(download_u32(&a, oa, 64), download_u32(&b, ob, 64));
}
