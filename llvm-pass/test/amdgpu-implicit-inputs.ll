; clang marks kernels with `amdgpu-no-*` promises (no dispatch pointer, no
; workitem id y/z, ...) before the pass runs; the device runtime linked in
; afterwards reads those inputs, so an instrumented module must not keep the
; promises (llc-19's selection DAG crashed on the kernel; GlobalISel read an
; uninitialised register). An uninstrumented module keeps its attributes.
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -S %s | %FileCheck %s
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -S %S/Inputs/amdgpu-no-sites.ll | %FileCheck %S/Inputs/amdgpu-no-sites.ll --check-prefix=KEPT

target triple = "amdgcn-amd-amdhsa"

; CHECK-LABEL: define amdgpu_kernel void @kern(
; CHECK: call void @__prlx_record_branch(
define amdgpu_kernel void @kern(ptr addrspace(1) %out, i32 %v) #0 {
entry:
  %c = icmp ult i32 %v, 10
  br i1 %c, label %a, label %b
a:
  store i32 1, ptr addrspace(1) %out
  br label %b
b:
  ret void
}

; CHECK: attributes #0 = {
; CHECK-NOT: amdgpu-no-
; CHECK-SAME: "amdgpu-flat-work-group-size"="1,1024"
; CHECK-NOT: amdgpu-no-
; CHECK-SAME: }
attributes #0 = { "amdgpu-flat-work-group-size"="1,1024" "amdgpu-no-dispatch-ptr" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-workgroup-id-y" }
