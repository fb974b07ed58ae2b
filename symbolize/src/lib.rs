//! prlx-symbolize: names the CPU stack frames the shim recorded.
//!
//! The shim (`libprlx.so`) never symbolises inside the application: loading
//! debug info costs start-up time and memory that grow with the size of the
//! application's binaries. It records each frame as the module's path, its
//! GNU build-id and the address as the module's file has it
//! ([`prlx_session::StackFrame`]). Here — in prlxctl, on the same machine,
//! after the run — each module is opened once, checked against the recorded
//! build-id (a rebuilt binary is not trusted; its separate debug file under
//! `/usr/lib/debug/.build-id/` is tried), and each address is looked up in
//! the DWARF line tables (inlined frames collapse to the outermost function
//! at the innermost line), else in the symbol table.
//!
//! Start at [`Symbolizer::manifest`].

use object::{Object, ObjectSection, ObjectSymbol};
use prlx_session::{Manifest, StackFrame};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

type Reader = gimli::EndianRcSlice<gimli::RunTimeEndian>;

/// One module's debug info, loaded once.
struct Module {
    lines: Option<addr2line::Context<Reader>>,
    /// (address, size, name) of the functions in the symbol table, by address.
    symbols: Vec<(u64, u64, String)>,
}

/// Resolves frames, loading each module at most once.
#[derive(Default)]
pub struct Symbolizer {
    /// By (path, build-id); None when the module cannot be used.
    modules: HashMap<(String, Option<String>), Option<Module>>,
    /// Why modules were skipped, once each.
    pub warnings: Vec<String>,
}

impl Symbolizer {
    /// Fills in function, file and line of every frame of every launch
    /// that has a module and file address and no name yet.
    pub fn manifest(&mut self, manifest: &mut Manifest) {
        for launch in &mut manifest.launches {
            for frame in &mut launch.cpu_stack {
                self.frame(frame);
            }
        }
    }

    /// Fills in one frame (frames already symbolised, or without a module,
    /// are left as they are).
    pub fn frame(&mut self, frame: &mut StackFrame) {
        if frame.file.is_some() {
            return;
        }
        let (Some(path), Some(offset)) = (frame.module.clone(), frame.offset) else {
            return;
        };
        let key = (path, frame.build_id.clone());
        if !self.modules.contains_key(&key) {
            let loaded = match load(&key.0, key.1.as_deref()) {
                Ok(module) => Some(module),
                Err(e) => {
                    self.warnings.push(e);
                    None
                }
            };
            self.modules.insert(key.clone(), loaded);
        }
        let Some(Some(module)) = self.modules.get(&key) else {
            return;
        };
        // A return address: the call is the instruction before it.
        let probe = offset.saturating_sub(1);
        if let Some((function, file, line)) = module.lookup(probe) {
            if function.is_some() {
                frame.function = function;
            }
            frame.file = file;
            frame.line = line;
        }
    }
}

impl Module {
    fn lookup(&self, probe: u64) -> Option<(Option<String>, Option<String>, Option<u32>)> {
        if let Some(lines) = &self.lines {
            if let Ok(mut frames) = lines.find_frames(probe).skip_all_loads() {
                let mut innermost_location = None;
                let mut outermost_function = None;
                while let Ok(Some(frame)) = frames.next() {
                    if innermost_location.is_none() {
                        innermost_location =
                            frame.location.map(|l| (l.file.map(str::to_owned), l.line));
                    }
                    if let Some(name) = frame.function.as_ref().and_then(|f| f.raw_name().ok()) {
                        outermost_function = Some(demangle(&name));
                    }
                }
                if let Some((file, line)) = innermost_location {
                    let function = outermost_function.or_else(|| self.symbol(probe));
                    return Some((function, file, line));
                }
            }
        }
        self.symbol(probe).map(|f| (Some(f), None, None))
    }

    fn symbol(&self, probe: u64) -> Option<String> {
        let at = self
            .symbols
            .partition_point(|(address, _, _)| *address <= probe);
        let (address, size, name) = self.symbols.get(at.checked_sub(1)?)?;
        (*size == 0 || probe < address + size).then(|| demangle(name))
    }
}

/// Rust and C++ symbols demangled; anything else as it is.
fn demangle(name: &str) -> String {
    if let Ok(rust) = rustc_demangle::try_demangle(name) {
        return format!("{rust:#}");
    }
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| name.to_owned())
}

