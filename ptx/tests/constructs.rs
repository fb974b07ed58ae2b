//! The parser's AST for specific constructs, checked field by field.

use prlx_ptx::*;

fn parse_ok(src: &str) -> Module {
    parse(src, "t.ptx").unwrap_or_else(|e| panic!("{e}"))
}

const HEADER: &str = ".version 7.5\n.target sm_80, debug\n.address_size 64\n";

fn body_of(src: &str) -> Vec<Statement> {
    let text = format!("{HEADER}.visible .entry k()\n{{\n{src}\n}}\n");
    let m = parse_ok(&text);
    m.function("k").unwrap().body.clone().unwrap()
}

fn only_instruction(src: &str) -> Instruction {
    match body_of(src).as_slice() {
        [Statement::Instruction(i)] => i.clone(),
        other => panic!("expected one instruction, got {other:?}"),
    }
}

fn reg(name: &str) -> Register {
    Register::new(name)
}

#[test]
fn module_header() {
    let m = parse_ok(HEADER);
    assert_eq!(m.version, Version { major: 7, minor: 5 });
    assert_eq!(m.target, vec!["sm_80".to_string(), "debug".to_string()]);
    assert_eq!(m.address_size, Some(64));
    assert!(m.items.is_empty());
}

#[test]
fn instruction_shape() {
    let i = only_instruction("@!%p1 ld.global.nc.L2::128B.v4.f32 {%f1, %f2, _, %f4}, [%rd1+-16];");
    assert_eq!(
        i.guard,
        Some(Guard {
            register: reg("%p1"),
            negated: true
        })
    );
    assert_eq!(i.opcode, "ld");
    assert_eq!(i.modifiers, [".global", ".nc", ".L2::128B", ".v4", ".f32"]);
    assert_eq!(
        i.operands,
        vec![
            Operand::Vector(vec![
                Operand::Register(reg("%f1")),
                Operand::Register(reg("%f2")),
                Operand::Sink,
                Operand::Register(reg("%f4")),
            ]),
            Operand::Address(Address {
                base: AddressBase::Register(reg("%rd1")),
                offset: -16,
                trailing: vec![],
            }),
        ]
    );
    assert_eq!(i.span, Span::new(6, 1));
}

#[test]
fn special_registers_and_predicates() {
    let i = only_instruction("mov.u32 %r1, %ctaid.y;");
    assert_eq!(
        i.operands[1],
        Operand::Register(Register {
            name: "%ctaid".into(),
            component: Some(Component::Y)
        })
    );
    let i = only_instruction("setp.lt.and.s32 %p1|%p2, %r1, -5, !%p3;");
    assert_eq!(
        i.operands[0],
        Operand::PredicatePair(reg("%p1"), reg("%p2"))
    );
    assert_eq!(i.operands[2], Operand::Immediate(Immediate::Int(-5)));
    assert_eq!(i.operands[3], Operand::Not(reg("%p3")));
}

#[test]
fn immediates() {
    let i = only_instruction(
        "mov.b64 %rd1, 0xFFFFFFFFFFFFFFFF, 0f3F800000, 0d3FF8000000000000, 1.5, 017, 0b101, 42U, -9223372036854775808;",
    );
    assert_eq!(
        i.operands[1..],
        [
            Operand::Immediate(Immediate::UInt(u64::MAX)),
            Operand::Immediate(Immediate::F32Bits(0x3F80_0000)),
            Operand::Immediate(Immediate::F64Bits(0x3FF8_0000_0000_0000)),
            Operand::Immediate(Immediate::Decimal(1.5)),
            Operand::Immediate(Immediate::Int(0o17)),
            Operand::Immediate(Immediate::Int(5)),
            Operand::Immediate(Immediate::Int(42)),
            Operand::Immediate(Immediate::Int(i64::MIN)),
        ]
    );
}

#[test]
fn addresses() {
    let i = only_instruction("ld.param.u64 %rd1, [k_param_0+8], [0x100], [smem];");
    assert_eq!(
        i.operands[1..],
        [
            Operand::Address(Address {
                base: AddressBase::Symbol("k_param_0".into()),
                offset: 8,
                trailing: vec![],
            }),
            Operand::Address(Address {
                base: AddressBase::Immediate(0x100),
                offset: 0,
                trailing: vec![],
            }),
            Operand::Address(Address {
                base: AddressBase::Symbol("smem".into()),
                offset: 0,
                trailing: vec![],
            }),
        ]
    );
}

