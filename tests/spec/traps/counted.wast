;; Loops that address memory through an i32 counter (ir_address_loop.c,
;; 29 Nov 2026): a pointer p advanced by 1, whose increment is made nuw
;; (proved by the access at p in every iteration), and x + i with i
;; counted from 0 (left as it is: measured and left out).  Where a sum
;; would wrap, the first access past memory traps, with every earlier
;; store done.  Memory of one page, bytes 1..16 at 0.
(module
  (memory 1)
  (data (i32.const 0) "\01\02\03\04\05\06\07\08\09\0a\0b\0c\0d\0e\0f\10")
  (func (export "get8") (param i32) (result i32) (i32.load8_u (local.get 0)))
  ;; dst[i] = src[i] + 1 for i < n, counted from 0
  (func (export "copy") (param $src i32) (param $dst i32) (param $n i32)
    (local $i i32)
    (block $done
      (br_if $done (i32.eqz (local.get $n)))
      (loop $l
        (i32.store8 (i32.add (local.get $dst) (local.get $i))
          (i32.add (i32.load8_u (i32.add (local.get $src) (local.get $i))) (i32.const 1)))
        (br_if $l (i32.ne (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get $n))))))
  ;; the sum of n bytes from p, p advanced by 1
  (func (export "sum") (param $p i32) (param $n i32) (result i32)
    (local $s i32)
    (block $done
      (br_if $done (i32.eqz (local.get $n)))
      (loop $l
        (local.set $s (i32.add (local.get $s) (i32.load8_u (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
    (local.get $s))
  ;; how many of the first n bytes at a and b are equal before they differ
  (func (export "match") (param $a i32) (param $b i32) (param $n i32) (result i32)
    (local $l i32)
    (block $done
      (br_if $done (i32.eqz (local.get $n)))
      (loop $next
        (br_if $done (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $l)))
                             (i32.load8_u (i32.add (local.get $b) (local.get $l)))))
        (br_if $next (i32.ne (local.tee $l (i32.add (local.get $l) (i32.const 1))) (local.get $n)))))
    (local.get $l))
)

(assert_return (invoke "sum" (i32.const 0) (i32.const 16)) (i32.const 136))
(assert_return (invoke "copy" (i32.const 0) (i32.const 100) (i32.const 16)))
(assert_return (invoke "get8" (i32.const 100)) (i32.const 2))
(assert_return (invoke "get8" (i32.const 115)) (i32.const 17))
(assert_return (invoke "match" (i32.const 0) (i32.const 0) (i32.const 16)) (i32.const 16))
(assert_return (invoke "match" (i32.const 0) (i32.const 100) (i32.const 16)) (i32.const 0))
(assert_return (invoke "copy" (i32.const 0) (i32.const 200) (i32.const 4)))
(assert_return (invoke "match" (i32.const 0) (i32.const 200) (i32.const 16)) (i32.const 0))
(assert_return (invoke "copy" (i32.const 100) (i32.const 300) (i32.const 16)))
(assert_return (invoke "match" (i32.const 100) (i32.const 300) (i32.const 16)) (i32.const 0))

;; p + i past the end of memory: 6 bytes copied, the seventh load traps
(assert_trap (invoke "copy" (i32.const 65530) (i32.const 400) (i32.const 10)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 405)) (i32.const 1))
(assert_return (invoke "get8" (i32.const 406)) (i32.const 0))
;; x + i would wrap to 0 after 16 bytes: the first access traps
(assert_trap (invoke "copy" (i32.const -16) (i32.const 500) (i32.const 32)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 500)) (i32.const 0))
(assert_trap (invoke "copy" (i32.const 0) (i32.const -16) (i32.const 32)) "out of bounds memory access")
(assert_trap (invoke "match" (i32.const -1) (i32.const -1) (i32.const 4)) "out of bounds memory access")
(assert_trap (invoke "match" (i32.const 65535) (i32.const 65535) (i32.const 4)) "out of bounds memory access")
(assert_trap (invoke "sum" (i32.const -2) (i32.const 4)) "out of bounds memory access")
(assert_trap (invoke "sum" (i32.const 65534) (i32.const 4)) "out of bounds memory access")
