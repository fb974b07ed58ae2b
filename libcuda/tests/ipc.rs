//! `tests/driver-api/ipc.c`: memory and event handles between two
//! processes, each running the emulator (the program re-executes itself as
//! the child), against every `cuda.h` variant.

mod common;

#[test]
fn memory_and_events_cross_processes() {
    common::run_driver_api_program("ipc", &["ipc child: done", "ipc: all checks passed"]);
}
