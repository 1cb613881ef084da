;; An upper triangle and its mirror (PolyBench's covariance: `for (i = 0;
;; i < n; i++) for (j = i; j < n; j++) { a[i][j] = ...; a[j][i] = ...; }`
;; in clang's rotated shape), over a 64-column matrix of i32 that may end
;; at the end of memory.  The inner loop's reach moves with i
;; (compiler/bnd_trip.c, bnd_trip_range): the check block bounds the
;; stores by the triangle's real extent, a[n-1][n-1] for both, so a
;; matrix ending exactly at the end of memory runs the unchecked copy;
;; one word further and the last row's only store traps, every store
;; before it done; a matrix whose column 0 passes the end traps at the
;; mirror store of row 0.

(module
  (memory 1)
  ;; a[i][j] = a[j][i] = 64 i + j + 1 for 0 <= i <= j < n, a at base
  (func (export "upper") (param $base i32) (param $n i32)
    (local $i i32) (local $j i32) (local $v i32)
    (if (i32.gt_s (local.get $n) (i32.const 0))
      (then
        (loop $outer
          (local.set $j (local.get $i))
          (loop $inner
            (local.set $v (i32.add (i32.add (i32.shl (local.get $i) (i32.const 6)) (local.get $j)) (i32.const 1)))
            (i32.store (i32.add (local.get $base)
                         (i32.shl (i32.add (i32.shl (local.get $i) (i32.const 6)) (local.get $j)) (i32.const 2)))
                       (local.get $v))
            (i32.store (i32.add (local.get $base)
                         (i32.shl (i32.add (i32.shl (local.get $j) (i32.const 6)) (local.get $i)) (i32.const 2)))
                       (local.get $v))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $inner (i32.lt_s (local.get $j) (local.get $n))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $outer (i32.lt_s (local.get $i) (local.get $n)))))))
  (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
)

;; column 0 past memory: the mirror store a[62][0] (i = 0, j = 62) is the
;; first past it; a[0][62] written just before, a[0][63] never
(assert_trap (invoke "upper" (i32.const 49664) (i32.const 64)) "out of bounds memory access")
(assert_return (invoke "load" (i32.const 49912)) (i32.const 63))
(assert_return (invoke "load" (i32.const 65280)) (i32.const 62))
(assert_return (invoke "load" (i32.const 49916)) (i32.const 0))
;; the whole 64 x 64 matrix, ending at 65536
(assert_return (invoke "upper" (i32.const 49152) (i32.const 64)))
(assert_return (invoke "load" (i32.const 49152)) (i32.const 1))
(assert_return (invoke "load" (i32.const 49156)) (i32.const 2))
(assert_return (invoke "load" (i32.const 49408)) (i32.const 2))
(assert_return (invoke "load" (i32.const 65528)) (i32.const 4032))
(assert_return (invoke "load" (i32.const 65532)) (i32.const 4096))
;; 32 x 32 with the same stride, a[31][31] the last word of memory
(assert_return (invoke "upper" (i32.const 57472) (i32.const 32)))
(assert_return (invoke "load" (i32.const 65532)) (i32.const 2016))
(assert_return (invoke "load" (i32.const 65408)) (i32.const 32))
(assert_return (invoke "load" (i32.const 65412)) (i32.const 96))
;; one word further: a[63][63] is the first store past memory (i = 63's
;; only one); a[63][62], a[63][61] and a[62][62] written before it
(assert_trap (invoke "upper" (i32.const 49156) (i32.const 64)) "out of bounds memory access")
(assert_return (invoke "load" (i32.const 65532)) (i32.const 4032))
(assert_return (invoke "load" (i32.const 65528)) (i32.const 3968))
(assert_return (invoke "load" (i32.const 65276)) (i32.const 4031))
;; nothing to do
(assert_return (invoke "upper" (i32.const 65536) (i32.const 0)))
