; Inline PTX asm as sites. The asm calls are verbatim from Triton 3.9's
; llir (sm_80 / sm_90): atomics (`atom` returning the value read, `red`
; without a result, scalar / f16x2 / v4), Triton's broadcast of a scalar
; atomic's result through `st.shared::cta`, and `st.global` (a site only with
; -prlx-instrument-global-stores). Function headers are trimmed so LLVM 19
; reads the file too (no ptx_kernel, captures(), barrier.cta).
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=%t.json -prlx-target=nvptx -S %s | %FileCheck %s
; RUN: %python -c "import json,sys; s=json.load(open(sys.argv[1])); print(sorted((e['function'], e['line'], e['kind'], e['ordinal']) for e in s))" %t.json | %FileCheck %s --check-prefix=TABLE
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-target=nvptx -prlx-instrument-global-stores -S %s | %FileCheck %s --check-prefix=GLOBAL
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-target=nvptx -prlx-asm-sites=false -S %s | %FileCheck %s --check-prefix=OFF
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-target=nvptx -prlx-verbose -disable-output %s 2>&1 | %FileCheck %s --check-prefix=VERBOSE
; The same asm in an AMDGPU module is not PTX: never a site.
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-target=amdgcn -S %s | %FileCheck %s --check-prefix=OFF

@global_smem = external addrspace(3) global [0 x i8], align 16

