; Conditional branches, and the compare deciding them when snapshots are on.
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -S %s | %FileCheck %s --check-prefixes=CHECK,NOSNAP
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=none -prlx-snapshots -S %s | %FileCheck %s --check-prefixes=CHECK,SNAP

target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: define void @kern(
define void @kern(ptr %out, i32 %x, i16 %s, double %d) {
entry:
  %c = icmp sgt i16 %s, -3
; A signed compare: narrow operands are sign-extended; 38 = ICMP_SGT.
; SNAP:      [[L:%.*]] = sext i16 %s to i32
; SNAP-NEXT: call void @__prlx_record_snapshot(i32 [[ID1:-?[0-9]+]], i32 [[L]], i32 -3, i32 38) #[[CONV:[0-9]+]]
; SNAP-NEXT: [[Z1:%.*]] = zext i1 %c to i32
; SNAP-NEXT: call void @__prlx_record_branch(i32 [[ID1]], i32 [[Z1]]) #[[CONV]]
; NOSNAP-NOT: __prlx_record_snapshot
; NOSNAP:      [[Z1:%.*]] = zext i1 %c to i32
; NOSNAP-NEXT: call void @__prlx_record_branch(i32 {{-?[0-9]+}}, i32 [[Z1]]) #[[CONV:[0-9]+]]
; CHECK-NEXT: br i1 %c, label %a, label %b
  br i1 %c, label %a, label %b
a:
  %f = fcmp olt double %d, 1.5
; Doubles are recorded as their f32 rounding; 4 = FCMP_OLT, 1069547520 = 1.5f.
; SNAP:      [[DL:%.*]] = fptrunc double %d to float
; SNAP-NEXT: [[DW:%.*]] = bitcast float [[DL]] to i32
; SNAP-NEXT: call void @__prlx_record_snapshot(i32 [[ID2:-?[0-9]+]], i32 [[DW]], i32 1069547520, i32 4)
; SNAP:      call void @__prlx_record_branch(i32 [[ID2]], i32 %{{.*}})
; NOSNAP:    call void @__prlx_record_branch(i32 {{-?[0-9]+}}, i32 %{{.*}})
; CHECK-NEXT: br i1 %f
  br i1 %f, label %b, label %exit
b:
; An unconditional branch is not a site.
; CHECK:      b:
; CHECK-NEXT: br label %exit
  br label %exit
exit:
; A condition that is not a compare: no snapshot, still a branch site.
; CHECK: exit:
; CHECK-NOT: __prlx_record_snapshot
; CHECK: call void @__prlx_record_branch(i32 {{-?[0-9]+}}, i32 %{{.*}})
; CHECK-NEXT: br i1 %t
  %t = trunc i32 %x to i1
  br i1 %t, label %done, label %done
done:
; CHECK: done:
; CHECK-NEXT: ret void
  ret void
}

; CHECK: declare void @__prlx_record_branch(i32, i32) #[[CONV]]
; CHECK: attributes #[[CONV]] = { convergent }
; CHECK: !prlx.instrumented = !{}
