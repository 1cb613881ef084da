;; An address and its index carried around a loop in two phis (GVN's
;; partial redundancy elimination: vm's `frames[fp]` pointer, computed
;; again only where fp changes), the access through the address phi,
;; its check on the index phi (hoisted out of the inner loop by LICM):
;; bnd_late.c reads the address as mem_base + index + constant, the same
;; on every edge, and leaves the check to the guard page (29 Nov 2026).
;; A bytecode loop: 0 reads frames[fp] + 12, 1 pushes a frame (fp++,
;; frames[fp] + 4 = pc), 2 pops one, 3 returns the sum read; frames at
;; 65512 (8 bytes each) in a memory of one page.
(module
  (memory 1)
  (data (i32.const 0) "\01\00\00\00\01\00\00\00\02\00\00\00\00\00\00\00\03\00\00\00")
  (data (i32.const 32) "\01\00\00\00\01\00\00\00\00\00\00\00\03\00\00\00")
  (data (i32.const 64) "\01\00\00\00\01\00\00\00\01\00\00\00\03\00\00\00")
  (data (i32.const 96) "\00\00\00\00\03\00\00\00")
  (func (export "get8") (param i32) (result i32) (i32.load8_u (local.get 0)))
  (func (export "run") (param $code i32) (result i32)
    (local $pc i32) (local $fp i32) (local $op i32) (local $acc i32)
    (loop $next
      (local.set $op (i32.load (i32.add (local.get $code) (i32.shl (local.get $pc) (i32.const 2)))))
      (local.set $pc (i32.add (local.get $pc) (i32.const 1)))
      (block $done (block $ret (block $call (block $arg
        (br_table $arg $call $ret $done (local.get $op)))
        (local.set $acc (i32.add (local.get $acc)
          (i32.load offset=12 (i32.add (i32.const 65512) (i32.shl (local.get $fp) (i32.const 3))))))
        (br $next))
        (local.set $fp (i32.add (local.get $fp) (i32.const 1)))
        (i32.store offset=4 (i32.add (i32.const 65512) (i32.shl (local.get $fp) (i32.const 3))) (local.get $pc))
        (br $next))
        (local.set $fp (i32.sub (local.get $fp) (i32.const 1)))
        (br $next))
      (return (local.get $acc)))
    (unreachable))
)

;; push, push, pop, read frames[1] + 12 (frames[2] + 4, written at pc 2)
(assert_return (invoke "run" (i32.const 0)) (i32.const 2))
;; fp 0: frames[0] + 12 is frames[1] + 4, written at pc 1
(assert_return (invoke "run" (i32.const 96)) (i32.const 1))
;; fp 2: the read at 65540 traps (the push at fp 2 wrote 65532..65535)
(assert_trap (invoke "run" (i32.const 32)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65532)) (i32.const 2))
;; fp 3: the push's store at 65540 traps
(assert_trap (invoke "run" (i32.const 64)) "out of bounds memory access")