/// The build-id of an ELF image, hex.
fn build_id(file: &object::File<'_>) -> Option<String> {
    let id = file.build_id().ok()??;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}

/// Opens `path` (or, when its build-id differs from the recorded one, the
/// debug file the build-id names) and loads its line tables and symbols.
fn load(path: &str, recorded_id: Option<&str>) -> Result<Module, String> {
    let candidates: Vec<PathBuf> = std::iter::once(PathBuf::from(path))
        .chain(recorded_id.filter(|id| id.len() > 2).map(|id| {
            Path::new("/usr/lib/debug/.build-id")
                .join(&id[..2])
                .join(format!("{}.debug", &id[2..]))
        }))
        .collect();
    let mut why = Vec::new();
    for candidate in candidates {
        let data = match std::fs::read(&candidate) {
            Ok(data) => data,
            Err(e) => {
                why.push(format!("{}: {e}", candidate.display()));
                continue;
            }
        };
        let file = object::File::parse(&*data)
            .map_err(|e| format!("{}: not an object file: {e}", candidate.display()))?;
        let found_id = build_id(&file);
        if let (Some(recorded), Some(found)) = (recorded_id, found_id.as_deref()) {
            if recorded != found {
                why.push(format!(
                    "{}: build-id {found}, but the session recorded {recorded} (rebuilt since?)",
                    candidate.display()
                ));
                continue;
            }
        }
        return Ok(parse(&file));
    }
    Err(format!("cannot symbolise frames of {}", why.join("; ")))
}

fn parse(file: &object::File<'_>) -> Module {
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let section = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
        let data = file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[]));
        Ok(Reader::new(Rc::from(&*data), endian))
    };
    let lines = gimli::Dwarf::load(section)
        .ok()
        .and_then(|dwarf| addr2line::Context::from_dwarf(dwarf).ok());
    let mut symbols: Vec<(u64, u64, String)> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.kind() == object::SymbolKind::Text && s.address() != 0)
        .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_owned())))
        .collect();
    symbols.sort();
    symbols.dedup_by_key(|(address, _, _)| *address);
    Module { lines, symbols }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test's own frame, as the shim would record it: module, build-id,
    /// file address (the return address into this function).
    #[inline(never)]
    fn recorded_frame() -> StackFrame {
        let function = recorded_frame as *const () as u64;
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let data = std::fs::read(&exe).unwrap();
        let file = object::File::parse(&*data).unwrap();
        // The load bias: the runtime address of a symbol minus its file address.
        let file_address = file
            .symbols()
            .find(|s| s.name().is_ok_and(|n| n.contains("recorded_frame")))
            .unwrap()
            .address();
        let bias = function - file_address;
        StackFrame {
            ip: format!("{:#x}", function + 1),
            module: Some(exe.display().to_string()),
            build_id: build_id(&file),
            offset: Some(function + 1 - bias),
            ..StackFrame::default()
        }
    }

    #[test]
    fn names_a_recorded_frame_with_function_file_and_line() {
        let mut frame = recorded_frame();
        let mut symbolizer = Symbolizer::default();
        symbolizer.frame(&mut frame);
        assert!(
            frame
                .function
                .as_deref()
                .is_some_and(|f| f.contains("recorded_frame")),
            "{frame:?} {:?}",
            symbolizer.warnings
        );
        assert!(
            frame.file.as_deref().is_some_and(|f| f.ends_with("lib.rs")),
            "{frame:?}"
        );
        assert!(frame.line.is_some());
    }

    #[test]
    fn a_rebuilt_module_is_not_trusted() {
        let mut frame = recorded_frame();
        frame.build_id = Some("00112233445566778899".into());
        let mut symbolizer = Symbolizer::default();
        symbolizer.frame(&mut frame);
        assert_eq!(frame.file, None);
        assert!(
            symbolizer.warnings[0].contains("rebuilt since"),
            "{:?}",
            symbolizer.warnings
        );
    }

    #[test]
    fn frames_without_a_module_are_left_alone() {
        let mut frame = StackFrame {
            ip: "0x1234".into(),
            ..StackFrame::default()
        };
        Symbolizer::default().frame(&mut frame);
        assert_eq!(frame.function, None);
        let mut missing = StackFrame {
            module: Some("/nonexistent/lib.so".into()),
            offset: Some(16),
            ..StackFrame::default()
        };
        let mut symbolizer = Symbolizer::default();
        symbolizer.frame(&mut missing);
        assert!(symbolizer.warnings[0].contains("/nonexistent/lib.so"));
    }
}
