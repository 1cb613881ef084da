;; Loads off one root under one check of the group's largest end, whose
;; `bounds_which` block picks the first access that fails (bnd_insert.c),
;; left to the guard pages (bnd_late.c, 29 Nov 2026): each access gets its
;; own label and faults exactly when the check would have named it (a
;; dlmalloc `free` reading a chunk's fd and bk at offsets 8 and 12).  The
;; largest end in the middle of the group keeps its check.  Memory of one
;; page, bytes 1..16 at 0.
(module
  (memory 1)
  (data (i32.const 0) "\01\02\03\04\05\06\07\08\09\0a\0b\0c\0d\0e\0f\10")
  (func (export "get8") (param i32) (result i32) (i32.load8_u (local.get 0)))
  ;; p->fd == p->bk
  (func (export "same") (param $p i32) (result i32)
    (i32.eq (i32.load offset=8 (local.get $p)) (i32.load offset=12 (local.get $p))))
  ;; three loads, the last reaching furthest
  (func (export "sum3") (param $p i32) (result i32)
    (i32.add (i32.load8_u (local.get $p))
      (i32.add (i32.load16_u offset=2 (local.get $p)) (i32.load offset=4 (local.get $p)))))
  ;; a load, then a store further on: the store is the group's last
  (func (export "bump") (param $p i32)
    (i32.store offset=12 (local.get $p) (i32.add (i32.load offset=8 (local.get $p)) (i32.const 1))))
  ;; the largest end first: one check, nothing for the others to name
  (func (export "wide_first") (param $p i32) (result i32)
    (i32.add (i32.load offset=12 (local.get $p)) (i32.load offset=8 (local.get $p))))
  ;; a record's header size and first type, bytes 0 and 1 (SQLite's
  ;; vdbeRecordCompareInt): LLVM writes the which block's `p + 1 > size`
  ;; as `size > p` with the offsets swapped (bnd_group.c, 30 Nov 2026)
  (func (export "header") (param $p i32) (result i32) (local $h i32)
    (local.set $h (i32.and (i32.load8_u (local.get $p)) (i32.const 63)))
    (block $b (block $a
      (br_table $a $b (i32.load8_u offset=1 (local.get $p))))
      (return (i32.load8_u (i32.add (local.get $p) (local.get $h)))))
    (local.get $h))
  ;; the largest end in the middle (its check stays)
  (func (export "middle") (param $p i32) (result i32)
    (i32.add (i32.load (local.get $p))
      (i32.add (i32.load offset=12 (local.get $p)) (i32.load offset=4 (local.get $p)))))
)

(assert_return (invoke "same" (i32.const 0)) (i32.const 0))
(assert_return (invoke "same" (i32.const 65520)) (i32.const 1))
;; the first load inside, the second past memory: traps at the second
(assert_trap (invoke "same" (i32.const 65524)) "out of bounds memory access")
;; both past memory: traps at the first
(assert_trap (invoke "same" (i32.const 65528)) "out of bounds memory access")
(assert_trap (invoke "same" (i32.const -8)) "out of bounds memory access")

(assert_return (invoke "sum3" (i32.const 0)) (i32.const 0x0807_0a09))
(assert_trap (invoke "sum3" (i32.const 65532)) "out of bounds memory access")
(assert_trap (invoke "sum3" (i32.const 65534)) "out of bounds memory access")
(assert_trap (invoke "sum3" (i32.const 65536)) "out of bounds memory access")

(assert_return (invoke "wide_first" (i32.const 0)) (i32.const 0x1c1a_1816))
(assert_trap (invoke "wide_first" (i32.const 65524)) "out of bounds memory access")

(assert_return (invoke "middle" (i32.const 0)) (i32.const 0x1c19_1613))
(assert_trap (invoke "middle" (i32.const 65524)) "out of bounds memory access")
(assert_trap (invoke "middle" (i32.const 65534)) "out of bounds memory access")

(assert_return (invoke "bump" (i32.const 0)))
(assert_return (invoke "get8" (i32.const 12)) (i32.const 10))
;; the store past memory: traps at it, nothing written
(assert_trap (invoke "bump" (i32.const 65524)) "out of bounds memory access")
(assert_trap (invoke "bump" (i32.const 65528)) "out of bounds memory access")

(assert_return (invoke "header" (i32.const 0)) (i32.const 1))
(assert_return (invoke "header" (i32.const 1)) (i32.const 2))
;; the type byte past memory: traps at it
(assert_trap (invoke "header" (i32.const 65535)) "out of bounds memory access")
;; both past memory: traps at the header's byte
(assert_trap (invoke "header" (i32.const 65536)) "out of bounds memory access")
