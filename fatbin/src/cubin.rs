//! The kernel and variable symbols of an ELF cubin, read through `object`:
//! its symbol tables, and for each defined variable the section that holds
//! it (name, alignment, initial bytes).

use object::Endianness;
use object::elf::{
    FileHeader64, SHN_LORESERVE, SHN_UNDEF, SHT_SYMTAB, STB_GLOBAL, STT_FUNC, STT_OBJECT,
};
use object::read::SectionIndex;
use object::read::elf::{FileHeader, SectionHeader, SectionTable, Sym, SymbolTable};

/// The names of the kernels an ELF cubin defines (its global function
/// symbols), for messages.
pub fn cubin_kernels(elf: &[u8]) -> Vec<String> {
    cubin_symbols(elf).functions
}

/// `st_other` flag of a cubin symbol that is a kernel entry point.
const STO_CUDA_ENTRY: u8 = 0x10;

/// The global symbols of an ELF cubin.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CubinSymbols {
    /// `STT_FUNC`: kernels (of any binding) and global device functions.
    pub functions: Vec<String>,
    /// `STT_OBJECT`: `__device__`, `__constant__` and `__managed__` variables.
    pub variables: Vec<String>,
    /// The same variables with their sizes and initial contents.
    pub variable_defs: Vec<CubinVariable>,
}

/// A variable a cubin defines: enough to allocate it without the machine
/// code (its contents do not depend on the architecture).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CubinVariable {
    pub name: String,
    pub size: u64,
    pub align: u64,
    /// In a constant bank (`.nv.constant*`), not global memory.
    pub constant: bool,
    /// The initial bytes; `None` for zero-filled (`SHT_NOBITS`) storage.
    pub init: Option<Vec<u8>>,
}

/// The kernel (and global function) and variable symbols of an ELF cubin;
/// none when it is not a readable ELF64 file (callers only name kernels in
/// messages, or fall back to PTX, then). [`read_cubin_symbols`] says why.
pub fn cubin_symbols(elf: &[u8]) -> CubinSymbols {
    read_cubin_symbols(elf).unwrap_or_default()
}

type Sections<'a> = SectionTable<'a, FileHeader64<Endianness>, &'a [u8]>;

/// The kernel (and global function) and variable symbols of an ELF cubin,
/// or an error naming what is wrong with the file.
pub fn read_cubin_symbols(elf: &[u8]) -> Result<CubinSymbols, String> {
    if elf.get(0..4) != Some(b"\x7fELF") {
        return Err("cubin: not an ELF file".to_string());
    }
    let bad = |e: object::read::Error| format!("cubin ELF: {e}");
    let header = FileHeader64::<Endianness>::parse(elf).map_err(bad)?;
    let endian = header.endian().map_err(bad)?;
    let sections = header.sections(endian, elf).map_err(bad)?;
    let mut names = CubinSymbols::default();
    for (index, section) in sections.enumerate() {
        if section.sh_type(endian) != SHT_SYMTAB {
            continue;
        }
        let table = SymbolTable::parse(endian, elf, &sections, index, section).map_err(bad)?;
        read_symbol_table(elf, endian, &sections, &table, &mut names)?;
    }
    Ok(names)
}

