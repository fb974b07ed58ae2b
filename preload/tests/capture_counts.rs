//! A captured launch's driver calls in steady state, counted (issue 21,
//! item 5): on the emulator's libcuda, loaded into this process, the shim's
//! `capture::capture` runs a "kernel" that writes each warp's buffer through
//! the descriptor as instrumented code would, and `capture::counts` says
//! what the capture asked of the driver. After the first launch (which
//! allocates the pooled device and pinned memory) a launch allocates and
//! frees nothing, zeroes only the warp headers, and copies back at most
//! 1.1 × the bytes recorded plus the warp headers.

use prlx::capture::{self, Descriptor, Geometry, counts};
use prlx::config::Config;
use prlx_trace::TraceEvent;

mod emulated;
use emulated::{event, kernel, open_emulator};

#[test]
fn steady_state_launches_allocate_nothing_and_copy_back_what_was_recorded() {
    open_emulator();
    let cuda = prlx::driver::cuda();
    let mut descriptor = 0u64;
    let alloc = cuda.cuMemAlloc_v2.unwrap();
    // SAFETY: the emulator's cuMemAlloc_v2 writes one device address
    // through the out-pointer, a live local.
    let allocated = unsafe { alloc(&mut descriptor, std::mem::size_of::<Descriptor>()) };
    assert_eq!(allocated, 0);
    let config = Config::from_lookup(|_| None);
    // 32 blocks × 128 threads = 128 warps of the default 4096 event slots.
    let geometry = Geometry {
        grid: [32, 1, 1],
        block: [128, 1, 1],
    };
    let slots = 128u64;
    // Each launch records a different, uneven pattern (a data-dependent
    // loop), some warps nothing, so stale state of the last launch would show.
    let patterns: [&dyn Fn(u32) -> u32; 4] = [
        &|w| (w * 37) % 600,
        &|w| if w % 5 == 0 { 0 } else { 64 + w % 3 },
        &|w| (w * 7919) % 300,
        &|w| if w == 9 { 5000 } else { w % 2 },
    ];
    for (launch, count) in patterns.iter().enumerate() {
        let before = counts::snapshot();
        let (result, trace) = capture::capture(
            cuda,
            &config,
            descriptor,
            "counted",
            geometry,
            std::ptr::null_mut(),
            || kernel(descriptor, count),
        );
        let calls = counts::snapshot().since(&before);
        assert_eq!(result, 0);
        let trace = trace.expect("captured");
        // The trace holds exactly what each warp wrote.
        for (slot, (h, events)) in trace.warps.iter().enumerate() {
            let n = count(slot as u32);
            assert_eq!(h.write_idx, n);
            assert_eq!(h.num_events, n.min(4096));
            let want: Vec<TraceEvent> = (0..n.min(4096)).map(|i| event(slot as u32, i)).collect();
            assert_eq!(events, &want, "launch {launch} warp {slot}");
        }
        eprintln!("launch {launch}: {calls:?}");
        if launch == 0 {
            continue; // the pools fill here
        }
        assert_eq!(calls.allocations, 0, "launch {launch}: {calls:?}");
        assert_eq!(calls.frees, 0, "launch {launch}: {calls:?}");
        assert_eq!(calls.host_allocations, 0, "launch {launch}: {calls:?}");
        // Only the warp headers are reset, never the event buffers.
        assert!(
            calls.memset_bytes <= 16 * slots,
            "launch {launch}: {calls:?}"
        );
        let recorded: u64 = (0..slots as u32)
            .map(|w| u64::from(count(w).min(4096)) * 16)
            .sum();
        assert_eq!(calls.recorded_bytes, recorded);
        assert_eq!(calls.warp_headers, slots);
        assert!(
            10 * calls.dtoh_bytes <= 11 * recorded + 10 * 16 * slots,
            "launch {launch}: {} bytes copied for {recorded} recorded: {calls:?}",
            calls.dtoh_bytes
        );
        // Host → device: the trace header and the descriptor (set, cleared).
        assert!(
            calls.htod_bytes <= 160 + 2 * 64,
            "launch {launch}: {calls:?}"
        );
        assert!(calls.synchronizations <= 3, "launch {launch}: {calls:?}");
    }
}
