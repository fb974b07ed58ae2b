//! The instrumented module computes exactly what the original computes:
//! every kernel of the emulator's corpus (`prlx-emulator-corpus`: CUDA C
//! by clang-19 and nvcc 13, hand-written PTX) runs twice on the emulator,
//! as compiled and instrumented with every event kind while a capture is
//! live (descriptor set, history and snapshot rings on), and its buffers
//! and globals must be byte-identical. The capture itself must be a valid
//! `.prlx` v1 trace whose every event, history entry and snapshot names a
//! site of the module's site table.

use prlx_emulator::{Device, DeviceConfig};
use prlx_emulator_corpus::harness::{Arg, Case, Outputs, run_with_seed};
use prlx_emulator_corpus::toolchain::ptx_for;
use prlx_ptx_instrument::{Options, instrument};
use prlx_trace::{HEADER_SIZE, PRLX_MAGIC, PRLX_VERSION, TraceFile, TraceFileHeader, flags};

const EVENTS_PER_WARP: u32 = 64;
const HISTORY_DEPTH: u32 = 8;
const SNAPSHOT_DEPTH: u32 = 4;

/// What an instrumented launch left: the application's outputs and the trace.
struct Captured {
    buffers: Vec<Vec<u8>>,
    globals: Vec<Vec<u8>>,
    trace: TraceFile,
}

/// Launches the instrumented `ptx` for `case` with a live capture.
fn launch_captured(case: &Case, ptx: &str) -> Result<Captured, String> {
    let name = case.kernel;
    let mut device = Device::new(DeviceConfig::default());
    let module = device
        .load_module(ptx, "instrumented.ptx")
        .map_err(|e| format!("{name}: the instrumented module does not load:\n{e}"))?;
    let function = device
        .get_function(module, name)
        .map_err(|e| e.to_string())?;
    let info = device
        .kernel_info(function)
        .ok_or("no kernel info")?
        .clone();
    for (var, data) in &case.set_globals {
        let (ptr, _) = device.get_global(module, var).map_err(|e| e.to_string())?;
        device.mem_write(ptr, data).map_err(|e| e.to_string())?;
    }
    let mut params = vec![0u8; info.param_bytes as usize];
    let mut buffers = Vec::new();
    for (arg, p) in case.args.iter().zip(&info.params) {
        let bytes = match arg {
            Arg::Buffer(data) => {
                let ptr = device
                    .mem_alloc(data.len().max(1) as u64)
                    .map_err(|e| e.to_string())?;
                device.mem_write(ptr, data).map_err(|e| e.to_string())?;
                buffers.push((ptr, data.len()));
                ptr.to_le_bytes().to_vec()
            }
            Arg::Scalar(bytes) => bytes.clone(),
        };
        params[p.offset as usize..p.offset as usize + bytes.len()].copy_from_slice(&bytes);
    }

    // The trace image as the shim lays it out: header, warp buffers, then
    // the history and snapshot rings in the same allocation.
    let launch = &case.launch;
    let threads: u32 = launch.block.iter().product();
    let warps_per_block = threads.div_ceil(32);
    let slots = launch.grid.iter().product::<u32>() * warps_per_block;
    let warp_bytes = 16 + EVENTS_PER_WARP as usize * 16;
    let history_at = HEADER_SIZE + slots as usize * warp_bytes;
    let history_ring = 16 + HISTORY_DEPTH as usize * 16;
    let snapshot_at = history_at + slots as usize * history_ring;
    let snapshot_ring = 16 + SNAPSHOT_DEPTH as usize * 288;
    let total = snapshot_at + slots as usize * snapshot_ring;
    let mut image = vec![0u8; total];
    for slot in 0..slots as usize {
        image[history_at + slot * history_ring + 4..][..4]
            .copy_from_slice(&HISTORY_DEPTH.to_le_bytes());
        image[snapshot_at + slot * snapshot_ring + 4..][..4]
            .copy_from_slice(&SNAPSHOT_DEPTH.to_le_bytes());
    }
    let base = device.mem_alloc(total as u64).map_err(|e| e.to_string())?;
    device.mem_write(base, &image).map_err(|e| e.to_string())?;
    let mut descriptor = Vec::with_capacity(64);
    for word in [base, base + history_at as u64, base + snapshot_at as u64] {
        descriptor.extend_from_slice(&word.to_le_bytes());
    }
    for word in [
        EVENTS_PER_WARP,
        slots,
        HISTORY_DEPTH,
        SNAPSHOT_DEPTH,
        1, // sample_rate
        0, // launch_count: no launch table
        1, // armed (runtime::ARMED_OFFSET): recording
        0,
        0,
        0,
    ] {
        descriptor.extend_from_slice(&word.to_le_bytes());
    }
    let (desc, size) = device
        .get_global(module, "__prlx_desc")
        .map_err(|e| e.to_string())?;
    assert_eq!(size, 64, "__prlx_desc is 64 bytes");
    device
        .mem_write(desc, &descriptor)
        .map_err(|e| e.to_string())?;

    device
        .launch(function, launch, &params)
        .map_err(|e| format!("{name}: the instrumented launch failed: {e}"))?;

    let mut outputs = Vec::new();
    let mut globals = Vec::new();
    for (ptr, len) in buffers {
        let mut data = vec![0u8; len];
        device.mem_read(ptr, &mut data).map_err(|e| e.to_string())?;
        outputs.push(data);
    }
    for var in &case.read_globals {
        let (ptr, size) = device.get_global(module, var).map_err(|e| e.to_string())?;
        let mut data = vec![0u8; size as usize];
        device.mem_read(ptr, &mut data).map_err(|e| e.to_string())?;
        globals.push(data);
    }
    device
        .mem_read(base, &mut image)
        .map_err(|e| e.to_string())?;
    let mut header: TraceFileHeader = bytemuck::Zeroable::zeroed();
    header.magic = PRLX_MAGIC;
    header.version = PRLX_VERSION;
    header.flags = flags::HISTORY | flags::SNAPSHOT;
    header.set_kernel_name(name);
    header.kernel_name_hash = prlx_trace::kernel_name_hash(name);
    header.grid_dim = launch.grid;
    header.block_dim = launch.block;
    header.warps_per_block = warps_per_block;
    header.total_warp_slots = slots;
    header.events_per_warp = EVENTS_PER_WARP;
    header.history_depth = HISTORY_DEPTH;
    header.snapshot_depth = SNAPSHOT_DEPTH;
    header.sample_rate = 1;
    image[..HEADER_SIZE].copy_from_slice(bytemuck::bytes_of(&header));
    for slot in 0..slots as usize {
        // The host's part (device-rt/README.md): num_events and total_event_count.
        let at = HEADER_SIZE + slot * warp_bytes;
        let write_idx = u32::from_le_bytes(image[at..at + 4].try_into().unwrap());
        image[at + 8..at + 12].copy_from_slice(&write_idx.min(EVENTS_PER_WARP).to_le_bytes());
        image[at + 12..at + 16].copy_from_slice(&write_idx.to_le_bytes());
    }
    let trace = TraceFile::from_bytes(format!("{name}.prlx"), image)
        .map_err(|e| format!("{name}: the captured trace is not valid: {e}"))?;
    Ok(Captured {
        buffers: outputs,
        globals,
        trace,
    })
}

