;; A guarded byte or'ed 8 bits up with the byte below it (bnd_late.c,
;; 29 Nov 2026): an interpreter's 16-bit operand `pc[1] | pc[2] << 8`,
;; which clang's wasm code reads pc[2] first.  The check of pc[2] is left
;; to the guard page and pc[1] needs none (pc[2]'s check reached
;; further); both become one 16-bit load at pc + 1, which faults exactly
;; when pc[2] does, named by pc[2]'s offset.  Memory of one page; bytes
;; 0x11 0x22 0x33 at 0 and 0xa1 0xa2 at 65534.
(module
  (memory 1)
  (data (i32.const 0) "\11\22\33")
  (data (i32.const 65534) "\a1\a2")
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

(assert_return (invoke "operand" (i32.const 0)) (i32.const 0x33220))
(assert_return (invoke "operand" (i32.const 65533)) (i32.const 0xa2a10))
;; pc[2] at 65536: the trap names pc[2]
(assert_trap (invoke "operand" (i32.const 65534)) "out of bounds memory access")
(assert_trap (invoke "operand" (i32.const 65535)) "out of bounds memory access")
(assert_return (invoke "operand_low_first" (i32.const 65533)) (i32.const 0xa2a10))
(assert_trap (invoke "operand_low_first" (i32.const 65534)) "out of bounds memory access")
(assert_trap (invoke "operand_low_first" (i32.const 65535)) "out of bounds memory access")
(assert_return (invoke "operand_stored" (i32.const 0)) (i32.const 0x33550))
(assert_trap (invoke "operand_stored" (i32.const 65534)) "out of bounds memory access")
;; byte 1 holds 0x55 since operand_stored
(assert_return (invoke "halfword" (i32.const 0)) (i32.const 0x5511))
(assert_return (invoke "halfword" (i32.const 65534)) (i32.const 0xa2a1))
(assert_trap (invoke "halfword" (i32.const 65535)) "out of bounds memory access")
