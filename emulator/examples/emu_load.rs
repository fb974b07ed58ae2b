//! Loads PTX files into the emulator and prints any load diagnostics:
//! `cargo run -p prlx-emulator --example emu_load -- file.ptx…`.

fn main() {
    let mut failed = false;
    for path in std::env::args().skip(1) {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                failed = true;
                continue;
            }
        };
        let mut dev = prlx_emulator::Device::new(prlx_emulator::DeviceConfig::default());
        match dev.load_module(&text, &path) {
            Ok(_) => println!("{path}: ok"),
            Err(e) => {
                println!("{e}");
                failed = true;
            }
        }
    }
    std::process::exit(failed as i32);
}
