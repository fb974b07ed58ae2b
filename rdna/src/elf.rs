//! The parts of an ELF64 file an AMDGPU code object needs — section headers,
//! the symbol table, the notes — read with the `object` crate and copied
//! into plain structs. A malformed file is an error naming what is wrong,
//! never a panic.

use object::LittleEndian as LE;
use object::elf::{FileHeader64, SHT_DYNSYM, SHT_NOBITS, SHT_SYMTAB};
use object::read::elf::{FileHeader, SectionHeader, SectionTable, Sym};

use crate::CodeObjectError;

pub const EM_AMDGPU: u16 = object::elf::EM_AMDGPU;

#[derive(Debug, Clone)]
pub struct Section {
    pub name: String,
    pub kind: u32,
    pub addr: u64,
    pub offset: u64,
    pub size: u64,
    pub link: u32,
    pub entsize: u64,
}

#[derive(Debug, Clone)]
pub struct Symbol {
    pub name: String,
    pub value: u64,
    pub size: u64,
    /// STT_* (low nibble of st_info).
    pub kind: u8,
    pub section: u16,
}

/// One ELF note: (owner, type, descriptor).
pub type Note<'a> = (String, u32, &'a [u8]);

pub struct Elf<'a> {
    pub data: &'a [u8],
    pub machine: u16,
    pub flags: u32,
    pub os_abi: u8,
    pub abi_version: u8,
    pub sections: Vec<Section>,
    table: SectionTable<'a, FileHeader64<LE>>,
}

/// `object`'s error (which names the field) as a code-object error.
fn bad(e: object::read::Error) -> CodeObjectError {
    CodeObjectError::Malformed(format!("ELF: {e}"))
}

/// Little-endian field readers for the structures inside sections (kernel
/// descriptors, relocation entries); `None` past the end.
pub fn u16_at(d: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        d.get(off..off.checked_add(2)?)?.try_into().ok()?,
    ))
}
pub fn u32_at(d: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        d.get(off..off.checked_add(4)?)?.try_into().ok()?,
    ))
}
pub fn u64_at(d: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        d.get(off..off.checked_add(8)?)?.try_into().ok()?,
    ))
}

impl<'a> Elf<'a> {
    pub fn parse(data: &'a [u8]) -> Result<Elf<'a>, CodeObjectError> {
        if data.len() < 64 || &data[..4] != b"\x7fELF" {
            return Err(CodeObjectError::NotElf);
        }
        if data[4] != 2 || data[5] != 1 {
            return Err(CodeObjectError::Malformed(
                "ELF: not a little-endian ELF64 file".into(),
            ));
        }
        let header = FileHeader64::<LE>::parse(data).map_err(bad)?;
        let table = header.sections(LE, data).map_err(bad)?;
        let sections = table
            .iter()
            .map(|s| Section {
                name: table
                    .section_name(LE, s)
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .unwrap_or_default(),
                kind: s.sh_type(LE),
                addr: s.sh_addr(LE),
                offset: s.sh_offset(LE),
                size: s.sh_size(LE),
                link: s.sh_link(LE),
                entsize: s.sh_entsize(LE),
            })
            .collect();
        Ok(Elf {
            data,
            machine: header.e_machine(LE),
            flags: header.e_flags(LE),
            os_abi: header.e_ident().os_abi,
            abi_version: header.e_ident().abi_version,
            sections,
            table,
        })
    }

    pub fn section_data(&self, s: &Section) -> Result<&'a [u8], CodeObjectError> {
        if s.kind == SHT_NOBITS {
            return Ok(&[]);
        }
        let end = s.offset.checked_add(s.size);
        end.and_then(|end| {
            self.data
                .get(usize::try_from(s.offset).ok()?..usize::try_from(end).ok()?)
        })
        .ok_or_else(|| {
            CodeObjectError::Malformed(format!(
                "ELF: section {} ({} bytes at offset {:#x}) lies outside the file",
                s.name, s.size, s.offset
            ))
        })
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// Symbols of .symtab, or of .dynsym when the file is stripped (without
    /// the null symbol at index 0).
    pub fn symbols(&self) -> Result<Vec<Symbol>, CodeObjectError> {
        let mut table = self.table.symbols(LE, self.data, SHT_SYMTAB).map_err(bad)?;
        if table.is_empty() {
            table = self.table.symbols(LE, self.data, SHT_DYNSYM).map_err(bad)?;
        }
        let strings = table.strings();
        Ok(table
            .iter()
            .skip(1)
            .map(|s| Symbol {
                name: s
                    .name(LE, strings)
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .unwrap_or_default(),
                kind: s.st_type(),
                section: s.st_shndx(LE),
                value: s.st_value(LE),
                size: s.st_size(LE),
            })
            .collect())
    }

    /// (owner, type, descriptor) of every note in every SHT_NOTE section.
    pub fn notes(&self) -> Result<Vec<Note<'a>>, CodeObjectError> {
        let mut out = Vec::new();
        for s in self.table.iter() {
            let Some(mut notes) = s.notes(LE, self.data).map_err(bad)? else {
                continue;
            };
            while let Some(note) = notes.next().map_err(bad)? {
                let owner = String::from_utf8_lossy(note.name()).into_owned();
                out.push((owner, note.n_type(LE), note.desc()));
            }
        }
        Ok(out)
    }
}
