; Triton's branch-free style: a compare that predicates inline PTX
; (`@$N ld.global` / `@!$N st.global`) is a branch site at the compare.
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-target=nvptx -prlx-snapshots -S %s | %FileCheck %s

define void @triton_kernel(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n, i32 %idx) {
; CHECK-LABEL: define void @triton_kernel(
; CHECK:      %mask = icmp slt i32 %idx, %n
; CHECK-NEXT: call void @__prlx_record_snapshot(i32 [[ID:-?[0-9]+]], i32 %idx, i32 %n, i32 40)
; CHECK-NEXT: [[Z:%.*]] = zext i1 %mask to i32
; CHECK-NEXT: call void @__prlx_record_branch(i32 [[ID]], i32 [[Z]])
; CHECK-NEXT: %v = call i32 asm sideeffect
  %mask = icmp slt i32 %idx, %n
  %v = call i32 asm sideeffect "mov.u32 $0, 0x0;\0A\09@$2 ld.global.b32 { $0 }, [ $1 + 0 ];", "=r,l,b"(ptr addrspace(1) %in, i1 %mask)
; The same compare predicating a second instruction is still one site.
; A negated predicate operand counts too.
; CHECK:      %m2 = icmp eq i32 %v, 0
; CHECK-NEXT: call void @__prlx_record_snapshot(
; CHECK-NEXT: zext i1 %m2 to i32
; CHECK-NEXT: call void @__prlx_record_branch(
  %m2 = icmp eq i32 %v, 0
  call void asm sideeffect "@!$2 st.global.b32 [ $0 + 0 ], { $1 };", "l,r,b"(ptr addrspace(1) %out, i32 %v, i1 %m2)
  call void asm sideeffect "@$2 st.global.b32 [ $0 + 0 ], { $1 };", "l,r,b"(ptr addrspace(1) %out, i32 %v, i1 %mask)
; An i1 that reaches inline asm as data, not as a predicate, is not a site:
; `@$12` is operand 12, not operand 1.
; CHECK:      %plain = icmp ne i32 %v, 1
; CHECK-NEXT: call void asm sideeffect "selp.u32
  %plain = icmp ne i32 %v, 1
  call void asm sideeffect "selp.u32 $0, 1, 0, $1; // @$12", "r,b"(i32 %v, i1 %plain)
; CHECK-NOT: __prlx_record
; CHECK: ret void
  ret void
}
