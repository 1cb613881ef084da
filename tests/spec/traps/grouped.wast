;; Loops whose checks bnd_loop.c proves as one group (guard mode, -O2 and
;; up): the accesses of an unrolled body at base + 0, 1, 2, 3 through one
;; counter share one range test of the smallest and the largest offset.
;; Where the test fails, the checked loop runs and traps at the exact
;; access: the stores before it done, the ones after it not.  And a
;; remainder loop of `n & 3` iterations (versioned like any other).
;; Memory of one page; bytes 1..16 at 0 and 0xa1..0xa8 at 65528.
(module
  (memory 1)
  (data (i32.const 0) "\01\02\03\04\05\06\07\08\09\0a\0b\0c\0d\0e\0f\10")
  (data (i32.const 65528) "\a1\a2\a3\a4\a5\a6\a7\a8")
  (func (export "get8") (param i32) (result i32) (i32.load8_u (local.get 0)))
  (func (export "put8") (param i32 i32) (i32.store8 (local.get 0) (local.get 1)))
  ;; dst[i + k] = src[i + k] for k = 0..3, i = 0, 4, .. < n (offsets as memargs)
  (func (export "copy4") (param $dst i32) (param $src i32) (param $n i32)
    (local $i i32) (local $d i32) (local $s i32)
    (block $done
      (br_if $done (i32.eqz (local.get $n)))
      (loop $next
        (local.set $d (i32.add (local.get $dst) (local.get $i)))
        (local.set $s (i32.add (local.get $src) (local.get $i)))
        (i32.store8 (local.get $d) (i32.load8_u (local.get $s)))
        (i32.store8 offset=1 (local.get $d) (i32.load8_u offset=1 (local.get $s)))
        (i32.store8 offset=2 (local.get $d) (i32.load8_u offset=2 (local.get $s)))
        (i32.store8 offset=3 (local.get $d) (i32.load8_u offset=3 (local.get $s)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br_if $next (i32.lt_u (local.get $i) (local.get $n))))))
  ;; the same body in the other order: offsets 3, 2, 1, 0
  (func (export "copy4_down") (param $dst i32) (param $src i32) (param $n i32)
    (local $i i32) (local $d i32) (local $s i32)
    (block $done
      (br_if $done (i32.eqz (local.get $n)))
      (loop $next
        (local.set $d (i32.add (local.get $dst) (local.get $i)))
        (local.set $s (i32.add (local.get $src) (local.get $i)))
        (i32.store8 offset=3 (local.get $d) (i32.load8_u offset=3 (local.get $s)))
        (i32.store8 offset=2 (local.get $d) (i32.load8_u offset=2 (local.get $s)))
        (i32.store8 offset=1 (local.get $d) (i32.load8_u offset=1 (local.get $s)))
        (i32.store8 (local.get $d) (i32.load8_u (local.get $s)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br_if $next (i32.lt_u (local.get $i) (local.get $n))))))
  ;; dst[j] = src[j] for j < (n & 3): the remainder loop of an unrolled copy
  (func (export "rem") (param $dst i32) (param $src i32) (param $n i32)
    (local $j i32) (local $m i32)
    (local.set $m (i32.and (local.get $n) (i32.const 3)))
    (block $done
      (br_if $done (i32.eqz (local.get $m)))
      (loop $next
        (i32.store8 (i32.add (local.get $dst) (local.get $j))
                    (i32.load8_u (i32.add (local.get $src) (local.get $j))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br_if $next (i32.lt_u (local.get $j) (local.get $m))))))
)

;; inside memory: the unchecked copy
(assert_return (invoke "copy4" (i32.const 100) (i32.const 0) (i32.const 8)))
(assert_return (invoke "get8" (i32.const 100)) (i32.const 1))
(assert_return (invoke "get8" (i32.const 103)) (i32.const 4))
(assert_return (invoke "get8" (i32.const 107)) (i32.const 8))
(assert_return (invoke "get8" (i32.const 108)) (i32.const 0))

;; a store in the middle of the second body faults: 65530..65535 written
(assert_trap (invoke "copy4" (i32.const 65530) (i32.const 0) (i32.const 8)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65530)) (i32.const 1))
(assert_return (invoke "get8" (i32.const 65534)) (i32.const 5))
(assert_return (invoke "get8" (i32.const 65535)) (i32.const 6))

;; a load in the middle of the second body faults: dst 200..205 written
;; (from 65529..65535, 65530.. holding 1..6 now), 207 not
(assert_return (invoke "get8" (i32.const 65529)) (i32.const 0xa2))
(assert_trap (invoke "copy4" (i32.const 200) (i32.const 65529) (i32.const 8)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 200)) (i32.const 0xa2))
(assert_return (invoke "get8" (i32.const 201)) (i32.const 1))
(assert_return (invoke "get8" (i32.const 206)) (i32.const 6))
(assert_return (invoke "get8" (i32.const 207)) (i32.const 0))

;; offsets 3 first: the second body's first store (65536 + 1) faults, so
;; nothing of that body is written, the first body is
(assert_return (invoke "put8" (i32.const 65535) (i32.const 0)))
(assert_return (invoke "put8" (i32.const 65534) (i32.const 0)))
(assert_trap (invoke "copy4_down" (i32.const 65530) (i32.const 8) (i32.const 8)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65530)) (i32.const 9))
(assert_return (invoke "get8" (i32.const 65533)) (i32.const 12))
(assert_return (invoke "get8" (i32.const 65534)) (i32.const 0))
(assert_return (invoke "get8" (i32.const 65535)) (i32.const 0))

;; a wrapped base: 0xfffffffc + 4 is 0 for i32 arithmetic, not 2^32
(assert_trap (invoke "copy4" (i32.const 300) (i32.const 0xfffffffc) (i32.const 8)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 300)) (i32.const 0))

;; the remainder loop: 3 iterations, the third faults
(assert_return (invoke "rem" (i32.const 400) (i32.const 0) (i32.const 7)))
(assert_return (invoke "get8" (i32.const 402)) (i32.const 3))
(assert_return (invoke "get8" (i32.const 403)) (i32.const 0))
(assert_trap (invoke "rem" (i32.const 65534) (i32.const 12) (i32.const 3)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65534)) (i32.const 13))
(assert_return (invoke "get8" (i32.const 65535)) (i32.const 14))