#[test]
fn clang_callseq_and_indirect_call() {
    let body = body_of(
        "{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r5;
	.param .b32 retval0;
	prototype_3 : .callprototype (.param .b32 _) _ (.param .b32 _, .param .b64 _);
	call (retval0),
	%rd13,
	(
	param0
	)
	, prototype_3;
	call.uni f, ();
	call.uni g;
	}",
    );
    let [Statement::Scope(scope)] = body.as_slice() else {
        panic!("expected a scope: {body:?}");
    };
    assert!(
        matches!(&scope.body[0], Statement::Var(v) if v.space == StateSpace::Param && v.name == "param0")
    );
    let Statement::CallPrototype(proto) = &scope.body[3] else {
        panic!("expected a prototype: {:?}", scope.body[3]);
    };
    assert_eq!(proto.name, "prototype_3");
    assert_eq!(proto.returns.len(), 1);
    assert_eq!(
        proto.params.iter().map(|p| p.ty).collect::<Vec<_>>(),
        [ScalarType::B32, ScalarType::B64]
    );
    let Statement::Instruction(call) = &scope.body[4] else {
        panic!()
    };
    let form = call.as_call().unwrap();
    assert_eq!(form.returns, [Operand::Symbol("retval0".into())]);
    assert_eq!(form.target, &Operand::Register(reg("%rd13")));
    assert_eq!(form.args, [Operand::Symbol("param0".into())]);
    assert_eq!(form.prototype, Some("prototype_3"));
    let Statement::Instruction(direct) = &scope.body[5] else {
        panic!()
    };
    let form = direct.as_call().unwrap();
    assert!(form.returns.is_empty() && form.args.is_empty() && form.prototype.is_none());
    assert_eq!(form.target, &Operand::Symbol("f".into()));
    let Statement::Instruction(bare) = &scope.body[6] else {
        panic!()
    };
    assert_eq!(bare.as_call().unwrap().target, &Operand::Symbol("g".into()));
}

#[test]
fn triton_inline_asm_scope() {
    let body = body_of(
        "{
	.reg .pred %p1;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 st.global.v2.b32 [ %rd1 + 0 ], { %r2, %r3 };
	}",
    );
    let [Statement::Scope(scope)] = body.as_slice() else {
        panic!("{body:?}")
    };
    let Statement::Reg(r) = &scope.body[0] else {
        panic!()
    };
    assert_eq!(r.ty, ScalarType::Pred);
    assert_eq!(
        r.names,
        [RegName {
            name: "%p1".into(),
            range: None
        }]
    );
    assert_eq!(scope.body.len(), 3);
}

#[test]
fn declarations() {
    let body = body_of(
        ".reg .b32 %r<10>, %tmp;
	.reg .v2 .f32 %v<2>;
	.local .align 8 .b8 __local_depot0[32];
	.shared .align 4 .b8 sdata[1024];",
    );
    let Statement::Reg(r) = &body[0] else {
        panic!()
    };
    assert_eq!(
        r.names,
        [
            RegName {
                name: "%r".into(),
                range: Some(10)
            },
            RegName {
                name: "%tmp".into(),
                range: None
            }
        ]
    );
    let Statement::Reg(v) = &body[1] else {
        panic!()
    };
    assert_eq!((v.vector, v.ty), (Some(2), ScalarType::F32));
    let Statement::Var(local) = &body[2] else {
        panic!()
    };
    assert_eq!(
        (
            local.space,
            local.align,
            local.ty,
            local.array_dims.as_slice()
        ),
        (
            StateSpace::Local,
            Some(8),
            ScalarType::B8,
            [Some(32)].as_slice()
        )
    );
}

