;; A triangular nest whose inner loop runs only under a guard on the outer
;; counter (clang's shape of nbody's `for (j = i + 1; j < 5; j++)`: a
;; counter from 4 - i down to zero, entered under `i < 4`).  Over the
;; whole outer range the inner loop has no bound (at i = 4 its counter
;; would start at zero and wrap), so compiler/bnd_trip.c bounds it over
;; the outer counters the guard lets in, and the nest runs without checks
;; where they are proved.  The first access past memory traps, the stores
;; before it stay.

(module
  (memory 1)
  ;; word w of base .. base + 12 gains 1 for each i <= w
  (func (export "tri") (param $base i32)
    (local $i i32) (local $c i32) (local $a i32) (local $k i32) (local $p i32)
    (local.set $c (i32.const 4))
    (local.set $a (local.get $base))
    (loop $outer
      (if (i32.lt_u (local.get $i) (i32.const 4))
        (then
          (local.set $k (local.get $c))
          (local.set $p (local.get $a))
          (loop $inner
            (i32.store (local.get $p) (i32.add (i32.load (local.get $p)) (i32.const 1)))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (local.set $k (i32.sub (local.get $k) (i32.const 1)))
            (br_if $inner (local.get $k)))))
      (local.set $c (i32.sub (local.get $c) (i32.const 1)))
      (local.set $a (i32.add (local.get $a) (i32.const 4)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $outer (i32.ne (local.get $i) (i32.const 5)))))
  (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
)

(assert_return (invoke "tri" (i32.const 0)))
(assert_return (invoke "load" (i32.const 0)) (i32.const 1))
(assert_return (invoke "load" (i32.const 4)) (i32.const 2))
(assert_return (invoke "load" (i32.const 12)) (i32.const 4))
(assert_return (invoke "load" (i32.const 16)) (i32.const 0))
(assert_return (invoke "tri" (i32.const 65520)))
(assert_return (invoke "load" (i32.const 65524)) (i32.const 2))
(assert_return (invoke "load" (i32.const 65532)) (i32.const 4))
;; i = 0 reaches 65536: the words before it have gained one more
(assert_trap (invoke "tri" (i32.const 65524)) "out of bounds memory access")
(assert_return (invoke "load" (i32.const 65524)) (i32.const 3))
(assert_return (invoke "load" (i32.const 65528)) (i32.const 4))
(assert_return (invoke "load" (i32.const 65532)) (i32.const 5))
;; the first address wraps past 2^32
(assert_trap (invoke "tri" (i32.const -4)) "out of bounds memory access")
(assert_return (invoke "load" (i32.const 0)) (i32.const 1))
;; i = 0's third store is the first past memory
(assert_trap (invoke "tri" (i32.const 65528)) "out of bounds memory access")
(assert_return (invoke "load" (i32.const 65528)) (i32.const 5))
(assert_return (invoke "load" (i32.const 65532)) (i32.const 6))
