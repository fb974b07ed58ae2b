; Switches, atomics, shared stores and (optionally) global stores on NVPTX.
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -S %s | %FileCheck %s --check-prefixes=CHECK,NOGLOBAL
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-instrument-global-stores -S %s | %FileCheck %s --check-prefixes=CHECK,GLOBAL

target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [64 x i32] undef

; CHECK-LABEL: define void @kern(
define void @kern(ptr %out, ptr addrspace(1) %gout, i64 %sel, i32 %v, float %f, ptr addrspace(3) %sp) {
entry:
; Switch on an i64: the low word is recorded.
; CHECK:      [[S:%.*]] = trunc i64 %sel to i32
; CHECK-NEXT: call void @__prlx_record_switch(i32 {{-?[0-9]+}}, i32 [[S]]) #[[CONV:[0-9]+]]
; CHECK-NEXT: switch i64 %sel
  switch i64 %sel, label %dflt [ i64 0, label %one
                                 i64 7, label %two ]
one:
; Atomics record, after them, the value they returned (the old value).
; CHECK: one:
; CHECK-NEXT: %old = atomicrmw add ptr %out, i32 %v
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 %old)
  %old = atomicrmw add ptr %out, i32 %v monotonic
; CHECK-NEXT: %oldf = atomicrmw fadd
; CHECK-NEXT: [[FB:%.*]] = bitcast float %oldf to i32
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 [[FB]])
  %oldf = atomicrmw fadd ptr addrspace(1) %gout, float %f monotonic
; cmpxchg records the old value (low word of an i64), then which lanes'
; swap succeeded as a branch on the success bit.
; CHECK-NEXT: %cx = cmpxchg ptr %out
; CHECK-NEXT: [[OV:%.*]] = extractvalue { i64, i1 } %cx, 0
; CHECK-NEXT: [[OW:%.*]] = trunc i64 [[OV]] to i32
; CHECK-NEXT: call void @__prlx_record_atomic(i32 {{-?[0-9]+}}, i32 [[OW]])
; CHECK-NEXT: [[OK:%.*]] = extractvalue { i64, i1 } %cx, 1
; CHECK-NEXT: [[OKW:%.*]] = zext i1 [[OK]] to i32
; CHECK-NEXT: call void @__prlx_record_branch(i32 {{-?[0-9]+}}, i32 [[OKW]])
  %cx = cmpxchg ptr %out, i64 0, i64 %sel monotonic monotonic
; A select is a data-dependent choice: the compare deciding it records the
; per-lane predicate right after it; a select on a non-compare records its
; condition before it.
; CHECK-NEXT: %lt = icmp ult i32 %v, 100
; CHECK-NEXT: [[LTW:%.*]] = zext i1 %lt to i32
; CHECK-NEXT: call void @__prlx_record_branch(i32 {{-?[0-9]+}}, i32 [[LTW]])
; CHECK-NEXT: %pick = select i1 %lt, i32 1, i32 2
  %lt = icmp ult i32 %v, 100
  %pick = select i1 %lt, i32 1, i32 2
; CHECK-NEXT: %bit = trunc i32 %pick to i1
; CHECK-NEXT: [[BW:%.*]] = zext i1 %bit to i32
; CHECK-NEXT: call void @__prlx_record_branch(i32 {{-?[0-9]+}}, i32 [[BW]])
; CHECK-NEXT: %pick2 = select i1 %bit, i32 %v, i32 3
  %bit = trunc i32 %pick to i1
  %pick2 = select i1 %bit, i32 %v, i32 3
  store i32 %pick2, ptr %out
  br label %dflt
two:
; Stores to addrspace(3): int, float, and a generic pointer into shared memory.
; CHECK: two:
; CHECK-NEXT: call void @__prlx_record_shmem_store(i32 {{-?[0-9]+}}, i32 %v)
; CHECK-NEXT: store i32 %v, ptr addrspace(3) %sp
  store i32 %v, ptr addrspace(3) %sp
; CHECK-NEXT: [[F2:%.*]] = bitcast float %f to i32
; CHECK-NEXT: call void @__prlx_record_shmem_store(i32 {{-?[0-9]+}}, i32 [[F2]])
  store float %f, ptr addrspace(3) @tile
; CHECK:      call void @__prlx_record_shmem_store(i32 {{-?[0-9]+}}, i32 %v)
; CHECK-NEXT: store i32 %v, ptr %gen
  %gen = addrspacecast ptr addrspace(3) getelementptr (i32, ptr addrspace(3) @tile, i32 5) to ptr
  store i32 %v, ptr %gen
; A small vector is recorded as its bits; a wide one is not recordable.
; CHECK-NEXT: call void @__prlx_record_shmem_store(i32 {{-?[0-9]+}}, i32 bitcast (<2 x i16> <i16 1, i16 2> to i32))
  store <2 x i16> <i16 1, i16 2>, ptr addrspace(3) %sp
; CHECK-NEXT: store <2 x i16>
; CHECK-NEXT: store <4 x float>
  store <4 x float> zeroinitializer, ptr addrspace(3) %sp
  br label %dflt
dflt:
; Global stores: addrspace(1), and generic pointers that are not the stack.
; CHECK: dflt:
; GLOBAL-NEXT: call void @__prlx_record_global_store(i32 {{-?[0-9]+}}, i32 %v)
; CHECK-NEXT:  store i32 %v, ptr addrspace(1) %gout
  store i32 %v, ptr addrspace(1) %gout
; GLOBAL-NEXT: call void @__prlx_record_global_store(i32 {{-?[0-9]+}}, i32 7)
; CHECK-NEXT:  store i32 7, ptr %out
  store i32 7, ptr %out
; A store to the thread's own stack is never recorded.
; CHECK-NEXT: %slot = alloca i32
; CHECK-NEXT: store i32 %v, ptr %slot
  %slot = alloca i32
  store i32 %v, ptr %slot
; NOGLOBAL-NOT: __prlx_record_global_store
; CHECK: ret void
  ret void
}
; CHECK: attributes #[[CONV]] = { convergent }
