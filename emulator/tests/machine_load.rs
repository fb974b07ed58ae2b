//! Module loading: diagnostics, unsupported instructions, kernel metadata,
//! globals and launch validation.

mod machine_util;
use machine_util::*;
use prlx_emulator::{EmuError, LaunchConfig, LaunchError};

const HEADER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n";

#[test]
fn unsupported_instruction_is_rejected_at_load_with_its_line() {
    let ptx = format!(
        "{HEADER}.visible .entry k()\n{{\n.reg .b32 %r<4>;\nmov.u32 %r1, 1;\nwgmma.fence.sync.aligned;\nret;\n}}\n"
    );
    let mut dev = device();
    let err = dev.load_module(&ptx, "bad.ptx").unwrap_err();
    assert_eq!((err.line, err.col), (8, 1));
    assert_eq!(
        err.to_string(),
        "bad.ptx:8:1: unsupported instruction `wgmma.fence.sync.aligned`"
    );
}

#[test]
fn unknown_modifier_and_every_problem_are_reported() {
    let ptx = format!(
        "{HEADER}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n.reg .f32 %f<3>;\nadd.weird.u32 %r1, %r1, 1;\n\
         setmaxnreg.inc.sync.aligned.u32 240;\nret;\n}}\n"
    );
    let mut dev = device();
    let err = dev.load_module(&ptx, "bad.ptx").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("bad.ptx:8:1: unsupported instruction `add.weird.u32` (modifier `.weird` is not supported)"), "{text}");
    assert!(
        text.contains("bad.ptx:9:1: unsupported instruction `setmaxnreg.inc.sync.aligned.u32`"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 2, "{text}");
}

#[test]
fn parse_errors_keep_the_file_position() {
    let mut dev = device();
    let err = dev
        .load_module(".version 7.5\n.target sm_80\n.entry k( {", "broken.ptx")
        .unwrap_err();
    assert!(err.to_string().starts_with("broken.ptx:3:"), "{err}");
}

#[test]
fn calls_to_functions_without_a_body_are_rejected() {
    let ptx = format!(
        "{HEADER}.extern .func (.param .b32 r) helper(.param .b64 a, .param .b64 b);\n\
         .visible .entry k()\n{{\n.reg .b32 %r<2>;\n{{\n.param .b64 p0;\n.param .b64 p1;\n.param .b32 r0;\n\
         st.param.b64 [p0], 0;\nst.param.b64 [p1], 0;\ncall.uni (r0), helper, (p0, p1);\n}}\nret;\n}}\n"
    );
    let err = device().load_module(&ptx, "p.ptx").unwrap_err();
    assert!(
        err.to_string()
            .contains("call to external function `helper`"),
        "{err}"
    );
}

#[test]
fn kernel_metadata_and_handles() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u8 a, .param .u64 b, .param .align 16 .b8 s[24], .param .f32 c)\n\
         .maxntid 128, 1, 1\n{{\n.shared .align 8 .b8 tile[1000];\nret;\n}}\n\
         .visible .entry r() .reqntid 64, 2, 1\n{{\nret;\n}}\n"
    );
    let mut dev = device();
    let m = load(&mut dev, &ptx);
    let k = dev.get_function(m, "k").unwrap();
    let info = dev.kernel_info(k).unwrap().clone();
    let offsets: Vec<(u32, u32)> = info.params.iter().map(|p| (p.offset, p.size)).collect();
    assert_eq!(offsets, vec![(0, 1), (8, 8), (16, 24), (40, 4)]);
    assert_eq!(info.param_bytes, 44);
    assert_eq!(info.static_shared_bytes, 1000);
    assert_eq!(info.max_threads_per_block, 128);
    assert_eq!(info.ptx_version, (7, 5));
    assert_eq!(info.target_sm, 80);
    assert_eq!(dev.function_module(k), Some(m));
    assert!(matches!(
        dev.get_function(m, "nope"),
        Err(EmuError::NotFound(_))
    ));
    let r = dev.get_function(m, "r").unwrap();
    assert_eq!(dev.kernel_info(r).unwrap().reqntid, Some([64, 2, 1]));

    // Launch validation.
    let p = Params(vec![0; 44]);
    let c = |g: u32, b: [u32; 3], dynamic: u32| LaunchConfig {
        grid: [g, 1, 1],
        block: b,
        dynamic_shared_bytes: dynamic,
    };
    assert!(matches!(
        dev.launch(k, &c(0, [1, 1, 1], 0), &p.0),
        Err(LaunchError::InvalidConfig(_))
    ));
    assert!(matches!(
        dev.launch(k, &c(1, [0, 1, 1], 0), &p.0),
        Err(LaunchError::InvalidConfig(_))
    ));
    assert!(matches!(
        dev.launch(k, &c(1, [2048, 1, 1], 0), &p.0),
        Err(LaunchError::InvalidConfig(_))
    ));
    assert!(matches!(
        dev.launch(k, &c(1, [256, 1, 1], 0), &p.0),
        Err(LaunchError::OutOfResources(_))
    ));
    assert!(matches!(
        dev.launch(k, &c(1, [64, 1, 1], 200_000), &p.0),
        Err(LaunchError::OutOfResources(_))
    ));
    assert!(matches!(
        dev.launch(k, &c(1, [64, 1, 1], 0), &p.0[..40]),
        Err(LaunchError::InvalidConfig(_))
    ));
    assert!(dev.launch(k, &c(2, [64, 1, 1], 0), &p.0).is_ok());
    assert!(matches!(
        dev.launch(r, &c(1, [64, 1, 1], 0), &[]),
        Err(LaunchError::InvalidConfig(_))
    ));
    assert!(dev.launch(r, &c(1, [64, 2, 1], 0), &[]).is_ok());

    dev.unload_module(m).unwrap();
    assert!(matches!(
        dev.get_function(m, "k"),
        Err(EmuError::InvalidHandle(_))
    ));
    assert!(matches!(
        dev.launch(k, &c(1, [64, 1, 1], 0), &p.0),
        Err(LaunchError::InvalidHandle(_))
    ));
    assert!(dev.unload_module(m).is_err());
}