/// Runs `case` as compiled and instrumented; both must leave the same bytes.
fn same_outputs(case: Case) {
    let Some(original) = run_with_seed(&case, None) else {
        return;
    };
    let ptx = match ptx_for(case.source) {
        Ok(Some(p)) => p,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    let options = Options {
        snapshots: true,
        func_entry_exit: true,
        global_stores: true,
    };
    let instrumented = instrument(&ptx, &case.source.ptx_name(), &options)
        .unwrap_or_else(|e| panic!("{}: instrumenting failed: {e}", case.kernel));
    let captured = launch_captured(&case, &instrumented.ptx).unwrap_or_else(|e| panic!("{e}"));
    compare(case.kernel, &original, &captured);
    // Every recorded id is one of the module's sites.
    let table = &instrumented.sites;
    let mut events = 0;
    for warp in captured.trace.warps() {
        assert_eq!(
            warp.header.overflow_count,
            warp.header.write_idx.saturating_sub(EVENTS_PER_WARP)
        );
        for event in warp.events {
            events += 1;
            assert!(
                table.get(event.site_id).is_some(),
                "{}: event of unknown site {:#x}",
                case.kernel,
                event.site_id
            );
            assert!(
                event.active_mask != 0,
                "{}: event with an empty active mask",
                case.kernel
            );
        }
        if let Some(history) = captured.trace.history(warp.index) {
            for entry in history.chronological() {
                assert!(
                    table.get(entry.site_id).is_some(),
                    "{}: history of unknown site",
                    case.kernel
                );
            }
        }
        if let Some(snapshots) = captured.trace.snapshots(warp.index) {
            for entry in snapshots.chronological() {
                let site = table
                    .get(entry.site_id)
                    .unwrap_or_else(|| panic!("{}: snapshot of unknown site", case.kernel));
                assert_eq!(site.kind, prlx_ptx_instrument::SiteKind::Branch);
            }
        }
    }
    // With function entry recorded, every kernel that ran records something.
    assert!(events > 0, "{}: nothing was recorded", case.kernel);
}

fn compare(kernel: &str, original: &Outputs, captured: &Captured) {
    for (i, (a, b)) in original.buffers.iter().zip(&captured.buffers).enumerate() {
        if a != b {
            let at = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(0);
            panic!("{kernel}: buffer {i} differs once instrumented, first at byte {at}");
        }
    }
    assert_eq!(
        original.globals, captured.globals,
        "{kernel}: globals differ once instrumented"
    );
}

macro_rules! corpus {
    ($($name:ident => $case:path;)*) => {
        $(
            #[test]
            fn $name() {
                same_outputs($case());
            }
        )*
        const NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

// Every case of the corpus, the list prlx-emulator's `tests/corpus.rs` runs.
prlx_emulator_corpus::for_each_case!(corpus);

/// The list is the whole corpus.
#[test]
fn every_corpus_case_is_checked() {
    assert!(NAMES.len() > 60, "only {} corpus cases found", NAMES.len());
}
