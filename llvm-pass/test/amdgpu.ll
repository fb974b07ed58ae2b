; The same constructs on AMDGPU: global memory is addrspace(1); flat pointers
; count only when they provably point there.
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-snapshots -prlx-instrument-global-stores -S %s | %FileCheck %s

target triple = "amdgcn-amd-amdhsa"

; The embedded site table lives in global memory.
; CHECK: @__prlx_sites = addrspace(1) constant

; CHECK-LABEL: define amdgpu_kernel void @kern(
define amdgpu_kernel void @kern(ptr addrspace(1) %g, ptr %flat, i32 %v, ptr addrspace(3) %lds) {
entry:
; CHECK:      call void @__prlx_record_snapshot(i32 [[ID:-?[0-9]+]], i32 %v, i32 10, i32 36)
; CHECK-NEXT: zext i1 %c to i32
; CHECK-NEXT: call void @__prlx_record_branch(i32 [[ID]],
  %c = icmp ult i32 %v, 10
  br i1 %c, label %a, label %b
a:
; CHECK: call void @__prlx_record_switch(
  switch i32 %v, label %b [ i32 3, label %b ]
b:
; CHECK: %o = atomicrmw max ptr addrspace(1) %g
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 %o)
  %o = atomicrmw max ptr addrspace(1) %g, i32 %v syncscope("agent") monotonic
; CHECK-NEXT: %x = cmpxchg ptr addrspace(3) %lds, i32 %v, i32 7
; CHECK-NEXT: [[XO:%.*]] = extractvalue { i32, i1 } %x, 0
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 [[XO]])
; CHECK-NEXT: [[XK:%.*]] = extractvalue { i32, i1 } %x, 1
; CHECK-NEXT: [[XW:%.*]] = zext i1 [[XK]] to i32
; CHECK-NEXT: call void @__prlx_record_branch(i32 {{-?[0-9]+}}, i32 [[XW]])
  %x = cmpxchg ptr addrspace(3) %lds, i32 %v, i32 7 syncscope("workgroup") monotonic monotonic
; CHECK-NEXT: call void @__prlx_record_shmem_store(i32 {{-?[0-9]+}}, i32 %v)
; CHECK-NEXT: store i32 %v, ptr addrspace(3) %lds
  store i32 %v, ptr addrspace(3) %lds
; CHECK-NEXT: call void @__prlx_record_global_store(i32 {{-?[0-9]+}}, i32 %v)
; CHECK-NEXT: store i32 %v, ptr addrspace(1) %g
  store i32 %v, ptr addrspace(1) %g
; A flat pointer cast from addrspace(1) is global memory.
; CHECK-NEXT: %gf = addrspacecast
; CHECK-NEXT: call void @__prlx_record_global_store(i32 {{-?[0-9]+}}, i32 %v)
  %gf = addrspacecast ptr addrspace(1) %g to ptr
  store i32 %v, ptr %gf
; A flat pointer of unknown origin is not assumed global.
; CHECK-NEXT: store i32 %v, ptr %gf
; CHECK-NEXT: store i32 %v, ptr %flat
  store i32 %v, ptr %flat
; Private (addrspace 5) memory never is.
; CHECK-NEXT: %p = alloca i32, align 4, addrspace(5)
; CHECK-NEXT: store i32 %v, ptr addrspace(5) %p
  %p = alloca i32, addrspace(5)
  store i32 %v, ptr addrspace(5) %p
  ret void
}