; tl.atomic_add(counter_ptr, 1) on a scalar: thread 0 does the atomic
; (@$3 = tid == 0), stores the ticket to shared memory, all threads read it.
define void @ticket_kernel(ptr addrspace(1) %counter, ptr addrspace(1) %out, i32 %threshold) !dbg !4 {
; CHECK-LABEL: define void @ticket_kernel(
; The guard compare is a Branch site (as before).
; CHECK:      %is_t0 = icmp eq i32 %tid, 0
; CHECK-NEXT: [[Z:%.*]] = zext i1 %is_t0 to i32
; CHECK-NEXT: call void @__prlx_record_branch(i32 {{-?[0-9]+}}, i32 [[Z]])
; The atom's result is recorded after it, only where the guard holds.
; CHECK-NEXT: %ticket = tail call i32 asm sideeffect "mov.u32 $0, 0x0;\0A\09@$3 atom.global.gpu.acq_rel.add.u32
; CHECK-NEXT: br i1 %is_t0, label %[[THEN:[0-9]+]], label %[[JOIN:[0-9]+]], !dbg [[LOC:![0-9]+]]
; CHECK:      [[THEN]]:
; CHECK-NEXT: call void @__prlx_record_atomic(i32 [[AID:-?[0-9]+]], i32 %ticket) #{{[0-9]+}}, !dbg [[LOC]]
; CHECK-NEXT: br label %[[JOIN]], !dbg [[LOC]]
; CHECK:      [[JOIN]]:
; The shared store's value (a <1 x i32>) is recorded before it.
; CHECK-NEXT: %tv = insertelement <1 x i32> poison, i32 %ticket, i64 0
; CHECK-NEXT: br i1 %is_t0, label %[[THEN2:[0-9]+]], label %[[JOIN2:[0-9]+]]
; CHECK:      [[THEN2]]:
; CHECK-NEXT: [[W:%.*]] = bitcast <1 x i32> %tv to i32
; CHECK-NEXT: call void @__prlx_record_shmem_store(i32 {{-?[0-9]+}}, i32 [[W]])
; CHECK:      [[JOIN2]]:
; CHECK-NEXT: tail call void asm sideeffect "@$2 st.shared::cta.b32
; The branch on the ticket; st.global is not a site without the option.
; CHECK:      call void @__prlx_record_branch(
; CHECK-NEXT: br i1 %lt,
; CHECK-NOT:  __prlx_record
; CHECK:      ret void
; GLOBAL-LABEL: define void @ticket_kernel(
; GLOBAL:      call void @__prlx_record_global_store(i32 {{-?[0-9]+}}, i32 %t10)
; GLOBAL-NEXT: br label
; GLOBAL:      tail call void asm sideeffect "@$2 st.global.b32 [ $1 + 0 ], { $0 };", "r,l,b"(i32 %t10,
; GLOBAL:      call void @__prlx_record_global_store(i32 {{-?[0-9]+}}, i32 -1)
  %pid = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !dbg !11
  tail call void @llvm.nvvm.barrier0(), !dbg !12
  %tid = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !12
  %is_t0 = icmp eq i32 %tid, 0, !dbg !12
  %ticket = tail call i32 asm sideeffect "mov.u32 $0, 0x0;\0A\09@$3 atom.global.gpu.acq_rel.add.u32 $0, [ $1 + 0 ], $2;", "=r,l,r,b"(ptr addrspace(1) %counter, i32 1, i1 %is_t0) #1, !dbg !12
  %tv = insertelement <1 x i32> poison, i32 %ticket, i64 0, !dbg !12
  tail call void asm sideeffect "@$2 st.shared::cta.b32 [ $0 + 0 ], $1;", "r,r,b"(ptr addrspace(3) @global_smem, <1 x i32> %tv, i1 %is_t0) #1, !dbg !12
  tail call void @llvm.nvvm.barrier0(), !dbg !12
  %t = load i32, ptr addrspace(3) @global_smem, align 16, !dbg !12
  %lt = icmp slt i32 %t, %threshold, !dbg !13
  %pid64 = zext nneg i32 %pid to i64, !dbg !14
  %optr = getelementptr [4 x i8], ptr addrspace(1) %out, i64 %pid64, !dbg !14
  br i1 %lt, label %then, label %else, !dbg !15

then:
  %t10 = mul i32 %t, 10, !dbg !16
  tail call void asm sideeffect "@$2 st.global.b32 [ $1 + 0 ], { $0 };", "r,l,b"(i32 %t10, ptr addrspace(1) %optr, i1 %is_t0) #1, !dbg !17
  br label %exit, !dbg !15

else:
  tail call void asm sideeffect "@$2 st.global.b32 [ $1 + 0 ], { $0 };", "r,l,b"(i32 -1, ptr addrspace(1) %optr, i1 %is_t0) #1, !dbg !18
  br label %exit, !dbg !15

exit:
  ret void, !dbg !19
}

; Vector and floating-point forms: the first element is recorded.
define void @vector_atomics(ptr addrspace(1) %p, float %a, float %b, float %c, float %d, <2 x half> %h, half %s, i1 %m) !dbg !20 {
; CHECK-LABEL: define void @vector_atomics(
; sm_90 atom.v4.f32 returns a struct: its field 0, as f32 bits.
; CHECK:      %r4 = tail call { float, float, float, float } asm sideeffect
; CHECK-NEXT: br i1 %m,
; CHECK:      [[F0:%.*]] = extractvalue { float, float, float, float } %r4, 0
; CHECK-NEXT: [[B0:%.*]] = bitcast float [[F0]] to i32
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 [[B0]])
  %r4 = tail call { float, float, float, float } asm sideeffect "mov.u32 $0, 0x0;\0A\09mov.u32 $1, 0x0;\0A\09mov.u32 $2, 0x0;\0A\09mov.u32 $3, 0x0;\0A\09@$9 atom.global.gpu.relaxed.add.v4.f32 { $0, $1, $2, $3 }, [ $4 + 0 ], { $5, $6, $7, $8 };", "=r,=r,=r,=r,l,r,r,r,r,b"(ptr addrspace(1) %p, float %a, float %b, float %c, float %d, i1 %m) #1, !dbg !21
; red.v4 has no result: its first value operand, before it.
; CHECK:      [[BA:%.*]] = bitcast float %a to i32
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 [[BA]])
; CHECK:      tail call void asm sideeffect "@$5 red.global.gpu.relaxed.add.v4.f32
  tail call void asm sideeffect "@$5 red.global.gpu.relaxed.add.v4.f32 [ $0 + 0 ], { $1, $2, $3, $4 };", "l,r,r,r,r,b"(ptr addrspace(1) %p, float %a, float %b, float %c, float %d, i1 %m) #1, !dbg !21
; f16x2 packed result: its 32 bits.
; CHECK:      %rh = tail call <2 x half> asm sideeffect
; CHECK:      [[H2:%.*]] = bitcast <2 x half> %rh to i32
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 [[H2]])
  %rh = tail call <2 x half> asm sideeffect "mov.u32 $0, 0x0;\0A\09@$3 atom.global.gpu.relaxed.add.noftz.f16x2 $0, [ $1 + 0 ], $2;", "=r,l,r,b"(ptr addrspace(1) %p, <2 x half> %h, i1 %m) #1, !dbg !21
; A scalar f16 result, widened to f32 bits as every half is.
; CHECK:      %rs = tail call half asm sideeffect
; CHECK:      [[E:%.*]] = fpext half %rs to float
; CHECK-NEXT: [[EB:%.*]] = bitcast float [[E]] to i32
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 [[EB]])
  %rs = tail call half asm sideeffect "mov.u16 $0, 0x0;\0A\09@$3 atom.global.gpu.acq_rel.add.noftz.f16 $0, [ $1 + 0 ], $2;", "=h,l,h,b"(ptr addrspace(1) %p, half %s, i1 %m) #1, !dbg !21
; atom.cas: the value read. An unguarded atomic records unconditionally.
; CHECK:      %cas = tail call i32 asm sideeffect "atom.global.acq_rel.gpu.cas.b32
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 %cas)
  %cas = tail call i32 asm sideeffect "atom.global.acq_rel.gpu.cas.b32 $0, [ $1 + 0 ], $2, $3;", "=r,l,r,r"(ptr addrspace(1) %p, i32 0, i32 1) #1, !dbg !21
; A negated guard records where the guard is false.
; CHECK:      [[NOT:%.*]] = xor i1 %m, true
; CHECK-NEXT: br i1 [[NOT]],
; CHECK:      call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 %neg)
  %neg = tail call i32 asm sideeffect "mov.u32 $0, 0x0;\0A\09@!$3 atom.global.gpu.relaxed.exch.b32 $0, [ $1 + 0 ], $2;", "=r,l,r,b"(ptr addrspace(1) %p, i32 7, i1 %m) #1, !dbg !21
