;; Side effects before a faulting access happen, those after it do not
;; (issue 18): stores and global.set may not be sunk past, or deleted
;; because of, an access that traps.
(module
  (memory 1 1)
  (global $g (mut i32) (i32.const 0))
  (global $h (mut i64) (i64.const 0))
  (func (export "g") (result i32) (global.get $g))
  (func (export "h") (result i64) (global.get $h))
  (func (export "peek") (param i32) (result i32) (i32.load8_u (local.get 0)))
  (func (export "peek32") (param i32) (result i32) (i32.load (local.get 0)))

  ;; a store overwritten by a wider store that faults
  (func (export "store-then-wider")
    (i32.store8 (i32.const 65535) (i32.const 7))
    (i32.store (i32.const 65535) (i32.const 0)))
  (func (export "store-then-same") (param i32)
    (i32.store (local.get 0) (i32.const 11))
    (i64.store (local.get 0) (i64.const 0)))
  ;; a loop storing and setting a global each iteration, then faulting
  (func (export "loop-global") (param $n i32) (local $i i32)
    (loop $l
      (global.set $g (local.get $i))
      (i32.store (i32.mul (local.get $i) (i32.const 4)) (local.get $i))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n)))))
  (func (export "loop-load-global") (param $p i32) (param $n i32) (local $i i32) (local $s i32)
    (loop $l
      (global.set $g (local.get $i))
      (local.set $s (i32.add (local.get $s)
        (i32.load (i32.add (local.get $p) (i32.mul (local.get $i) (i32.const 4))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (global.set $h (i64.extend_i32_u (local.get $s))))
  (func (export "global-before-load") (param i32) (result i32)
    (global.set $g (i32.const 42))
    (i32.load (local.get 0)))
  (func (export "store-before-load") (param i32) (result i32)
    (i32.store (i32.const 16) (i32.const 99))
    (i32.load (local.get 0)))
  ;; an infinite loop whose first iteration stores out of bounds
  (func (export "loop-forever-store")
    (loop $l
      (i32.store (i32.const 65536) (i32.const 1))
      (br $l)))
  (func (export "loop-forever-load") (local $x i32)
    (loop $l
      (local.set $x (i32.load (i32.const 65536)))
      (br $l)))
)

(assert_trap (invoke "store-then-wider") "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 65535)) (i32.const 7))
(assert_trap (invoke "store-then-same" (i32.const 65532)) "out of bounds memory access")
(assert_return (invoke "peek32" (i32.const 65532)) (i32.const 11))
(assert_trap (invoke "loop-global" (i32.const 20000)) "out of bounds memory access")
(assert_return (invoke "g") (i32.const 16384))
(assert_return (invoke "peek32" (i32.const 65532)) (i32.const 16383))
(assert_trap (invoke "loop-load-global" (i32.const 65000) (i32.const 1000)) "out of bounds memory access")
(assert_return (invoke "g") (i32.const 134))
(assert_return (invoke "h") (i64.const 0))
(assert_trap (invoke "global-before-load" (i32.const 65534)) "out of bounds memory access")
(assert_return (invoke "g") (i32.const 42))
(assert_trap (invoke "store-before-load" (i32.const 65534)) "out of bounds memory access")
(assert_return (invoke "peek32" (i32.const 16)) (i32.const 99))
(assert_trap (invoke "loop-forever-store") "out of bounds memory access")
(assert_trap (invoke "loop-forever-load") "out of bounds memory access")
