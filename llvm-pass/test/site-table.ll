; The site table: prlx-sites.json (PRLX's schema), merged into an existing
; file, and embedded in the module as @__prlx_sites.
; RUN: rm -rf %t && mkdir -p %t
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=%t/sites.json -S %s -o %t/out.ll
; RUN: %FileCheck %s --check-prefix=JSON < %t/sites.json
; RUN: %FileCheck %s --check-prefix=IR < %t/out.ll
; Two branches at one line and column get ordinals 0 and 1, hence two ids.
; RUN: %python %inputs/sites.py check-unique %t/sites.json
;
; Merge: entries of other functions stay, this module's stale ones go.
; RUN: cp %inputs/existing-sites.json %t/merge.json
; RUN: %opt -passes=prlx-instrument -prlx-sites-json=%t/merge.json -S %s -o /dev/null
; RUN: %FileCheck %s --check-prefix=MERGE < %t/merge.json
; RUN: %python %inputs/sites.py count %t/merge.json | %FileCheck %s --check-prefix=COUNT
; PRLX_SITES names the file when the option does not.
; RUN: env PRLX_SITES=%t/env.json %opt -passes=prlx-instrument -S %s -o /dev/null
; RUN: %python %inputs/sites.py count %t/env.json | %FileCheck %s --check-prefix=COUNT4
; A file that is not a JSON array is an error and is left untouched.
; RUN: echo '{"not": "an array"' > %t/bad.json
; RUN: not %opt -passes=prlx-instrument -prlx-sites-json=%t/bad.json -S %s -o /dev/null 2>%t/bad.err
; RUN: %FileCheck %s --check-prefix=BAD < %t/bad.err
; RUN: %FileCheck %s --check-prefix=BADFILE < %t/bad.json

target triple = "nvptx64-nvidia-cuda"

; IR: @__prlx_sites = addrspace(1) constant [{{[0-9]+}} x i8] c"[{\22column\22:5,\22event_type\22:0,\22filename\22:\22kern.cu\22,\22function\22:\22kern\22,{{.*}}\00", align 1
; IR: @llvm.used = appending global [1 x ptr] [ptr addrspacecast (ptr addrspace(1) @__prlx_sites to ptr)]

define void @kern(i1 %a, i1 %b, i32 %v, ptr addrspace(3) %s) !dbg !5 {
  br i1 %a, label %x, label %y, !dbg !10
x:
  br i1 %b, label %y, label %y, !dbg !10
y:
  store i32 %v, ptr addrspace(3) %s, !dbg !11
  br i1 %b, label %z, label %z
z:
  br i1 %a, label %w, label %w
w:
  ret void
}

; JSON:      [
; JSON-NEXT:   {
; JSON-NEXT:     "column": 5,
; JSON-NEXT:     "event_type": 0,
; JSON-NEXT:     "filename": "kern.cu",
; JSON-NEXT:     "function": "kern",
; JSON-NEXT:     "kind": "Branch",
; JSON-NEXT:     "line": 12,
; JSON-NEXT:     "ordinal": 0,
; JSON-NEXT:     "rehash": 0,
; JSON-NEXT:     "site_id": {{[0-9]+}}
; JSON-NEXT:   },
; JSON:          "line": 12,
; JSON-NEXT:     "ordinal": 1,
; A branch without a line borrows the nearest earlier one in its block.
; JSON:          "column": 7,
; JSON-NEXT:     "event_type": 0,
; JSON-NEXT:     "filename": "kern.cu",
; JSON-NEXT:     "function": "kern",
; JSON-NEXT:     "kind": "Branch",
; JSON-NEXT:     "line": 14,
; JSON:          "column": 7,
; JSON-NEXT:     "event_type": 1,
; JSON-NEXT:     "filename": "kern.cu",
; JSON-NEXT:     "function": "kern",
; JSON-NEXT:     "kind": "SharedMemStore",
; JSON-NEXT:     "line": 14,
; No line anywhere before it: function, kind and ordinal only.
; JSON:          "column": 0,
; JSON-NEXT:     "event_type": 0,
; JSON-NEXT:     "filename": "unknown",
; JSON-NEXT:     "function": "kern",
; JSON-NEXT:     "kind": "Branch",
; JSON-NEXT:     "line": 0,
; JSON-NEXT:     "ordinal": 0,

; MERGE: "function": "other_kernel"
; MERGE-NOT: "line": 99
; COUNT: 6 sites
; COUNT4: 5 sites
; BAD: error: [prlx] site table: {{.*}}bad.json is not valid JSON
; BADFILE: {"not": "an array"

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus, file: !1, producer: "test", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "kern.cu", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "kern", scope: !1, file: !1, line: 10, type: !6, scopeLine: 10, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{}
!10 = !DILocation(line: 12, column: 5, scope: !5)
!11 = !DILocation(line: 14, column: 7, scope: !5)