; A constant-true guard needs no branch.
; CHECK:      %ct = tail call i32 asm sideeffect
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 %ct)
  %ct = tail call i32 asm sideeffect "mov.u32 $0, 0x0;\0A\09@$3 atom.global.gpu.relaxed.max.s32 $0, [ $1 + 0 ], $2;", "=r,l,r,b"(ptr addrspace(1) %p, i32 3, i1 true) #1, !dbg !21
; CHECK-NOT:  __prlx_record
; CHECK:      ret void
  ret void
}

; Statements that are not sites (Options.cpp's skip rules).
define void @not_sites(ptr addrspace(1) %p, ptr addrspace(3) %s, i32 %v, i1 %m) !dbg !22 {
; CHECK-LABEL: define void @not_sites(
; CHECK-NOT: __prlx_record
; CHECK:     ret void
; A constant-false guard never executes.
  %cf = tail call i32 asm sideeffect "mov.u32 $0, 0x0;\0A\09@$3 atom.global.gpu.relaxed.add.u32 $0, [ $1 + 0 ], $2;", "=r,l,r,b"(ptr addrspace(1) %p, i32 1, i1 false) #1, !dbg !23
; Guarded by a predicate the asm computes itself.
  %in = tail call i32 asm sideeffect "{ .reg .pred %p<1>; setp.ne.b32 %p0, $2, 0; @%p0 atom.global.add.u32 $0, [ $1 ], 1; }", "=r,l,r"(ptr addrspace(1) %p, i32 %v) #1, !dbg !23
; The value is an immediate.
  tail call void asm sideeffect "st.shared.b32 [ $0 ], 0;", "r"(ptr addrspace(3) %s) #1, !dbg !23
; Loads, local / param stores, and a store named only in a comment.
  %ld = tail call i32 asm sideeffect "mov.u32 $0, 0x0;\0A\09@$2 ld.global.b32 { $0 }, [ $1 + 0 ];", "=r,l,b"(ptr addrspace(1) %p, i1 %m) #1, !dbg !23
  tail call void asm sideeffect "st.local.b32 [ $0 ], $1; // st.shared.b32 [ $0 ], $1;", "l,r"(ptr addrspace(1) %p, i32 %v) #1, !dbg !23
; A generic st to a global pointer without the global-stores option.
  tail call void asm sideeffect "st.b32 [ $0 ], $1;", "l,r"(ptr addrspace(1) %p, i32 %v) #1, !dbg !23
  ret void
}

; Several statements in one asm are sites of their own (ordinals 0, 1);
; a generic st whose address points into shared memory is a shared store;
; stmatrix's first register.
define void @multi(ptr addrspace(3) %s, i32 %a, i32 %b, i32 %c, i32 %d) !dbg !24 {
; CHECK-LABEL: define void @multi(
; CHECK:      call void @__prlx_record_shmem_store(i32 [[M0:-?[0-9]+]], i32 %a)
; CHECK-NEXT: call void @__prlx_record_shmem_store(i32 [[M1:-?[0-9]+]], i32 %b)
; CHECK-NEXT: tail call void asm sideeffect "st.shared.b32 [ $0 ], $1;\0A\09st.shared.v2.b32 [ $0 + 4 ], { $2, $3 };"
; CHECK:      call void @__prlx_record_shmem_store(i32 {{-?[0-9]+}}, i32 %c)
; CHECK-NEXT: tail call void asm sideeffect "st.b32 [ ${0} ], ${1};"
; CHECK-NEXT: call void @__prlx_record_shmem_store(i32 {{-?[0-9]+}}, i32 %d)
; CHECK-NEXT: tail call void asm sideeffect "stmatrix
  tail call void asm sideeffect "st.shared.b32 [ $0 ], $1;\0A\09st.shared.v2.b32 [ $0 + 4 ], { $2, $3 };", "r,r,r,r"(ptr addrspace(3) %s, i32 %a, i32 %b, i32 %c) #1, !dbg !25
  %g = getelementptr i8, ptr addrspace(3) %s, i32 16
  %flat = addrspacecast ptr addrspace(3) %g to ptr
  tail call void asm sideeffect "st.b32 [ ${0} ], ${1};", "l,r"(ptr %flat, i32 %c) #1, !dbg !25
  tail call void asm sideeffect "stmatrix.sync.aligned.m8n8.x4.shared.b16 [ $0 ], { $1, $2, $3, $4 };", "r,r,r,r,r"(ptr addrspace(3) %s, i32 %d, i32 %a, i32 %b, i32 %c) #1, !dbg !25
  ret void
}

; VERBOSE: [prlx] ticket_kernel: inline asm 'st' statement not recorded (global store without -prlx-instrument-global-stores)
; VERBOSE: [prlx] not_sites: inline asm 'atom' statement not recorded (constant guard that never holds)
; VERBOSE: [prlx] not_sites: inline asm 'atom' statement not recorded (guard computed inside the asm)
; VERBOSE: [prlx] not_sites: inline asm 'st' statement not recorded (value is not an asm operand)
; VERBOSE: [prlx] not_sites: inline asm 'st' statement not recorded (generic st to neither shared nor (recorded) global memory)
; VERBOSE: [prlx] not_sites: 0 sites

; OFF-NOT: __prlx_record_atomic
; OFF-NOT: __prlx_record_shmem_store
; OFF-NOT: __prlx_record_global_store

; TABLE: ('multi', 40, 'SharedMemStore', 0), ('multi', 40, 'SharedMemStore', 1), ('multi', 40, 'SharedMemStore', 2), ('multi', 40, 'SharedMemStore', 3),
; TABLE-SAME: ('ticket_kernel', 125, 'Atomic', 0), ('ticket_kernel', 125, 'Branch', 0), ('ticket_kernel', 125, 'SharedMemStore', 0), ('ticket_kernel', 126, 'Branch', 0),
; TABLE-SAME: ('vector_atomics', 30, 'Atomic', 0), ('vector_atomics', 30, 'Atomic', 1), ('vector_atomics', 30, 'Atomic', 2), ('vector_atomics', 30, 'Atomic', 3), ('vector_atomics', 30, 'Atomic', 4), ('vector_atomics', 30, 'Atomic', 5), ('vector_atomics', 30, 'Atomic', 6)]

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()

attributes #1 = { nounwind }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2}

!0 = distinct !DICompileUnit(language: DW_LANG_C, file: !1, producer: "triton", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "triton_kernels.py", directory: "/work/main/python/tests")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !DISubroutineType(types: !{})
!4 = distinct !DISubprogram(name: "ticket_kernel", linkageName: "ticket_kernel", scope: !1, file: !1, line: 120, type: !3, scopeLine: 120, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DILocation(line: 124, column: 11, scope: !4)
!12 = !DILocation(line: 125, column: 14, scope: !4)
!13 = !DILocation(line: 126, column: 8, scope: !4)
!14 = !DILocation(line: 0, scope: !4)
!15 = !DILocation(line: 126, column: 5, scope: !4)
!16 = !DILocation(line: 127, column: 33, scope: !4)
!17 = !DILocation(line: 127, column: 9, scope: !4)
!18 = !DILocation(line: 129, column: 9, scope: !4)
!19 = !DILocation(line: 120, column: 1, scope: !4)
!20 = distinct !DISubprogram(name: "vector_atomics", linkageName: "vector_atomics", scope: !1, file: !1, line: 29, type: !3, scopeLine: 29, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!21 = !DILocation(line: 30, column: 9, scope: !20)
!22 = distinct !DISubprogram(name: "not_sites", linkageName: "not_sites", scope: !1, file: !1, line: 34, type: !3, scopeLine: 34, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!23 = !DILocation(line: 35, column: 9, scope: !22)
!24 = distinct !DISubprogram(name: "multi", linkageName: "multi", scope: !1, file: !1, line: 39, type: !3, scopeLine: 39, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!25 = !DILocation(line: 40, column: 9, scope: !24)
