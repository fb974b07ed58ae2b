; The idle copy: each instrumented function tests __prlx_record_enabled() once
; on entry and runs an uninstrumented copy of its body when the module is not
; being captured (src/IdleCopy.h).
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-verbose -S %s -o %t.ll 2>%t.err
; RUN: %FileCheck %s < %t.ll
; RUN: %FileCheck %s --check-prefix=WHY < %t.err
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-idle-copy=false -S %s | %FileCheck %s --check-prefix=OFF
; RUN: sed -e 's/nvptx64-nvidia-cuda/amdgcn-amd-amdhsa/' %s | %opt -passes=prlx-instrument -prlx-sites-json=none -S | %FileCheck %s
; The copy survives the optimiser (the test is not foldable) and the result verifies.
; RUN: %opt -passes='prlx-instrument,default<O2>' -prlx-sites-json=none -S %s | %FileCheck %s --check-prefix=OPT

target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: define void @loop(
; CHECK-NEXT: prlx.check:
; CHECK-NEXT: %prlx.enabled = call i32 @__prlx_record_enabled()
; CHECK-NEXT: %prlx.on = icmp ne i32 %prlx.enabled, 0
; CHECK-NEXT: br i1 %prlx.on, label %entry, label %entry.prlx.idle
; The instrumented body: the original blocks, probes in place.
; CHECK: entry:
; CHECK: body:
; CHECK-NEXT: %i = phi i32 [ 0, %entry ], [ %next, %body ]
; CHECK: call void @__prlx_record_shmem_store(i32 [[STORE:-?[0-9]+]],
; CHECK: call void @__prlx_record_branch(i32 [[BRANCH:-?[0-9]+]],
; CHECK-NEXT: br i1 %more, label %body, label %done
; The copy: its own blocks, values and phis, and no probe.
; CHECK: entry.prlx.idle:
; CHECK-NOT: @__prlx_record
; CHECK: body.prlx.idle:
; CHECK-NEXT: %i.prlx.idle = phi i32 [ 0, %entry.prlx.idle ], [ %next.prlx.idle, %body.prlx.idle ]
; CHECK-NOT: @__prlx_record
; CHECK: store i32 %i.prlx.idle, ptr addrspace(3) %p.prlx.idle
; CHECK-NOT: @__prlx_record
; CHECK: br i1 %more.prlx.idle, label %body.prlx.idle, label %done.prlx.idle
; CHECK-NOT: @__prlx_record
; CHECK: ret void
; CHECK-NEXT: }
; OFF-LABEL: define void @loop(
; OFF-NEXT: entry:
; OFF-NOT: prlx.idle
; OFF-NOT: __prlx_record_enabled
; OFF: ret void
; OFF-NEXT: }
; OPT-LABEL: define void @loop(
; OPT: call i32 @__prlx_record_enabled()
; OPT: call void @__prlx_record_branch(
; OPT: .prlx.idle:
@tile = addrspace(3) global [64 x i32] undef

define void @loop(i32 %n) {
entry:
  br label %body
body:
  %i = phi i32 [ 0, %entry ], [ %next, %body ]
  %p = getelementptr [64 x i32], ptr addrspace(3) @tile, i32 0, i32 %i
  store i32 %i, ptr addrspace(3) %p
  %next = add i32 %i, 1
  %more = icmp slt i32 %next, %n
  br i1 %more, label %body, label %done
done:
  ret void
}

; No site, no copy.
; CHECK-LABEL: define i32 @plain(
; CHECK-NEXT: ret i32
define i32 @plain(i32 %x) {
  ret i32 %x
}

; A block whose address is taken cannot be copied: instrumented as it is.
; WHY: [prlx] addressed: no idle copy (a block's address is taken)
; CHECK-LABEL: define void @addressed(
; CHECK-NEXT: entry:
; CHECK-NOT: prlx.idle
; CHECK: call void @__prlx_record_branch(
; CHECK-NOT: prlx.idle
; CHECK: b:
; CHECK-NEXT: ret void
; CHECK-NEXT: }
@target = global ptr blockaddress(@addressed, %a)

define void @addressed(i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  ret void
b:
  ret void
}
