//! Captures whose warps do not all fit the device budget at
//! `PRLX_EVENTS_PER_WARP` slots each (issue 21, item 3), on the emulator's
//! libcuda loaded into this process: the budget is a share of the device's
//! free memory (`cuMemGetInfo`) unless `PRLX_CAPTURE_BUDGET_MB` sets it, the
//! warps get as many slots as fit, and the trace says what was granted, what
//! was asked for, and which warps lost events.

use prlx::capture::{self, Descriptor, FREE_MEMORY_DIVISOR, Geometry};
use prlx::config::Config;
use prlx_trace::HEADER_SIZE;

mod emulated;
use emulated::{event, kernel, open_emulator};

/// The device bytes the warps' buffers take with `events` slots each.
fn trace_bytes(slots: u64, events: u32) -> u64 {
    HEADER_SIZE as u64 + slots * (16 + 16 * u64::from(events))
}

fn descriptor() -> u64 {
    let cuda = prlx::driver::cuda();
    let mut descriptor = 0u64;
    // SAFETY: out-pointer to a local.
    let r = unsafe { cuda.cuMemAlloc_v2.unwrap()(&mut descriptor, size_of::<Descriptor>()) };
    assert_eq!(r, 0);
    descriptor
}

fn free_memory() -> u64 {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: out-pointers to locals.
    let r = unsafe { prlx::driver::cuda().cuMemGetInfo_v2.unwrap()(&mut free, &mut total) };
    assert_eq!(r, 0);
    free as u64
}

#[test]
fn warps_that_do_not_fit_get_fewer_slots_and_the_trace_says_so() {
    open_emulator();
    let cuda = prlx::driver::cuda();

    // The budget chosen from the device: a quarter of its free memory at
    // the first capture. 20480 warps of 4096 slots (1.3 GB) do not fit it.
    let desc = descriptor();
    let free = free_memory();
    let config = Config::from_lookup(|_| None);
    assert_eq!(config.capture_budget, None);
    let geometry = Geometry {
        grid: [640, 1, 1],
        block: [1024, 1, 1],
    };
    let slots = 20480u64;
    let budget = free / FREE_MEMORY_DIVISOR;
    assert!(trace_bytes(slots, 4096) > budget, "the grid must not fit");
    let granted = std::cell::Cell::new(0);
    let (result, trace) = capture::capture(
        cuda,
        &config,
        desc,
        "big",
        geometry,
        std::ptr::null_mut(),
        || {
            granted.set(read_events_per_warp(desc));
            let g = granted.get();
            // Warp 3 records 10 events more than it has slots; warp 7 fits.
            kernel(desc, &|slot| match slot {
                3 => g + 10,
                7 => 5,
                _ => 0,
            })
        },
    );
    assert_eq!(result, 0);
    let trace = trace.expect("captured with fewer slots");
    let g = granted.get();
    assert!(
        (prlx::capture::MIN_EVENTS_PER_WARP..4096).contains(&g),
        "{g}"
    );
    assert!(trace_bytes(slots, g) <= budget);
    assert!(
        trace_bytes(slots, g + 1) + 512 > budget,
        "as many slots as fit"
    );
    assert_eq!(trace.header.events_per_warp, g);
    let t = trace.truncation.expect("the trace says it was truncated");
    assert_eq!(t.events_per_warp, g);
    assert_eq!(t.requested_events_per_warp, 4096);
    assert_eq!(t.budget_bytes, budget);
    assert_eq!((t.overflowed_warps, t.dropped_events), (1, 10));
    let (h, events) = &trace.warps[3];
    assert_eq!(
        (h.write_idx, h.num_events, events.len()),
        (g + 10, g, g as usize)
    );
    assert_eq!(events[0], event(3, 0));
    assert_eq!(trace.warps[7].1.len(), 5);

    // PRLX_CAPTURE_BUDGET_MB=1: 1024 warps get about a KiB each.
    let config = Config::from_lookup(|k| (k == "PRLX_CAPTURE_BUDGET_MB").then(|| "1".into()));
    let geometry = Geometry {
        grid: [256, 1, 1],
        block: [128, 1, 1],
    };
    let (result, trace) = capture::capture(
        cuda,
        &config,
        desc,
        "small",
        geometry,
        std::ptr::null_mut(),
        || kernel(desc, &|slot| if slot % 2 == 0 { 100 } else { 20 }),
    );
    assert_eq!(result, 0);
    let t = trace.expect("captured").truncation.expect("truncated");
    assert_eq!(t.budget_bytes, 1 << 20);
    assert!(trace_bytes(1024, t.events_per_warp) <= 1 << 20);
    assert!(t.events_per_warp > 20 && t.events_per_warp < 100, "{t:?}");
    assert_eq!(t.overflowed_warps, 512);
    assert_eq!(t.dropped_events, 512 * u64::from(100 - t.events_per_warp));

    // A grid that fits keeps its slots and says nothing.
    let geometry = Geometry {
        grid: [2, 1, 1],
        block: [64, 1, 1],
    };
    let (_, trace) = capture::capture(
        cuda,
        &config,
        desc,
        "fits",
        geometry,
        std::ptr::null_mut(),
        || kernel(desc, &|_| 7),
    );
    let trace = trace.expect("captured");
    assert_eq!(trace.header.events_per_warp, 4096);
    assert_eq!(trace.truncation, None);
}

/// The events per warp the capture set in the descriptor.
fn read_events_per_warp(descriptor: u64) -> u32 {
    let mut desc = Descriptor::default();
    // SAFETY: the descriptor buffer holds a Descriptor.
    let r = unsafe {
        prlx::driver::cuda().cuMemcpyDtoH_v2.unwrap()(
            (&mut desc as *mut Descriptor).cast(),
            descriptor,
            size_of::<Descriptor>(),
        )
    };
    assert_eq!(r, 0);
    desc.events_per_warp
}
