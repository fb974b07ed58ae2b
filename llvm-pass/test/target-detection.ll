; Only NVPTX and AMDGPU modules are instrumented; a module with no triple
; (Triton's llir) only when -prlx-target names one.
; RUN: sed -e 's/@TRIPLE@/target triple = "x86_64-unknown-linux-gnu"/' %s | %opt -passes=prlx-instrument -prlx-sites-json=none -S | %FileCheck %s --check-prefix=NONE
; RUN: sed -e 's/@TRIPLE@//' %s | %opt -passes=prlx-instrument -prlx-sites-json=none -S | %FileCheck %s --check-prefix=NONE
; RUN: sed -e 's/@TRIPLE@//' %s | %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-target=nvptx -S | %FileCheck %s --check-prefix=GPU
; RUN: sed -e 's/@TRIPLE@//' %s | %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-target=amdgcn -S | %FileCheck %s --check-prefix=GPU
; RUN: sed -e 's/@TRIPLE@//' %s | %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-target=sparc -S 2>%t.err | %FileCheck %s --check-prefix=NONE
; RUN: %FileCheck %s --check-prefix=BADTARGET < %t.err
; -prlx-target never overrides a real triple.
; RUN: sed -e 's/@TRIPLE@/target triple = "x86_64-unknown-linux-gnu"/' %s | %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-target=nvptx -S | %FileCheck %s --check-prefix=NONE
; RUN: sed -e 's/@TRIPLE@/target triple = "nvptx-nvidia-cuda"/' %s | %opt -passes=prlx-instrument -prlx-sites-json=none -S | %FileCheck %s --check-prefix=GPU

@TRIPLE@

define void @kern(i1 %c) {
  br i1 %c, label %x, label %x
x:
  ret void
}
; NONE-NOT: prlx
; GPU: call void @__prlx_record_branch(
; GPU: !prlx.instrumented
; BADTARGET: -prlx-target='sparc' is neither nvptx nor amdgcn
