//! `cargo run -p prlx-rdna --example rdna_info -- FILE.co`: kernels, descriptors,
//! arguments and the decoded code of an AMDGPU code object.
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: rdna_info CODE_OBJECT");
        std::process::exit(2);
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let co = match prlx_rdna::CodeObject::parse(&bytes) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2)
        }
    };
    for (name, k) in &co.kernels {
        let d = &k.descriptor;
        println!(
            "kernel {name}: entry {:#x} wave{} vgprs {} user_sgprs {} lds {} scratch {} kernarg {}",
            k.entry,
            d.wave_size(),
            d.vgpr_count(),
            d.user_sgpr_count(),
            k.group_segment_fixed_size,
            k.private_segment_fixed_size,
            k.kernarg_segment_size
        );
        for a in &k.args {
            println!(
                "  arg {:>4} +{:<3} {:<24} {}",
                a.size,
                a.offset,
                a.value_kind,
                a.name.as_deref().unwrap_or("")
            );
        }
    }
    for (pc, r) in prlx_rdna::decode::decode_all(&co.text, co.text_addr) {
        match r {
            Ok(i) => {
                let note = if prlx_rdna::exec::handler_for(&i).is_none() {
                    "   <- not executed"
                } else {
                    ""
                };
                println!(
                    "{pc:#x}: {}{note}",
                    prlx_rdna::decode::format::format(&i, pc)
                )
            }
            Err(e) => println!("{pc:#x}: <{e}>"),
        }
    }
}