#[test]
fn module_items() {
    let m = parse_ok(&format!(
        r#"{HEADER}
.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.extern .shared .align 16 .b8 global_smem[];
.visible .global .align 8 .u64 ptrs[2] = {{generic(table), generic(table)+8}};
.global .attribute(.managed) .align 4 .u32 managed_x = 7;
.const .align 4 .f32 k = 0f3F800000;
.global .align 1 .b8 nested[2][2] = {{{{1, 2}}, {{3, 4}}}};
.weak .func (.reg .b32 r) w(.reg .b32 a) .noreturn {{ ret; }}
.entry e(.param .u64 .ptr .global .align 16 e_param_0, .param .align 8 .b8 e_param_1[16])
.maxntid 256, 1, 1
.minnctapersm 2
.pragma "nounroll";
{{ ret; }}
.pragma "nounroll";
.file 1 "/src/k.cu", 1700000000, 1234
.file 2 "b\"q.cu"
.section .debug_str {{ $L__info_string0: .b8 107,0 }}
"#
    ));
    let f = m.function("vprintf").unwrap();
    assert_eq!(
        (f.linkage, f.kind, f.body.is_none()),
        (Linkage::Extern, FunctionKind::Func, true)
    );
    assert_eq!(f.returns[0].name, "func_retval0");
    assert_eq!(f.params.len(), 2);

    let vars: Vec<&VarDecl> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Variable(v) => Some(v),
            _ => None,
        })
        .collect();
    assert_eq!(
        (vars[0].linkage, vars[0].array_dims.as_slice()),
        (Linkage::Extern, [None].as_slice())
    );
    assert_eq!(
        vars[1].init,
        Some(Initializer::List(vec![
            Initializer::Generic {
                name: "table".into(),
                offset: 0
            },
            Initializer::Generic {
                name: "table".into(),
                offset: 8
            },
        ]))
    );
    assert_eq!(vars[2].attributes, ["managed"]);
    assert_eq!(
        vars[2].init,
        Some(Initializer::Immediate(Immediate::Int(7)))
    );
    assert_eq!(
        vars[3].init,
        Some(Initializer::Immediate(Immediate::F32Bits(0x3F80_0000)))
    );
    assert_eq!(vars[4].array_dims, [Some(2), Some(2)]);
    assert!(matches!(&vars[4].init, Some(Initializer::List(rows)) if rows.len() == 2));

    let w = m.function("w").unwrap();
    assert_eq!(w.linkage, Linkage::Weak);
    assert_eq!(w.returns[0].space, ParamSpace::Reg);
    assert_eq!(w.directives, [FunctionDirective::NoReturn]);

    let e = m.function("e").unwrap();
    assert_eq!(e.kind, FunctionKind::Entry);
    assert_eq!(
        e.params[0].ptr,
        Some(PtrAttr {
            space: Some(StateSpace::Global),
            align: Some(16)
        })
    );
    assert_eq!(
        (e.params[1].align, e.params[1].array_dims.as_slice()),
        (Some(8), [Some(16)].as_slice())
    );
    assert_eq!(
        e.directives,
        [
            FunctionDirective::MaxNTid(vec![256, 1, 1]),
            FunctionDirective::MinNCtaPerSm(2),
            FunctionDirective::Pragma(vec!["nounroll".into()]),
        ]
    );
    let files: Vec<&FileDirective> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::File(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(
        (files[0].timestamp, files[0].size),
        (Some(1_700_000_000), Some(1234))
    );
    assert_eq!(files[1].path, "b\"q.cu");
    let Some(Item::Section(s)) = m.items.last() else {
        panic!()
    };
    assert_eq!(
        (s.name.as_str(), s.raw.as_str()),
        (".debug_str", " $L__info_string0: .b8 107,0 ")
    );
    assert!(
        m.items
            .iter()
            .any(|i| matches!(i, Item::Pragma(p) if p.values == ["nounroll"]))
    );

    // And the whole thing round-trips.
    let again = parse(&m.to_string(), "printed.ptx").unwrap_or_else(|e| panic!("{e}\n{m}"));
    assert!(same_module(&m, &again));
}

#[test]
fn loc_with_inlining() {
    let body = body_of(".loc 1 5 3, function_name $L__info_string0, inlined_at 1 10 5\n.loc 2 7 0");
    assert_eq!(
        body[0],
        Statement::Loc(Loc {
            file: 1,
            line: 5,
            col: 3,
            inlined: Some(InlinedAt {
                function_name: "$L__info_string0".into(),
                file: 1,
                line: 10,
                col: 5
            }),
            span: Span::new(6, 1),
        })
    );
    assert!(matches!(&body[1], Statement::Loc(l) if l.inlined.is_none() && l.line == 7));
}

#[test]
fn labels_and_branch_targets() {
    let body = body_of(
        "$L__BB0_2: bra.uni $L__BB0_2;\nts: .branchtargets $L__BB0_2, $L__BB0_3;\nbrx.idx %r1, ts;",
    );
    assert_eq!(
        body[0],
        Statement::Label(Label {
            name: "$L__BB0_2".into(),
            span: Span::new(6, 1)
        })
    );
    let Statement::Instruction(bra) = &body[1] else {
        panic!()
    };
    assert_eq!(bra.span, Span::new(6, 12));
    assert_eq!(bra.operands, [Operand::Symbol("$L__BB0_2".into())]);
    assert!(matches!(&body[2], Statement::BranchTargets(b) if b.labels.len() == 2));
}

