//! PTX front end: AST, lexer, parser and printer for NVIDIA PTX text.
//!
//! Start with [`ast`]: a [`ast::Module`] holds functions, variables and
//! debug directives; function bodies are [`ast::Statement`]s whose
//! instructions keep their opcode and modifiers as strings, so any
//! instruction shape parses and consumers decide what they support.

pub mod ast;

pub use ast::*;
