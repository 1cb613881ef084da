;; Byte copies `mem[d + k] = mem[s + k]` through i32 sums (compress's match
;; copy), versioned in guard mode at -O2 and up (compiler/bnd_loop.c): a
;; check block whose end test `s + k + 1 <= size` already bounds the sum
;; below 2^32 keeps no test of its own that the sum stays below 2^32
;; (drop_implied_hi), nor tests that each operand of the sum does
;; (bnd_widen.c).  Results where the copy runs, exact traps where the
;; checked loop runs instead, and sums that wrap past 2^32 to valid
;; addresses (the unchecked copy, which adds in i64, must not run).
;; Memory of one page; the bytes 1 .. 8 at 0.
(module
  (memory 1)
  (data (i32.const 0) "\01\02\03\04\05\06\07\08")
  (func (export "byte") (param i32) (result i32) (i32.load8_u (local.get 0)))
  ;; for k in [start, n): mem[d + k] = mem[s + k]
  (func (export "copy") (param $d i32) (param $s i32) (param $start i32) (param $n i32)
    (local $k i32)
    (local.set $k (local.get $start))
    (block $done
      (br_if $done (i32.ge_u (local.get $k) (local.get $n)))
      (loop $next
        (i32.store8 (i32.add (local.get $d) (local.get $k))
                    (i32.load8_u (i32.add (local.get $s) (local.get $k))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br_if $next (i32.lt_u (local.get $k) (local.get $n))))))
  ;; the same, overlapping (LZ77: mem[at + k] = mem[at + k - dist])
  (func (export "repeat") (param $at i32) (param $dist i32) (param $len i32)
    (local $k i32)
    (block $done
      (br_if $done (i32.eqz (local.get $len)))
      (loop $next
        (i32.store8 (i32.add (local.get $at) (local.get $k))
                    (i32.load8_u (i32.sub (i32.add (local.get $at) (local.get $k)) (local.get $dist))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br_if $next (i32.lt_u (local.get $k) (local.get $len))))))
)

;; inside memory
(invoke "copy" (i32.const 100) (i32.const 0) (i32.const 0) (i32.const 8))
(assert_return (invoke "byte" (i32.const 100)) (i32.const 1))
(assert_return (invoke "byte" (i32.const 107)) (i32.const 8))
(invoke "repeat" (i32.const 200) (i32.const 200) (i32.const 3))
(assert_return (invoke "byte" (i32.const 200)) (i32.const 1))
(invoke "repeat" (i32.const 203) (i32.const 3) (i32.const 7))
(assert_return (invoke "byte" (i32.const 208)) (i32.const 3))
(assert_return (invoke "byte" (i32.const 209)) (i32.const 1))
(assert_return (invoke "byte" (i32.const 210)) (i32.const 0))

;; the last byte of memory is written, the next store traps
(assert_trap (invoke "copy" (i32.const 65530) (i32.const 0) (i32.const 0) (i32.const 8))
             "out of bounds memory access")
(assert_return (invoke "byte" (i32.const 65535)) (i32.const 6))
(assert_trap (invoke "repeat" (i32.const 65534) (i32.const 65534) (i32.const 5))
             "out of bounds memory access")
(assert_return (invoke "byte" (i32.const 65535)) (i32.const 2))
;; the source ends at memory's end exactly: no trap
(invoke "copy" (i32.const 300) (i32.const 65528) (i32.const 0) (i32.const 8))
(assert_return (invoke "byte" (i32.const 307)) (i32.const 2))

;; s + k wraps past 2^32 to the bytes at 0: s + k + 1 is above any size,
;; so the checked loop runs and reads 0 .. 7
(invoke "copy" (i32.const 400) (i32.const 0xfffffff0) (i32.const 16) (i32.const 24))
(assert_return (invoke "byte" (i32.const 416)) (i32.const 1))
(assert_return (invoke "byte" (i32.const 423)) (i32.const 8))
;; d + k and s + k wrap: the bytes at 0 .. 7 land at 0x40 .. 0x47
(invoke "copy" (i32.const 0xfffffff0) (i32.const 0xffffffb0) (i32.const 0x50) (i32.const 0x58))
(assert_return (invoke "byte" (i32.const 0x40)) (i32.const 1))
(assert_return (invoke "byte" (i32.const 0x47)) (i32.const 8))
(invoke "copy" (i32.const 0xfffffff0) (i32.const 0xfffffff0) (i32.const 0x10) (i32.const 0x18))
(assert_return (invoke "byte" (i32.const 0)) (i32.const 1))
;; a sum that wraps to just below 2^32 traps at its first access
(assert_trap (invoke "copy" (i32.const 500) (i32.const 0xfffffff0) (i32.const 8) (i32.const 24))
             "out of bounds memory access")
(assert_return (invoke "byte" (i32.const 508)) (i32.const 0))
