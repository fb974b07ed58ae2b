//! Tokenizer for PTX text.
//!
//! A pull lexer over bytes: the parser asks for one token at a time, which
//! lets it switch to raw scanning for `.section { … }` bodies. Tokens borrow
//! their text from the source. Only ASCII is accepted outside strings and
//! comments, so every slice lands on a character boundary.

use crate::ast::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// `foo`, `$L__BB0_2`, `_`, `func_retval0`.
    Ident,
    /// `%r1`, `%tid` (component suffixes are separate [`TokenKind::Directive`] tokens).
    Register,
    /// A dotted word: `.reg`, `.u32`, `.L2::128B`, `.x`.
    Directive,
    /// Integer literal (decimal, hex, octal, binary, optional `U` suffix).
    Integer,
    /// `0f…` / `0d…` hexadecimal float literal.
    HexFloat,
    /// Decimal float literal: `1.5`, `2e10`.
    DecimalFloat,
    /// `"…"`, text includes the quotes.
    String,
    Comma,
    Semicolon,
    Colon,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Lt,
    Gt,
    Plus,
    Minus,
    Bang,
    At,
    Pipe,
    Equals,
    Eof,
}

impl TokenKind {
    /// How a diagnostic names this kind of token.
    pub fn describe(self) -> &'static str {
        match self {
            TokenKind::Ident => "identifier",
            TokenKind::Register => "register",
            TokenKind::Directive => "directive",
            TokenKind::Integer => "integer",
            TokenKind::HexFloat | TokenKind::DecimalFloat => "float literal",
            TokenKind::String => "string",
            TokenKind::Comma => "`,`",
            TokenKind::Semicolon => "`;`",
            TokenKind::Colon => "`:`",
            TokenKind::LBrace => "`{`",
            TokenKind::RBrace => "`}`",
            TokenKind::LBracket => "`[`",
            TokenKind::RBracket => "`]`",
            TokenKind::LParen => "`(`",
            TokenKind::RParen => "`)`",
            TokenKind::Lt => "`<`",
            TokenKind::Gt => "`>`",
            TokenKind::Plus => "`+`",
            TokenKind::Minus => "`-`",
            TokenKind::Bang => "`!`",
            TokenKind::At => "`@`",
            TokenKind::Pipe => "`|`",
            TokenKind::Equals => "`=`",
            TokenKind::Eof => "end of file",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    pub kind: TokenKind,
    pub text: &'a str,
    pub span: Span,
    /// Byte offset of the token's first character.
    pub offset: usize,
    /// Whether whitespace or a comment separates this token from the previous one.
    pub spaced: bool,
}

impl Token<'_> {
    /// A placeholder end-of-file token.
    pub const EOF: Token<'static> = Token {
        kind: TokenKind::Eof,
        text: "",
        span: Span { line: 0, col: 0 },
        offset: 0,
        spaced: false,
    };
}

/// A lexical error: message and position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub span: Span,
    pub message: String,
}

