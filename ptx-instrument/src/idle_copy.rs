//! The idle copy: an instrumented function keeps its body as compiled, and
//! runs it instead of the instrumented one when its module is not being
//! captured.
//!
//! A fixed test at the function's start reads `__prlx_desc`'s `armed` word
//! ([`crate::runtime::ARMED_OFFSET`]: the host sets it whenever it sets
//! `trace` or the launch-table count of [`crate::runtime::LAUNCH_TABLE`],
//! and clears it with both) and, when it is zero, branches once, uniformly,
//! to a copy of the original body placed after the instrumented one. An idle
//! call then costs that test (3 warp instructions: load, compare, branch, as
//! the pass's test of `trace`) however many sites it visits; the descriptor and
//! warp-slot set-up and every probe run only when the module records. The
//! price is code size: the function's body twice.
//!
//! The copy is the original text from the body's first statement after its
//! declarations to its closing brace, with every label, `.branchtargets`
//! and `.callprototype` name it defines renamed (`X` → `X__prlx_idle`) so the
//! two bodies' names do not clash; registers are shared (the two bodies
//! never run in one call), and declarations in `{ }` scopes are the copy's
//! own. A function whose copy would redeclare something at function scope,
//! or duplicate a `.shared` variable, is left without one.

use std::collections::HashSet;

use prlx_ptx::{StateSpace, Statement};

use crate::runtime::{ARMED_OFFSET, DESCRIPTOR};

/// Appended to every name the copy defines.
pub const SUFFIX: &str = "__prlx_idle";

/// What to splice into a function for its idle copy.
pub struct IdleCopy {
    /// The test, to insert at the body's start (before the recording set-up).
    pub test: String,
    /// Where the body's closing brace is.
    pub end: usize,
    /// The copy, with its label, to insert at `end`.
    pub body: String,
}

/// The idle copy of a function whose body, `text[start..]` up to its
/// closing brace, holds `copied` (the body's statements from the first one
/// after its leading declarations). `tag` makes its label unique in the
/// module. `Err` says why the function cannot have one. The caller checks
/// once per module that `text` does not contain [`SUFFIX`] (the renamed
/// labels must be new names).
pub fn idle_copy(
    text: &str,
    start: usize,
    copied: &[Statement],
    tag: usize,
) -> Result<IdleCopy, &'static str> {
    if let Some(why) = obstacle(copied) {
        return Err(why);
    }
    let end = closing_brace(text, start).ok_or("no closing brace after the body")?;
    let mut names = HashSet::new();
    defined_names(copied, &mut names);
    let label = format!("$__prlx_idle_body{tag}");
    let test = format!(
        "// prlx: not capturing (descriptor's armed word zero): run the copy at {label}
	.reg .pred 	%prlx_idle_p;
	.reg .b32 	%prlx_idle_n;
	ld.global.u32 	%prlx_idle_n, [{DESCRIPTOR}+{ARMED_OFFSET}];
	setp.ne.u32 	%prlx_idle_p, %prlx_idle_n, 0;
	@!%prlx_idle_p bra.uni 	{label};
	"
    );
    // The instrumented body may end without a `ret` (falling off the end
    // returns): it must not fall into the copy.
    let mut body =
        format!("\tret;\n{label}:\n// prlx: the function as compiled, run when not capturing\n\t");
    rename(&text[start..end], &names, &mut body);
    Ok(IdleCopy { test, end, body })
}

/// Why `copied` cannot be duplicated in place, if it cannot.
fn obstacle(copied: &[Statement]) -> Option<&'static str> {
    for stmt in copied {
        match stmt {
            Statement::Reg(_) | Statement::Var(_) => {
                return Some("a declaration after the body's first statement");
            }
            Statement::Scope(scope) if shares_shared(&scope.body) => {
                return Some("a .shared variable declared in a { } scope");
            }
            _ => {}
        }
    }
    None
}

fn shares_shared(body: &[Statement]) -> bool {
    body.iter().any(|s| match s {
        Statement::Var(v) => v.space == StateSpace::Shared,
        Statement::Scope(scope) => shares_shared(&scope.body),
        _ => false,
    })
}

