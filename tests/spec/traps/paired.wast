;; A guarded byte or'ed 8 bits up with the byte below it (bnd_late.c,
;; 29 Nov 2026): an interpreter's 16-bit operand `pc[1] | pc[2] << 8`,
;; which clang's wasm code reads pc[2] first.  The check of pc[2] is left
;; to the guard page and pc[1] needs none (pc[2]'s check reached
;; further); both become one 16-bit load at pc + 1, which faults exactly
;; when pc[2] does, named by pc[2]'s offset.  LLVM itself merges the two
;; reads of a function that only reads them ("operand"); inside an
;; interpreter's loop it does not ("run", the shape of
;; tests/bench/interp.c), which is where the rule applies.  Memory of one
;; page; bytes 0x11 0x22 0x33 at 0, a program at 16 and one at 65532.
(module
  (memory 1)
  (data (i32.const 0) "\11\22\33")
  (data (i32.const 16) "\01\34\12\00")
  (data (i32.const 65532) "\01\aa\01\01")
  ;; opcode 1: acc += (pc[1] | pc[2] << 8) << 4, pc += 3; others: pc += 1;
  ;; opcode 0 ends
  (func (export "run") (param $pc i32) (result i32) (local $acc i32) (local $op i32)
    (loop $next
      (local.set $op (i32.load8_u (local.get $pc)))
      (if (i32.eq (local.get $op) (i32.const 1))
        (then (local.set $acc (i32.add (local.get $acc)
                 (i32.or (i32.shl (i32.load8_u offset=2 (local.get $pc)) (i32.const 12))
                         (i32.shl (i32.load8_u offset=1 (local.get $pc)) (i32.const 4)))))
              (local.set $pc (i32.add (local.get $pc) (i32.const 3))))
        (else (local.set $pc (i32.add (local.get $pc) (i32.const 1)))))
      (br_if $next (local.get $op)))
    (local.get $acc))
  ;; (pc[1] | pc[2] << 8) << 4, pc[2] read first
  (func (export "operand") (param $pc i32) (result i32)
    (i32.or (i32.shl (i32.load8_u offset=2 (local.get $pc)) (i32.const 12))
            (i32.shl (i32.load8_u offset=1 (local.get $pc)) (i32.const 4))))
  ;; the same read pc[1] first: pc + 1 past memory traps there
  (func (export "operand_low_first") (param $pc i32) (result i32)
    (i32.or (i32.shl (i32.load8_u offset=1 (local.get $pc)) (i32.const 4))
            (i32.shl (i32.load8_u offset=2 (local.get $pc)) (i32.const 12))))
  ;; a store to pc[1] between the two reads: pc[1] reads the stored byte
  (func (export "operand_stored") (param $pc i32) (result i32) (local $hi i32)
    (local.set $hi (i32.load8_u offset=2 (local.get $pc)))
    (i32.store8 offset=1 (local.get $pc) (i32.const 0x55))
    (i32.or (i32.shl (local.get $hi) (i32.const 12))
            (i32.shl (i32.load8_u offset=1 (local.get $pc)) (i32.const 4))))
  ;; no shift of the low byte
  (func (export "halfword") (param $p i32) (result i32)
    (i32.or (i32.shl (i32.load8_u offset=1 (local.get $p)) (i32.const 8))
            (i32.load8_u (local.get $p))))
)

;; the interpreter: one operand, then opcode 0
(assert_return (invoke "run" (i32.const 16)) (i32.const 0x12340))
;; the program at 65532, 1 0xaa 1 1: one operand (0x1aa0), then opcode
;; 1 at 65535 whose operand lies past memory: pc[2] traps (read first)
(assert_trap (invoke "run" (i32.const 65532)) "out of bounds memory access")
;; opcode 1 at 65534: pc[1] = 65535 inside, pc[2] = 65536 traps
(assert_trap (invoke "run" (i32.const 65534)) "out of bounds memory access")

(assert_return (invoke "operand" (i32.const 0)) (i32.const 0x33220))
(assert_return (invoke "operand" (i32.const 65533)) (i32.const 0x1010))
;; pc[2] at 65536: the trap names pc[2]
(assert_trap (invoke "operand" (i32.const 65534)) "out of bounds memory access")
(assert_trap (invoke "operand" (i32.const 65535)) "out of bounds memory access")
(assert_return (invoke "operand_low_first" (i32.const 65533)) (i32.const 0x1010))
(assert_trap (invoke "operand_low_first" (i32.const 65534)) "out of bounds memory access")
(assert_trap (invoke "operand_low_first" (i32.const 65535)) "out of bounds memory access")
(assert_return (invoke "operand_stored" (i32.const 0)) (i32.const 0x33550))
(assert_trap (invoke "operand_stored" (i32.const 65534)) "out of bounds memory access")
;; byte 1 holds 0x55 since operand_stored
(assert_return (invoke "halfword" (i32.const 0)) (i32.const 0x5511))
(assert_return (invoke "halfword" (i32.const 65534)) (i32.const 0x0101))
(assert_trap (invoke "halfword" (i32.const 65535)) "out of bounds memory access")