#[test]
fn source_map_follows_loc() {
    let src = format!(
        "{HEADER}.entry k()\n{{\n\tmov.u32 %r1, 0;\n\t.loc 1 4 2\n\tadd.s32 %r1, %r1, 1;\n\t{{\n\tret;\n\t}}\n\t.loc 1 0 2\n\texit;\n}}\n.file 1 \"/src/k.cu\"\n"
    );
    let m = parse_ok(&src);
    let map = SourceMap::new(&m);
    assert_eq!(map.lookup(Span::new(6, 2)), None, "before any .loc");
    let add = map.lookup(Span::new(8, 2)).unwrap();
    assert_eq!(
        (add.path.as_deref(), add.line, add.col),
        (Some("/src/k.cu"), 4, 2)
    );
    let ret = map.lookup(Span::new(10, 2)).unwrap();
    assert_eq!(ret.line, 4, "a .loc applies inside nested scopes");
    assert_eq!(map.lookup(Span::new(13, 2)), None, "line 0 means no source");
}

#[test]
fn source_map_on_real_debug_sample() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/ptx-samples/clang/debug_loop-line-tables.ptx");
    let m = parse_file(&path).unwrap();
    let map = SourceMap::new(&m);
    let f = m.function("debug_loop").unwrap();
    let mut mapped = 0;
    for s in f.body.as_ref().unwrap() {
        if let Statement::Instruction(i) = s
            && let Some(loc) = map.lookup(i.span)
        {
            assert_eq!(
                loc.path.as_deref(),
                Some("tests/ptx-samples/src/debug_loop.cu")
            );
            assert!((1..=25).contains(&loc.line), "{loc:?}");
            mapped += 1;
        }
    }
    assert!(mapped > 5, "only {mapped} instructions mapped");
}

#[test]
fn texture_operands() {
    let i = only_instruction("tex.2d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd1, {%f2, %f3}];");
    assert_eq!(
        i.operands[1],
        Operand::Address(Address {
            base: AddressBase::Register(reg("%rd1")),
            offset: 0,
            trailing: vec![Operand::Vector(vec![
                Operand::Register(reg("%f2")),
                Operand::Register(reg("%f3"))
            ])],
        })
    );
    let i = only_instruction("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex0, smp0, {%f5, %f6}];");
    let Operand::Address(a) = &i.operands[1] else {
        panic!()
    };
    assert_eq!(a.base, AddressBase::Symbol("tex0".into()));
    assert_eq!(a.trailing[0], Operand::Symbol("smp0".into()));
}

/// Registers declared without `%` are registers wherever they are used:
/// operands, guards, addresses, predicate pairs, negations, vector lists and
/// component selectors; names that are not declared stay symbols.
#[test]
fn registers_without_percent() {
    let body = body_of(
        ".reg .u64 in_addr;\n.reg .pred p, q;\n.reg .b32 r<3>;\n.reg .v4 .f32 v;\n\
         ld.param.u64 in_addr, [in_addr_param];\n\
         @!p ld.global.u32 r0, [in_addr+8];\n\
         setp.lt.u32 p|q, r1, r2;\n\
         selp.b32 r2, r0, r1, !q;\n\
         mov.f32 v.x, v.a;\n\
         mov.b32 r3, r2;\n\
         { .reg .b32 inner; mov.b32 inner, r0; }\n\
         mov.b32 r1, inner;",
    );
    let insts: Vec<&Instruction> = body
        .iter()
        .filter_map(|s| match s {
            Statement::Instruction(i) => Some(i),
            _ => None,
        })
        .collect();
    assert_eq!(
        insts[0].operands,
        vec![
            Operand::Register(reg("in_addr")),
            Operand::Address(Address {
                base: AddressBase::Symbol("in_addr_param".into()),
                offset: 0,
                trailing: vec![],
            }),
        ]
    );
    assert_eq!(
        insts[1].guard,
        Some(Guard {
            register: reg("p"),
            negated: true
        })
    );
    assert_eq!(
        insts[1].operands[1],
        Operand::Address(Address {
            base: AddressBase::Register(reg("in_addr")),
            offset: 8,
            trailing: vec![],
        })
    );
    assert_eq!(
        insts[2].operands[0],
        Operand::PredicatePair(reg("p"), reg("q"))
    );
    assert_eq!(insts[3].operands[3], Operand::Not(reg("q")));
    let comp = |c| Register {
        name: "v".into(),
        component: Some(c),
    };
    assert_eq!(
        insts[4].operands,
        vec![
            Operand::Register(comp(Component::X)),
            Operand::Register(comp(Component::W))
        ]
    );
    // `r<3>` declares r0..r2: `r3` is not a register.
    assert_eq!(insts[5].operands[0], Operand::Symbol("r3".into()));
    // A scope's registers end with the scope.
    assert_eq!(insts[6].operands[1], Operand::Symbol("inner".into()));
    // Printing keeps the names, and the printed text parses to the same tree.
    let src = format!(
        "{HEADER}.visible .func (.reg .b32 out) f(.reg .b32 a, .reg .b32 b)\n{{\nadd.s32 out, a, b;\nret;\n}}\n"
    );
    let m = parse_ok(&src);
    let f = m.function("f").unwrap();
    let add = f.instructions().next().unwrap();
    assert_eq!(add.operands[0], Operand::Register(reg("out")));
    assert_eq!(add.operands[2], Operand::Register(reg("b")));
    let again = parse_ok(&m.to_string());
    assert!(same_module(&m, &again));
}

