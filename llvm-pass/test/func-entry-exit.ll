; Function entry and exit, only with -prlx-instrument-func-entry-exit.
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -S %s | %FileCheck %s --check-prefix=OFF
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-instrument-func-entry-exit -S %s | %FileCheck %s
; RUN: sed -e 's/nvptx64-nvidia-cuda/amdgcn-amd-amdhsa/' -e 's/alloca i32$/alloca i32, addrspace(5)/' %s | %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-instrument-func-entry-exit -S | %FileCheck %s

target triple = "nvptx64-nvidia-cuda"

; OFF-NOT: __prlx_record_func
; CHECK-LABEL: define i32 @helper(
; The idle-copy check is the entry block now; it takes the allocas of both
; copies (they stay static).
; CHECK-NEXT: prlx.check:
; CHECK-NEXT: %tmp = alloca i32
; CHECK-NEXT: %tmp.prlx.idle = alloca i32
; CHECK-NEXT: call i32 @__prlx_record_enabled()
; CHECK: br i1 %prlx.on, label %entry, label %entry.prlx.idle
; Entry is recorded first thing in the instrumented body.
; CHECK: entry:
; CHECK-NEXT: call void @__prlx_record_func(i32 [[ENTRY:-?[0-9]+]], i32 1)
; CHECK: call void @__prlx_record_func(i32 [[EXIT1:-?[0-9]+]], i32 0)
; CHECK-NEXT: ret i32 1
; CHECK: call void @__prlx_record_func(i32 [[EXIT2:-?[0-9]+]], i32 0)
; CHECK-NEXT: ret i32 2
; The idle copy records nothing.
; CHECK: entry.prlx.idle:
; CHECK-NOT: call {{.*}}@__prlx_record
; CHECK: ret i32 1
; CHECK-NOT: call {{.*}}@__prlx_record
; CHECK: ret i32 2
; CHECK-NEXT: }
define i32 @helper(i1 %c) {
entry:
  %tmp = alloca i32
  br i1 %c, label %a, label %b
a:
  ret i32 1
b:
  ret i32 2
}