/// Appends the kernels and variables one symbol table defines to `names`.
fn read_symbol_table<'a>(
    elf: &'a [u8],
    endian: Endianness,
    sections: &Sections<'a>,
    table: &SymbolTable<'a, FileHeader64<Endianness>, &'a [u8]>,
    names: &mut CubinSymbols,
) -> Result<(), String> {
    for (index, symbol) in table.enumerate() {
        let shndx = symbol.st_shndx(endian);
        // Kernels are STT_FUNC marked as entries in `st_other`
        // (`STO_CUDA_ENTRY`), of any binding: kernels in an anonymous
        // namespace are local, and cudart still looks them up by name.
        // Variables are STT_OBJECT of any binding (whole-program builds
        // make `__device__` variables local). Undefined symbols (`vprintf`)
        // are neither.
        let is_variable = match (symbol.st_bind(), symbol.st_type()) {
            _ if shndx == SHN_UNDEF => continue,
            (_, STT_OBJECT) => true,
            (binding, STT_FUNC)
                if symbol.st_other() & STO_CUDA_ENTRY != 0 || binding == STB_GLOBAL =>
            {
                false
            }
            _ => continue,
        };
        let name = symbol
            .name(endian, table.strings())
            .map_err(|e| format!("cubin ELF: symbol {} has no name: {e}", index.0))?;
        let name = String::from_utf8_lossy(name).into_owned();
        if !is_variable {
            names.functions.push(name);
            continue;
        }
        // SHN_ABS, SHN_COMMON and the like: a symbol but no section to
        // read it from.
        if shndx < SHN_LORESERVE {
            let at = (shndx, symbol.st_value(endian), symbol.st_size(endian));
            if let Some(def) = variable_def(elf, endian, sections, name.clone(), at)? {
                names.variable_defs.push(def);
            }
        }
        names.variables.push(name);
    }
    Ok(())
}

