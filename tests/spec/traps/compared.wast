;; A guarded load compared with another value in its block's branch and
;; again further on (a merge sort's comparator: `a->key == b->key`, then
;; `a->key < b->key`) stays a plain load after its label (bnd_fold.c,
;; 30 Nov 2026), which code generation folds into the compare (`cmp
;; mem, reg`); it must still trap, at its own offset.  And a size load
;; whose checks went to the guard pages, left for a check on a rare
;; path, moves down to that path (bnd_fresh.c): "rare" reads a word
;; (guarded) and only when it is 0 sums n bytes after it (a versioned
;; loop whose test reads the size).  Memory of one page.
(module
  (memory 1)
  (data (i32.const 0) "\00\00\00\00\07\00\01\02\03\04")
  (data (i32.const 16) "\05\00\00\00\07\00")
  (data (i32.const 32) "\06\00\00\00\09\00")
  (data (i32.const 65528) "\01\00\00\00\07\00\ff\ff")
  ;; key at +4 (16 bits), tie broken by the word at +0
  (func (export "cmp") (param $a i32) (param $b i32) (result i32) (local $x i32) (local $y i32)
    (local.set $x (i32.load16_u offset=4 (local.get $a)))
    (local.set $y (i32.load16_u offset=4 (local.get $b)))
    (if (result i32) (i32.eq (local.get $x) (local.get $y))
      (then (i32.sub (i32.load (local.get $a)) (i32.load (local.get $b))))
      (else (select (i32.const -1) (i32.const 1) (i32.lt_u (local.get $x) (local.get $y))))))
  (func (export "rare") (param $p i32) (param $n i32) (result i32) (local $s i32) (local $i i32)
    (local.set $s (i32.load (local.get $p)))
    (if (i32.eqz (local.get $s))
      (then (block $done (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i32.add (local.get $s)
          (i32.load8_u offset=4 (i32.add (local.get $p) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))))
    (local.get $s))
)

(assert_return (invoke "cmp" (i32.const 0) (i32.const 16)) (i32.const -5))
(assert_return (invoke "cmp" (i32.const 16) (i32.const 0)) (i32.const 5))
(assert_return (invoke "cmp" (i32.const 16) (i32.const 32)) (i32.const -1))
(assert_return (invoke "cmp" (i32.const 32) (i32.const 16)) (i32.const 1))
(assert_return (invoke "cmp" (i32.const 65528) (i32.const 0)) (i32.const 1))
;; b's key past memory: the second load (the one folded) traps
(assert_trap (invoke "cmp" (i32.const 0) (i32.const 65532)) "out of bounds memory access")
(assert_trap (invoke "cmp" (i32.const 16) (i32.const 65535)) "out of bounds memory access")
;; a's key past memory: the first load traps, b's never read
(assert_trap (invoke "cmp" (i32.const 65532) (i32.const 0)) "out of bounds memory access")
;; b's key the last two bytes of memory
(assert_return (invoke "cmp" (i32.const 65528) (i32.const 65530)) (i32.const -1))

(assert_return (invoke "rare" (i32.const 16) (i32.const 100000)) (i32.const 5))
(assert_return (invoke "rare" (i32.const 0) (i32.const 6)) (i32.const 17))
(assert_return (invoke "rare" (i32.const 0) (i32.const 0)) (i32.const 0))
;; the word inside, the bytes after it running past memory
(assert_return (invoke "rare" (i32.const 65520) (i32.const 8)) (i32.const 1))
(assert_trap (invoke "rare" (i32.const 65520) (i32.const 13)) "out of bounds memory access")
;; the word itself past memory
(assert_trap (invoke "rare" (i32.const 65533) (i32.const 0)) "out of bounds memory access")
