//! PTX front end: AST, lexer, parser and printer for NVIDIA PTX text.
//!
//! Start with [`parse`], which turns PTX text into an [`ast::Module`].
//! A module holds functions, variables and debug directives; function
//! bodies are [`ast::Statement`]s whose instructions keep their opcode and
//! modifiers as strings, so any instruction shape parses and consumers
//! decide what they support. `Display` on the AST prints valid PTX
//! ([`printer`]); [`SourceMap`] maps instructions to `.loc` source lines.
//!
//! Modules: [`lexer`] (tokens), [`parser`] (recursive descent),
//! [`printer`], [`source_map`], [`error`] (`file:line:col: message`).

pub mod ast;
pub mod error;
pub mod lexer;
pub mod parser;
pub mod printer;
pub mod source_map;

pub use ast::*;
pub use error::ParseError;
pub use parser::parse;
pub use source_map::{SourceLocation, SourceMap};

/// Reads and parses a `.ptx` file; diagnostics name it by its path.
pub fn parse_file(path: &std::path::Path) -> Result<Module, ParseError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ParseError {
        file: name.clone(),
        line: 0,
        col: 0,
        message: format!("cannot read file: {e}"),
    })?;
    parse(&text, &name)
}