#[test]
fn globals_and_constants_are_initialised_in_device_memory() {
    let ptx = format!(
        "{HEADER}.global .align 4 .u32 g[4] = {{1, 2, 3, 4}};\n.const .align 4 .f32 scale = 0f40000000;\n\
         .global .align 8 .u64 ptr = g;\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<4>;\n.reg .f32 %f<3>;\n.reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [out];\nld.global.u32 %r1, [g+8];\nld.const.f32 %f1, [scale];\ncvt.rn.f32.u32 %f2, %r1;\n\
         mul.rn.f32 %f2, %f2, %f1;\nst.global.f32 [%rd1], %f2;\nld.global.u64 %rd2, [ptr];\nld.u32 %r2, [%rd2+12];\n\
         st.global.u32 [%rd1+4], %r2;\nst.global.u32 [g], 42;\nret;\n}}\n"
    );
    let mut dev = device();
    let m = load(&mut dev, &ptx);
    let f = dev.get_function(m, "k").unwrap();
    let (g, size) = dev.get_global(m, "g").unwrap();
    assert_eq!(size, 16);
    assert_eq!(download_u32(&dev, g, 4), vec![1, 2, 3, 4]);
    let (s, _) = dev.get_global(m, "scale").unwrap();
    assert_eq!(download_f32(&dev, s, 1), vec![2.0]);
    let out = dev.mem_alloc(8).unwrap();
    run(&mut dev, f, cfg(1, 1), &Params::new().u64(out));
    assert_eq!(download_u32(&dev, out, 2), vec![6.0f32.to_bits(), 4]);
    assert_eq!(download_u32(&dev, g, 1), vec![42]);
    assert!(matches!(
        dev.get_global(m, "missing"),
        Err(EmuError::NotFound(_))
    ));
    let (free_before, _) = dev.mem_info();
    dev.unload_module(m).unwrap();
    assert!(dev.mem_info().0 > free_before);
}

#[test]
fn modules_for_a_newer_gpu_are_rejected() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";
    let err = device().load_module(ptx, "new.ptx").unwrap_err();
    assert!(
        err.to_string()
            .contains("targets sm_90, but the device is sm_80"),
        "{err}"
    );
    let mut newer = prlx_emulator::Device::new(prlx_emulator::DeviceConfig {
        compute_capability: (9, 0),
        ..prlx_emulator::DeviceConfig::default()
    });
    assert!(newer.load_module(ptx, "new.ptx").is_ok());
}

/// Conversion and comparison forms the machine does not emulate are refused
/// at load, each naming the instruction and its line, never run wrongly.
#[test]
fn unemulated_conformance_forms_are_refused_with_their_lines() {
    let ptx = format!(
        "{HEADER}.visible .entry k()\n{{\n.reg .b32 r<4>;\n.reg .b16 h;\n.reg .f32 f;\n.reg .pred p, q;\n\
         cvt.rn.satfinite.e2m1x2.f32 h, f, f;\n\
         cvt.rz.satfinite.e4m3x2.f32 h, f, f;\n\
         cvt.rn.e5m2x2.f32 h, f, f;\n\
         setp.lo.f16x2 p|q, r1, r2;\n\
         set.lt.f16.f16x2 r0, r1, r2;\n\
         bmsk.b32 r0, r1, r2;\n\
         szext.clamp.s64 r0, r1, r2;\n\
         ret;\n}}\n"
    );
    let err = device().load_module(&ptx, "conf.ptx").unwrap_err();
    let text = err.to_string();
    for (line, what) in [
        (10, "cvt.rn.satfinite.e2m1x2.f32"),
        (11, "cvt.rz.satfinite.e4m3x2.f32"),
        (12, "cvt.rn.e5m2x2.f32"),
        (13, "setp.lo.f16x2"),
        (14, "set.lt.f16.f16x2"),
        (15, "bmsk.b32"),
        (16, "szext.clamp.s64"),
    ] {
        assert!(
            text.contains(&format!(
                "conf.ptx:{line}:1: unsupported instruction `{what}`"
            )),
            "line {line} `{what}` not reported in:\n{text}"
        );
    }
    assert_eq!(text.lines().count(), 7, "{text}");
}

/// The parser knows the FP8 and opaque reference types; the emulator models
/// neither as a register or instruction type and refuses them by name.
#[test]
fn fp8_and_reference_types_are_refused_as_register_and_instruction_types() {
    for (decl, body, expected) in [
        (".reg .e4m3x2 %q;", "", "unsupported register type .e4m3x2"),
        (".reg .texref %t;", "", "unsupported register type .texref"),
        (
            "",
            "mov.e5m2x2 %r1, %r2;",
            "unsupported instruction `mov.e5m2x2`",
        ),
    ] {
        let ptx = format!(
            "{HEADER}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n{decl}\n{body}\nret;\n}}\n"
        );
        let mut dev = device();
        let err = dev.load_module(&ptx, "fp8.ptx").unwrap_err().to_string();
        assert!(err.contains(expected), "`{decl}{body}`: {err}");
    }
}