/// `arr[i]` without an address's brackets (`ld.const.b16 r, arr[2];`, which
/// ptxas accepts) is the address of element `i`: `[arr + i * element size]`,
/// the size from the variable's type and vector count.
#[test]
fn array_element_operand() {
    let text = format!(
        "{HEADER}.const .b16 halves[4] = {{1, 2, 3, 4}};\n.global .v2 .u32 pairs[3];\n\
         .visible .entry k()\n{{\n.reg .b16 %h;\n.reg .u32 %r;\n\
         ld.const.b16 %h, halves[3];\nld.global.u32 %r, pairs[2];\n}}\n"
    );
    let m = parse_ok(&text);
    let body = m.function("k").unwrap().body.clone().unwrap();
    let addrs: Vec<Operand> = body
        .iter()
        .filter_map(|s| match s {
            Statement::Instruction(i) => Some(i.operands[1].clone()),
            _ => None,
        })
        .collect();
    let at = |name: &str, offset: i64| {
        Operand::Address(Address {
            base: AddressBase::Symbol(name.to_string()),
            offset,
            trailing: Vec::new(),
        })
    };
    assert_eq!(addrs, [at("halves", 6), at("pairs", 16)]);
    let err = parse(
        &format!(
            "{HEADER}.visible .entry k()\n{{\n.reg .b16 %h;\nld.const.b16 %h, nowhere[1];\n}}\n"
        ),
        "t.ptx",
    )
    .unwrap_err();
    assert!(err.to_string().contains("nowhere"), "{err}");
}

/// A register plus or minus an immediate as a source operand (`st.u64 [a],
/// %rd + 1;`, which ptxas accepts: ZLUDA's `reg_local` case ran on NVIDIA
/// GPUs) is the register with its offset, and prints back as itself.
#[test]
fn register_plus_immediate_source_operand() {
    let text = format!(
        "{HEADER}.visible .entry k()\n{{\n.local .b64 x;\n.reg .b64 %rd;\n\
         st.local.u64 [x], %rd + 1;\nst.local.u64 [x], %rd - 8;\nst.local.u64 [x], %rd+-2;\n}}\n"
    );
    let m = parse(&text, "t.ptx").unwrap();
    let k = m.function("k").unwrap();
    let offsets: Vec<_> = k
        .instructions()
        .map(|i| match &i.operands[1] {
            Operand::RegisterOffset(r, o) => (r.name.clone(), *o),
            other => panic!("not a register offset: {other:?}"),
        })
        .collect();
    assert_eq!(
        offsets,
        [
            ("%rd".to_string(), 1),
            ("%rd".to_string(), -8),
            ("%rd".to_string(), -2)
        ]
    );
    let printed = m.to_string();
    assert!(
        printed.contains("%rd+1;") && printed.contains("%rd-8;"),
        "{printed}"
    );
    let again = parse(&printed, "t.ptx").unwrap();
    assert!(same_module(&m, &again));
}

/// Forms that stay invalid: the offset form as the first operand (a
/// destination, or a store's address written without brackets), and an
/// offset that is not an integer.
#[test]
fn register_plus_immediate_is_refused_where_invalid() {
    let first = format!(
        "{HEADER}.visible .entry k()\n{{\n.reg .b64 %rd<2>;\nadd.u64 %rd0 + 1, %rd1, 2;\n}}\n"
    );
    let err = parse(&first, "t.ptx").unwrap_err().to_string();
    assert!(err.contains("only a source operand"), "{err}");
    let register = format!(
        "{HEADER}.visible .entry k()\n{{\n.reg .b64 %rd<2>;\nadd.u64 %rd0, %rd1 + %rd0, 2;\n}}\n"
    );
    let err = parse(&register, "t.ptx").unwrap_err().to_string();
    assert!(err.contains("integer offset"), "{err}");
}
