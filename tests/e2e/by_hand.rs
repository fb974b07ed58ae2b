//! The compiled kernels against the emulator with the buffer descriptor
//! filled by the test itself (no shim): the trace image the device leaves
//! behind is a valid `.prlx` file whose events, history and snapshot rings
//! say exactly what the runtime's semantics promise for known inputs.

use prlx_compile::CompileRequest;
use prlx_emulator::{Device, DeviceConfig, LaunchConfig};
use prlx_tests::repo_root;
use prlx_trace::geometry::SectionLayout;
use prlx_trace::{EventType, TraceBuilder, TraceFile, WarpBufferHeader};
use serde_json::Value;

const N: usize = 256;
const THREADS: u32 = 64;
const THRESHOLD: i32 = 20;
const EVENTS_PER_WARP: u32 = 64;
const DEPTH: u32 = 8;
/// LLVM's `ICMP_SGT`.
const ICMP_SGT: u32 = 38;

/// Inputs with a different taken-mask in every warp: lane l of warp w
/// exceeds the threshold when bit l of `0x9e3779b9 * (w + 1)` is set.
fn inputs() -> Vec<i32> {
    (0..N)
        .map(|i| {
            let (warp, lane) = (i / 32, i % 32);
            let pattern = 0x9e37_79b9_u32.wrapping_mul(warp as u32 + 1);
            if pattern >> lane & 1 == 1 {
                100 + i as i32
            } else {
                i as i32 % 7
            }
        })
        .collect()
}

fn ballot(inputs: &[i32], warp: usize) -> u32 {
    (0..32).fold(0, |mask, lane| {
        mask | (u32::from(inputs[warp * 32 + lane] > THRESHOLD) << lane)
    })
}

/// The site id of the `kind` site at the source line marked `marker`.
fn site_id(sites: &Value, marker: &str, kind: &str) -> u32 {
    let text = std::fs::read_to_string(repo_root().join("tests/e2e/app/kernels.cu")).unwrap();
    let line = text.lines().position(|l| l.contains(marker)).unwrap() as u64 + 1;
    let matching: Vec<&Value> = sites
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["line"] == line && s["kind"] == kind && s["function"] == "classify")
        .collect();
    assert_eq!(
        matching.len(),
        1,
        "one {kind} site at line {line}: {sites:#}"
    );
    matching[0]["site_id"].as_u64().unwrap() as u32
}

