//! Recursive-descent parser from PTX text to [`crate::ast::Module`].
//!
//! Module structure (directives, declarations) is parsed strictly;
//! instructions are parsed by shape only (`[@guard] opcode{.mod} operands;`)
//! so any instruction, known or not, yields an AST node.

use crate::ast::*;
use crate::error::ParseError;
use crate::lexer::{LexError, Lexer, Token, TokenKind};

/// How deeply `{ }` scopes and initializer lists may nest before the parser
/// gives up, so hostile input cannot overflow the stack.
pub const MAX_NESTING: usize = 64;

/// How deeply operand brackets may nest: `[%rd1, {%f1, %f2}]` needs two
/// levels below the instruction; the bound keeps recursion shallow.
const MAX_OPERAND_NESTING: usize = 3;

/// Parses a whole PTX module. `file` names the source in diagnostics.
pub fn parse(src: &str, file: &str) -> Result<Module, ParseError> {
    Parser::new(src, file).module()
}

type PResult<T> = Result<T, ParseError>;

/// How many tokens the parser may look ahead (label detection needs two).
const LOOKAHEAD: usize = 2;

struct Parser<'a> {
    lexer: Lexer<'a>,
    /// Tokens lexed but not yet consumed, `lookahead[..buffered]`, in order.
    lookahead: [Token<'a>; LOOKAHEAD],
    buffered: usize,
    file: &'a str,
    /// Registers declared without a `%` (`.reg .u64 in_addr;`), one entry
    /// per open `{ }` scope (the function's outermost scope holds its `.reg`
    /// parameters). PTX spells such names like variables, so an identifier
    /// operand is a register exactly when one of these declares it.
    bare_regs: Vec<Vec<RegName>>,
    /// The element size in bytes of each variable declared so far (the
    /// latest declaration of a name last), for `ld.const.b16 r, arr[2];`.
    var_elems: Vec<(String, u64)>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, file: &'a str) -> Self {
        Parser {
            lexer: Lexer::new(src),
            lookahead: [Token::EOF; LOOKAHEAD],
            buffered: 0,
            file,
            bare_regs: Vec::new(),
            var_elems: Vec::new(),
        }
    }

    /// Whether `name` (an identifier, no `%`) names a register declared in
    /// an open scope: `in_addr`, or `r3` after `.reg .b32 r<4>;`.
    fn is_bare_register(&self, name: &str) -> bool {
        self.bare_regs.iter().flatten().any(|r| match r.range {
            None => r.name == name,
            Some(n) => name.strip_prefix(r.name.as_str()).is_some_and(|digits| {
                !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && (digits == "0" || !digits.starts_with('0'))
                    && digits.parse::<u32>().is_ok_and(|i| i < n)
            }),
        })
    }

    /// Remembers the `%`-less names of a declaration in the innermost scope.
    fn declare_bare(&mut self, names: &[RegName]) {
        if let Some(scope) = self.bare_regs.last_mut() {
            scope.extend(names.iter().filter(|n| !n.name.starts_with('%')).cloned());
        }
    }

    fn error(&self, span: Span, message: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            line: span.line,
            col: span.col,
            message: message.into(),
        }
    }

    fn lex_error(&self, e: LexError) -> ParseError {
        self.error(e.span, e.message)
    }

    /// The token `n` places ahead (`n < LOOKAHEAD`).
    fn peek_nth(&mut self, n: usize) -> PResult<Token<'a>> {
        debug_assert!(n < LOOKAHEAD);
        let n = n.min(LOOKAHEAD - 1);
        while self.buffered <= n {
            let tok = self.lexer.next_token().map_err(|e| self.lex_error(e))?;
            self.lookahead[self.buffered] = tok;
            self.buffered += 1;
        }
        Ok(self.lookahead[n])
    }

    #[inline]
    fn peek(&mut self) -> PResult<Token<'a>> {
        if self.buffered > 0 {
            return Ok(self.lookahead[0]);
        }
        self.peek_nth(0)
    }

    fn next(&mut self) -> PResult<Token<'a>> {
        let tok = self.peek()?;
        self.lookahead.copy_within(1.., 0);
        self.buffered -= 1;
        Ok(tok)
    }

    fn at(&mut self, kind: TokenKind) -> PResult<bool> {
        Ok(self.peek()?.kind == kind)
    }

    fn at_directive(&mut self, name: &str) -> PResult<bool> {
        let t = self.peek()?;
        Ok(t.kind == TokenKind::Directive && t.text == name)
    }

    /// Consumes the next token if it has `kind`.
    fn eat(&mut self, kind: TokenKind) -> PResult<bool> {
        if self.at(kind)? {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn unexpected(&self, tok: Token<'_>, expected: &str) -> ParseError {
        let found = match tok.kind.describe() {
            // Punctuation and end of file describe themselves fully.
            d if d.starts_with('`') || tok.kind == TokenKind::Eof => d.to_string(),
            d => format!("{d} `{}`", tok.text),
        };
        self.error(tok.span, format!("expected {expected}, found {found}"))
    }

    fn expect(&mut self, kind: TokenKind, expected: &str) -> PResult<Token<'a>> {
        let tok = self.next()?;
        if tok.kind == kind {
            Ok(tok)
        } else {
            Err(self.unexpected(tok, expected))
        }
    }

    fn expect_directive(&mut self, name: &str) -> PResult<Token<'a>> {
        let tok = self.next()?;
        if tok.kind == TokenKind::Directive && tok.text == name {
            Ok(tok)
        } else {
            Err(self.unexpected(tok, &format!("`{name}`")))
        }
    }

    fn expect_semicolon(&mut self) -> PResult<()> {
        self.expect(TokenKind::Semicolon, "`;`").map(|_| ())
    }

    // ---- numbers -------------------------------------------------------

    fn integer_value(&self, tok: Token<'_>) -> PResult<u64> {
        parse_integer(tok.text).ok_or_else(|| {
            self.error(
                tok.span,
                format!("invalid or out-of-range integer literal `{}`", tok.text),
            )
        })
    }

    fn u32_literal(&mut self, what: &str) -> PResult<u32> {
        let tok = self.expect(TokenKind::Integer, what)?;
        let value = self.integer_value(tok)?;
        u32::try_from(value)
            .map_err(|_| self.error(tok.span, format!("{what} {value} is too large")))
    }

    fn u64_literal(&mut self, what: &str) -> PResult<u64> {
        let tok = self.expect(TokenKind::Integer, what)?;
        self.integer_value(tok)
    }

    /// `[-] literal`.
    fn immediate(&mut self) -> PResult<Immediate> {
        let negative = self.eat(TokenKind::Minus)?;
        let tok = self.next()?;
        let bad = |p: &Self| p.error(tok.span, format!("invalid numeric literal `{}`", tok.text));
        let value = match tok.kind {
            TokenKind::Integer => {
                let magnitude = self.integer_value(tok)?;
                if negative {
                    let v = -i128::from(magnitude);
                    Immediate::Int(i64::try_from(v).map_err(|_| {
                        self.error(
                            tok.span,
                            format!("integer literal `-{}` is below the 64-bit range", tok.text),
                        )
                    })?)
                } else {
                    match i64::try_from(magnitude) {
                        Ok(v) => Immediate::Int(v),
                        Err(_) => Immediate::UInt(magnitude),
                    }
                }
            }
            TokenKind::HexFloat => {
                let digits = tok.text.get(2..).ok_or_else(|| bad(self))?;
                if tok.text.len() == 10 {
                    let bits = u32::from_str_radix(digits, 16).map_err(|_| bad(self))?;
                    Immediate::F32Bits(if negative { bits ^ 0x8000_0000 } else { bits })
                } else {
                    let bits = u64::from_str_radix(digits, 16).map_err(|_| bad(self))?;
                    Immediate::F64Bits(if negative { bits ^ (1 << 63) } else { bits })
                }
            }
            TokenKind::DecimalFloat => {
                let v: f64 = tok.text.parse().map_err(|_| bad(self))?;
                if !v.is_finite() {
                    return Err(self.error(
                        tok.span,
                        format!("float literal `{}` is out of range", tok.text),
                    ));
                }
                Immediate::Decimal(if negative { -v } else { v })
            }
            _ => return Err(self.unexpected(tok, "a numeric literal")),
        };
        Ok(value)
    }

    /// `+N`, `-N`, `+-N`, or nothing (0).
    fn offset(&mut self) -> PResult<i64> {
        let negative = if self.eat(TokenKind::Plus)? {
            self.eat(TokenKind::Minus)?
        } else if self.eat(TokenKind::Minus)? {
            true
        } else {
            return Ok(0);
        };
        let tok = self.expect(TokenKind::Integer, "an integer offset")?;
        let magnitude = i128::from(self.integer_value(tok)?);
        let value = if negative { -magnitude } else { magnitude };
        i64::try_from(value)
            .map_err(|_| self.error(tok.span, format!("offset `{}` is out of range", tok.text)))
    }

    fn string_value(&self, tok: Token<'_>) -> String {
        unescape(&tok.text[1..tok.text.len() - 1])
    }

    // ---- module level ----------------------------------------------------

    fn module(&mut self) -> PResult<Module> {
        let mut version = None;
        let mut target = Vec::new();
        let mut address_size = None;
        loop {
            let tok = self.peek()?;
            if tok.kind != TokenKind::Directive {
                break;
            }
            match tok.text {
                ".version" => {
                    self.next()?;
                    version = Some(self.version()?);
                }
                ".target" => {
                    self.next()?;
                    loop {
                        let t = self.expect(TokenKind::Ident, "a target name (e.g. `sm_80`)")?;
                        target.push(t.text.to_string());
                        if !self.eat(TokenKind::Comma)? {
                            break;
                        }
                    }
                }
                ".address_size" => {
                    self.next()?;
                    let span = self.peek()?.span;
                    let size = self.u32_literal("an address size")?;
                    if size != 32 && size != 64 {
                        return Err(
                            self.error(span, format!("address size must be 32 or 64, not {size}"))
                        );
                    }
                    address_size = Some(size);
                }
                _ => break,
            }
        }
        let Some(version) = version else {
            let tok = self.peek()?;
            return Err(self.error(
                tok.span,
                "expected `.version` before any other module content",
            ));
        };
        let mut items = Vec::new();
        while !self.at(TokenKind::Eof)? {
            items.push(self.item()?);
        }
        Ok(Module {
            version,
            target,
            address_size,
            items,
        })
    }

    fn version(&mut self) -> PResult<Version> {
        let tok = self.next()?;
        let parsed = match tok.kind {
            TokenKind::DecimalFloat => tok.text.split_once('.').and_then(|(a, b)| {
                Some(Version {
                    major: a.parse().ok()?,
                    minor: b.parse().ok()?,
                })
            }),
            _ => None,
        };
        parsed.ok_or_else(|| self.unexpected(tok, "a version number `MAJOR.MINOR`"))
    }

    fn item(&mut self) -> PResult<Item> {
        let tok = self.peek()?;
        if tok.kind != TokenKind::Directive {
            return Err(self.unexpected(tok, "a function, variable or directive"));
        }
        match tok.text {
            ".file" => self.file_directive().map(Item::File),
            ".section" => self.section().map(Item::Section),
            ".pragma" => self.pragma().map(Item::Pragma),
            ".version" | ".target" | ".address_size" => Err(self.error(
                tok.span,
                format!("`{}` must come before any function or variable", tok.text),
            )),
            _ => {
                let linkage = self.linkage()?;
                let next = self.peek()?;
                match next.text {
                    ".entry" | ".func" if next.kind == TokenKind::Directive => {
                        self.function(linkage, tok.span).map(Item::Function)
                    }
                    _ => self.var_decl(linkage, tok.span).map(Item::Variable),
                }
            }
        }
    }

    fn linkage(&mut self) -> PResult<Linkage> {
        let tok = self.peek()?;
        let linkage = match (tok.kind, tok.text) {
            (TokenKind::Directive, ".visible") => Linkage::Visible,
            (TokenKind::Directive, ".extern") => Linkage::Extern,
            (TokenKind::Directive, ".weak") => Linkage::Weak,
            (TokenKind::Directive, ".common") => Linkage::Common,
            _ => return Ok(Linkage::None),
        };
        self.next()?;
        Ok(linkage)
    }

    fn file_directive(&mut self) -> PResult<FileDirective> {
        let span = self.expect_directive(".file")?.span;
        let index = self.u32_literal("a file index")?;
        let path_tok = self.expect(TokenKind::String, "a quoted file path")?;
        let path = self.string_value(path_tok);
        let mut timestamp = None;
        let mut size = None;
        if self.eat(TokenKind::Comma)? {
            timestamp = Some(self.u64_literal("a timestamp")?);
            if self.eat(TokenKind::Comma)? {
                size = Some(self.u64_literal("a file size")?);
            }
        }
        Ok(FileDirective {
            index,
            path,
            timestamp,
            size,
            span,
        })
    }

    fn section(&mut self) -> PResult<Section> {
        let span = self.expect_directive(".section")?.span;
        let name = self.expect(TokenKind::Directive, "a section name (e.g. `.debug_info`)")?;
        if self.buffered > 0 {
            let tok = self.lookahead[0];
            return Err(self.unexpected(tok, "`{` opening the section body"));
        }
        let (_, raw) = self.lexer.raw_braced().map_err(|e| self.lex_error(e))?;
        Ok(Section {
            name: name.text.to_string(),
            raw: raw.to_string(),
            span,
        })
    }

    fn pragma(&mut self) -> PResult<Pragma> {
        let span = self.expect_directive(".pragma")?.span;
        let values = self.pragma_strings()?;
        self.expect_semicolon()?;
        Ok(Pragma { values, span })
    }

    fn pragma_strings(&mut self) -> PResult<Vec<String>> {
        let mut values = Vec::new();
        loop {
            let tok = self.expect(TokenKind::String, "a quoted pragma string")?;
            values.push(self.string_value(tok));
            if !self.eat(TokenKind::Comma)? {
                return Ok(values);
            }
        }
    }

    // ---- functions ---------------------------------------------------------

    fn function(&mut self, linkage: Linkage, span: Span) -> PResult<Function> {
        let kind_tok = self.next()?;
        let kind = if kind_tok.text == ".entry" {
            FunctionKind::Entry
        } else {
            FunctionKind::Func
        };
        let mut returns = Vec::new();
        if self.at(TokenKind::LParen)? {
            let tok = self.peek()?;
            if kind == FunctionKind::Entry {
                return Err(self.error(tok.span, "an `.entry` kernel cannot have return values"));
            }
            returns = self.param_list()?;
        }
        let name = self
            .expect(TokenKind::Ident, "a function name")?
            .text
            .to_string();
        let params = if self.at(TokenKind::LParen)? {
            self.param_list()?
        } else {
            Vec::new()
        };
        let mut directives = Vec::new();
        while self.peek()?.kind == TokenKind::Directive {
            directives.push(self.function_directive()?);
        }
        let body = if self.eat(TokenKind::Semicolon)? {
            None
        } else {
            let open = self.peek()?;
            if open.kind != TokenKind::LBrace {
                return Err(self.unexpected(open, "`{` opening the function body or `;`"));
            }
            self.next()?;
            let reg_params: Vec<RegName> = returns
                .iter()
                .chain(&params)
                .filter(|p| p.space == ParamSpace::Reg)
                .map(|p| RegName {
                    name: p.name.clone(),
                    range: None,
                })
                .collect();
            self.bare_regs.clear();
            self.bare_regs.push(Vec::new());
            self.declare_bare(&reg_params);
            let body = self.block_body(1);
            self.bare_regs.clear();
            Some(body?)
        };
        Ok(Function {
            linkage,
            kind,
            name,
            returns,
            params,
            directives,
            body,
            span,
        })
    }

    fn function_directive(&mut self) -> PResult<FunctionDirective> {
        let tok = self.next()?;
        let dims = |p: &mut Self| -> PResult<Vec<u32>> {
            let mut v = vec![p.u32_literal("a dimension")?];
            while v.len() < 3 && p.eat(TokenKind::Comma)? {
                v.push(p.u32_literal("a dimension")?);
            }
            Ok(v)
        };
        Ok(match tok.text {
            ".maxntid" => FunctionDirective::MaxNTid(dims(self)?),
            ".reqntid" => FunctionDirective::ReqNTid(dims(self)?),
            ".reqnctapercluster" => FunctionDirective::ReqNCtaPerCluster(dims(self)?),
            ".minnctapersm" => FunctionDirective::MinNCtaPerSm(self.u32_literal("a CTA count")?),
            ".maxnctapersm" => FunctionDirective::MaxNCtaPerSm(self.u32_literal("a CTA count")?),
            ".maxnreg" => FunctionDirective::MaxNReg(self.u32_literal("a register count")?),
            ".maxclusterrank" => {
                FunctionDirective::MaxClusterRank(self.u32_literal("a cluster rank")?)
            }
            ".noreturn" => FunctionDirective::NoReturn,
            ".explicitcluster" => FunctionDirective::ExplicitCluster,
            ".pragma" => {
                let values = self.pragma_strings()?;
                self.expect_semicolon()?;
                FunctionDirective::Pragma(values)
            }
            _ => {
                return Err(self.error(
                    tok.span,
                    format!("unknown function directive `{}`", tok.text),
                ));
            }
        })
    }

    fn param_list(&mut self) -> PResult<Vec<Param>> {
        self.expect(TokenKind::LParen, "`(`")?;
        let mut params = Vec::new();
        if self.eat(TokenKind::RParen)? {
            return Ok(params);
        }
        loop {
            params.push(self.param()?);
            if self.eat(TokenKind::RParen)? {
                return Ok(params);
            }
            self.expect(TokenKind::Comma, "`,` or `)` in the parameter list")?;
        }
    }

    fn param(&mut self) -> PResult<Param> {
        let space_tok = self.next()?;
        let space = match (space_tok.kind, space_tok.text) {
            (TokenKind::Directive, ".param") => ParamSpace::Param,
            (TokenKind::Directive, ".reg") => ParamSpace::Reg,
            _ => return Err(self.unexpected(space_tok, "`.param` or `.reg`")),
        };
        let (align, vector, _) = self.storage_qualifiers(false)?;
        let ty = self.scalar_type()?;
        let mut ptr = None;
        if self.at_directive(".ptr")? {
            self.next()?;
            let mut attr = PtrAttr {
                space: None,
                align: None,
            };
            loop {
                let t = self.peek()?;
                if t.kind != TokenKind::Directive {
                    break;
                }
                if t.text == ".align" {
                    self.next()?;
                    attr.align = Some(self.alignment()?);
                } else if let Some(s) = StateSpace::from_directive(t.text) {
                    self.next()?;
                    attr.space = Some(s);
                } else {
                    break;
                }
            }
            ptr = Some(attr);
        }
        let name = self.declared_name()?;
        let array_dims = self.array_dims()?;
        Ok(Param {
            space,
            align,
            vector,
            ty,
            ptr,
            name,
            array_dims,
            span: space_tok.span,
        })
    }

    fn alignment(&mut self) -> PResult<u32> {
        let span = self.peek()?.span;
        let align = self.u32_literal("an alignment")?;
        if !align.is_power_of_two() {
            return Err(self.error(span, format!("alignment {align} is not a power of two")));
        }
        Ok(align)
    }

    /// `.align N`, `.vN` and (for variables) `.attribute(.name)`, in any order.
    fn storage_qualifiers(
        &mut self,
        allow_attributes: bool,
    ) -> PResult<(Option<u32>, Option<u32>, Vec<String>)> {
        let mut align = None;
        let mut vector = None;
        let mut attributes = Vec::new();
        loop {
            let t = self.peek()?;
            if t.kind != TokenKind::Directive {
                break;
            }
            match t.text {
                ".align" => {
                    self.next()?;
                    align = Some(self.alignment()?);
                }
                ".v2" | ".v4" | ".v8" => {
                    self.next()?;
                    vector = t.text[2..].parse().ok();
                }
                ".attribute" if allow_attributes => {
                    self.next()?;
                    self.expect(TokenKind::LParen, "`(` after `.attribute`")?;
                    loop {
                        let a =
                            self.expect(TokenKind::Directive, "an attribute such as `.managed`")?;
                        attributes.push(a.text[1..].to_string());
                        if !self.eat(TokenKind::Comma)? {
                            break;
                        }
                    }
                    self.expect(TokenKind::RParen, "`)` closing `.attribute(`")?;
                }
                _ => break,
            }
        }
        Ok((align, vector, attributes))
    }

    fn scalar_type(&mut self) -> PResult<ScalarType> {
        let tok = self.next()?;
        if tok.kind == TokenKind::Directive
            && let Some(ty) = ScalarType::from_directive(tok.text)
        {
            return Ok(ty);
        }
        Err(self.unexpected(tok, "a type such as `.u32`"))
    }

    fn declared_name(&mut self) -> PResult<String> {
        let tok = self.next()?;
        match tok.kind {
            TokenKind::Ident | TokenKind::Register => Ok(tok.text.to_string()),
            _ => Err(self.unexpected(tok, "a name")),
        }
    }

    fn array_dims(&mut self) -> PResult<Vec<Option<u64>>> {
        let mut dims = Vec::new();
        while self.eat(TokenKind::LBracket)? {
            if self.eat(TokenKind::RBracket)? {
                dims.push(None);
                continue;
            }
            dims.push(Some(self.u64_literal("an array size")?));
            self.expect(TokenKind::RBracket, "`]`")?;
        }
        Ok(dims)
    }

    // ---- variables -----------------------------------------------------------

    fn var_decl(&mut self, linkage: Linkage, span: Span) -> PResult<VarDecl> {
        let space_tok = self.next()?;
        let space = match StateSpace::from_directive(space_tok.text) {
            Some(s) if space_tok.kind == TokenKind::Directive && s != StateSpace::Reg => s,
            _ => {
                return Err(self.unexpected(
                    space_tok,
                    "a state space (`.global`, `.shared`, `.const`, `.local`, `.param`)",
                ));
            }
        };
        let (align, vector, attributes) = self.storage_qualifiers(true)?;
        let ty = self.scalar_type()?;
        let name = self.declared_name()?;
        let array_dims = self.array_dims()?;
        let init = if self.eat(TokenKind::Equals)? {
            Some(self.initializer(0)?)
        } else {
            None
        };
        self.expect_semicolon()?;
        if let Some(size) = ty.size_bytes() {
            let elem = size as u64 * vector.unwrap_or(1) as u64;
            self.var_elems.push((name.clone(), elem));
        }
        Ok(VarDecl {
            linkage,
            space,
            attributes,
            align,
            vector,
            ty,
            name,
            array_dims,
            init,
            span,
        })
    }

    fn initializer(&mut self, depth: usize) -> PResult<Initializer> {
        let tok = self.peek()?;
        if depth >= MAX_NESTING {
            return Err(self.error(tok.span, "initializer nested too deeply"));
        }
        match tok.kind {
            TokenKind::LBrace => {
                self.next()?;
                let mut list = Vec::new();
                if self.eat(TokenKind::RBrace)? {
                    return Ok(Initializer::List(list));
                }
                loop {
                    list.push(self.initializer(depth + 1)?);
                    if self.eat(TokenKind::RBrace)? {
                        return Ok(Initializer::List(list));
                    }
                    self.expect(TokenKind::Comma, "`,` or `}` in the initializer")?;
                }
            }
            TokenKind::Ident
                if tok.text == "generic" && self.peek_nth(1)?.kind == TokenKind::LParen =>
            {
                self.next()?;
                self.next()?;
                let name = self
                    .expect(TokenKind::Ident, "a variable name")?
                    .text
                    .to_string();
                self.expect(TokenKind::RParen, "`)`")?;
                let offset = self.offset()?;
                Ok(Initializer::Generic { name, offset })
            }
            TokenKind::Ident => {
                self.next()?;
                let offset = self.offset()?;
                Ok(Initializer::Symbol {
                    name: tok.text.to_string(),
                    offset,
                })
            }
            _ => self.immediate().map(Initializer::Immediate),
        }
    }

    // ---- function bodies -----------------------------------------------------

    /// Statements up to and including the closing `}` (the `{` is consumed).
    fn block_body(&mut self, depth: usize) -> PResult<Vec<Statement>> {
        let mut body = Vec::new();
        loop {
            let tok = self.peek()?;
            match tok.kind {
                TokenKind::RBrace => {
                    self.next()?;
                    return Ok(body);
                }
                TokenKind::Eof => {
                    return Err(self.error(tok.span, "unexpected end of file: missing `}`"));
                }
                _ => body.push(self.statement(depth)?),
            }
        }
    }

    fn statement(&mut self, depth: usize) -> PResult<Statement> {
        let tok = self.peek()?;
        match tok.kind {
            TokenKind::LBrace => {
                if depth >= MAX_NESTING {
                    return Err(self.error(tok.span, "`{ }` scopes nested too deeply"));
                }
                self.next()?;
                self.bare_regs.push(Vec::new());
                let body = self.block_body(depth + 1);
                self.bare_regs.pop();
                let body = body?;
                Ok(Statement::Scope(Scope {
                    body,
                    span: tok.span,
                }))
            }
            TokenKind::Directive => match tok.text {
                ".reg" => self.reg_decl().map(Statement::Reg),
                ".loc" => self.loc().map(Statement::Loc),
                ".pragma" => self.pragma().map(Statement::Pragma),
                ".local" | ".shared" | ".param" | ".const" | ".global" | ".tex" => {
                    self.var_decl(Linkage::None, tok.span).map(Statement::Var)
                }
                ".extern" | ".visible" | ".weak" | ".common" => {
                    let linkage = self.linkage()?;
                    self.var_decl(linkage, tok.span).map(Statement::Var)
                }
                _ => Err(self.error(
                    tok.span,
                    format!("unexpected directive `{}` in a function body", tok.text),
                )),
            },
            TokenKind::Ident if self.peek_nth(1)?.kind == TokenKind::Colon => {
                self.next()?;
                self.next()?;
                let name = tok.text.to_string();
                if self.at_directive(".callprototype")? {
                    self.call_prototype(name, tok.span)
                        .map(Statement::CallPrototype)
                } else if self.at_directive(".branchtargets")? {
                    self.branch_targets(name, tok.span)
                        .map(Statement::BranchTargets)
                } else {
                    Ok(Statement::Label(Label {
                        name,
                        span: tok.span,
                    }))
                }
            }
            TokenKind::Ident | TokenKind::At => self.instruction().map(Statement::Instruction),
            _ => Err(self.unexpected(tok, "an instruction, label, declaration or `}`")),
        }
    }

    fn reg_decl(&mut self) -> PResult<RegDecl> {
        let span = self.expect_directive(".reg")?.span;
        let (align, vector, _) = self.storage_qualifiers(false)?;
        let ty = self.scalar_type()?;
        let mut names = Vec::new();
        loop {
            let name = self.declared_name()?;
            let range = if self.eat(TokenKind::Lt)? {
                let n = self.u32_literal("a register count")?;
                self.expect(TokenKind::Gt, "`>`")?;
                Some(n)
            } else {
                None
            };
            names.push(RegName { name, range });
            if !self.eat(TokenKind::Comma)? {
                break;
            }
        }
        self.expect_semicolon()?;
        self.declare_bare(&names);
        Ok(RegDecl {
            align,
            vector,
            ty,
            names,
            span,
        })
    }

    fn loc(&mut self) -> PResult<Loc> {
        let span = self.expect_directive(".loc")?.span;
        let file = self.u32_literal("a file index")?;
        let line = self.u32_literal("a line number")?;
        let col = if self.at(TokenKind::Integer)? {
            self.u32_literal("a column")?
        } else {
            0
        };
        let mut inlined = None;
        if self.eat(TokenKind::Comma)? {
            let key = self.expect(TokenKind::Ident, "`function_name`")?;
            if key.text != "function_name" {
                return Err(self.unexpected(key, "`function_name`"));
            }
            let fname = self.expect(TokenKind::Ident, "a function-name label")?;
            let mut function_name = fname.text.to_string();
            let offset = self.offset()?;
            if offset != 0 {
                function_name.push_str(&format!("{offset:+}"));
            }
            self.expect(TokenKind::Comma, "`,` before `inlined_at`")?;
            let key = self.expect(TokenKind::Ident, "`inlined_at`")?;
            if key.text != "inlined_at" {
                return Err(self.unexpected(key, "`inlined_at`"));
            }
            let file = self.u32_literal("a file index")?;
            let line = self.u32_literal("a line number")?;
            let col = if self.at(TokenKind::Integer)? {
                self.u32_literal("a column")?
            } else {
                0
            };
            inlined = Some(InlinedAt {
                function_name,
                file,
                line,
                col,
            });
        }
        Ok(Loc {
            file,
            line,
            col,
            inlined,
            span,
        })
    }

    fn call_prototype(&mut self, name: String, span: Span) -> PResult<CallPrototype> {
        self.expect_directive(".callprototype")?;
        let returns = if self.at(TokenKind::LParen)? {
            self.param_list()?
        } else {
            Vec::new()
        };
        let placeholder = self.expect(TokenKind::Ident, "`_`")?;
        if placeholder.text != "_" {
            return Err(self.unexpected(placeholder, "`_` in place of the function name"));
        }
        let params = if self.at(TokenKind::LParen)? {
            self.param_list()?
        } else {
            Vec::new()
        };
        let noreturn = if self.at_directive(".noreturn")? {
            self.next()?;
            true
        } else {
            false
        };
        self.expect_semicolon()?;
        Ok(CallPrototype {
            name,
            returns,
            params,
            noreturn,
            span,
        })
    }

    fn branch_targets(&mut self, name: String, span: Span) -> PResult<BranchTargets> {
        self.expect_directive(".branchtargets")?;
        let mut labels = Vec::new();
        loop {
            labels.push(self.expect(TokenKind::Ident, "a label")?.text.to_string());
            if !self.eat(TokenKind::Comma)? {
                break;
            }
        }
        self.expect_semicolon()?;
        Ok(BranchTargets { name, labels, span })
    }

    fn instruction(&mut self) -> PResult<Instruction> {
        let span = self.peek()?.span;
        let guard = if self.eat(TokenKind::At)? {
            let negated = self.eat(TokenKind::Bang)?;
            let reg = self.next()?;
            let is_reg = reg.kind == TokenKind::Register
                || (reg.kind == TokenKind::Ident && self.is_bare_register(reg.text));
            if !is_reg {
                return Err(self.unexpected(reg, "a predicate register after `@`"));
            }
            Some(Guard {
                register: Register::new(reg.text),
                negated,
            })
        } else {
            None
        };
        let opcode = self.expect(TokenKind::Ident, "an instruction opcode")?;
        let mut modifiers = Vec::new();
        while self.at(TokenKind::Directive)? {
            modifiers.push(self.next()?.text.to_string());
        }
        let mut operands = Vec::new();
        if !self.eat(TokenKind::Semicolon)? {
            loop {
                operands.push(self.operand(0)?);
                if self.eat(TokenKind::Semicolon)? {
                    break;
                }
                let next = self.peek()?;
                if matches!(next.kind, TokenKind::Plus | TokenKind::Minus)
                    && let Some(Operand::Register(reg)) = operands.last()
                {
                    // `%rd1 + 1` as a source operand (never the first operand,
                    // which is a destination or a store's address).
                    if operands.len() == 1 {
                        return Err(self.error(
                            next.span,
                            "a register plus or minus an immediate is only a source operand, \
                             never the first operand",
                        ));
                    }
                    let reg = reg.clone();
                    let offset = self.offset()?;
                    *operands.last_mut().expect("an operand was just parsed") =
                        Operand::RegisterOffset(reg, offset);
                    if self.eat(TokenKind::Semicolon)? {
                        break;
                    }
                }
                self.expect(TokenKind::Comma, "`,` or `;` after an operand")?;
            }
        }
        Ok(Instruction {
            guard,
            opcode: opcode.text.to_string(),
            modifiers,
            operands,
            span,
        })
    }

    /// Whether the next token starts a register: `%r1`, or a declared `%`-less name.
    fn at_register(&mut self) -> PResult<bool> {
        let tok = self.peek()?;
        Ok(tok.kind == TokenKind::Register
            || (tok.kind == TokenKind::Ident && self.is_bare_register(tok.text)))
    }

    fn register(&mut self) -> PResult<Register> {
        let tok = self.next()?;
        let is_reg = tok.kind == TokenKind::Register
            || (tok.kind == TokenKind::Ident && self.is_bare_register(tok.text));
        if !is_reg {
            return Err(self.unexpected(tok, "a register"));
        }
        let mut reg = Register::new(tok.text);
        let next = self.peek()?;
        if next.kind == TokenKind::Directive && !next.spaced {
            reg.component = match next.text {
                ".x" | ".r" => Some(Component::X),
                ".y" | ".g" => Some(Component::Y),
                ".z" | ".b" => Some(Component::Z),
                ".w" | ".a" => Some(Component::W),
                _ => {
                    return Err(self.error(
                        next.span,
                        format!("`{}` is not a component selector (.x .y .z .w)", next.text),
                    ));
                }
            };
            self.next()?;
        }
        Ok(reg)
    }

    fn operand(&mut self, depth: usize) -> PResult<Operand> {
        let tok = self.peek()?;
        if depth >= MAX_OPERAND_NESTING {
            return Err(self.error(tok.span, "operand lists cannot nest here"));
        }
        let bare_register = tok.kind == TokenKind::Ident && self.is_bare_register(tok.text);
        match tok.kind {
            _ if tok.kind == TokenKind::Register || bare_register => {
                let reg = self.register()?;
                if self.eat(TokenKind::Pipe)? {
                    let second = self.register()?;
                    Ok(Operand::PredicatePair(reg, second))
                } else {
                    Ok(Operand::Register(reg))
                }
            }
            TokenKind::Bang => {
                self.next()?;
                Ok(Operand::Not(self.register()?))
            }
            TokenKind::Ident if tok.text == "_" => {
                self.next()?;
                Ok(Operand::Sink)
            }
            TokenKind::Ident => {
                self.next()?;
                let next = self.peek()?;
                if next.kind == TokenKind::LBracket && !next.spaced {
                    return self.element_address(tok);
                }
                Ok(Operand::Symbol(tok.text.to_string()))
            }
            TokenKind::LBrace => {
                self.next()?;
                self.operand_list(TokenKind::RBrace, depth)
                    .map(Operand::Vector)
            }
            TokenKind::LParen => {
                self.next()?;
                self.operand_list(TokenKind::RParen, depth)
                    .map(Operand::List)
            }
            TokenKind::LBracket => self.address(depth).map(Operand::Address),
            TokenKind::Integer
            | TokenKind::HexFloat
            | TokenKind::DecimalFloat
            | TokenKind::Minus => self.immediate().map(Operand::Immediate),
            _ => Err(self.unexpected(tok, "an operand")),
        }
    }

    /// Operands separated by commas up to `close` (the opener is consumed).
    fn operand_list(&mut self, close: TokenKind, depth: usize) -> PResult<Vec<Operand>> {
        let mut list = Vec::new();
        if self.eat(close)? {
            return Ok(list);
        }
        loop {
            list.push(self.operand(depth + 1)?);
            if self.eat(close)? {
                return Ok(list);
            }
            let tok = self.next()?;
            if tok.kind != TokenKind::Comma {
                return Err(self.unexpected(tok, &format!("`,` or {}", close.describe())));
            }
        }
    }

    /// `arr[i]`, an array element named without an address's brackets
    /// (`ld.const.b16 r, arr[2];`, which ptxas accepts): the address of
    /// element `i` of the declared variable, `[arr+i*size]`.
    fn element_address(&mut self, name: Token<'a>) -> PResult<Operand> {
        self.expect(TokenKind::LBracket, "`[`")?;
        let tok = self.expect(TokenKind::Integer, "an element index")?;
        let index = self.integer_value(tok)?;
        self.expect(TokenKind::RBracket, "`]` closing the element index")?;
        let Some(elem) = self
            .var_elems
            .iter()
            .rev()
            .find(|(n, _)| n == name.text)
            .map(|(_, e)| *e)
        else {
            return Err(self.error(
                name.span,
                format!(
                    "`{}[…]` names an element of an undeclared variable",
                    name.text
                ),
            ));
        };
        let offset = index
            .checked_mul(elem)
            .and_then(|o| i64::try_from(o).ok())
            .ok_or_else(|| {
                self.error(tok.span, format!("element `{}` is out of range", tok.text))
            })?;
        Ok(Operand::Address(Address {
            base: AddressBase::Symbol(name.text.to_string()),
            offset,
            trailing: Vec::new(),
        }))
    }

    fn address(&mut self, depth: usize) -> PResult<Address> {
        self.expect(TokenKind::LBracket, "`[`")?;
        let tok = self.peek()?;
        let base = match tok.kind {
            TokenKind::Register => AddressBase::Register(self.register()?),
            TokenKind::Ident if self.at_register()? => AddressBase::Register(self.register()?),
            TokenKind::Ident => {
                self.next()?;
                AddressBase::Symbol(tok.text.to_string())
            }
            TokenKind::Integer => {
                self.next()?;
                AddressBase::Immediate(self.integer_value(tok)?)
            }
            _ => return Err(self.unexpected(tok, "a register, variable or address inside `[ ]`")),
        };
        let offset = self.offset()?;
        let mut trailing = Vec::new();
        while self.eat(TokenKind::Comma)? {
            trailing.push(self.operand(depth + 1)?);
        }
        self.expect(TokenKind::RBracket, "`]` closing the address")?;
        Ok(Address {
            base,
            offset,
            trailing,
        })
    }
}

/// The value of a PTX integer literal: decimal, `0x` hex, `0b` binary,
/// `0`-prefixed octal, optional `U` suffix. `None` if malformed or above 64 bits.
pub fn parse_integer(text: &str) -> Option<u64> {
    let text = text.strip_suffix(['U', 'u']).unwrap_or(text);
    let (digits, radix) =
        if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            (h, 16)
        } else if let Some(b) = text.strip_prefix("0b").or_else(|| text.strip_prefix("0B")) {
            (b, 2)
        } else if text.len() > 1 && text.starts_with('0') {
            (&text[1..], 8)
        } else {
            (text, 10)
        };
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// Resolves `\"`, `\\`, `\n`, `\t` escapes; other escapes are kept verbatim.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}
