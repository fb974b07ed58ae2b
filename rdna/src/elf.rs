//! Just enough ELF64 to read an AMDGPU code object: section headers, the
//! symbol tables, and the notes. Every read is bounds-checked; a malformed
//! file is an error naming the field, never a panic.

use crate::CodeObjectError;

pub const EM_AMDGPU: u16 = 0xE0;
const SHT_SYMTAB: u32 = 2;
const SHT_NOTE: u32 = 7;
const SHT_DYNSYM: u32 = 11;

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
}

fn bad(field: &str) -> CodeObjectError {
    CodeObjectError::Malformed(format!("ELF: {field} is out of bounds or invalid"))
}

pub fn u16_at(d: &[u8], off: usize) -> Option<u16> {
    d.get(off..off + 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
}
pub fn u32_at(d: &[u8], off: usize) -> Option<u32> {
    d.get(off..off + 4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
}
pub fn u64_at(d: &[u8], off: usize) -> Option<u64> {
    d.get(off..off + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
}

fn cstr(d: &[u8], off: usize) -> Option<String> {
    let rest = d.get(off..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    Some(String::from_utf8_lossy(&rest[..end]).into_owned())
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
        let machine = u16_at(data, 18).ok_or_else(|| bad("e_machine"))?;
        let flags = u32_at(data, 48).ok_or_else(|| bad("e_flags"))?;
        let shoff = u64_at(data, 40).ok_or_else(|| bad("e_shoff"))? as usize;
        let shentsize = u16_at(data, 58).ok_or_else(|| bad("e_shentsize"))? as usize;
        let shnum = u16_at(data, 60).ok_or_else(|| bad("e_shnum"))? as usize;
        let shstrndx = u16_at(data, 62).ok_or_else(|| bad("e_shstrndx"))? as usize;
        if shnum > 0 && shentsize < 64 {
            return Err(bad("e_shentsize"));
        }
        let mut raw = Vec::with_capacity(shnum);
        for i in 0..shnum {
            let o = shoff
                .checked_add(i * shentsize)
                .ok_or_else(|| bad("section header"))?;
            let f = |k: usize| u64_at(data, o + k).ok_or_else(|| bad("section header"));
            let name = u32_at(data, o).ok_or_else(|| bad("sh_name"))?;
            let kind = u32_at(data, o + 4).ok_or_else(|| bad("sh_type"))?;
            let link = u32_at(data, o + 40).ok_or_else(|| bad("sh_link"))?;
            raw.push((name, kind, f(16)?, f(24)?, f(32)?, link, f(56)?));
        }
        let strtab = raw.get(shstrndx).map(|r| r.3 as usize);
        let sections = raw
            .into_iter()
            .map(|(name, kind, addr, offset, size, link, entsize)| Section {
                name: strtab
                    .and_then(|s| cstr(data, s + name as usize))
                    .unwrap_or_default(),
                kind,
                addr,
                offset,
                size,
                link,
                entsize,
            })
            .collect();
        Ok(Elf {
            data,
            machine,
            flags,
            os_abi: data[7],
            abi_version: data[8],
            sections,
        })
    }

    pub fn section_data(&self, s: &Section) -> Result<&'a [u8], CodeObjectError> {
        if s.kind == 8 {
            return Ok(&[]); // SHT_NOBITS
        }
        let start = s.offset as usize;
        let end = start
            .checked_add(s.size as usize)
            .ok_or_else(|| bad(&s.name))?;
        self.data
            .get(start..end)
            .ok_or_else(|| bad(&format!("section {}", s.name)))
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// Symbols of .symtab, or of .dynsym when the file is stripped.
    pub fn symbols(&self) -> Result<Vec<Symbol>, CodeObjectError> {
        let table = self
            .sections
            .iter()
            .find(|s| s.kind == SHT_SYMTAB)
            .or_else(|| self.sections.iter().find(|s| s.kind == SHT_DYNSYM));
        let Some(table) = table else {
            return Ok(Vec::new());
        };
        let strs = self
            .sections
            .get(table.link as usize)
            .ok_or_else(|| bad("symbol string table link"))?;
        let strs = self.section_data(strs)?;
        let body = self.section_data(table)?;
        let mut out = Vec::new();
        for ent in body.chunks_exact(24).skip(1) {
            let name = u32_at(ent, 0).unwrap_or(0) as usize;
            out.push(Symbol {
                name: cstr(strs, name).unwrap_or_default(),
                kind: ent[4] & 0xF,
                section: u16_at(ent, 6).unwrap_or(0),
                value: u64_at(ent, 8).unwrap_or(0),
                size: u64_at(ent, 16).unwrap_or(0),
            });
        }
        Ok(out)
    }

    /// (owner, type, descriptor) of every note in every SHT_NOTE section.
    pub fn notes(&self) -> Result<Vec<Note<'a>>, CodeObjectError> {
        let mut out = Vec::new();
        for s in self.sections.iter().filter(|s| s.kind == SHT_NOTE) {
            let d = self.section_data(s)?;
            let mut o = 0usize;
            while o + 12 <= d.len() {
                let namesz = u32_at(d, o).unwrap() as usize;
                let descsz = u32_at(d, o + 4).unwrap() as usize;
                let kind = u32_at(d, o + 8).unwrap();
                let name_start = o + 12;
                let desc_start = name_start + namesz.div_ceil(4) * 4;
                let desc_end = desc_start + descsz;
                let name = d
                    .get(name_start..name_start + namesz)
                    .ok_or_else(|| bad("note name"))?;
                let desc = d
                    .get(desc_start..desc_end)
                    .ok_or_else(|| bad("note descriptor"))?;
                let name = String::from_utf8_lossy(name)
                    .trim_end_matches('\0')
                    .to_string();
                out.push((name, kind, desc));
                o = desc_start + descsz.div_ceil(4) * 4;
            }
        }
        Ok(out)
    }
}
