;; A versioned loop whose trip count shifts a possibly negative value
;; (bnd_narrow.c, 29 Nov 2026): a byte copy unrolled by 4 whose counter
;; runs up to `end` with `!=`, as clang's copy of a match in
;; tests/bench/compress.c does.  The check block computes (n + 3) >> 2 of
;; n = end - start; where n < 0 the shift reads a clamped value, which
;; only the test's own conjunct `n >= 0` makes harmless (the test is
;; false, the checked loop runs).  Memory of one page; 0xa1..0xa4 at
;; 65532.
(module
  (memory 1)
  (data (i32.const 0) "\01\02\03\04\05\06\07\08")
  (data (i32.const 65532) "\a1\a2\a3\a4")
  (func (export "get8") (param i32) (result i32) (i32.load8_u (local.get 0)))
  ;; do dst[i + k] = src[i + k], k = 0..3; i += 4 while i != end
  (func (export "copy_to") (param $dst i32) (param $src i32) (param $i i32) (param $end i32)
    (local $d i32) (local $s i32)
    (loop $next
      (local.set $d (i32.add (local.get $dst) (local.get $i)))
      (local.set $s (i32.add (local.get $src) (local.get $i)))
      (i32.store8 (local.get $d) (i32.load8_u (local.get $s)))
      (i32.store8 offset=1 (local.get $d) (i32.load8_u offset=1 (local.get $s)))
      (i32.store8 offset=2 (local.get $d) (i32.load8_u offset=2 (local.get $s)))
      (i32.store8 offset=3 (local.get $d) (i32.load8_u offset=3 (local.get $s)))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br_if $next (i32.ne (local.get $i) (local.get $end)))))
)

;; n = 8, inside memory: the unchecked copy
(assert_return (invoke "copy_to" (i32.const 100) (i32.const 0) (i32.const 0) (i32.const 8)))
(assert_return (invoke "get8" (i32.const 100)) (i32.const 1))
(assert_return (invoke "get8" (i32.const 107)) (i32.const 8))
(assert_return (invoke "get8" (i32.const 108)) (i32.const 0))

;; n = 8 reaching past memory: the store at 65536 traps, the bytes before
;; it written
(assert_trap (invoke "copy_to" (i32.const 65530) (i32.const 0) (i32.const 0) (i32.const 8)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65535)) (i32.const 6))

;; n = -4: the counter runs from 8 up past memory (it would wrap to 4);
;; the load at src + 32768 = 65536 faults first, every iteration before
;; it done: dst 32764..32767 hold src 65532..65535 (3 4 5 6 since the
;; copy above), 32768 is untouched
(assert_trap (invoke "copy_to" (i32.const 0) (i32.const 32768) (i32.const 8) (i32.const 4)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 32764)) (i32.const 3))
(assert_return (invoke "get8" (i32.const 32767)) (i32.const 6))
(assert_return (invoke "get8" (i32.const 32768)) (i32.const 0))

;; n = -2 (not a multiple of 4 either): each iteration copies the 4
;; bytes 4 lower, so from byte 2 on memory repeats 3 4 5 6; the store at
;; 65536 (i = 65532) faults first, after the load before it
(assert_trap (invoke "copy_to" (i32.const 4) (i32.const 0) (i32.const 2) (i32.const 0)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65534)) (i32.const 3))
(assert_return (invoke "get8" (i32.const 65535)) (i32.const 4))
