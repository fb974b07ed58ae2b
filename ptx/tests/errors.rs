//! Malformed input yields a `file:line:col: message` diagnostic pointing at
//! the offending token.

use prlx_ptx::{ParseError, parse};

const HEADER: &str = ".version 7.5\n.target sm_80\n.address_size 64\n";

fn err(src: &str) -> ParseError {
    match parse(src, "bad.ptx") {
        Ok(m) => panic!("expected an error, parsed {m:?}"),
        Err(e) => e,
    }
}

/// Parses HEADER + `body` wrapped in a kernel (body starts on line 6).
fn body_err(body: &str) -> ParseError {
    err(&format!("{HEADER}.entry k()\n{{\n{body}\n}}\n"))
}

fn assert_at(e: &ParseError, line: u32, col: u32, needle: &str) {
    assert_eq!((e.line, e.col), (line, col), "{e}");
    assert!(
        e.message.contains(needle),
        "message {:?} lacks {needle:?}",
        e.message
    );
    assert_eq!(
        e.to_string(),
        format!("bad.ptx:{line}:{col}: {}", e.message)
    );
}

#[test]
fn missing_version() {
    assert_at(
        &err(".target sm_80\n.entry k() { ret; }"),
        2,
        1,
        "`.version`",
    );
}

#[test]
fn missing_semicolon() {
    assert_at(
        &body_err("\tadd.s32 %r1, %r2, %r3\n\tret;"),
        7,
        2,
        "expected `,` or `;`",
    );
}

#[test]
fn unknown_character() {
    assert_at(
        &body_err("\tmov.u32 %r1, #4;"),
        6,
        15,
        "unexpected character `#`",
    );
}

#[test]
fn bad_hex_float() {
    assert_at(&body_err("  mov.f32 %f1, 0f3F80;"), 6, 16, "8 hex digits");
}

#[test]
fn unclosed_body() {
    let e = err(&format!("{HEADER}.entry k()\n{{\n\tret;\n"));
    assert_at(&e, 7, 1, "missing `}`");
}

#[test]
fn unterminated_string() {
    assert_at(
        &err(&format!("{HEADER}.file 1 \"/src/k.cu\n")),
        4,
        9,
        "unterminated string",
    );
}

#[test]
fn unterminated_comment() {
    assert_at(
        &body_err("\tret; /* never closed"),
        6,
        7,
        "unterminated `/*`",
    );
}

#[test]
fn bad_type() {
    assert_at(
        &body_err("\t.reg .u33 %r<4>;"),
        6,
        7,
        "a type such as `.u32`",
    );
}

#[test]
fn bad_component() {
    assert_at(
        &body_err("\tmov.u32 %r1, %tid.q;"),
        6,
        19,
        "not a component selector",
    );
}

#[test]
fn integer_overflow() {
    assert_at(
        &body_err("\tmov.u64 %rd1, 0x1FFFFFFFFFFFFFFFF;"),
        6,
        16,
        "out-of-range integer",
    );
}

#[test]
fn bad_alignment() {
    assert_at(
        &err(&format!("{HEADER}.global .align 3 .b8 x[4];")),
        4,
        16,
        "not a power of two",
    );
}

#[test]
fn entry_with_return_values() {
    assert_at(
        &err(&format!("{HEADER}.entry (.param .b32 r) k() {{ ret; }}")),
        4,
        8,
        "cannot have return values",
    );
}

#[test]
fn stray_directive_in_body() {
    assert_at(
        &body_err("\t.version 7.5"),
        6,
        2,
        "unexpected directive `.version`",
    );
}

#[test]
fn header_after_items() {
    assert_at(
        &err(&format!("{HEADER}.global .u32 x;\n.target sm_90")),
        5,
        1,
        "must come before",
    );
}

#[test]
fn unterminated_section() {
    assert_at(
        &err(&format!("{HEADER}.section .debug_info {{ .b8 1")),
        4,
        22,
        "unterminated section",
    );
}

#[test]
fn bad_address() {
    assert_at(
        &body_err("\tld.u32 %r1, [%rd1 + %rd2];"),
        6,
        22,
        "an integer offset",
    );
}

#[test]
fn too_deep_scopes() {
    let body = "{".repeat(100_000);
    let e = body_err(&body);
    assert!(e.message.contains("nested too deeply"), "{e}");
    assert_eq!(e.line, 6);
}

#[test]
fn too_deep_initializer() {
    let e = err(&format!(
        "{HEADER}.global .u32 x[1] = {};",
        "{".repeat(100_000)
    ));
    assert!(e.message.contains("nested too deeply"), "{e}");
}

#[test]
fn empty_input() {
    assert_at(&err(""), 1, 1, "`.version`");
}
