//! Randomly generated modules (every AST node kind) survive print → parse.

use prlx_ptx::*;
use proptest::prelude::*;

fn ident() -> impl Strategy<Value = String> {
    "[a-zA-Z$][a-zA-Z0-9_$]{0,8}".prop_filter("reserved", |s| s != "generic")
}

fn scalar_type() -> impl Strategy<Value = ScalarType> {
    use ScalarType::*;
    prop::sample::select(vec![
        B8, B16, B32, B64, B128, U8, U16, U32, U64, S8, S16, S32, S64, F16, F16x2, BF16, BF16x2,
        TF32, F32, F64, E4M3, E5M2, E4M3x2, E5M2x2, Pred, TexRef, SamplerRef, SurfRef,
    ])
}

fn space() -> impl Strategy<Value = StateSpace> {
    use StateSpace::*;
    prop::sample::select(vec![Const, Global, Local, Param, Shared, Tex])
}

fn linkage() -> impl Strategy<Value = Linkage> {
    prop::sample::select(vec![
        Linkage::None,
        Linkage::Visible,
        Linkage::Extern,
        Linkage::Weak,
        Linkage::Common,
    ])
}

fn align() -> impl Strategy<Value = Option<u32>> {
    prop::option::of((0u32..8).prop_map(|p| 1 << p))
}

fn vector() -> impl Strategy<Value = Option<u32>> {
    prop::option::of(prop::sample::select(vec![2u32, 4, 8]))
}

fn dims() -> impl Strategy<Value = Vec<Option<u64>>> {
    prop::collection::vec(prop::option::of(any::<u64>()), 0..3)
}

fn text() -> impl Strategy<Value = String> {
    // Any characters but newlines (a string literal cannot span lines).
    "[^\n]{0,12}"
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

fn initializer() -> impl Strategy<Value = Initializer> {
    let leaf = prop_oneof![
        immediate().prop_map(Initializer::Immediate),
        (ident(), any::<i64>()).prop_map(|(name, offset)| Initializer::Symbol { name, offset }),
        (ident(), any::<i64>()).prop_map(|(name, offset)| Initializer::Generic { name, offset }),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop::collection::vec(inner, 0..4).prop_map(Initializer::List)
    })
}

fn var_decl(allow_linkage: bool) -> impl Strategy<Value = VarDecl> {
    (
        linkage(),
        space(),
        prop::collection::vec("[a-z]{1,8}", 0..2),
        align(),
        vector(),
        scalar_type(),
        ident(),
        dims(),
        prop::option::of(initializer()),
    )
        .prop_map(
            move |(linkage, space, attributes, align, vector, ty, name, array_dims, init)| {
                VarDecl {
                    linkage: if allow_linkage {
                        linkage
                    } else {
                        Linkage::None
                    },
                    space,
                    attributes,
                    align,
                    vector,
                    ty,
                    name,
                    array_dims,
                    init,
                    span: Span::default(),
                }
            },
        )
}

fn param() -> impl Strategy<Value = Param> {
    (
        prop::sample::select(vec![ParamSpace::Param, ParamSpace::Reg]),
        align(),
        vector(),
        scalar_type(),
        prop::option::of(
            (prop::option::of(space()), align())
                .prop_map(|(space, align)| PtrAttr { space, align }),
        ),
        prop_oneof![ident(), Just("_".to_string())],
        dims(),
    )
        .prop_map(|(space, align, vector, ty, ptr, name, array_dims)| Param {
            space,
            align,
            vector,
            ty,
            ptr,
            name,
            array_dims,
            span: Span::default(),
        })
}

fn register() -> impl Strategy<Value = Register> {
    "%[a-z][a-z0-9_]{0,5}".prop_map(Register::new)
}

