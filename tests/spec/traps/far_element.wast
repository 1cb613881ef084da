;; call_indirect with a constant index far past the table (found by
;; fuzz-diff): the trap is certain, and the dead address after it must
;; not become a relocation that cannot be linked (-O0 keeps that block).
(module
  (type $t (func (result i32)))
  (table 2 funcref)
  (elem (i32.const 0) $f $f)
  (func $f (result i32) (i32.const 7))
  (func (export "far") (result i32) (call_indirect (type $t) (i32.const 134217727)))
  (func (export "near") (result i32) (call_indirect (type $t) (i32.const 1))))
(assert_trap (invoke "far") "undefined element")
(assert_return (invoke "near") (i32.const 7))

;; the same through a table the module can change (not sealed)
(module
  (type $t (func (result i32)))
  (table 2 funcref)
  (elem (i32.const 0) $f $f)
  (func $f (result i32) (i32.const 7))
  (func (export "set") (param i32) (table.set 0 (local.get 0) (ref.null func)))
  (func (export "far") (result i32) (call_indirect (type $t) (i32.const 134217727)))
  (func (export "far_get") (result i32) (ref.is_null (table.get 0 (i32.const 134217727))))
  (func (export "near") (result i32) (call_indirect (type $t) (i32.const 1))))
(assert_trap (invoke "far") "undefined element")
(assert_trap (invoke "far_get") "out of bounds table access")
(assert_return (invoke "near") (i32.const 7))
