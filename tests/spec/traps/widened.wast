;; Loops whose accesses read through an i32 sum of a base and the loop's
;; offset (clang's wasm32 `zext(row + j)`), which the unchecked copy of a
;; bounds-versioned nest computes in i64 (compiler/bnd_widen.c; guard mode,
;; -O2 and up): results where the copy runs, exact traps where the checked
;; loop runs instead, and a base of 0xfffffff0 whose sums wrap to valid
;; addresses (the copy must not run: base + offset is not below 2^32).  Memory of one page; f64 values 1.0 2.0 ... at 0.
(module
  (memory 1)
  (data (i32.const 0)
    "\00\00\00\00\00\00\f0\3f\00\00\00\00\00\00\00\40"
    "\00\00\00\00\00\00\08\40\00\00\00\00\00\00\10\40")
  (func (export "f64") (param i32) (result f64) (f64.load (local.get 0)))
  ;; c[j] += 2 * b[j] for the bytes [start, n) of c and b, 16 at a time
  (func (export "axpy") (param $c i32) (param $b i32) (param $start i32) (param $n i32)
    (local $j i32) (local $x i32)
    (local.set $j (local.get $start))
    (block $done
      (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
      (loop $next
        (local.set $x (i32.add (local.get $c) (local.get $j)))
        (v128.store (local.get $x)
          (f64x2.add (v128.load (local.get $x))
                     (f64x2.mul (v128.const f64x2 2 2)
                                (v128.load (i32.add (local.get $b) (local.get $j))))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br_if $next (i32.lt_u (local.get $j) (local.get $n))))))
  ;; the sum of the 8-byte values at [c - 16 + j] for j in [0, n), 8 at a time
  (func (export "sum_before") (param $c i32) (param $n i32) (result f64)
    (local $j i32) (local $s f64)
    (block $done
      (br_if $done (i32.eqz (local.get $n)))
      (loop $next
        (local.set $s (f64.add (local.get $s)
          (f64.load (i32.add (i32.add (local.get $c) (local.get $j)) (i32.const -16)))))
        (local.set $j (i32.add (local.get $j) (i32.const 8)))
        (br_if $next (i32.lt_u (local.get $j) (local.get $n)))))
    (local.get $s))
  ;; the sum of the 8-byte values at [end - 32, end), with a counter from
  ;; -32 up to 0 as clang writes it (its form negative: sign-extended)
  (func (export "sum_to_zero") (param $end i32) (result f64)
    (local $j i32) (local $s f64)
    (local.set $j (i32.const -32))
    (loop $next
      (local.set $s (f64.add (local.get $s)
        (f64.load (i32.add (local.get $end) (local.get $j)))))
      (local.set $j (i32.add (local.get $j) (i32.const 8)))
      (br_if $next (i32.lt_s (local.get $j) (i32.const 0))))
    (local.get $s))
  ;; the sum over pairs i < j of five values from a: a[j] for each pair,
  ;; the inner loop skipped for the last i (nbody's triangular nest): over
  ;; every i the inner loop's counter bound holds for no i at all, so only
  ;; the inner loop can be versioned, once per i
  (func (export "triangle") (param $a i32) (result f64)
    (local $i i32) (local $j i32) (local $s f64)
    (loop $outer
      (block $skip
        (br_if $skip (i32.ge_u (i32.add (local.get $i) (i32.const 1)) (i32.const 5)))
        (local.set $j (i32.add (local.get $i) (i32.const 1)))
        (loop $inner
          (local.set $s (f64.add (local.get $s)
            (f64.load (i32.add (local.get $a) (i32.shl (local.get $j) (i32.const 3))))))
          (local.set $j (i32.add (local.get $j) (i32.const 1)))
          (br_if $inner (i32.ne (local.get $j) (i32.const 5)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $outer (i32.ne (local.get $i) (i32.const 5))))
    (local.get $s))
)

;; pairs (0,1..4) (1,2..4) (2,3..4) (3,4): a[1] + 2 a[2] + 3 a[3] + 4 a[4]
;; over the values 1 2 3 4 at 0 and 0 at 32: 2 + 6 + 12 + 0
(assert_return (invoke "triangle" (i32.const 0)) (f64.const 20))
;; a = -8 wraps: a[j] is the value at 8j - 8: 1 + 4 + 9 + 16
(assert_return (invoke "triangle" (i32.const 0xfffffff8)) (f64.const 30))
(assert_trap (invoke "triangle" (i32.const 65520)) "out of bounds memory access")

;; the four values, then the end of memory
(assert_return (invoke "sum_to_zero" (i32.const 32)) (f64.const 10))
(assert_return (invoke "sum_to_zero" (i32.const 65536)) (f64.const 0))
(assert_trap (invoke "sum_to_zero" (i32.const 65544)) "out of bounds memory access")
;; end - 32 wraps below 0: the first access is at 0xffffffe8
(assert_trap (invoke "sum_to_zero" (i32.const 8)) "out of bounds memory access")

;; b = c = the four values: c becomes 3 * c
(assert_return (invoke "axpy" (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 32)))
(assert_return (invoke "f64" (i32.const 0)) (f64.const 3))
(assert_return (invoke "f64" (i32.const 24)) (f64.const 12))
(assert_return (invoke "sum_before" (i32.const 16) (i32.const 32)) (f64.const 30))
;; up to the last byte of memory: nothing to add there (zeros)
(assert_return (invoke "axpy" (i32.const 65504) (i32.const 65504) (i32.const 0) (i32.const 32)))
;; past the end: the checked loop runs, stores what comes before and traps
;; at the first access past it
(assert_trap (invoke "axpy" (i32.const 65520) (i32.const 0) (i32.const 0) (i32.const 32)) "out of bounds memory access")
(assert_trap (invoke "axpy" (i32.const 0) (i32.const 65521) (i32.const 0) (i32.const 16)) "out of bounds memory access")
(assert_return (invoke "sum_before" (i32.const 65528) (i32.const 16)) (f64.const 6))
(assert_trap (invoke "sum_before" (i32.const 65528) (i32.const 32)) "out of bounds memory access")
;; c - 16 wraps below 0: the first access is at 0xfffffff8
(assert_trap (invoke "sum_before" (i32.const 8) (i32.const 16)) "out of bounds memory access")
;; a base whose sums wrap: c + j reads and writes 0 .. 31
(assert_return (invoke "axpy" (i32.const 0xfffffff0) (i32.const 0) (i32.const 16) (i32.const 48)))
(assert_return (invoke "f64" (i32.const 0)) (f64.const 21))
(assert_return (invoke "f64" (i32.const 8)) (f64.const 30))
(assert_return (invoke "f64" (i32.const 16)) (f64.const 9))
