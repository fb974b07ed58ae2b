; The functions the pass never touches, and the user's filter.
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-verbose -S %s -o %t.ll 2>%t.err
; RUN: %FileCheck %s --check-prefix=ALL < %t.ll
; RUN: %FileCheck %s --check-prefix=WHY < %t.err
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-filter='keep_*' -S %s | %FileCheck %s --check-prefix=FILTER
; RUN: env PRLX_FILTER=' other , keep_me ' %opt -passes=prlx-instrument -prlx-sites-json=none -S %s | %FileCheck %s --check-prefix=FILTER
; The same rules on AMDGPU.
; RUN: sed -e 's/nvptx64-nvidia-cuda/amdgcn-amd-amdhsa/' %s | %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-verbose -S -o %t.amd.ll 2>%t.amd.err
; RUN: %FileCheck %s --check-prefix=ALL < %t.amd.ll
; RUN: %FileCheck %s --check-prefix=WHY < %t.amd.err
; RUN: sed -e 's/nvptx64-nvidia-cuda/amdgcn-amd-amdhsa/' %s | env PRLX_FILTER='keep_*' %opt -passes=prlx-instrument -prlx-sites-json=none -S | %FileCheck %s --check-prefix=FILTER
; A plain name also matches the identifier inside a mangled name.
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-filter=mangled_kernel -S %s | %FileCheck %s --check-prefix=MANGLED

target triple = "nvptx64-nvidia-cuda"

; WHY-DAG: [prlx] keep_me: 1 sites
; WHY-DAG: [prlx] __prlx_record_branch: skipped (prlx runtime)
; WHY-DAG: [prlx] __nv_fast_sinf: skipped (vendor builtin)
; WHY-DAG: [prlx] __ocml_sin_f32: skipped (vendor builtin)
; WHY-DAG: [prlx] __ockl_get_local_id: skipped (vendor builtin)
; WHY-DAG: [prlx] __hip_get_block: skipped (vendor builtin)
; WHY-DAG: [prlx] __builtin_thing: skipped (vendor builtin)
; WHY-DAG: [prlx] _Z10__shfl_syncjjii: skipped (vendor builtin)

define void @__prlx_record_branch(i32 %s, i32 %c) {
; ALL-LABEL: define void @__prlx_record_branch(
; ALL-NOT: call void @__prlx
; ALL: ret void
  %b = icmp eq i32 %c, 0
  br i1 %b, label %x, label %x
x:
  ret void
}

define float @__nv_fast_sinf(float %f, i1 %c) {
; ALL-LABEL: define float @__nv_fast_sinf(
; ALL-NOT: call void @__prlx
; ALL: ret float
  br i1 %c, label %x, label %x
x:
  ret float %f
}

define float @__ocml_sin_f32(float %f, i1 %c) {
; ALL-LABEL: define float @__ocml_sin_f32(
; ALL-NOT: call void @__prlx
; ALL: ret float
  br i1 %c, label %x, label %x
x:
  ret float %f
}

define i32 @__ockl_get_local_id(i1 %c) {
; ALL-LABEL: define i32 @__ockl_get_local_id(
; ALL-NOT: call void @__prlx
; ALL: ret i32
  br i1 %c, label %x, label %x
x:
  ret i32 0
}

define void @__hip_get_block(i1 %c) {
; ALL-LABEL: define void @__hip_get_block(
; ALL-NOT: call void @__prlx
; ALL: ret void
  br i1 %c, label %x, label %x
x:
  ret void
}

define void @__builtin_thing(i1 %c) {
; ALL-LABEL: define void @__builtin_thing(
; ALL-NOT: call void @__prlx
; ALL: ret void
  br i1 %c, label %x, label %x
x:
  ret void
}

; A CUDA header's warp-intrinsic wrapper, mangled.
define i32 @_Z10__shfl_syncjjii(i32 %m, i32 %v, i32 %l, i32 %w, i1 %c) {
; ALL-LABEL: define i32 @_Z10__shfl_syncjjii(
; ALL-NOT: call void @__prlx
; ALL: ret i32
  br i1 %c, label %x, label %x
x:
  ret i32 %v
}

define void @keep_me(i1 %c) {
; ALL-LABEL: define void @keep_me(
; ALL: call void @__prlx_record_branch(
; FILTER-LABEL: define void @keep_me(
; FILTER: call void @__prlx_record_branch(
  br i1 %c, label %x, label %x
x:
  ret void
}

define void @_Z14mangled_kernelPi(ptr %p, i1 %c) {
; ALL-LABEL: define void @_Z14mangled_kernelPi(
; ALL: call void @__prlx_record_branch(
; FILTER-LABEL: define void @_Z14mangled_kernelPi(
; FILTER-NOT: call void @__prlx
; FILTER: ret void
; MANGLED-LABEL: define void @_Z14mangled_kernelPi(
; MANGLED: call void @__prlx_record_branch(
  br i1 %c, label %x, label %x
x:
  ret void
}
; MANGLED-NOT: define void @keep_me(i1 %c) {{.*}}call void @__prlx

; Declarations and intrinsics are never bodies to instrument.
declare void @extern_device(i1)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
