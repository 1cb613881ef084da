;; A dispatch loop whose opcode load (1024 + 4 pc) is checked in every
;; block entering the loop's header: once those checks are left to the
;; guard page, the header's phi of the checked address (and of pc + 1) is
;; computed from the pc phi again (compiler/bnd_phifn.c).  Results, the
;; store before a faulting jump, and traps at the opcode, at the operand
;; after the last opcode in memory, and at an address past 2^32.  Memory
;; of one page; the code is i32 words at 1024.
(module
  (memory 1)
  (data (i32.const 1024) "\00\00\00\00\05\00\00\00\00\00\00\00\07\00\00\00\01\00\00\00\06\00\00\00\02\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\03\00\00\00\01\00\00\00\00\3f\00\00\00\00\00\00\04\00\00\00\01\00\00\00\ff\3e\00\00")
  (func (export "peek") (param i32) (result i32) (i32.load (local.get 0)))
  ;; opcode 0: acc += operand, pc += 2; 1: pc = operand; others: return
  (func (export "run") (param $pc i32) (result i32) (local $acc i32)
    (block $exit
      (loop $next
        (block $jump
          (block $step
            (br_table $step $jump $exit
              (i32.load offset=1024 (i32.shl (local.get $pc) (i32.const 2)))))
          (local.set $acc (i32.add (local.get $acc)
            (i32.load offset=1028 (i32.shl (local.get $pc) (i32.const 2)))))
          (i32.store (i32.const 0) (local.get $acc))
          (local.set $pc (i32.add (local.get $pc) (i32.const 2)))
          (br $next))
        (local.set $pc (i32.load offset=1028 (i32.shl (local.get $pc) (i32.const 2))))
        (br $next)))
    (local.get $acc))
)
(assert_return (invoke "run" (i32.const 0)) (i32.const 12))
(assert_return (invoke "peek" (i32.const 0)) (i32.const 12))
(assert_return (invoke "run" (i32.const 2)) (i32.const 7))
(assert_trap (invoke "run" (i32.const 10)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 0)) (i32.const 3))
(assert_trap (invoke "run" (i32.const 14)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 0)) (i32.const 4))
(assert_trap (invoke "run" (i32.const 16127)) "out of bounds memory access")
(assert_trap (invoke "run" (i32.const 0x3fffff00)) "out of bounds memory access")
(assert_trap (invoke "run" (i32.const 16128)) "out of bounds memory access")
