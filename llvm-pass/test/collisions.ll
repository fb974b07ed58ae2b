; Colliding hashes: the later site re-hashes with a salt until its id is free,
; and the table records how many re-hashes it took. -prlx-site-id-mask (a
; test hook) keeps only the top 4 bits: 16 ids so 12 sites collide.
; RUN: rm -f %t.json
; RUN: %opt -passes=prlx-instrument -prlx-site-id-mask=0xF0000000 -prlx-sites-json=%t.json -S %s -o /dev/null
; RUN: %python %inputs/sites.py check-unique %t.json
; RUN: %python %inputs/sites.py count %t.json | %FileCheck %s --check-prefix=COUNT
; RUN: %python %inputs/sites.py collisions %t.json | %FileCheck %s --check-prefix=REHASH
; The resolution is deterministic: a second build gives the same table.
; RUN: %opt -passes=prlx-instrument -prlx-site-id-mask=0xF0000000 -prlx-sites-json=%t.2.json -S %s -o /dev/null
; RUN: %python %inputs/sites.py same %t.json %t.2.json
; COUNT: 12 sites
; REHASH: {{[1-9][0-9]*}} rehashed

target triple = "nvptx64-nvidia-cuda"

define void @kern(i1 %c) {
  br i1 %c, label %b1, label %b1
b1:
  br i1 %c, label %b2, label %b2
b2:
  br i1 %c, label %b3, label %b3
b3:
  br i1 %c, label %b4, label %b4
b4:
  br i1 %c, label %b5, label %b5
b5:
  br i1 %c, label %b6, label %b6
b6:
  br i1 %c, label %b7, label %b7
b7:
  br i1 %c, label %b8, label %b8
b8:
  br i1 %c, label %b9, label %b9
b9:
  br i1 %c, label %b10, label %b10
b10:
  br i1 %c, label %b11, label %b11
b11:
  br i1 %c, label %b12, label %b12
b12:
  ret void
}
