;; A binary search over a page's cells, as SQLite's sqlite3BtreeIndexMoveto
;; does it: each step reads the cell pointer's two bytes big-endian
;; (`aCellIdx[2*i] << 8 | aCellIdx[2*i + 1]`) under one check of both, with
;; the page's mask and data offset read between that check and the bytes
;; (LLVM sinks them there), and calls a comparator that may grow memory.
;; The group's check is left to the guard pages only because those loads
;; are proved by the page header's check (bnd_late.c `late_anchored`,
;; bnd_group.c, 30 Nov 2026): each byte traps at its own access.  Memory of
;; one page; page headers at 0, 80 and 160: nCell (+24, u16), mask (+26,
;; u16), the cell array's address (+64), the data's (+68); cells at 256,
;; data at 512.  The page at 80 has its cells at 65535 (the first byte
;; inside memory, the second past it), the one at 160 at 65536.
(module
  (memory 1)
  (data (i32.const 24) "\02\00\ff\ff")
  (data (i32.const 64) "\00\01\00\00\00\02\00\00")
  (data (i32.const 104) "\02\00\ff\ff")
  (data (i32.const 144) "\ff\ff\00\00\00\02\00\00")
  (data (i32.const 184) "\02\00\ff\ff")
  (data (i32.const 224) "\00\00\01\00\00\02\00\00")
  (data (i32.const 256) "\00\10\00\20")
  (data (i32.const 528) "\05")
  (data (i32.const 544) "\09")
  (func $cmp (param $c i32) (result i32)
    (if (i32.eq (i32.load8_u (local.get $c)) (i32.const 9)) (then (drop (memory.grow (i32.const 0)))))
    (i32.sub (i32.load8_u (local.get $c)) (i32.const 7)))
  (func (export "search") (param $pg i32) (result i32) (local $lo i32) (local $hi i32) (local $i i32) (local $c i32)
    (local.set $hi (i32.load16_u offset=24 (local.get $pg)))
    (loop $next
      (local.set $i (i32.shr_u (i32.add (local.get $lo) (local.get $hi)) (i32.const 1)))
      (local.set $c (i32.add (i32.load offset=64 (local.get $pg))
        (i32.and (i32.shl (local.get $i) (i32.const 1)) (i32.const -4))))
      (local.set $c (i32.add (i32.load offset=68 (local.get $pg))
        (i32.and (i32.load16_u offset=26 (local.get $pg))
          (i32.or (i32.shl (i32.load8_u (local.get $c)) (i32.const 8)) (i32.load8_u offset=1 (local.get $c))))))
      (if (i32.lt_s (call $cmp (local.get $c)) (i32.const 0))
        (then (local.set $lo (i32.add (local.get $i) (i32.const 1))))
        (else (local.set $hi (local.get $i))))
      (br_if $next (i32.lt_u (local.get $lo) (local.get $hi))))
    (local.get $lo))
  (func $cmp_pure (param $c i32) (result i32) (i32.sub (i32.load8_u (local.get $c)) (i32.const 7)))
  ;; with a comparator that cannot grow memory LLVM unswitches the header's
  ;; check out of the loop: the loads between are proved a join away
  (func (export "search_pure") (param $pg i32) (result i32) (local $lo i32) (local $hi i32) (local $i i32) (local $c i32)
    (local.set $hi (i32.load16_u offset=24 (local.get $pg)))
    (loop $next
      (local.set $i (i32.shr_u (i32.add (local.get $lo) (local.get $hi)) (i32.const 1)))
      (local.set $c (i32.add (i32.load offset=64 (local.get $pg))
        (i32.and (i32.shl (local.get $i) (i32.const 1)) (i32.const -4))))
      (local.set $c (i32.add (i32.load offset=68 (local.get $pg))
        (i32.and (i32.load16_u offset=26 (local.get $pg))
          (i32.or (i32.shl (i32.load8_u (local.get $c)) (i32.const 8)) (i32.load8_u offset=1 (local.get $c))))))
      (if (i32.lt_s (call $cmp_pure (local.get $c)) (i32.const 0))
        (then (local.set $lo (i32.add (local.get $i) (i32.const 1))))
        (else (local.set $hi (local.get $i))))
      (br_if $next (i32.lt_u (local.get $lo) (local.get $hi))))
    (local.get $lo))
)

(assert_return (invoke "search" (i32.const 0)) (i32.const 2))
;; the second byte past memory: traps at it
(assert_trap (invoke "search" (i32.const 80)) "out of bounds memory access")
;; the first byte past memory: traps at it
(assert_trap (invoke "search" (i32.const 160)) "out of bounds memory access")
;; the header's fields past memory: traps at nCell's load
(assert_trap (invoke "search" (i32.const 65520)) "out of bounds memory access")
;; nCell inside, the mask and the addresses past memory
(assert_trap (invoke "search" (i32.const 65500)) "out of bounds memory access")

(assert_return (invoke "search_pure" (i32.const 0)) (i32.const 2))
;; the second byte past memory: traps at it
(assert_trap (invoke "search_pure" (i32.const 80)) "out of bounds memory access")
;; the first byte past memory: traps at it
(assert_trap (invoke "search_pure" (i32.const 160)) "out of bounds memory access")
;; the header's fields past memory: traps at nCell's load
(assert_trap (invoke "search_pure" (i32.const 65520)) "out of bounds memory access")
;; nCell inside, the mask and the addresses past memory
(assert_trap (invoke "search_pure" (i32.const 65500)) "out of bounds memory access")