/// A defined variable symbol (`value`, `size` in section `shndx`), with its
/// contents read from that section; `None` for shared and local memory,
/// which have no storage of their own before a launch.
fn variable_def(
    elf: &[u8],
    endian: Endianness,
    sections: &Sections<'_>,
    name: String,
    (shndx, value, size): (u16, u64, u64),
) -> Result<Option<CubinVariable>, String> {
    let section = sections
        .section(SectionIndex(usize::from(shndx)))
        .map_err(|e| format!("cubin ELF: variable {name} in section {shndx}: {e}"))?;
    let section_name = sections
        .section_name(endian, section)
        .map_err(|e| format!("cubin ELF: the name of section {shndx} (variable {name}): {e}"))?;
    let section_name = String::from_utf8_lossy(section_name);
    if section_name.starts_with(".nv.shared") || section_name.starts_with(".nv.local") {
        return Ok(None);
    }
    let init = if section.sh_type(endian) == object::elf::SHT_NOBITS {
        None
    } else {
        let data = section
            .data(endian, elf)
            .map_err(|e| format!("cubin ELF: section {section_name} (variable {name}): {e}"))?;
        let bytes = usize::try_from(value)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(start, len)| data.get(start..start.checked_add(len)?))
            .ok_or_else(|| {
                format!(
                    "cubin ELF: variable {name} ({size} bytes at {value:#x}) lies outside \
                     section {section_name} ({} bytes)",
                    data.len()
                )
            })?;
        Some(bytes.to_vec())
    };
    Ok(Some(CubinVariable {
        name,
        size,
        align: section.sh_addralign(endian).clamp(1, 256),
        constant: section_name.starts_with(".nv.constant"),
        init,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One section of a test cubin: name, type, contents, link, entry size,
    /// alignment. NOBITS sections take their size from `data` but store
    /// nothing.
    type TestSection<'a> = (&'a str, u32, Vec<u8>, u32, u64, u64);

    /// A little-endian ELF64 file of `sections` (after the null section,
    /// with a `.shstrtab` appended last), the section headers at the end.
    fn elf64(sections: &[TestSection<'_>]) -> Vec<u8> {
        let mut shstrtab = vec![0u8];
        let mut name_at = Vec::new();
        for (name, ..) in sections.iter().chain([&(".shstrtab", 3, vec![], 0, 0, 1)]) {
            name_at.push(shstrtab.len() as u32);
            shstrtab.extend(name.as_bytes());
            shstrtab.push(0);
        }
        let mut all: Vec<TestSection<'_>> = sections.to_vec();
        all.push((".shstrtab", 3, shstrtab, 0, 0, 1));
        let mut out = vec![0u8; 64];
        let mut headers = vec![0u8; 64]; // the null section
        for ((_, kind, data, link, entsize, align), name) in all.iter().zip(&name_at) {
            let offset = out.len() as u64;
            if *kind != object::elf::SHT_NOBITS {
                out.extend(data);
            }
            headers.extend(name.to_le_bytes());
            headers.extend(kind.to_le_bytes());
            headers.extend(0u64.to_le_bytes()); // flags
            headers.extend(0u64.to_le_bytes()); // address
            headers.extend(offset.to_le_bytes());
            headers.extend((data.len() as u64).to_le_bytes());
            headers.extend(link.to_le_bytes());
            headers.extend(0u32.to_le_bytes()); // info
            headers.extend(align.to_le_bytes());
            headers.extend(entsize.to_le_bytes());
        }
        while out.len() % 8 != 0 {
            out.push(0);
        }
        let shoff = out.len() as u64;
        out.extend(headers);
        out[0..4].copy_from_slice(b"\x7fELF");
        out[4] = 2; // ELFCLASS64
        out[5] = 1; // little-endian
        out[6] = 1; // EV_CURRENT
        out[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
        out[18..20].copy_from_slice(&190u16.to_le_bytes()); // EM_CUDA
        out[20..24].copy_from_slice(&1u32.to_le_bytes());
        out[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        out[0x34..0x36].copy_from_slice(&64u16.to_le_bytes()); // ehsize
        out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes()); // shentsize
        out[0x3c..0x3e].copy_from_slice(&(all.len() as u16 + 1).to_le_bytes());
        out[0x3e..0x40].copy_from_slice(&(all.len() as u16).to_le_bytes()); // shstrndx
        out
    }

    /// One ELF64 symbol: name offset, st_info, st_other, section, value, size.
    fn symbol(name: u32, info: u8, other: u8, shndx: u16, value: u64, size: u64) -> Vec<u8> {
        let mut s = Vec::new();
        s.extend(name.to_le_bytes());
        s.extend([info, other]);
        s.extend(shndx.to_le_bytes());
        s.extend(value.to_le_bytes());
        s.extend(size.to_le_bytes());
        s
    }

    const LOCAL: u8 = 0;
    const GLOBAL: u8 = STB_GLOBAL << 4;

    /// A cubin as nvcc lays one out: sections 1 `.strtab`, 2 `.symtab`,
    /// 3 `.nv.global.init`, 4 `.nv.global`, 5 `.nv.constant3`,
    /// 6 `.nv.shared.k`; `name_past_strtab` garbles a defined symbol's name.
    fn cubin(name_past_strtab: bool) -> Vec<u8> {
        let strtab = b"\0kern\0_ZN12_GLOBAL__N_16hiddenEv\0helper\0table\0counter\0scale\0tile\0vprintf\0dev_fn\0";
        let at = |name: &str| {
            let needle = [b"\0", name.as_bytes(), b"\0"].concat();
            strtab
                .windows(needle.len())
                .position(|w| w == needle)
                .unwrap() as u32
                + 1
        };
        let mut symtab = symbol(0, 0, 0, 0, 0, 0);
        symtab.extend(symbol(
            at("kern"),
            GLOBAL | STT_FUNC,
            STO_CUDA_ENTRY,
            6,
            0,
            64,
        ));
        let hidden = at("_ZN12_GLOBAL__N_16hiddenEv");
        symtab.extend(symbol(hidden, LOCAL | STT_FUNC, STO_CUDA_ENTRY, 6, 0, 64));
        symtab.extend(symbol(at("helper"), LOCAL | STT_FUNC, 0, 6, 0, 16));
        let dev_fn = if name_past_strtab { 4096 } else { at("dev_fn") };
        symtab.extend(symbol(dev_fn, GLOBAL | STT_FUNC, 0, 6, 0, 16));
        symtab.extend(symbol(at("table"), GLOBAL | STT_OBJECT, 0, 3, 4, 8));
        symtab.extend(symbol(at("counter"), LOCAL | STT_OBJECT, 0, 4, 0, 4));
        symtab.extend(symbol(at("scale"), GLOBAL | STT_OBJECT, 0, 5, 0, 4));
        symtab.extend(symbol(at("tile"), LOCAL | STT_OBJECT, 0, 6, 0, 256));
        symtab.extend(symbol(at("vprintf"), GLOBAL | STT_FUNC, 0, 0, 0, 0));
        elf64(&[
            (".strtab", 3, strtab.to_vec(), 0, 0, 1),
            (".symtab", SHT_SYMTAB, symtab, 1, 24, 8),
            (".nv.global.init", 1, (0u8..12).collect(), 0, 0, 16),
            (".nv.global", object::elf::SHT_NOBITS, vec![0; 4], 0, 0, 4),
            (".nv.constant3", 1, 2.5f32.to_le_bytes().to_vec(), 0, 0, 4),
            (
                ".nv.shared.k",
                object::elf::SHT_NOBITS,
                vec![0; 256],
                0,
                0,
                4,
            ),
        ])
    }

    #[test]
    fn reads_kernels_and_variables_with_their_storage() {
        let symbols = read_cubin_symbols(&cubin(false)).unwrap();
        assert_eq!(
            symbols.functions,
            ["kern", "_ZN12_GLOBAL__N_16hiddenEv", "dev_fn"],
            "entries of any binding and global functions; not local helpers or undefined names"
        );
        assert_eq!(symbols.variables, ["table", "counter", "scale", "tile"]);
        let def = |name: &str, size, align, constant, init: Option<Vec<u8>>| CubinVariable {
            name: name.to_string(),
            size,
            align,
            constant,
            init,
        };
        assert_eq!(
            symbols.variable_defs,
            [
                def("table", 8, 16, false, Some((4u8..12).collect())),
                def("counter", 4, 4, false, None),
                def("scale", 4, 4, true, Some(2.5f32.to_le_bytes().to_vec())),
            ],
            "shared memory has no storage of its own"
        );
        assert_eq!(cubin_symbols(&cubin(false)), symbols);
        assert_eq!(cubin_kernels(&cubin(false)), symbols.functions);
    }

    #[test]
    fn reads_a_cubin_at_any_alignment() {
        let elf = cubin(false);
        let expected = read_cubin_symbols(&elf).unwrap();
        for shift in 1..8 {
            let mut shifted = vec![0u8; shift];
            shifted.extend(&elf);
            assert_eq!(read_cubin_symbols(&shifted[shift..]).unwrap(), expected);
        }
    }

    #[test]
    fn truncated_cubins_are_errors_naming_the_problem() {
        let elf = cubin(false);
        for len in 0..elf.len() {
            let e = read_cubin_symbols(&elf[..len]).unwrap_err();
            assert!(e.starts_with("cubin"), "{len} bytes: {e}");
            assert_eq!(cubin_symbols(&elf[..len]), CubinSymbols::default());
        }
        let e = read_cubin_symbols(&elf[..100]).unwrap_err();
        assert!(e.contains("section header"), "{e}");
        let e = read_cubin_symbols(&elf[..3]).unwrap_err();
        assert_eq!(e, "cubin: not an ELF file");
    }

    #[test]
    fn garbled_cubins_are_errors_naming_the_problem() {
        let e = read_cubin_symbols(&cubin(true)).unwrap_err();
        assert!(e.contains("symbol 4 has no name"), "{e}");
        // `table` 8 bytes at 4 of a 12-byte section: at 8 it runs past.
        let mut elf = cubin(false);
        let table_value = elf
            .windows(8)
            .position(|w| w == 4u64.to_le_bytes())
            .unwrap();
        elf[table_value..table_value + 8].copy_from_slice(&8u64.to_le_bytes());
        let e = read_cubin_symbols(&elf).unwrap_err();
        assert!(
            e.contains("variable table (8 bytes at 0x8) lies outside"),
            "{e}"
        );
        let mut elf32 = cubin(false);
        elf32[4] = 1; // ELFCLASS32
        let e = read_cubin_symbols(&elf32).unwrap_err();
        assert!(e.contains("Unsupported ELF header"), "{e}");
    }
}
