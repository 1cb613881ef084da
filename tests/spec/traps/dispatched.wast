;; An interpreter's dispatch (issue 18, 29 Nov 2026): the load of the next
;; opcode is reached from the end of every case, through blocks that only
;; merge values (the latches of the loops LLVM makes of the cases), and
;; from the entry with a constant pc; each path's check is left to the
;; guard page together (compiler/bnd_late.c, joins).  Programs run off the
;; end of memory, jump there, or read an operand there; what they stored
;; before stays stored.  offsets.sh checks each trap names the faulting
;; access at -O0..-O3.
(module
  (memory 1)
  (func (export "peek") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "poke") (param i32 i32) (i32.store (local.get 0) (local.get 1)))
  ;; opcodes (words): 0 halt, 1 push imm, 2 add, 3 jump imm, 4 store top
  ;; at 8, 5 jump-if-nonzero imm, 6 decrement; code at $pc, the stack's
  ;; top at $sp (from 16 up); returns the word at $sp
  (func $run (param $pc i32) (result i32) (local $sp i32) (local $a i32)
    (local.set $sp (i32.const 12))
    (block $halt
      (loop $next
        (block $dec (block $jnz (block $out (block $jump (block $add (block $push
          (br_table $halt $push $add $jump $out $jnz $dec $halt
            (i32.load (local.get $pc))))
          ;; push
          (local.set $sp (i32.add (local.get $sp) (i32.const 4)))
          (i32.store (local.get $sp) (i32.load offset=4 (local.get $pc)))
          (local.set $pc (i32.add (local.get $pc) (i32.const 8)))
          (br $next))
          ;; add
          (local.set $a (i32.load (local.get $sp)))
          (local.set $sp (i32.sub (local.get $sp) (i32.const 4)))
          (i32.store (local.get $sp) (i32.add (i32.load (local.get $sp)) (local.get $a)))
          (local.set $pc (i32.add (local.get $pc) (i32.const 4)))
          (br $next))
          ;; jump
          (local.set $pc (i32.load offset=4 (local.get $pc)))
          (br $next))
          ;; store the top at 8
          (i32.store (i32.const 8) (i32.load (local.get $sp)))
          (local.set $pc (i32.add (local.get $pc) (i32.const 4)))
          (br $next))
          ;; jump if the top is not zero
          (if (i32.load (local.get $sp))
            (then (local.set $pc (i32.load offset=4 (local.get $pc))))
            (else (local.set $pc (i32.add (local.get $pc) (i32.const 8)))))
          (br $next))
        ;; decrement the top
        (i32.store (local.get $sp) (i32.sub (i32.load (local.get $sp)) (i32.const 1)))
        (local.set $pc (i32.add (local.get $pc) (i32.const 4)))
        (br $next)))
    (i32.load (local.get $sp)))
  (func (export "run") (param i32) (result i32) (call $run (local.get 0)))
  ;; the same program from the constant address 1024
  (func (export "run-1024") (result i32) (call $run (i32.const 1024)))

  ;; writes a countdown at $at: push $n, store, dec, jnz $at + 8, halt
  (func $countdown (param $at i32) (param $n i32)
    (i32.store (local.get $at) (i32.const 1))
    (i32.store offset=4 (local.get $at) (local.get $n))
    (i32.store offset=8 (local.get $at) (i32.const 4))
    (i32.store offset=12 (local.get $at) (i32.const 6))
    (i32.store offset=16 (local.get $at) (i32.const 5))
    (i32.store offset=20 (local.get $at) (i32.add (local.get $at) (i32.const 8)))
    (i32.store offset=24 (local.get $at) (i32.const 0)))
  (func (export "countdown-at") (param $at i32) (param $n i32) (result i32)
    (call $countdown (local.get $at) (local.get $n))
    (call $run (local.get $at)))
  ;; the countdown with its halt replaced by a jump to $to
  (func (export "countdown-jump") (param $at i32) (param $to i32) (result i32)
    (call $countdown (local.get $at) (i32.const 3))
    (i32.store offset=24 (local.get $at) (i32.const 3))
    (i32.store offset=28 (local.get $at) (local.get $to))
    (call $run (local.get $at)))
  ;; the countdown ending in a push whose operand lies past memory
  (func (export "countdown-push-end") (result i32)
    (call $countdown (i32.const 65508) (i32.const 2))
    (i32.store (i32.const 65532) (i32.const 1))
    (call $run (i32.const 65508)))
  ;; the countdown with its halt dropped: it runs off the end of memory
  (func (export "countdown-off-end") (result i32)
    (call $countdown (i32.const 65508) (i32.const 2))
    (i32.store (i32.const 65532) (i32.const 6))
    (call $run (i32.const 65508)))
)

(assert_return (invoke "countdown-at" (i32.const 64) (i32.const 5)) (i32.const 0))
(assert_return (invoke "peek" (i32.const 8)) (i32.const 1))
(assert_return (invoke "run-1024") (i32.const 0))
(assert_return (invoke "countdown-at" (i32.const 1024) (i32.const 4)) (i32.const 0))
(assert_return (invoke "run-1024") (i32.const 0))
(assert_return (invoke "countdown-at" (i32.const 65508) (i32.const 7)) (i32.const 0))
(assert_trap (invoke "countdown-jump" (i32.const 64) (i32.const 65533)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 8)) (i32.const 1))
(assert_return (invoke "countdown-jump" (i32.const 64) (i32.const 96)) (i32.const 0))
(assert_trap (invoke "countdown-jump" (i32.const 64) (i32.const -4)) "out of bounds memory access")
(assert_trap (invoke "countdown-push-end") "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 8)) (i32.const 1))
(assert_trap (invoke "countdown-off-end") "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 16)) (i32.const -1))
