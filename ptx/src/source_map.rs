//! Mapping instructions back to the high-level source through `.loc`/`.file`.
//!
//! A `.loc` applies to the instructions after it, up to the next `.loc` or
//! the end of the function. Line 0 is DWARF's "no source line" and maps to
//! nothing.

use std::collections::HashMap;

use crate::ast::{InlinedAt, Item, Module, Span, Statement};

/// A resolved high-level source position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLocation {
    /// The path from the `.file` directive; `None` if the index is undeclared.
    pub path: Option<String>,
    pub file: u32,
    pub line: u32,
    pub col: u32,
    /// Set when the instruction belongs to inlined code.
    pub inlined_at: Option<InlinedAt>,
}

/// Instruction span → active `.loc`, for a whole module.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: HashMap<u32, String>,
    by_instruction: HashMap<Span, LocEntry>,
}

#[derive(Debug, Clone)]
struct LocEntry {
    file: u32,
    line: u32,
    col: u32,
    inlined_at: Option<InlinedAt>,
}

impl SourceMap {
    pub fn new(module: &Module) -> Self {
        let mut map = SourceMap::default();
        for item in &module.items {
            match item {
                Item::File(f) => {
                    map.files.insert(f.index, f.path.clone());
                }
                Item::Function(func) => {
                    if let Some(body) = &func.body {
                        let mut current = None;
                        map.record(body, &mut current);
                    }
                }
                _ => {}
            }
        }
        map
    }

    fn record(&mut self, body: &[Statement], current: &mut Option<LocEntry>) {
        for stmt in body {
            match stmt {
                Statement::Loc(loc) => {
                    *current = Some(LocEntry {
                        file: loc.file,
                        line: loc.line,
                        col: loc.col,
                        inlined_at: loc.inlined.clone(),
                    });
                }
                Statement::Instruction(inst) => {
                    if let Some(entry) = current.as_ref().filter(|e| e.line != 0) {
                        self.by_instruction.insert(inst.span, entry.clone());
                    }
                }
                Statement::Scope(scope) => self.record(&scope.body, current),
                _ => {}
            }
        }
    }

    /// The path declared for `.file` index `file`.
    pub fn file_path(&self, file: u32) -> Option<&str> {
        self.files.get(&file).map(String::as_str)
    }

    /// The source position of the instruction starting at `span`, if a
    /// `.loc` with a nonzero line precedes it in its function.
    pub fn lookup(&self, span: Span) -> Option<SourceLocation> {
        let e = self.by_instruction.get(&span)?;
        Some(SourceLocation {
            path: self.file_path(e.file).map(str::to_string),
            file: e.file,
            line: e.line,
            col: e.col,
            inlined_at: e.inlined_at.clone(),
        })
    }
}