#[test]
fn a_hand_filled_descriptor_yields_a_valid_trace_with_the_promised_contents() {
    if prlx_tests::find_tool("clang-19").is_none() {
        prlx_tests::missing("clang-19");
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let mut req = CompileRequest::new(
        repo_root().join("tests/e2e/app/kernels.cu"),
        scratch.path().join("kernels.ptx"),
    );
    req.snapshots = true;
    req.clang_args = vec!["-gline-tables-only".into()];
    let out = prlx_compile::compile(&req).unwrap();
    let sites: Value =
        serde_json::from_str(&std::fs::read_to_string(out.sites.unwrap()).unwrap()).unwrap();
    let branch_site = site_id(&sites, "CLASSIFY_BRANCH", "Branch");

    let mut device = Device::new(DeviceConfig::default());
    let ptx = std::fs::read_to_string(&out.ptx).unwrap();
    let module = device.load_module(&ptx, "kernels.ptx").unwrap();
    let classify = device.get_function(module, "classify").unwrap();

    // The trace image as the file will be: header, warp buffers, rings.
    let grid = [(N as u32) / THREADS, 1, 1];
    let block = [THREADS, 1, 1];
    let builder = TraceBuilder::new("classify", grid, block)
        .unwrap()
        .events_per_warp(EVENTS_PER_WARP)
        .with_history(DEPTH)
        .with_snapshots(DEPTH);
    let image_bytes = builder.to_bytes();
    let layout = SectionLayout::from_header("image", builder.header(), false).unwrap();
    let warps = layout.num_warps;
    let image = device.mem_alloc(image_bytes.len() as u64).unwrap();
    device.mem_write(image, &image_bytes).unwrap();

    let (desc, desc_bytes) = device.get_global(module, "__prlx_desc").unwrap();
    assert_eq!(desc_bytes, 64);
    let mut descriptor = [0u8; 64];
    descriptor[0..8].copy_from_slice(&image.to_le_bytes());
    descriptor[8..16]
        .copy_from_slice(&(image + layout.history.as_ref().unwrap().offset).to_le_bytes());
    descriptor[16..24]
        .copy_from_slice(&(image + layout.snapshots.as_ref().unwrap().offset).to_le_bytes());
    descriptor[24..28].copy_from_slice(&EVENTS_PER_WARP.to_le_bytes());
    descriptor[28..32].copy_from_slice(&(warps as u32).to_le_bytes());
    descriptor[32..36].copy_from_slice(&DEPTH.to_le_bytes());
    descriptor[36..40].copy_from_slice(&DEPTH.to_le_bytes());
    device.mem_write(desc, &descriptor).unwrap();

    // The launch: classify(in, out, hits, n, threshold).
    let inputs = inputs();
    let raw: Vec<u8> = inputs.iter().flat_map(|v| v.to_le_bytes()).collect();
    let d_in = device.mem_alloc(raw.len() as u64).unwrap();
    device.mem_write(d_in, &raw).unwrap();
    let d_out = device.mem_alloc(raw.len() as u64).unwrap();
    let d_hits = device.mem_alloc(4).unwrap();
    device.mem_write(d_hits, &[0; 4]).unwrap();
    let info = device.kernel_info(classify).unwrap().clone();
    let mut params = vec![0u8; info.param_bytes as usize];
    let values: [Vec<u8>; 5] = [
        d_in.to_le_bytes().to_vec(),
        d_out.to_le_bytes().to_vec(),
        d_hits.to_le_bytes().to_vec(),
        (N as i32).to_le_bytes().to_vec(),
        THRESHOLD.to_le_bytes().to_vec(),
    ];
    for (param, value) in info.params.iter().zip(&values) {
        assert_eq!(param.size as usize, value.len(), "{}", param.name);
        params[param.offset as usize..][..value.len()].copy_from_slice(value);
    }
    let config = LaunchConfig {
        grid,
        block,
        dynamic_shared_bytes: 0,
    };
    device.launch(classify, &config, &params).unwrap();

    // The kernel's own results are unaffected.
    let mut out_bytes = vec![0u8; raw.len()];
    device.mem_read(d_out, &mut out_bytes).unwrap();
    let outputs: Vec<i32> = out_bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let expected: Vec<i32> = inputs
        .iter()
        .map(|&v| if v > THRESHOLD { v * 2 + 1 } else { v + 1 })
        .collect();
    assert_eq!(outputs, expected);

    // Copy back and finish the warp headers as the host must.
    let mut bytes = vec![0u8; image_bytes.len()];
    device.mem_read(image, &mut bytes).unwrap();
    for warp in 0..warps {
        let at = layout.warps.record_offset(warp) as usize;
        let header: &mut WarpBufferHeader = bytemuck::from_bytes_mut(&mut bytes[at..at + 16]);
        header.num_events = header.write_idx.min(EVENTS_PER_WARP);
        header.total_event_count = header.write_idx;
    }
    let trace = TraceFile::from_bytes("classify_0.prlx", bytes).expect("a valid .prlx trace");

    for warp in 0..warps {
        let taken = ballot(&inputs, warp);
        let view = trace.warp(warp).unwrap();
        assert_eq!(view.header.overflow_count, 0);
        let branches: Vec<_> = view
            .events
            .iter()
            .filter(|e| e.site_id == branch_site)
            .collect();
        assert_eq!(branches.len(), 1, "warp {warp}: {:?}", view.events);
        let event = branches[0];
        assert_eq!(event.event_type, EventType::Branch as u8);
        assert_eq!(event.active_mask, u32::MAX, "warp {warp}");
        assert_eq!(
            event.value_a, taken,
            "warp {warp}: the taken mask is the ballot"
        );
        assert_eq!(event.branch_dir, u8::from(taken != 0));
        let atomics = view
            .events
            .iter()
            .filter(|e| e.event_type == EventType::Atomic as u8)
            .count();
        assert_eq!(
            atomics,
            usize::from(taken != 0),
            "warp {warp}: one atomic event per warp-instruction"
        );

        let snapshots = trace.snapshots(warp).unwrap();
        let at_branch: Vec<_> = snapshots
            .chronological()
            .filter(|s| s.site_id == branch_site)
            .collect();
        assert_eq!(at_branch.len(), 1, "warp {warp}");
        let snap = at_branch[0];
        assert_eq!(snap.active_mask, u32::MAX);
        assert_eq!(snap.cmp_predicate, ICMP_SGT);
        for lane in 0..32 {
            assert_eq!(
                snap.lhs_values[lane] as i32,
                inputs[warp * 32 + lane],
                "warp {warp} lane {lane}"
            );
            assert_eq!(snap.rhs_values[lane] as i32, THRESHOLD);
        }

        let history = trace.history(warp).unwrap();
        let recorded: Vec<(u32, u32)> = history
            .chronological()
            .map(|h| (h.site_id, h.value))
            .collect();
        assert!(
            recorded.contains(&(branch_site, taken)),
            "warp {warp}: history {recorded:?}"
        );
        assert_eq!(
            history.header.total_writes, view.header.write_idx,
            "every event is also in the ring"
        );
    }
}
