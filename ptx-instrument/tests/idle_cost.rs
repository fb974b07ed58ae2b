//! A module instrumented at load that is not being captured (its
//! `__prlx_desc` all zero) runs each function's uninstrumented copy after a
//! fixed test at its start (issue 21, item 4): measured by the emulator's
//! warp-instruction counts, the idle cost of a launch is that test, the
//! same however many sites the loop visits. Without the copy
//! (`Layout { idle_copy: false }`) a site visit costs one uniform branch.

use prlx_emulator::{Device, DeviceConfig, LaunchConfig};
use prlx_ptx_instrument::{Layout, Options, instrument, instrument_with, runtime};

/// A branch-heavy loop: a data-dependent branch (odd/even, divergent
/// within the warp) and the loop's back edge, `n` iterations.
const LOOP_PTX: &str = r#"
.version 7.5
.target sm_80
.address_size 64

.visible .entry collatz_like(
	.param .u64 out,
	.param .u32 n
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [out];
	ld.param.u32 	%r1, [n];
	mov.u32 	%r2, 0;
	mov.u32 	%r3, %tid.x;
	add.u32 	%r3, %r3, 7;
$LOOP:
	and.b32 	%r4, %r3, 1;
	setp.eq.u32 	%p1, %r4, 0;
	@%p1 bra 	$EVEN;
	mad.lo.u32 	%r3, %r3, 3, 1;
	bra.uni 	$NEXT;
$EVEN:
	shr.u32 	%r3, %r3, 1;
$NEXT:
	add.u32 	%r2, %r2, 1;
	setp.lt.u32 	%p2, %r2, %r1;
	@%p2 bra 	$LOOP;
	mov.u32 	%r5, %tid.x;
	mul.wide.u32 	%rd2, %r5, 4;
	add.s64 	%rd3, %rd1, %rd2;
	st.global.u32 	[%rd3], %r3;
	ret;
}
"#;

/// Warp instructions of one 32-thread launch of `ptx` with `n` iterations,
/// and what it stored.
fn run(ptx: &str, n: u32) -> (u64, Vec<u8>) {
    run_armed(ptx, n, false)
}

/// [`run`], with `__prlx_desc`'s `armed` word set when `armed` (its
/// `trace` stays zero: the instrumented body runs and records nothing).
fn run_armed(ptx: &str, n: u32, armed: bool) -> (u64, Vec<u8>) {
    let mut device = Device::new(DeviceConfig::default());
    let module = device.load_module(ptx, "idle.ptx").expect("loads");
    if armed {
        let (desc, _) = device.get_global(module, runtime::DESCRIPTOR).unwrap();
        device
            .mem_write(desc + u64::from(runtime::ARMED_OFFSET), &1u32.to_le_bytes())
            .unwrap();
    }
    let function = device.get_function(module, "collatz_like").unwrap();
    let out = device.mem_alloc(32 * 4).unwrap();
    let mut params = out.to_le_bytes().to_vec();
    params.extend_from_slice(&n.to_le_bytes());
    let config = LaunchConfig {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let stats = device.launch(function, &config, &params).expect("runs");
    let mut stored = vec![0u8; 32 * 4];
    device.mem_read(out, &mut stored).unwrap();
    (stats.warp_instructions, stored)
}

/// Warp instructions of the idle test at a function's start
/// (`idle_copy.rs`: the load of the descriptor's `armed` word, the
/// compare, the branch; as the pass's test of `trace`).
const IDLE_TEST: u64 = 3;

#[test]
fn idle_launch_costs_a_fixed_test_whatever_the_sites_visited() {
    let instrumented = instrument(LOOP_PTX, "idle.ptx", &Options::default()).unwrap();
    let sites = instrumented.sites.len() as u64;
    assert!(sites >= 2, "{sites} sites");
    let mut plain_counts = Vec::new();
    for n in [0, 100, 300] {
        let (plain, plain_out) = run(LOOP_PTX, n);
        let (idle, idle_out) = run(&instrumented.ptx, n);
        assert_eq!(
            plain_out, idle_out,
            "the idle module computes the same ({n} iterations)"
        );
        // One warp: the test, then the original code.
        assert_eq!(
            idle,
            plain + IDLE_TEST,
            "{n} iterations: plain {plain}, idle {idle} warp instructions"
        );
        plain_counts.push(plain);
    }
    assert!(
        plain_counts[2] > plain_counts[1] + 200,
        "{plain_counts:?}: the loop ran"
    );
}

#[test]
fn the_armed_word_alone_chooses_the_instrumented_body() {
    let instrumented = instrument(LOOP_PTX, "idle.ptx", &Options::default()).unwrap();
    let (plain, plain_out) = run(LOOP_PTX, 100);
    let (armed, armed_out) = run_armed(&instrumented.ptx, 100, true);
    assert_eq!(
        plain_out, armed_out,
        "the instrumented body computes the same"
    );
    // The set-up and a uniform branch past each site per visit (trace 0).
    assert!(
        armed > plain + IDLE_TEST + 100,
        "armed: plain {plain}, instrumented {armed} warp instructions"
    );
    let ptx = &instrumented.ptx;
    let load = format!("[{}+{}]", runtime::DESCRIPTOR, runtime::ARMED_OFFSET);
    let test = ptx.find("// prlx: not capturing").expect("the idle test");
    let branch = test + ptx[test..].find("bra.uni").unwrap();
    assert_eq!(
        ptx[test..branch].matches("ld.global").count(),
        1,
        "one load: {}",
        &ptx[test..branch]
    );
    assert!(ptx[test..branch].contains(&load), "{}", &ptx[test..branch]);
}

#[test]
fn without_the_copy_idle_sites_cost_one_uniform_branch_per_visit() {
    let layout = Layout { idle_copy: false };
    let instrumented = instrument_with(LOOP_PTX, "idle.ptx", &Options::default(), layout).unwrap();
    // Both branches are sites (the conditional one and the back edge).
    let sites = instrumented.sites.len() as u64;
    assert!(sites >= 2, "{sites} sites");
    let (plain_short, plain_out) = run(LOOP_PTX, 100);
    let (idle_short, idle_out) = run(&instrumented.ptx, 100);
    let (plain_long, _) = run(LOOP_PTX, 300);
    let (idle_long, _) = run(&instrumented.ptx, 300);
    assert_eq!(plain_out, idle_out, "the idle module computes the same");
    // 200 more iterations; each visits every site once per warp.
    let plain_more = plain_long - plain_short;
    let idle_more = idle_long - idle_short;
    let per_iteration = (idle_more - plain_more) as f64 / 200.0;
    assert!(
        per_iteration <= sites as f64,
        "an idle site visit costs {:.2} warp instructions ({sites} sites per iteration; plain {plain_more}, idle {idle_more} for 200 iterations)",
        per_iteration / sites as f64
    );
}