fn simple_statement() -> impl Strategy<Value = Statement> {
    let span = Span::default();
    prop_oneof![
        (
            align(),
            vector(),
            scalar_type(),
            prop::collection::vec(("%[a-z]{1,4}", prop::option::of(any::<u32>())), 1..4)
        )
            .prop_map(move |(align, vector, ty, names)| Statement::Reg(RegDecl {
                align,
                vector,
                ty,
                names: names
                    .into_iter()
                    .map(|(name, range)| RegName { name, range })
                    .collect(),
                span,
            })),
        var_decl(false).prop_map(Statement::Var),
        ident().prop_map(move |name| Statement::Label(Label { name, span })),
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            prop::option::of((ident(), any::<u32>(), any::<u32>(), any::<u32>()))
        )
            .prop_map(move |(file, line, col, inl)| Statement::Loc(Loc {
                file,
                line,
                col,
                inlined: inl.map(|(function_name, file, line, col)| InlinedAt {
                    function_name,
                    file,
                    line,
                    col
                }),
                span,
            })),
        prop::collection::vec(text(), 1..3)
            .prop_map(move |values| Statement::Pragma(Pragma { values, span })),
        (
            ident(),
            prop::collection::vec(param(), 0..3),
            prop::collection::vec(param(), 0..3),
            any::<bool>()
        )
            .prop_map(
                move |(name, returns, params, noreturn)| Statement::CallPrototype(CallPrototype {
                    name,
                    returns,
                    params,
                    noreturn,
                    span,
                })
            ),
        (ident(), prop::collection::vec(ident(), 1..4)).prop_map(move |(name, labels)| {
            Statement::BranchTargets(BranchTargets { name, labels, span })
        }),
        (
            prop::option::of((register(), any::<bool>())),
            "[a-z][a-z0-9_]{0,6}",
            prop::collection::vec("\\.[a-z0-9]{1,5}", 0..4),
            prop::collection::vec(register(), 0..4)
        )
            .prop_map(
                move |(guard, opcode, modifiers, regs)| Statement::Instruction(Instruction {
                    guard: guard.map(|(register, negated)| Guard { register, negated }),
                    opcode,
                    modifiers,
                    operands: regs.into_iter().map(Operand::Register).collect(),
                    span,
                })
            ),
    ]
}

fn statement() -> impl Strategy<Value = Statement> {
    simple_statement().prop_recursive(3, 24, 6, |inner| {
        prop::collection::vec(inner, 0..6).prop_map(|body| {
            Statement::Scope(Scope {
                body,
                span: Span::default(),
            })
        })
    })
}

fn directive() -> impl Strategy<Value = FunctionDirective> {
    use FunctionDirective::*;
    let dims = prop::collection::vec(any::<u32>(), 1..=3);
    prop_oneof![
        dims.clone().prop_map(MaxNTid),
        dims.clone().prop_map(ReqNTid),
        dims.prop_map(ReqNCtaPerCluster),
        any::<u32>().prop_map(MinNCtaPerSm),
        any::<u32>().prop_map(MaxNCtaPerSm),
        any::<u32>().prop_map(MaxNReg),
        any::<u32>().prop_map(MaxClusterRank),
        Just(NoReturn),
        Just(ExplicitCluster),
        prop::collection::vec(text(), 1..3).prop_map(Pragma),
    ]
}

fn function() -> impl Strategy<Value = Function> {
    (
        linkage(),
        any::<bool>(),
        ident(),
        prop::collection::vec(param(), 0..3),
        prop::collection::vec(param(), 0..4),
        prop::collection::vec(directive(), 0..3),
        prop::option::of(prop::collection::vec(statement(), 0..8)),
    )
        .prop_map(
            |(linkage, entry, name, returns, params, directives, body)| Function {
                linkage,
                kind: if entry {
                    FunctionKind::Entry
                } else {
                    FunctionKind::Func
                },
                name,
                returns: if entry { Vec::new() } else { returns },
                params,
                directives,
                body,
                span: Span::default(),
            },
        )
}

fn item() -> impl Strategy<Value = Item> {
    let span = Span::default();
    prop_oneof![
        4 => function().prop_map(Item::Function),
        2 => var_decl(true).prop_map(Item::Variable),
        1 => (any::<u32>(), text(), prop::option::of((any::<u64>(), prop::option::of(any::<u64>()))))
            .prop_map(move |(index, path, extra)| Item::File(FileDirective {
                index,
                path,
                timestamp: extra.map(|e| e.0),
                size: extra.and_then(|e| e.1),
                span,
            })),
        1 => ("\\.debug_[a-z]{1,6}", "[a-z0-9 ,.\n$_]{0,40}")
            .prop_map(move |(name, raw)| Item::Section(Section { name, raw, span })),
        1 => prop::collection::vec(text(), 1..3).prop_map(move |values| Item::Pragma(Pragma { values, span })),
    ]
}

fn module() -> impl Strategy<Value = Module> {
    (
        any::<u16>(),
        any::<u16>(),
        prop::collection::vec("[a-z][a-z0-9_]{0,8}", 0..3),
        prop::option::of(prop::sample::select(vec![32u32, 64])),
        prop::collection::vec(item(), 0..6),
    )
        .prop_map(|(major, minor, target, address_size, items)| Module {
            version: Version {
                major: major.into(),
                minor: minor.into(),
            },
            target,
            address_size,
            items,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn generated_modules_round_trip(m in module()) {
        let printed = m.to_string();
        let parsed = parse(&printed, "gen.ptx").map_err(|e| TestCaseError::fail(format!("{e}\n{printed}")))?;
        prop_assert!(same_module(&m, &parsed), "{}\n{:#?}", printed, parsed);
    }
}
