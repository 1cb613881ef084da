;; A size phi read again past a loop (compiler/bnd_fresh.c, guard mode):
;; a loop calls a comparator inlined (its checks left to the guard pages)
;; or, through the table, a function growing memory, so GVN carries the
;; size in phis through the loop and its exit for the copy loop after it
;; (its versioned test, its vectorised trip count).  The phis become one
;; load after the loop where no call comes between; the copy loop then
;; sees memory grown inside the first loop, and traps past it.  Memory
;; of one page (at most three).
(module
  (memory 1 3)
  (type $t (func (param i32 i32) (result i32)))
  (table 2 funcref)
  (elem (i32.const 0) $cmp $grow)
  (func $cmp (type $t) (i32.sub (i32.load16_u (local.get 0)) (i32.load16_u (local.get 1))))
  (func $grow (type $t) (drop (memory.grow (i32.const 1))) (i32.const 0))
  (func (export "size") (result i32) (memory.size))
  (func (export "peek64") (param i32) (result i64) (i64.load (local.get 0)))
  ;; f = 0: n compares from p; else n calls of table entry f; each step
  ;; stores the sum at q + 4i; then m words copied from p to q
  (func (export "run") (param $f i32) (param $n i32) (param $p i32) (param $q i32) (param $m i32) (result i32)
    (local $i i32) (local $acc i32)
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $acc (i32.add (local.get $acc)
        (if (result i32) (i32.eqz (local.get $f))
          (then (call $cmp (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 1))) (local.get $p)))
          (else (call_indirect (type $t) (local.get $p) (local.get $p) (local.get $f))))))
      (i32.store (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 2))) (local.get $acc))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (local.set $i (i32.const 0))
    (block $d2 (loop $c
      (br_if $d2 (i32.ge_u (local.get $i) (local.get $m)))
      (i64.store (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 3)))
                 (i64.load (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 3)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $c)))
    (local.get $acc))
)

(assert_return (invoke "run" (i32.const 0) (i32.const 4) (i32.const 0) (i32.const 1024) (i32.const 8)) (i32.const 0))
;; the copy's second word lies past one page
(assert_trap (invoke "run" (i32.const 0) (i32.const 1) (i32.const 0) (i32.const 65528) (i32.const 2)) "out of bounds memory access")
(assert_return (invoke "peek64" (i32.const 65528)) (i64.const 0))
;; the loop grows memory first: its store and the copy land in page two
(assert_return (invoke "run" (i32.const 1) (i32.const 1) (i32.const 0) (i32.const 65536) (i32.const 2)) (i32.const 0))
(assert_return (invoke "size") (i32.const 2))
;; no call in the loop: the copy's second word lies past two pages
(assert_trap (invoke "run" (i32.const 0) (i32.const 1) (i32.const 0) (i32.const 131064) (i32.const 2)) "out of bounds memory access")
;; twice through the table: three pages, the copy of 16 words fits
(assert_return (invoke "run" (i32.const 1) (i32.const 1) (i32.const 0) (i32.const 131072) (i32.const 16)) (i32.const 0))
(assert_return (invoke "size") (i32.const 3))
(assert_trap (invoke "run" (i32.const 0) (i32.const 1) (i32.const 0) (i32.const 196600) (i32.const 2)) "out of bounds memory access")
