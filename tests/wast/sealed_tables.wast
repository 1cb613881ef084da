;; call_indirect through sealed tables (compiler/low_sealed.c): tables
;; nobody can change after instantiation, read from a constant image.
;; The spec's traps must come out in its order: bounds, null, type.

(module
  (type $ii (func (param i32) (result i32)))
  (type $ii2 (func (param i32) (result i32)))  ;; equal to $ii: must match it
  (type $v (func))
  (table 8 funcref)
  ;; later segments overwrite earlier ones, as at instantiation
  (elem (i32.const 0) $double $inc $nop)
  (elem (i32.const 1) $square)
  (elem (i32.const 5) $inc2)
  (func $double (type $ii) (i32.mul (local.get 0) (i32.const 2)))
  (func $inc (type $ii) (i32.add (local.get 0) (i32.const 1)))
  (func $square (type $ii) (i32.mul (local.get 0) (local.get 0)))
  (func $inc2 (type $ii2) (i32.add (local.get 0) (i32.const 2)))
  (func $nop (type $v))
  (func (export "call") (param i32 i32) (result i32)
    (call_indirect (type $ii) (local.get 1) (local.get 0)))
  (func (export "call2") (param i32 i32) (result i32)
    (call_indirect (type $ii2) (local.get 1) (local.get 0)))
  (func (export "call_v") (param i32)
    (call_indirect (type $v) (local.get 0)))
  ;; a constant index: LLVM may turn it into a direct call
  (func (export "const1") (param i32) (result i32)
    (call_indirect (type $ii) (local.get 0) (i32.const 1)))
  (func (export "size") (result i32) (table.size 0))
  (func (export "get_null") (param i32) (result i32)
    (ref.is_null (table.get 0 (local.get 0))))
)
(assert_return (invoke "call" (i32.const 0) (i32.const 21)) (i32.const 42))
(assert_return (invoke "call" (i32.const 1) (i32.const 7)) (i32.const 49))
(assert_return (invoke "call" (i32.const 5) (i32.const 7)) (i32.const 9))
(assert_return (invoke "call2" (i32.const 0) (i32.const 7)) (i32.const 14))
(assert_return (invoke "call2" (i32.const 5) (i32.const 7)) (i32.const 9))
(assert_return (invoke "const1" (i32.const 6)) (i32.const 36))
(assert_return (invoke "call_v" (i32.const 2)))
(assert_trap (invoke "call" (i32.const 2) (i32.const 0)) "indirect call type mismatch")
(assert_trap (invoke "call_v" (i32.const 0)) "indirect call type mismatch")
(assert_trap (invoke "call" (i32.const 3) (i32.const 0)) "uninitialized element")
(assert_trap (invoke "call_v" (i32.const 7)) "uninitialized element")
(assert_trap (invoke "call" (i32.const 8) (i32.const 0)) "undefined element")
(assert_trap (invoke "call" (i32.const -1) (i32.const 0)) "undefined element")
(assert_trap (invoke "call_v" (i32.const 8)) "undefined element")
(assert_return (invoke "size") (i32.const 8))
(assert_return (invoke "get_null" (i32.const 4)) (i32.const 1))
(assert_return (invoke "get_null" (i32.const 1)) (i32.const 0))

;; An empty sealed table: every index is out of bounds.
(module
  (type $v (func))
  (table 0 funcref)
  (func (export "call") (param i32) (call_indirect (type $v) (local.get 0)))
)
(assert_trap (invoke "call" (i32.const 0)) "undefined element")

;; Exported: the host may change it, so it is not sealed; same results.
(module $exp
  (type $ii (func (param i32) (result i32)))
  (table (export "tab") 4 funcref)
  (elem (i32.const 0) $double)
  (func $double (type $ii) (i32.mul (local.get 0) (i32.const 2)))
  (func $triple (export "triple") (type $ii) (i32.mul (local.get 0) (i32.const 3)))
  (func (export "call") (param i32 i32) (result i32)
    (call_indirect (type $ii) (local.get 1) (local.get 0)))
)
(register "exp" $exp)
(assert_return (invoke $exp "call" (i32.const 0) (i32.const 5)) (i32.const 10))
(assert_trap (invoke $exp "call" (i32.const 1) (i32.const 5)) "uninitialized element")
;; another module writes into the exported table through its import
(module
  (type $ii (func (param i32) (result i32)))
  (import "exp" "tab" (table 4 funcref))
  (import "exp" "triple" (func $triple (type $ii)))
  (elem (i32.const 1) $triple)
)
(assert_return (invoke $exp "call" (i32.const 1) (i32.const 5)) (i32.const 15))

;; Written by table.set and grown: not sealed; the calls see the changes.
(module
  (type $ii (func (param i32) (result i32)))
  (table 2 funcref)
  (elem (i32.const 0) $double)
  (elem declare func $inc)
  (func $double (type $ii) (i32.mul (local.get 0) (i32.const 2)))
  (func $inc (type $ii) (i32.add (local.get 0) (i32.const 1)))
  (func (export "set1") (table.set 0 (i32.const 1) (ref.func $inc)))
  (func (export "grow") (result i32) (table.grow 0 (ref.func $inc) (i32.const 2)))
  (func (export "call") (param i32 i32) (result i32)
    (call_indirect (type $ii) (local.get 1) (local.get 0)))
)
(assert_trap (invoke "call" (i32.const 1) (i32.const 5)) "uninitialized element")
(invoke "set1")
(assert_return (invoke "call" (i32.const 1) (i32.const 5)) (i32.const 6))
(assert_trap (invoke "call" (i32.const 3) (i32.const 5)) "undefined element")
(assert_return (invoke "grow") (i32.const 2))
(assert_return (invoke "call" (i32.const 3) (i32.const 5)) (i32.const 6))

;; A segment that names an imported function: not sealed (its code and
;; instance come from elsewhere).
(module
  (type $ii (func (param i32) (result i32)))
  (import "exp" "triple" (func $triple (type $ii)))
  (table 2 funcref)
  (elem (i32.const 0) $triple $own)
  (func $own (type $ii) (i32.sub (local.get 0) (i32.const 1)))
  (func (export "call") (param i32 i32) (result i32)
    (call_indirect (type $ii) (local.get 1) (local.get 0)))
)
(assert_return (invoke "call" (i32.const 0) (i32.const 5)) (i32.const 15))
(assert_return (invoke "call" (i32.const 1) (i32.const 5)) (i32.const 4))

;; A segment out of bounds: instantiation fails, writing nothing callable.
(assert_trap
  (module
    (type $v (func))
    (table 2 funcref)
    (elem (i32.const 1) $f $f)
    (func $f (type $v)))
  "out of bounds table access")
