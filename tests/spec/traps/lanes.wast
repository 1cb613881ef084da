;; Accesses at lanes of a vector induction variable (clang's -msimd128
;; build of `dst[2 * i]`): compiler/bnd_lane.c reads each extracted lane
;; as a scalar induction variable, so the loop is versioned and its checks
;; are proved before it.  The first store that leaves memory traps, the
;; stores before it stay, also where the lane's address wraps.

(module
  (memory 1)
  ;; lane k of v = <i, i+1, i+2, i+3> stored at base + 8 * lane
  (func (export "spread") (param $n i32) (param $base i32)
    (local $i i32) (local $v v128)
    (local.set $v (v128.const i32x4 0 1 2 3))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store (i32.add (local.get $base)
                            (i32.shl (i32x4.extract_lane 0 (i32x4.shl (local.get $v) (i32.const 1))) (i32.const 2)))
                   (i32x4.extract_lane 0 (local.get $v)))
        (i32.store (i32.add (local.get $base)
                            (i32.shl (i32x4.extract_lane 1 (i32x4.shl (local.get $v) (i32.const 1))) (i32.const 2)))
                   (i32x4.extract_lane 1 (local.get $v)))
        (i32.store (i32.add (local.get $base)
                            (i32.shl (i32x4.extract_lane 2 (i32x4.shl (local.get $v) (i32.const 1))) (i32.const 2)))
                   (i32x4.extract_lane 2 (local.get $v)))
        (i32.store (i32.add (local.get $base)
                            (i32.shl (i32x4.extract_lane 3 (i32x4.shl (local.get $v) (i32.const 1))) (i32.const 2)))
                   (i32x4.extract_lane 3 (local.get $v)))
        (local.set $v (i32x4.add (local.get $v) (v128.const i32x4 4 4 4 4)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l))))
  ;; the same through the lanes' odd neighbours (v << 1 | 1, the constant
  ;; an i64x2: bitwise, any shape reads it); LLVM makes the one lane used
  ;; a scalar phi itself, whose start is a constant expression (the lane
  ;; of a bitcast constant) compiler/bnd_lin.c reads
  (func (export "odd") (param $n i32) (result i32)
    (local $i i32) (local $v v128) (local $s i32)
    (local.set $v (v128.const i32x4 0 1 2 3))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i32.add (local.get $s)
          (i32.load (i32.shl (i32x4.extract_lane 3
            (v128.or (i32x4.shl (local.get $v) (i32.const 1)) (v128.const i64x2 0x100000001 0x100000001)))
            (i32.const 2)))))
        (local.set $v (i32x4.add (local.get $v) (v128.const i32x4 4 4 4 4)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $l)))
    (local.get $s))
  (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
)

(assert_return (invoke "spread" (i32.const 16) (i32.const 0)))
(assert_return (invoke "load" (i32.const 40)) (i32.const 5))
(assert_return (invoke "load" (i32.const 120)) (i32.const 15))
(assert_return (invoke "load" (i32.const 128)) (i32.const 0))
(assert_return (invoke "spread" (i32.const 8192) (i32.const 0)))
(assert_return (invoke "load" (i32.const 65528)) (i32.const 8191))
(assert_trap (invoke "spread" (i32.const 8196) (i32.const 4)) "out of bounds memory access")
(assert_return (invoke "load" (i32.const 12)) (i32.const 1))
(assert_return (invoke "load" (i32.const 65532)) (i32.const 8191))
(assert_trap (invoke "spread" (i32.const 4) (i32.const -16)) "out of bounds memory access")
(assert_return (invoke "load" (i32.const 4)) (i32.const 0))
(assert_trap (invoke "spread" (i32.const 4) (i32.const -8)) "out of bounds memory access")
(assert_return (invoke "load" (i32.const 4)) (i32.const 0))

;; lane 3 of v << 1 | 1 is 2i + 7, read at 8i + 28 = 4 + 8(i + 3): the
;; value i + 3 the spread from base 4 left there; over i = 0, 4, .., 4092
;; that sums to 4 * (0 + .. + 1023) + 3 * 1024, up to 8188 to
;; 4 * (0 + .. + 2047) + 3 * 2048; i = 8192 reads at 65564
(assert_return (invoke "odd" (i32.const 4)) (i32.const 3))
(assert_return (invoke "odd" (i32.const 4096)) (i32.const 2098176))
(assert_return (invoke "odd" (i32.const 8192)) (i32.const 8390656))
(assert_trap (invoke "odd" (i32.const 8196)) "out of bounds memory access")
