;; Loops of v128 arithmetic that the vunroll pass (compiler/ir/ir_vunroll.c)
;; asks LLVM to unroll by 4 with a run-time count: every remainder (0 to 3
;; vectors left over) and the empty loop give the same sums as one vector a
;; trip; tests/unit/test_vunroll.c reads the IR of this module.
(module
  (memory 1)
  ;; x: f64 at 0, y: f64 at 32768, k = 0 .. 2n-1: x[k] = k, y[k] = 1
  (func $init (param $n i32)
    (local $k i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $k) (i32.shl (local.get $n) (i32.const 1))))
        (f64.store (i32.shl (local.get $k) (i32.const 3)) (f64.convert_i32_u (local.get $k)))
        (f64.store offset=32768 (i32.shl (local.get $k) (i32.const 3)) (f64.const 1))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $l))))
  (func $sum (param $n i32) (result f64)
    (local $k i32) (local $s f64)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $k) (i32.shl (local.get $n) (i32.const 1))))
        (local.set $s (f64.add (local.get $s)
          (f64.load offset=32768 (i32.shl (local.get $k) (i32.const 3)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $l)))
    (local.get $s))
  ;; func 2: y[i] += a * x[i] over m f64x2 vectors (m = 0: nothing)
  (func $axpy (export "axpy") (param $m i32) (param $a f64)
    (local $i i32) (local $av v128)
    (local.set $av (f64x2.splat (local.get $a)))
    (block $done
      (br_if $done (i32.eqz (local.get $m)))
      (loop $l
        (v128.store offset=32768 (local.get $i)
          (f64x2.add (v128.load offset=32768 (local.get $i))
                     (f64x2.mul (local.get $av) (v128.load (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br_if $l (i32.ne (local.get $i) (i32.shl (local.get $m) (i32.const 4)))))))
  ;; func 3: the same loop with a call in it (not unrolled)
  (func $twice (param v128) (result v128) (f64x2.add (local.get 0) (local.get 0)))
  (func $axpy_call (export "axpy_call") (param $m i32) (param $a f64)
    (local $i i32) (local $av v128)
    (local.set $av (f64x2.splat (local.get $a)))
    (block $done
      (br_if $done (i32.eqz (local.get $m)))
      (loop $l
        (v128.store offset=32768 (local.get $i)
          (f64x2.add (v128.load offset=32768 (local.get $i))
                     (call $twice (f64x2.mul (local.get $av) (v128.load (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br_if $l (i32.ne (local.get $i) (i32.shl (local.get $m) (i32.const 4)))))))
  ;; 9 vectors of x and y, then m of them through axpy (a = 2): the sum of y
  ;; is (2m - 1) 2m + 18
  (func (export "run") (param $m i32) (result f64)
    (call $init (i32.const 9))
    (call $axpy (local.get $m) (f64.const 2))
    (call $sum (i32.const 9)))
  ;; the same through axpy_call (a = 1, doubled in $twice): the same sums
  (func (export "run_call") (param $m i32) (result f64)
    (call $init (i32.const 9))
    (call $axpy_call (local.get $m) (f64.const 1))
    (call $sum (i32.const 9)))
  ;; func 7: i32x4 lanes, z[i] = (z[i] + x[i]) * 3 over m vectors at 0 and
  ;; 16384, x[k] = k; the sum of z, which starts at 0: 3 * sum(k < 4m)
  (func (export "iloop") (param $m i32) (result i32)
    (local $i i32) (local $k i32) (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $k) (i32.const 64)))
        (i32.store (i32.shl (local.get $k) (i32.const 2)) (local.get $k))
        (i32.store offset=16384 (i32.shl (local.get $k) (i32.const 2)) (i32.const 0))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $l)))
    (block $done
      (br_if $done (i32.eqz (local.get $m)))
      (loop $l
        (v128.store offset=16384 (local.get $i)
          (i32x4.mul (i32x4.add (v128.load offset=16384 (local.get $i)) (v128.load (local.get $i)))
                     (i32x4.splat (i32.const 3))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br_if $l (i32.ne (local.get $i) (i32.shl (local.get $m) (i32.const 4))))))
    (local.set $k (i32.const 0))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $k) (i32.const 64)))
        (local.set $s (i32.add (local.get $s) (i32.load offset=16384 (i32.shl (local.get $k) (i32.const 2)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $l)))
    (local.get $s))
)

(assert_return (invoke "run" (i32.const 0)) (f64.const 18))
(assert_return (invoke "run" (i32.const 1)) (f64.const 20))
(assert_return (invoke "run" (i32.const 2)) (f64.const 30))
(assert_return (invoke "run" (i32.const 3)) (f64.const 48))
(assert_return (invoke "run" (i32.const 4)) (f64.const 74))
(assert_return (invoke "run" (i32.const 5)) (f64.const 108))
(assert_return (invoke "run" (i32.const 8)) (f64.const 258))
(assert_return (invoke "run" (i32.const 9)) (f64.const 324))
(assert_return (invoke "run_call" (i32.const 0)) (f64.const 18))
(assert_return (invoke "run_call" (i32.const 3)) (f64.const 48))
(assert_return (invoke "run_call" (i32.const 9)) (f64.const 324))
(assert_return (invoke "iloop" (i32.const 0)) (i32.const 0))
(assert_return (invoke "iloop" (i32.const 1)) (i32.const 18))
(assert_return (invoke "iloop" (i32.const 3)) (i32.const 198))
(assert_return (invoke "iloop" (i32.const 6)) (i32.const 828))
(assert_return (invoke "iloop" (i32.const 7)) (i32.const 1134))
(assert_return (invoke "iloop" (i32.const 16)) (i32.const 6048))
;; past the end of memory: the trap, unrolled or not
(assert_trap (invoke "axpy" (i32.const 4096) (f64.const 1)) "out of bounds memory access")