pub struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        // A UTF-8 byte-order mark is not content; columns count from after it.
        let start = if src.starts_with('\u{feff}') { 3 } else { 0 };
        Lexer {
            src,
            bytes: src.as_bytes(),
            pos: start,
            line: 1,
            line_start: start,
        }
    }

    fn span_at(&self, offset: usize) -> Span {
        let col = offset.saturating_sub(self.line_start) + 1;
        Span::new(self.line, u32::try_from(col).unwrap_or(u32::MAX))
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn newline(&mut self) {
        self.line = self.line.saturating_add(1);
        self.line_start = self.pos;
    }

    /// Skips whitespace and comments; returns whether anything was skipped.
    fn skip_trivia(&mut self) -> Result<bool, LexError> {
        let start = self.pos;
        while let Some(b) = self.peek_byte(0) {
            match b {
                b'\n' => {
                    self.pos += 1;
                    self.newline();
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'/' if self.peek_byte(1) == Some(b'/') => {
                    let rest = &self.bytes[self.pos..];
                    self.pos += rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
                }
                b'/' if self.peek_byte(1) == Some(b'*') => {
                    let open = self.span_at(self.pos);
                    self.pos += 2;
                    loop {
                        match self.peek_byte(0) {
                            None => {
                                return Err(LexError {
                                    span: open,
                                    message: "unterminated `/*` comment".into(),
                                });
                            }
                            Some(b'*') if self.peek_byte(1) == Some(b'/') => {
                                self.pos += 2;
                                break;
                            }
                            Some(b'\n') => {
                                self.pos += 1;
                                self.newline();
                            }
                            Some(_) => self.pos += 1,
                        }
                    }
                }
                _ => break,
            }
        }
        Ok(self.pos != start)
    }

    pub fn next_token(&mut self) -> Result<Token<'a>, LexError> {
        let spaced = self.skip_trivia()?;
        let start = self.pos;
        let span = self.span_at(start);
        let Some(b) = self.peek_byte(0) else {
            return Ok(Token {
                kind: TokenKind::Eof,
                text: "",
                span,
                offset: start,
                spaced,
            });
        };
        let kind = match b {
            b',' => self.single(TokenKind::Comma),
            b';' => self.single(TokenKind::Semicolon),
            b':' => self.single(TokenKind::Colon),
            b'{' => self.single(TokenKind::LBrace),
            b'}' => self.single(TokenKind::RBrace),
            b'[' => self.single(TokenKind::LBracket),
            b']' => self.single(TokenKind::RBracket),
            b'(' => self.single(TokenKind::LParen),
            b')' => self.single(TokenKind::RParen),
            b'<' => self.single(TokenKind::Lt),
            b'>' => self.single(TokenKind::Gt),
            b'+' => self.single(TokenKind::Plus),
            b'-' => self.single(TokenKind::Minus),
            b'!' => self.single(TokenKind::Bang),
            b'@' => self.single(TokenKind::At),
            b'|' => self.single(TokenKind::Pipe),
            b'=' => self.single(TokenKind::Equals),
            b'"' => self.string(span)?,
            b'%' => {
                self.pos += 1;
                if !self.peek_byte(0).is_some_and(is_ident_continue) {
                    return Err(LexError {
                        span,
                        message: "expected a register name after `%`".into(),
                    });
                }
                self.eat_while(is_ident_continue);
                TokenKind::Register
            }
            b'.' => {
                self.pos += 1;
                if !self.peek_byte(0).is_some_and(is_ident_continue) {
                    return Err(LexError {
                        span,
                        message: "expected a directive or modifier name after `.`".into(),
                    });
                }
                self.directive_word();
                TokenKind::Directive
            }
            b'0'..=b'9' => self.number(span)?,
            b if is_ident_start(b) => {
                self.eat_while(is_ident_continue);
                TokenKind::Ident
            }
            _ => {
                return Err(LexError {
                    span,
                    message: match self.src[start..].chars().next() {
                        Some(c) if c.is_ascii_graphic() => format!("unexpected character `{c}`"),
                        Some(c) => format!("unexpected character {c:?}"),
                        None => "unexpected end of input".into(),
                    },
                });
            }
        };
        Ok(Token {
            kind,
            text: &self.src[start..self.pos],
            span,
            offset: start,
            spaced,
        })
    }

    fn single(&mut self, kind: TokenKind) -> TokenKind {
        self.pos += 1;
        kind
    }

    fn eat_while(&mut self, pred: fn(u8) -> bool) {
        while self.peek_byte(0).is_some_and(pred) {
            self.pos += 1;
        }
    }

    /// A directive body: identifier characters, with `::` joining parts
    /// (`.shared::cta`, `.L2::cache_hint`, `.mbarrier::complete_tx::bytes`).
    fn directive_word(&mut self) {
        loop {
            self.eat_while(is_ident_continue);
            if self.peek_byte(0) == Some(b':')
                && self.peek_byte(1) == Some(b':')
                && self.peek_byte(2).is_some_and(is_ident_continue)
            {
                self.pos += 2;
            } else {
                break;
            }
        }
    }

    fn string(&mut self, span: Span) -> Result<TokenKind, LexError> {
        self.pos += 1;
        loop {
            match self.peek_byte(0) {
                None | Some(b'\n') => {
                    return Err(LexError {
                        span,
                        message: "unterminated string literal".into(),
                    });
                }
                // Stepping byte-wise is safe: the scan only stops on ASCII
                // bytes, which never occur inside a multi-byte character.
                Some(b'\\') => {
                    self.pos += 1;
                    if self.peek_byte(0).is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(TokenKind::String);
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    fn number(&mut self, span: Span) -> Result<TokenKind, LexError> {
        let first = self.peek_byte(0);
        let second = self.peek_byte(1);
        if first == Some(b'0') && matches!(second, Some(b'f' | b'F' | b'd' | b'D')) {
            let digits = if matches!(second, Some(b'f' | b'F')) {
                8
            } else {
                16
            };
            self.pos += 2;
            let start = self.pos;
            self.eat_while(|c| c.is_ascii_hexdigit());
            if self.pos - start != digits {
                return Err(LexError {
                    span,
                    message: format!(
                        "hexadecimal float literal needs exactly {digits} hex digits after `0{}`",
                        second.map(char::from).unwrap_or('f')
                    ),
                });
            }
            return self.end_of_number(span, TokenKind::HexFloat);
        }
        if first == Some(b'0') && matches!(second, Some(b'x' | b'X' | b'b' | b'B')) {
            self.pos += 2;
            let start = self.pos;
            self.eat_while(|c| c.is_ascii_hexdigit());
            if self.pos == start {
                return Err(LexError {
                    span,
                    message: "integer literal has no digits after its prefix".into(),
                });
            }
            if matches!(self.peek_byte(0), Some(b'U' | b'u')) {
                self.pos += 1;
            }
            return self.end_of_number(span, TokenKind::Integer);
        }
        self.eat_while(|c| c.is_ascii_digit());
        let mut kind = TokenKind::Integer;
        if self.peek_byte(0) == Some(b'.') && self.peek_byte(1).is_some_and(|c| c.is_ascii_digit())
        {
            self.pos += 1;
            self.eat_while(|c| c.is_ascii_digit());
            kind = TokenKind::DecimalFloat;
        }
        if matches!(self.peek_byte(0), Some(b'e' | b'E')) {
            let digits_at = match self.peek_byte(1) {
                Some(b'+' | b'-') => 2,
                _ => 1,
            };
            if self
                .peek_byte(digits_at)
                .is_some_and(|c| c.is_ascii_digit())
            {
                self.pos += digits_at;
                self.eat_while(|c| c.is_ascii_digit());
                kind = TokenKind::DecimalFloat;
            }
        }
        if kind == TokenKind::Integer && matches!(self.peek_byte(0), Some(b'U' | b'u')) {
            self.pos += 1;
        }
        self.end_of_number(span, kind)
    }

    /// Rejects `123abc`: a number must not run into an identifier.
    fn end_of_number(&mut self, span: Span, kind: TokenKind) -> Result<TokenKind, LexError> {
        if self.peek_byte(0).is_some_and(is_ident_continue) {
            return Err(LexError {
                span,
                message: "malformed numeric literal".into(),
            });
        }
        Ok(kind)
    }

    /// Scans a `{ … }` block verbatim (for `.section` bodies): skips
    /// whitespace, requires `{`, and returns the exact text up to the
    /// matching `}`, which is consumed. Braces inside strings and comments
    /// do not count.
    pub fn raw_braced(&mut self) -> Result<(Span, &'a str), LexError> {
        self.skip_trivia()?;
        let open = self.span_at(self.pos);
        if self.peek_byte(0) != Some(b'{') {
            return Err(LexError {
                span: open,
                message: "expected `{` to open the section body".into(),
            });
        }
        self.pos += 1;
        let start = self.pos;
        let mut depth = 1usize;
        loop {
            match self.peek_byte(0) {
                None => {
                    return Err(LexError {
                        span: open,
                        message: "unterminated section body: no matching `}`".into(),
                    });
                }
                Some(b'{') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        let body = &self.src[start..self.pos];
                        self.pos += 1;
                        return Ok((open, body));
                    }
                    self.pos += 1;
                }
                Some(b'\n') => {
                    self.pos += 1;
                    self.newline();
                }
                Some(b'"') => {
                    let span = self.span_at(self.pos);
                    self.string(span)?;
                }
                Some(b'/') if matches!(self.peek_byte(1), Some(b'/' | b'*')) => {
                    self.skip_trivia()?;
                }
                Some(_) => self.pos += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokenKind, String)> {
        let mut lx = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let t = lx.next_token().expect("lexes");
            if t.kind == TokenKind::Eof {
                return out;
            }
            out.push((t.kind, t.text.to_string()));
        }
    }

    #[test]
    fn instruction_tokens() {
        use TokenKind::*;
        let toks = kinds("@!%p1 ld.global.L2::128B.v2.u32 {%r1, _}, [%rd1+-4]; // c");
        let expect = [
            (At, "@"),
            (Bang, "!"),
            (Register, "%p1"),
            (Ident, "ld"),
            (Directive, ".global"),
            (Directive, ".L2::128B"),
            (Directive, ".v2"),
            (Directive, ".u32"),
            (LBrace, "{"),
            (Register, "%r1"),
            (Comma, ","),
            (Ident, "_"),
            (RBrace, "}"),
            (Comma, ","),
            (LBracket, "["),
            (Register, "%rd1"),
            (Plus, "+"),
            (Minus, "-"),
            (Integer, "4"),
            (RBracket, "]"),
            (Semicolon, ";"),
        ];
        let expect: Vec<_> = expect.iter().map(|(k, s)| (*k, s.to_string())).collect();
        assert_eq!(toks, expect);
    }

    #[test]
    fn numbers() {
        use TokenKind::*;
        assert_eq!(
            kinds("0f3F800000 0d3FF0000000000000 1.5 2e10 0xFFU 017 42"),
            vec![
                (HexFloat, "0f3F800000".into()),
                (HexFloat, "0d3FF0000000000000".into()),
                (DecimalFloat, "1.5".into()),
                (DecimalFloat, "2e10".into()),
                (Integer, "0xFFU".into()),
                (Integer, "017".into()),
                (Integer, "42".into()),
            ]
        );
        assert!(Lexer::new("0f3F80").next_token().is_err());
        assert!(Lexer::new("12abc").next_token().is_err());
    }

    #[test]
    fn positions_and_comments() {
        let mut lx = Lexer::new("/* a\n b */ x\n  // c\n\t%r1");
        let x = lx.next_token().unwrap();
        assert_eq!((x.text, x.span), ("x", Span::new(2, 7)));
        let r = lx.next_token().unwrap();
        assert_eq!((r.text, r.span), ("%r1", Span::new(4, 2)));
    }

    #[test]
    fn raw_section_body() {
        let mut lx = Lexer::new(" {\n.b8 1 // }\n.b8 \"}\"\n} next");
        let (span, body) = lx.raw_braced().unwrap();
        assert_eq!(span, Span::new(1, 2));
        assert_eq!(body, "\n.b8 1 // }\n.b8 \"}\"\n");
        let t = lx.next_token().unwrap();
        assert_eq!((t.text, t.span.line), ("next", 4));
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let t = Lexer::new("\u{feff}.version").next_token().unwrap();
        assert_eq!(
            (t.kind, t.text, t.span),
            (TokenKind::Directive, ".version", Span::new(1, 1))
        );
    }

    #[test]
    fn errors_have_positions() {
        let e = Lexer::new("\n  #").next_token().unwrap_err();
        assert_eq!(e.span, Span::new(2, 3));
        let mut lx = Lexer::new("x /* open");
        lx.next_token().unwrap();
        let e = lx.next_token().unwrap_err();
        assert_eq!(e.span, Span::new(1, 3));
    }
}
