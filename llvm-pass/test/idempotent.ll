; Running the pass twice (clang's OptimizerLast, then opt) records each event once.
; RUN: %opt -passes='prlx-instrument,prlx-instrument' -prlx-sites-json=none -S %s | %FileCheck %s
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -S %s | %opt -passes=prlx-instrument -prlx-sites-json=none -S | %FileCheck %s

target triple = "nvptx64-nvidia-cuda"

; CHECK: @__prlx_sites =
; CHECK-NOT: @__prlx_sites{{.*}} =
define void @kern(i1 %c) {
; CHECK: call void @__prlx_record_branch(
; CHECK-NOT: call void @__prlx_record_branch(
; CHECK: ret void
  br i1 %c, label %x, label %x
x:
  ret void
}
