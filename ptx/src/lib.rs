//! PTX front end: AST, lexer, parser and printer for NVIDIA PTX text.
//!
//! Start with [`parse`], which turns PTX text into an [`ast::Module`].
//! A module holds functions, variables and debug directives; function
//! bodies are [`ast::Statement`]s whose instructions keep their opcode and
//! modifiers as strings, so any instruction shape parses and consumers
//! decide what they support. `Display` on the AST prints valid PTX
//! ([`printer`]); [`SourceMap`] maps instructions to `.loc` source lines.
//!
//! ```
//! let src = ".version 7.5\n.target sm_80\n.address_size 64\n\
//!            .visible .entry k(.param .u64 p)\n{\n\
//!            \t.reg .b32 %r<2>;\n\tmov.u32 %r1, %tid.x;\n\tret;\n}\n";
//! let module = prlx_ptx::parse(src, "k.ptx").unwrap();
//! let kernel = module.function("k").unwrap();
//! let mov = kernel.instructions().next().unwrap();
//! assert_eq!((mov.opcode.as_str(), mov.modifiers.as_slice()), ("mov", [".u32".to_string()].as_slice()));
//! assert_eq!(mov.span.line, 7);
//! // Printing gives PTX that parses back to the same module.
//! let again = prlx_ptx::parse(&module.to_string(), "printed.ptx").unwrap();
//! assert!(prlx_ptx::same_module(&module, &again));
//!
//! let err = prlx_ptx::parse(".version 7.5\n.entry k() { mov.u32 %r1 }", "bad.ptx").unwrap_err();
//! assert_eq!(err.to_string(), "bad.ptx:2:26: expected `,` or `;` after an operand, found `}`");
//! ```
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