/// Labels, `.branchtargets` and `.callprototype` names defined in `body`.
fn defined_names<'a>(body: &'a [Statement], names: &mut HashSet<&'a str>) {
    for stmt in body {
        match stmt {
            Statement::Label(l) => {
                names.insert(&l.name);
            }
            Statement::BranchTargets(b) => {
                names.insert(&b.name);
            }
            Statement::CallPrototype(c) => {
                names.insert(&c.name);
            }
            Statement::Scope(scope) => defined_names(&scope.body, names),
            _ => {}
        }
    }
}

/// The offset of the `}` closing the block that `text[from..]` is inside,
/// skipping comments, strings and balanced `{ }` (scopes, vector operands).
fn closing_brace(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at += text[at..].find('\n').unwrap_or(text.len() - at);
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at += 2 + text[at + 2..].find("*/")? + 1;
            }
            b'"' => at += 1 + text[at + 1..].find('"')?,
            b'{' => depth += 1,
            b'}' if depth == 0 => return Some(at),
            b'}' => depth -= 1,
            _ => {}
        }
        at += 1;
    }
    None
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || matches!(b, b'_' | b'$' | b'%')
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$')
}

/// Appends `code` to `out` with every identifier in `names` suffixed
/// ([`SUFFIX`]); comments, strings, numbers and `.directives` unchanged.
fn rename(code: &str, names: &HashSet<&str>, out: &mut String) {
    let bytes = code.as_bytes();
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        let skip_to = if b == b'/' && bytes.get(at + 1) == Some(&b'/') {
            at + code[at..].find('\n').unwrap_or(code.len() - at)
        } else if b == b'/' && bytes.get(at + 1) == Some(&b'*') {
            code[at + 2..]
                .find("*/")
                .map_or(code.len(), |e| at + 2 + e + 2)
        } else if b == b'"' {
            code[at + 1..]
                .find('"')
                .map_or(code.len(), |e| at + 1 + e + 1)
        } else if is_ident_start(b) || b.is_ascii_digit() || b == b'.' {
            let len = 1 + bytes[at + 1..].iter().take_while(|c| is_ident(**c)).count();
            let word = &code[at..at + len];
            if is_ident_start(b) && names.contains(word) {
                out.push_str(&code[copied..at + len]);
                out.push_str(SUFFIX);
                copied = at + len;
            }
            at + len
        } else {
            at + 1
        };
        at = skip_to.max(at + 1);
    }
    out.push_str(&code[copied..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_defined_names_only() {
        let names: HashSet<&str> = ["$L__BB0_1", "LBB2", "prototype_0", "ts"].into();
        let code = "$L__BB0_1: // $L__BB0_1 in a comment\n\tbra.uni $L__BB0_1;\n\t@%p1 bra LBB2;\n\
            \tmov.f32 %f1, 0f3F800000;\n\tts: .branchtargets $L__BB0_1, LBB2;\n\t\
            call (%r1), %rd1, (%r2), prototype_0;\n\t.pragma \"LBB2\";\n\tadd.s32 %r1, %r1, LBB2x;\n";
        let mut out = String::new();
        rename(code, &names, &mut out);
        assert_eq!(
            out,
            "$L__BB0_1__prlx_idle: // $L__BB0_1 in a comment\n\tbra.uni $L__BB0_1__prlx_idle;\n\
             \t@%p1 bra LBB2__prlx_idle;\n\tmov.f32 %f1, 0f3F800000;\n\t\
             ts__prlx_idle: .branchtargets $L__BB0_1__prlx_idle, LBB2__prlx_idle;\n\t\
             call (%r1), %rd1, (%r2), prototype_0__prlx_idle;\n\t.pragma \"LBB2\";\n\t\
             add.s32 %r1, %r1, LBB2x;\n"
        );
    }

    #[test]
    fn finds_the_brace_closing_the_body() {
        let text = "\tmov.u32 %r1, 1; // }\n\t{ .reg .b32 %x; }\n\t/* } */ st.v2.u32 [%rd1], {%r1, %r2};\n\tret;\n}\n.entry next() {}";
        let end = closing_brace(text, 0).unwrap();
        assert_eq!(&text[end..end + 2], "}\n");
        assert!(text[..end].ends_with("ret;\n"));
    }
}
