//! Arbitrary bytes must never panic the decoder, the printer or the
//! executor (the HIP runtime calls them across an FFI boundary): random
//! instruction words are decoded and printed, and random programs run to a
//! result or a fault.

use std::collections::BTreeMap;

use prlx_rdna::decode::{decode, format::format_wave};
use prlx_rdna::{CodeObject, Device, Kernel, KernelDescriptor};

fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// Random words biased toward real encodings (the top bits pick a family).
fn word(r: &mut impl FnMut() -> u64) -> u32 {
    const TOPS: [u32; 12] = [
        0xBE00_0000,
        0xBF00_0000,
        0x8000_0000,
        0x7E00_0000,
        0x7C00_0000,
        0x0200_0000,
        0xD400_0000,
        0xCC00_0000,
        0xC800_0000,
        0xD800_0000,
        0xDC00_0000,
        0xF400_0000,
    ];
    let v = r() as u32;
    match r() % 3 {
        0 => v,
        _ => (TOPS[(r() % 12) as usize] & 0xFE00_0000) | (v & 0x01FF_FFFF),
    }
}

#[test]
fn random_words_decode_and_print_without_panicking() {
    let mut r = rng(0x9e37_79b9_7f4a_7c15);
    let mut decoded = 0;
    for _ in 0..50_000 {
        let words: Vec<u8> = (0..4).flat_map(|_| word(&mut r).to_le_bytes()).collect();
        if let Ok(i) = decode(&words, 0x100) {
            decoded += 1;
            assert!(i.len as usize <= words.len());
            let _ = format_wave(&i, false);
            let _ = format_wave(&i, true);
        }
    }
    assert!(decoded > 10_000, "only {decoded} decoded");
}

fn program(text: Vec<u8>, wave: u32) -> CodeObject {
    let descriptor = KernelDescriptor {
        group_segment_fixed_size: 4096,
        private_segment_fixed_size: 64,
        kernarg_size: 0,
        kernel_code_entry_byte_offset: 0,
        compute_pgm_rsrc3: 0,
        compute_pgm_rsrc1: if wave == 32 { 31 } else { 63 },
        compute_pgm_rsrc2: (1 << 7) | (15 << 1),
        kernel_code_properties: if wave == 32 {
            (1 << 10) | (1 << 3)
        } else {
            1 << 3
        },
    };
    let kernel = Kernel {
        name: "k".into(),
        descriptor,
        entry: 0,
        args: Vec::new(),
        kernarg_segment_size: 64,
        kernarg_segment_align: 8,
        group_segment_fixed_size: 4096,
        private_segment_fixed_size: 64,
        wavefront_size: wave,
        max_flat_workgroup_size: 1024,
        uses_dynamic_stack: false,
    };
    CodeObject {
        mach: 0x41,
        kernels: BTreeMap::from([("k".to_string(), kernel)]),
        text_addr: 0,
        segments: vec![(0, text.clone())],
        symbols: Vec::new(),
        relocations: Vec::new(),
        text,
    }
}

#[test]
fn random_programs_run_or_fault_without_panicking() {
    let mut r = rng(0x1234_5679);
    let (mut ok, mut faulted, mut executed) = (0, 0, 0u64);
    for n in 0..1000 {
        // Valid instructions only, so programs run past their first words.
        let mut text = Vec::new();
        while text.len() < 256 {
            let words: Vec<u8> = (0..4).flat_map(|_| word(&mut r).to_le_bytes()).collect();
            if let Ok(i) = decode(&words, 0) {
                text.extend_from_slice(&words[..i.len as usize]);
            }
        }
        text.extend_from_slice(&0xBFB0_0000u32.to_le_bytes()); // s_endpgm
        let wave = if n % 2 == 0 { 32 } else { 64 };
        let mut dev = Device::new();
        dev.config.max_wave_instructions = 5_000;
        let m = dev.load(program(text, wave)).unwrap();
        let buf = dev.alloc(4096, 256).unwrap();
        let mut ka = vec![0u8; 64];
        ka[..8].copy_from_slice(&buf.to_le_bytes());
        match dev.launch(m, "k", [2, 1, 1], [96, 1, 1], 128, &ka) {
            Ok(s) => {
                ok += 1;
                executed += s.wave_instructions;
            }
            Err(f) => {
                faulted += 1;
                assert!(!f.to_string().is_empty());
            }
        }
    }
    assert_eq!(ok + faulted, 1000);
    eprintln!("{ok} ran to the end ({executed} wave-instructions), {faulted} faulted");
}

mod support;

#[test]
fn damaged_code_objects_are_refused_without_panicking() {
    let Some(path) = support::code_object("basic", false) else {
        return;
    };
    let good = std::fs::read(path).unwrap();
    assert!(CodeObject::parse(&good).is_ok());
    // Every truncation, and single-byte corruptions across the file.
    for len in (0..good.len()).step_by(7) {
        let _ = CodeObject::parse(&good[..len]);
    }
    let mut r = rng(77);
    for _ in 0..400 {
        let mut bad = good.clone();
        for _ in 0..1 + r() % 4 {
            let at = (r() % bad.len() as u64) as usize;
            bad[at] = r() as u8;
        }
        if let Ok(co) = CodeObject::parse(&bad) {
            // Whatever parsed must load and launch (or fault) safely too.
            let mut dev = Device::new();
            dev.config.max_wave_instructions = 2_000;
            if let Ok(m) = dev.load(co.clone()) {
                for k in co.kernels.keys() {
                    let _ = dev.launch(m, k, [1, 1, 1], [32, 1, 1], 0, &[0u8; 512]);
                }
            }
        }
    }
    assert!(CodeObject::parse(b"not an elf").is_err());
}
