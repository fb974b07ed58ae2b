//! `tests/driver-api/ipc.c`: memory and event handles between two
//! processes, each running the emulator (the program re-executes itself as
//! the child), against every `cuda.h` variant.

mod common;

use common::*;

#[test]
fn memory_and_events_cross_processes() {
    let (Some(cc), Some(variants)) = (tool("cc"), header_variants()) else {
        return;
    };
    let lib_dir = libcuda_dir();
    let tmp = tempfile::tempdir().unwrap();
    let source = repo_root().join("tests/driver-api/ipc.c");
    for (i, header) in variants.iter().enumerate() {
        let program = tmp.path().join(format!("ipc_{i}"));
        compile_c(&cc, header, &lib_dir, &source, &program);
        let run = run_with_libcuda(&program, &[], &lib_dir);
        assert_eq!(
            run.code,
            Some(0),
            "{}\nstdout:\n{}\nstderr:\n{}",
            header.label,
            run.stdout,
            run.stderr
        );
        assert!(run.stdout.contains("ipc child: done"), "{}", run.stdout);
        assert!(
            run.stdout.contains("ipc: all checks passed"),
            "{}",
            run.stdout
        );
    }
}
