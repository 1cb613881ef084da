;; Accesses after memory grew (issue 18): a function keeps the memory size
;; it read last and reads it again only when an access looks out of bounds
;; against it, so a size read before a call that grew memory is stale.
;; Accesses to the new pages must not trap; one byte past the grown size
;; must trap at that access; v128 accesses (16 bytes) likewise.  Each
;; trapping export grows memory itself, so it also traps alone (offsets.sh
;; runs it in a fresh instance).
(module
  (memory 1 16)
  (func $grow (param i32) (result i32) (memory.grow (local.get 0)))
  ;; grows memory to at least $pages, through a call
  (func $grow_to (param $pages i32)
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then (drop (call $grow (i32.sub (local.get $pages) (memory.size)))))))
  (func (export "size") (result i32) (memory.size))
  (func (export "peek") (param i32) (result i32) (i32.load (local.get 0)))

  ;; the size is read at entry, then a call grows memory
  (func (export "grow-store") (param $pages i32) (param $p i32) (result i32)
    (call $grow_to (local.get $pages))
    (i32.store (local.get $p) (i32.const 77))
    (i32.load (local.get $p)))
  ;; memory grows by a page in each iteration, through a call, and the new
  ;; page's last word (or, with $over, the word one byte past it) is written
  (func (export "grow-loop") (param $n i32) (param $over i32) (result i32)
    (local $i i32) (local $at i32) (local $sum i32)
    (loop $l
      (local.set $at (i32.sub
        (i32.mul (i32.add (call $grow (i32.const 1)) (i32.const 1)) (i32.const 65536))
        (i32.sub (i32.const 4) (local.get $over))))
      (i32.store (local.get $at) (i32.add (local.get $i) (i32.const 1)))
      (local.set $sum (i32.add (local.get $sum) (i32.load (local.get $at))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (local.get $sum))
  ;; $p checked before a call; after it the same 4 bytes need no check,
  ;; 4 more bytes do
  (func (export "implied-after-call") (param $pages i32) (param $p i32) (result i32)
    (local $x i32)
    (call $grow_to (local.get $pages))
    (local.set $x (i32.load (local.get $p)))
    (drop (call $grow (i32.const 0)))
    (i32.add (i32.add (local.get $x) (i32.load (local.get $p)))
             (i32.load offset=4 (local.get $p))))
  ;; the same across blocks: the first check dominates the later accesses
  (func (export "dominated-after-call") (param $pages i32) (param $p i32) (param $c i32)
    (call $grow_to (local.get $pages))
    (i32.store (local.get $p) (i32.const 5))
    (if (local.get $c) (then (drop (call $grow (i32.const 0)))))
    (i32.store16 offset=2 (local.get $p) (i32.const 6))
    (i64.store (local.get $p) (i64.const 7)))
  ;; v128 at the end of grown memory: 16 bytes must fit
  (func (export "grow-v128") (param $pages i32) (param $p i32) (result i32)
    (call $grow_to (local.get $pages))
    (v128.store (local.get $p) (v128.const i32x4 1 2 3 4))
    (i32x4.extract_lane 3 (v128.load (local.get $p))))
  (func (export "grow-v128-load") (param $pages i32) (param $p i32) (result i32)
    (call $grow_to (local.get $pages))
    (i32x4.extract_lane 0 (v128.load (local.get $p))))
  ;; a loop over new pages after the call that grew them (versioned at -O2:
  ;; its range check reads the size anew)
  (func (export "grow-fill") (param $pages i32) (param $from i32) (param $to i32)
    (call $grow_to (local.get $pages))
    (loop $l
      (i32.store (local.get $from) (local.get $from))
      (local.set $from (i32.add (local.get $from) (i32.const 4)))
      (br_if $l (i32.lt_u (local.get $from) (local.get $to)))))
  ;; every level read the size at entry; the deepest grows memory, then
  ;; each level writes the last word of the grown memory on the way back
  (func $unwind (export "unwind-store") (param $d i32) (result i32)
    (local $at i32)
    (if (local.get $d)
      (then (drop (call $unwind (i32.sub (local.get $d) (i32.const 1)))))
      (else (drop (call $grow (i32.const 1)))))
    (local.set $at (i32.sub (i32.mul (memory.size) (i32.const 65536)) (i32.const 4)))
    (i32.store (local.get $at) (local.get $d))
    (i32.load (local.get $at)))
  ;; loads off one root checked as a group; the second is past the end
  (func (export "grow-group") (param $pages i32) (param $p i32) (result i32)
    (call $grow_to (local.get $pages))
    (i32.add (i32.load (local.get $p)) (i32.load offset=8 (local.get $p))))
)

(assert_return (invoke "size") (i32.const 1))
(assert_return (invoke "grow-store" (i32.const 2) (i32.const 65636)) (i32.const 77))
(assert_return (invoke "grow-store" (i32.const 2) (i32.const 131068)) (i32.const 77))
(assert_trap (invoke "grow-store" (i32.const 3) (i32.const 196606)) "out of bounds memory access")
(assert_return (invoke "size") (i32.const 3))
(assert_return (invoke "grow-loop" (i32.const 3) (i32.const 0)) (i32.const 6))
(assert_return (invoke "size") (i32.const 6))
(assert_return (invoke "peek" (i32.const 393212)) (i32.const 3))
(assert_trap (invoke "grow-loop" (i32.const 3) (i32.const 1)) "out of bounds memory access")
(assert_return (invoke "size") (i32.const 7))
(assert_return (invoke "implied-after-call" (i32.const 7) (i32.const 458744)) (i32.const 0))
(assert_trap (invoke "implied-after-call" (i32.const 7) (i32.const 458748)) "out of bounds memory access")
(assert_trap (invoke "dominated-after-call" (i32.const 7) (i32.const 458748) (i32.const 1)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 458748)) (i32.const 0x60005))
(assert_trap (invoke "dominated-after-call" (i32.const 7) (i32.const 458748) (i32.const 0)) "out of bounds memory access")
(assert_return (invoke "grow-v128" (i32.const 8) (i32.const 524272)) (i32.const 4))
(assert_trap (invoke "grow-v128" (i32.const 8) (i32.const 524273)) "out of bounds memory access")
(assert_trap (invoke "grow-v128-load" (i32.const 8) (i32.const 524273)) "out of bounds memory access")
(assert_return (invoke "grow-v128-load" (i32.const 8) (i32.const 524272)) (i32.const 1))
(assert_return (invoke "grow-fill" (i32.const 9) (i32.const 524288) (i32.const 589824)))
(assert_return (invoke "peek" (i32.const 589820)) (i32.const 589820))
(assert_trap (invoke "grow-fill" (i32.const 10) (i32.const 589824) (i32.const 655364)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 655356)) (i32.const 655356))
(assert_return (invoke "size") (i32.const 10))
(assert_return (invoke "unwind-store" (i32.const 5)) (i32.const 5))
(assert_return (invoke "size") (i32.const 11))
(assert_return (invoke "peek" (i32.const 720892)) (i32.const 5))
(assert_trap (invoke "grow-group" (i32.const 12) (i32.const 786424)) "out of bounds memory access")
(assert_return (invoke "grow-group" (i32.const 12) (i32.const 786420)) (i32.const 0))
