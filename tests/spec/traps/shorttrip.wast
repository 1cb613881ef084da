;; A lone versioned loop entered for at most 4 iterations runs its checked
;; copy without the versioning test's ranges (bnd_short.c, 30 Nov 2026):
;; SQLite's OP_Column header loop, reduced: t = s[0]; d[i] = t; s += 1 +
;; (t >> 7); while (++i <= p2 && s < end).  Each access still traps at its
;; own access, the stores before it kept, on the short way (p2 - i < 4) as
;; on the test's (longer loops).  Memory of one page.  Since round 12 the
;; short way needs three ranges (BND_SHORT_RANGES): "hdr" (one) runs the
;; test always, "hdr3" (d[i] i32, o[i] i64 of s, q[i] i16) has the branch.
;; Since round 14 the branch is added after LLVM's pipeline (bnd_short.c),
;; from the checked copy's own exit test; "rows" runs hdr3's loop inside a
;; loop over rows (i from 0, d, o and q moved on by end each row), where
;; LLVM merges the loop's two exits into one branch.
(module
  (memory 1)
  (func (export "set8") (param i32) (param i32) (i32.store8 (local.get 0) (local.get 1)))
  (func (export "get32") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "hdr") (param $d i32) (param $s i32) (param $i i32) (param $p2 i32) (param $end i32) (result i32)
    (local $t i32)
    (block $done
      (loop $next
        (local.set $t (i32.load8_u (local.get $s)))
        (i32.store (i32.add (local.get $d) (i32.shl (local.get $i) (i32.const 2))) (local.get $t))
        (local.set $s (i32.add (local.get $s) (i32.add (i32.const 1) (i32.shr_u (local.get $t) (i32.const 7)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $done (i32.gt_u (local.get $i) (local.get $p2)))
        (br_if $next (i32.lt_u (local.get $s) (local.get $end)))))
    (local.get $i))
  (func (export "hdr3") (param $d i32) (param $s i32) (param $i i32) (param $p2 i32) (param $end i32) (param $o i32) (param $q i32) (result i32)
    (local $t i32)
    (block $done
      (loop $next
        (local.set $t (i32.load8_u (local.get $s)))
        (i32.store (i32.add (local.get $d) (i32.shl (local.get $i) (i32.const 2))) (local.get $t))
        (i64.store (i32.add (local.get $o) (i32.shl (local.get $i) (i32.const 3))) (i64.extend_i32_u (local.get $s)))
        (i32.store16 (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 1))) (local.get $t))
        (local.set $s (i32.add (local.get $s) (i32.add (i32.const 1) (i32.shr_u (local.get $t) (i32.const 7)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $done (i32.gt_u (local.get $i) (local.get $p2)))
        (br_if $next (i32.lt_u (local.get $s) (local.get $end)))))
    (local.get $i))
  (func (export "rows") (param $d i32) (param $s i32) (param $nr i32) (param $p2 i32) (param $end i32) (param $o i32) (param $q i32) (result i32)
    (local $t i32) (local $i i32) (local $r i32)
    (loop $row
      (local.set $i (i32.const 0))
      (block $done
        (loop $next
          (local.set $t (i32.load8_u (local.get $s)))
          (i32.store (i32.add (local.get $d) (i32.shl (local.get $i) (i32.const 2))) (local.get $t))
          (i64.store (i32.add (local.get $o) (i32.shl (local.get $i) (i32.const 3))) (i64.extend_i32_u (local.get $s)))
          (i32.store16 (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 1))) (local.get $t))
          (local.set $s (i32.add (local.get $s) (i32.add (i32.const 1) (i32.shr_u (local.get $t) (i32.const 7)))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $done (i32.gt_u (local.get $i) (local.get $p2)))
          (br_if $next (i32.lt_u (local.get $s) (local.get $end)))))
      (local.set $d (i32.add (local.get $d) (local.get $end)))
      (local.set $o (i32.add (local.get $o) (local.get $end)))
      (local.set $q (i32.add (local.get $q) (local.get $end)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br_if $row (i32.lt_u (local.get $r) (local.get $nr))))
    (local.get $s))
  (func (export "get64") (param i32) (result i64) (i64.load (local.get 0)))
  (func (export "get16") (param i32) (result i32) (i32.load16_u (local.get 0)))
)

(assert_return (invoke "set8" (i32.const 200) (i32.const 5)))
(assert_return (invoke "set8" (i32.const 201) (i32.const 0x81)))
(assert_return (invoke "set8" (i32.const 203) (i32.const 7)))
(assert_return (invoke "set8" (i32.const 204) (i32.const 8)))
(assert_return (invoke "set8" (i32.const 205) (i32.const 9)))

;; two iterations inside memory (the short way)
(assert_return (invoke "hdr" (i32.const 1000) (i32.const 200) (i32.const 0) (i32.const 1) (i32.const 300)) (i32.const 2))
(assert_return (invoke "get32" (i32.const 1000)) (i32.const 5))
(assert_return (invoke "get32" (i32.const 1004)) (i32.const 0x81))

;; ended by s < end: three bytes read (5, 0x81 skipping one, 7), i = 3
(assert_return (invoke "hdr" (i32.const 2000) (i32.const 200) (i32.const 0) (i32.const 100) (i32.const 204)) (i32.const 3))
(assert_return (invoke "get32" (i32.const 2008)) (i32.const 7))

;; the short way, the third store (at 65536) traps, the two before kept
(assert_trap (invoke "hdr" (i32.const 65528) (i32.const 200) (i32.const 0) (i32.const 3) (i32.const 300)) "out of bounds memory access")
(assert_return (invoke "get32" (i32.const 65528)) (i32.const 5))
(assert_return (invoke "get32" (i32.const 65532)) (i32.const 0x81))

;; the same from i = 1 with d 4 lower: the first store traps
(assert_trap (invoke "hdr" (i32.const 65533) (i32.const 203) (i32.const 0) (i32.const 2) (i32.const 300)) "out of bounds memory access")
(assert_return (invoke "get32" (i32.const 65528)) (i32.const 5))

;; a longer loop (p2 = 10, through the test, which fails): the fifth store traps
(assert_trap (invoke "hdr" (i32.const 65520) (i32.const 203) (i32.const 0) (i32.const 10) (i32.const 300)) "out of bounds memory access")
(assert_return (invoke "get32" (i32.const 65520)) (i32.const 7))
(assert_return (invoke "get32" (i32.const 65524)) (i32.const 8))
(assert_return (invoke "get32" (i32.const 65528)) (i32.const 9))
(assert_return (invoke "get32" (i32.const 65532)) (i32.const 0))

;; the short way, the read at 65536 traps after two stores
(assert_return (invoke "set8" (i32.const 65534) (i32.const 3)))
(assert_return (invoke "set8" (i32.const 65535) (i32.const 4)))
(assert_trap (invoke "hdr" (i32.const 3000) (i32.const 65534) (i32.const 0) (i32.const 3) (i32.const 70000)) "out of bounds memory access")
(assert_return (invoke "get32" (i32.const 3000)) (i32.const 3))
(assert_return (invoke "get32" (i32.const 3004)) (i32.const 4))
(assert_return (invoke "get32" (i32.const 3008)) (i32.const 0))
;; hdr3: bytes at 200.. are 5, 0x81, (skipped), 7, 8, 9 again
(assert_return (invoke "set8" (i32.const 203) (i32.const 7)))
;; two iterations inside memory (the short way): d, o and q written
(assert_return (invoke "hdr3" (i32.const 4000) (i32.const 200) (i32.const 0) (i32.const 1) (i32.const 300) (i32.const 5000) (i32.const 6000)) (i32.const 2))
(assert_return (invoke "get32" (i32.const 4004)) (i32.const 0x81))
(assert_return (invoke "get64" (i32.const 5008)) (i64.const 201))
(assert_return (invoke "get16" (i32.const 6002)) (i32.const 0x81))
;; the short way, the third i64 store (at 65536 - 4) traps: that iteration's d store kept, its q store not made
(assert_trap (invoke "hdr3" (i32.const 7000) (i32.const 200) (i32.const 0) (i32.const 3) (i32.const 300) (i32.const 65516) (i32.const 8000)) "out of bounds memory access")
(assert_return (invoke "get32" (i32.const 7008)) (i32.const 7))
(assert_return (invoke "get64" (i32.const 65524)) (i64.const 201))
(assert_return (invoke "get16" (i32.const 8004)) (i32.const 0))
;; the short way, the second i16 store (at 65536) traps after its iteration's d and o stores
(assert_trap (invoke "hdr3" (i32.const 9000) (i32.const 200) (i32.const 0) (i32.const 3) (i32.const 300) (i32.const 10000) (i32.const 65534)) "out of bounds memory access")
(assert_return (invoke "get32" (i32.const 9004)) (i32.const 0x81))
(assert_return (invoke "get64" (i32.const 10008)) (i64.const 201))
(assert_return (invoke "get16" (i32.const 65534)) (i32.const 5))
;; a longer loop (p2 = 10, through the test, which fails): the fifth d store traps
(assert_trap (invoke "hdr3" (i32.const 65520) (i32.const 203) (i32.const 0) (i32.const 10) (i32.const 300) (i32.const 11000) (i32.const 12000)) "out of bounds memory access")
(assert_return (invoke "get32" (i32.const 65528)) (i32.const 9))
(assert_return (invoke "get16" (i32.const 12004)) (i32.const 9))
;; rows: two rows of two iterations each (the short way), bytes 5, 0x81 | 7, 8
(assert_return (invoke "set8" (i32.const 206) (i32.const 0)))
(assert_return (invoke "rows" (i32.const 13000) (i32.const 200) (i32.const 2) (i32.const 1) (i32.const 300) (i32.const 14000) (i32.const 15000)) (i32.const 205))
(assert_return (invoke "get32" (i32.const 13304)) (i32.const 8))
(assert_return (invoke "get64" (i32.const 14308)) (i64.const 204))
(assert_return (invoke "get16" (i32.const 15302)) (i32.const 8))
;; three iterations a row, the second row's third d store (at 65536) traps, its first two kept, its o and q stores not made
(assert_trap (invoke "rows" (i32.const 65228) (i32.const 200) (i32.const 2) (i32.const 2) (i32.const 300) (i32.const 16000) (i32.const 17000)) "out of bounds memory access")
(assert_return (invoke "get32" (i32.const 65528)) (i32.const 8))
(assert_return (invoke "get32" (i32.const 65532)) (i32.const 9))
(assert_return (invoke "get64" (i32.const 16308)) (i64.const 205))
(assert_return (invoke "get64" (i32.const 16316)) (i64.const 0))
(assert_return (invoke "get16" (i32.const 17304)) (i32.const 0))
