;; A load between a check and its access that an earlier access proves
;; inside memory (bnd_late.c, 29 Nov 2026): the same index, reaching no
;; further than that access did.  Memory never shrinks, so where the
;; earlier access ran the load cannot fault, and the check of the access
;; after it is left to the guard page (an interpreter's `dst->a =
;; src->a` after reading src->b, tests/bench/interp.c).  Memory of one
;; page, bytes 1..16 at 0.
(module
  (memory 1)
  (data (i32.const 0) "\01\02\03\04\05\06\07\08\09\0a\0b\0c\0d\0e\0f\10")
  (func (export "get8") (param i32) (result i32) (i32.load8_u (local.get 0)))
  ;; q[1] = p[1]; q[2] = p[0] (8-byte words)
  (func (export "move") (param $p i32) (param $q i32)
    (i64.store offset=8 (local.get $q) (i64.load offset=8 (local.get $p)))
    (i64.store offset=16 (local.get $q) (i64.load (local.get $p))))
  ;; the same with the narrower load first: it proves nothing for the wider
  (func (export "move_wide") (param $p i32) (param $q i32)
    (i64.store offset=8 (local.get $q) (i64.extend_i32_u (i32.load (local.get $p))))
    (i64.store offset=16 (local.get $q) (i64.load (local.get $p))))
)

(assert_return (invoke "move" (i32.const 0) (i32.const 100)))
(assert_return (invoke "get8" (i32.const 108)) (i32.const 9))
(assert_return (invoke "get8" (i32.const 116)) (i32.const 1))

;; q + 24 past memory: the first store done, the second traps
(assert_trap (invoke "move" (i32.const 0) (i32.const 65516)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65524)) (i32.const 9))
(assert_return (invoke "get8" (i32.const 65532)) (i32.const 0))
;; p + 16 past memory: the first load traps, nothing stored
(assert_trap (invoke "move" (i32.const 65530) (i32.const 200)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 208)) (i32.const 0))
;; p + 8 past memory but p + 4 inside: move_wide's first store done, the
;; wide load traps before the second
(assert_trap (invoke "move_wide" (i32.const 65530) (i32.const 300)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 316)) (i32.const 0))
