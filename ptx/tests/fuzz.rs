//! Property tests: the parser never panics, and whatever parses also
//! survives print → parse unchanged.

use std::path::Path;
use std::sync::OnceLock;

use prlx_ptx::*;
use proptest::prelude::*;

fn samples() -> &'static Vec<String> {
    static SAMPLES: OnceLock<Vec<String>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ptx-samples");
        let mut texts = Vec::new();
        for dir in ["clang", "nvcc", "triton"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                if p.extension().is_some_and(|x| x == "ptx") {
                    texts.push(std::fs::read_to_string(&p).unwrap());
                }
            }
        }
        assert!(
            !texts.is_empty(),
            "no samples found under {}",
            root.display()
        );
        texts
    })
}

/// Parses `src`; if it parses, checks the round trip.
fn check(src: &str) {
    if let Ok(m) = parse(src, "fuzz.ptx") {
        let printed = m.to_string();
        match parse(&printed, "printed.ptx") {
            Ok(again) => assert!(
                same_module(&m, &again),
                "round trip changed:\n{src}\n---\n{printed}"
            ),
            Err(e) => panic!("printed module does not parse: {e}\n{src}\n---\n{printed}"),
        }
    }
}

const TOKENS: &[&str] = &[
    ".version 7.5\n",
    ".target sm_80\n",
    ".address_size 64\n",
    ".entry",
    ".func",
    ".visible",
    ".extern",
    ".param",
    ".reg",
    ".b32",
    ".u64",
    ".pred",
    ".f32",
    ".v4",
    ".align",
    ".global",
    ".shared",
    ".local",
    ".loc",
    ".file",
    ".section",
    ".pragma",
    ".callprototype",
    ".maxntid",
    "%r1",
    "%rd<4>",
    "%tid.x",
    "%p1",
    "$L__BB0_1",
    "k",
    "_",
    "call",
    "ld",
    "st",
    "add",
    "bra",
    "setp",
    "ret",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ";",
    ":",
    "@",
    "!",
    "|",
    "+",
    "-",
    "=",
    "<",
    ">",
    "0",
    "4",
    "0x10",
    "0f3F800000",
    "0d3FF0000000000000",
    "1.5",
    "\"s\"",
    "generic",
    "//c\n",
    "/*c*/",
    " ",
    "\n",
    "\t",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..80).prop_map(|t| {
        let mut s = String::from(".version 7.5\n.target sm_80\n");
        for (i, tok) in t.iter().enumerate() {
            s.push_str(tok);
            if i % 3 == 0 {
                s.push(' ');
            }
        }
        s
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, &'static str),
    Replace(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..20usize).prop_map(|(p, n)| Mutation::Delete(p, n)),
        (any::<usize>(), prop::sample::select(TOKENS)).prop_map(|(p, t)| Mutation::Insert(p, t)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Replace(p, b)),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for m in muts {
        if bytes.is_empty() {
            break;
        }
        match *m {
            Mutation::Delete(p, n) => {
                let p = p % bytes.len();
                let end = (p + n).min(bytes.len());
                bytes.drain(p..end);
            }
            Mutation::Insert(p, t) => {
                let p = p % (bytes.len() + 1);
                bytes.splice(p..p, t.bytes());
            }
            Mutation::Replace(p, b) => {
                let p = p % bytes.len();
                bytes[p] = b;
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        check(&text);
        check(&format!(".version 7.5\n{text}"));
    }

    #[test]
    fn token_soup_never_panics(src in soup()) {
        check(&src);
    }

    #[test]
    fn mutated_samples_never_panic(which in any::<usize>(), muts in prop::collection::vec(mutation(), 1..6)) {
        let s = samples();
        check(&apply(&s[which % s.len()], &muts));
    }

    #[test]
    fn truncated_samples_never_panic(which in any::<usize>(), cut in any::<usize>()) {
        let s = samples();
        let text = &s[which % s.len()];
        let mut cut = cut % (text.len() + 1);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        check(&text[..cut]);
    }
}

// ---- generated instructions round trip ---------------------------------------

fn ident() -> impl Strategy<Value = String> {
    "[a-zA-Z$][a-zA-Z0-9_$]{0,8}".prop_filter("not the sink or a keyword", |s| s != "generic")
}

fn register() -> impl Strategy<Value = Register> {
    (
        "%[a-z][a-z0-9_]{0,5}",
        prop::option::of(prop_oneof![
            Just(Component::X),
            Just(Component::Y),
            Just(Component::Z),
            Just(Component::W)
        ]),
    )
        .prop_map(|(name, component)| Register { name, component })
}

fn immediate() -> impl Strategy<Value = Immediate> {
    prop_oneof![
        any::<i64>().prop_map(Immediate::Int),
        ((i64::MAX as u64 + 1)..=u64::MAX).prop_map(Immediate::UInt),
        any::<u32>().prop_map(Immediate::F32Bits),
        any::<u64>().prop_map(Immediate::F64Bits),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(Immediate::Decimal),
    ]
}

/// `with_trailing`: whether addresses may carry texture-style trailing
/// operands (only at the top level, as in real PTX).
fn scalar_operand(with_trailing: bool) -> impl Strategy<Value = Operand> {
    let max_trailing = if with_trailing { 3 } else { 1 };
    prop_oneof![
        register().prop_map(Operand::Register),
        register().prop_map(Operand::Not),
        immediate().prop_map(Operand::Immediate),
        ident().prop_map(Operand::Symbol),
        Just(Operand::Sink),
        (register(), register()).prop_map(|(a, b)| Operand::PredicatePair(a, b)),
        (
            prop_oneof![
                register().prop_map(AddressBase::Register),
                ident().prop_map(AddressBase::Symbol),
                any::<u64>().prop_map(AddressBase::Immediate),
            ],
            any::<i64>(),
            prop::collection::vec(
                prop_oneof![
                    register().prop_map(Operand::Register),
                    ident().prop_map(Operand::Symbol),
                    prop::collection::vec(register().prop_map(Operand::Register), 1..4)
                        .prop_map(Operand::Vector),
                ],
                0..max_trailing
            )
        )
            .prop_map(|(base, offset, trailing)| Operand::Address(Address {
                base,
                offset,
                trailing
            })),
    ]
}

fn operand() -> impl Strategy<Value = Operand> {
    prop_oneof![
        4 => scalar_operand(true),
        1 => prop::collection::vec(scalar_operand(false), 1..5).prop_map(Operand::Vector),
        1 => prop::collection::vec(scalar_operand(false), 0..4).prop_map(Operand::List),
    ]
}

fn instruction() -> impl Strategy<Value = Instruction> {
    (
        prop::option::of((register(), any::<bool>())),
        "[a-z][a-z0-9_]{0,6}",
        prop::collection::vec("\\.[a-zA-Z0-9_]{1,6}(::[a-zA-Z0-9_]{1,4})?", 0..5),
        prop::collection::vec(operand(), 0..5),
    )
        .prop_map(|(guard, opcode, modifiers, operands)| Instruction {
            guard: guard.map(|(mut register, negated)| {
                register.component = None;
                Guard { register, negated }
            }),
            opcode,
            modifiers,
            operands,
            span: Span::default(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn generated_instructions_round_trip(insts in prop::collection::vec(instruction(), 1..8)) {
        let module = Module {
            version: Version { major: 8, minor: 0 },
            target: vec!["sm_80".into()],
            address_size: Some(64),
            items: vec![Item::Function(Function {
                linkage: Linkage::Visible,
                kind: FunctionKind::Entry,
                name: "k".into(),
                returns: vec![],
                params: vec![],
                directives: vec![],
                body: Some(insts.into_iter().map(Statement::Instruction).collect()),
                span: Span::default(),
            })],
        };
        let printed = module.to_string();
        let parsed = parse(&printed, "gen.ptx").map_err(|e| TestCaseError::fail(format!("{e}\n{printed}")))?;
        prop_assert!(same_module(&module, &parsed), "{}\n{:?}", printed, parsed);
    }
}
