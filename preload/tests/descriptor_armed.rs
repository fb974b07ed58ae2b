//! The descriptor's `armed` word (`prlx_ptx_instrument::runtime::ARMED_OFFSET`,
//! the one word the idle test of a module instrumented at load reads) is
//! non-zero exactly while the shim has the module recording, on the
//! emulator's libcuda loaded into this process: set with `trace` for a
//! direct launch and with the launch-table count for a graph launch,
//! cleared with both.

use prlx::capture::{self, Descriptor, Geometry};
use prlx::config::Config;

mod emulated;
use emulated::{kernel, open_emulator};

fn read(descriptor: u64) -> Descriptor {
    let mut desc = Descriptor::default();
    // SAFETY: `desc` is a live local of the copied size; the device buffer
    // holds a Descriptor.
    let r = unsafe {
        prlx::driver::cuda().cuMemcpyDtoH_v2.unwrap()(
            (&mut desc as *mut Descriptor).cast(),
            descriptor,
            size_of::<Descriptor>(),
        )
    };
    assert_eq!(r, 0);
    desc
}

/// `bytes` of zeroed device memory (a loaded module's `__prlx_desc` is
/// zero-initialised, so is its launch table).
fn zeroed(bytes: usize) -> u64 {
    let cuda = prlx::driver::cuda();
    let mut address = 0u64;
    // SAFETY: out-pointer to a local.
    let r = unsafe { cuda.cuMemAlloc_v2.unwrap()(&mut address, bytes) };
    assert_eq!(r, 0);
    // SAFETY: the allocation just made, its size.
    let r = unsafe { cuda.cuMemsetD8_v2.unwrap()(address, 0, bytes) };
    assert_eq!(r, 0);
    address
}

#[test]
fn the_armed_word_follows_trace_and_the_launch_count() {
    use prlx_ptx_instrument::runtime::{ARMED_OFFSET, LAUNCH_COUNT_OFFSET, LAUNCH_ENTRY_BYTES};
    assert_eq!(
        std::mem::offset_of!(Descriptor, armed),
        ARMED_OFFSET as usize
    );
    assert_eq!(
        std::mem::offset_of!(Descriptor, launch_count),
        LAUNCH_COUNT_OFFSET as usize
    );
    open_emulator();
    let cuda = prlx::driver::cuda();
    let config = Config::from_lookup(|_| None);
    let geometry = Geometry {
        grid: [2, 1, 1],
        block: [64, 1, 1],
    };
    let desc = zeroed(size_of::<Descriptor>());
    let stream = std::ptr::null_mut();

    // A direct launch: armed with trace, while the launch runs.
    let seen = std::cell::Cell::new(Descriptor::default());
    let (result, trace) = capture::capture(cuda, &config, desc, "direct", geometry, stream, || {
        seen.set(read(desc));
        kernel(desc, &|_| 3)
    });
    assert_eq!(result, 0);
    trace.expect("captured");
    let during = seen.get();
    assert_ne!(during.trace, 0);
    assert_eq!((during.launch_count, during.armed), (0, 1));
    let after = read(desc);
    assert_eq!((after.trace, after.launch_count, after.armed), (0, 0, 0));

    // A graph launch through the launch table: armed with the count.
    capture::set_launch_count(cuda, stream, desc, 3).unwrap();
    let during = read(desc);
    assert_eq!((during.trace, during.launch_count, during.armed), (0, 3, 1));
    let table = zeroed(3 * LAUNCH_ENTRY_BYTES as usize);
    capture::clear_launch_table(cuda, stream, desc, table, 3).unwrap();
    let after = read(desc);
    assert_eq!((after.trace, after.launch_count, after.armed), (0, 0, 0));
}
