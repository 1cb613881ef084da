;; Accesses the address fold (compiler/ir/ir_address.c) rewrites from
;; zext(x + c) to zext(x) + c: a scalar or v128 access through an i32
;; address an earlier access of the block proved does not wrap.  The
;; rewritten access keeps its exact check (guard mode: the marker
;; bnd_insert.c reads), also where LLVM then narrows it to bytes inside
;; memory (an i64 load whose high half nobody reads, a v128 load of one
;; lane), and shares the first access's check where both read through x
;; (tests/unit/test_address.c counts them).  The first access that leaves
;; memory traps, also where the second address wraps to a valid one.

(module
  (memory 1)
  (data (i32.const 0) "\01\00\00\00\02\00\00\00\03\00\00\00\04\00\00\00\05\00\00\00\06\00\00\00")
  ;; v128 at x, then i32 at x + 12 (inside what the v128 read)
  (func (export "vector_then_scalar") (param i32) (result i32)
    (i32.add (i32x4.extract_lane 1 (v128.load (local.get 0)))
             (i32.load (i32.add (local.get 0) (i32.const 12)))))
  ;; i32 at x, then v128 at x + 4
  (func (export "scalar_then_vector") (param i32) (result i32)
    (i32.add (i32.load (local.get 0))
             (i32x4.extract_lane 3 (v128.load (i32.add (local.get 0) (i32.const 4))))))
  ;; 8 bytes extended at x, then i32 at x + 4
  (func (export "extend_then_scalar") (param i32) (result i64)
    (i64.add (i64x2.extract_lane 0 (v128.load32x2_u (local.get 0)))
             (i64.extend_i32_u (i32.load (i32.add (local.get 0) (i32.const 4))))))
  ;; i32 at x + 12 first: nothing proves x + 12 does not wrap
  (func (export "wrapped_scalar_first") (param i32) (result i32)
    (i32.add (i32.load (i32.add (local.get 0) (i32.const 12)))
             (i32x4.extract_lane 0 (v128.load (local.get 0)))))
  ;; a v128 store at x, then a v128 load at x + 16 and an i32 load at x + 8
  (func (export "store_then_loads") (param i32) (result i32)
    (v128.store (local.get 0) (v128.const i32x4 7 8 9 10))
    (i32.add (i32x4.extract_lane 0 (v128.load (i32.add (local.get 0) (i32.const 16))))
             (i32.load (i32.add (local.get 0) (i32.const 8)))))
  ;; i32 at x, then an i64 at x + 8 whose low half alone is used
  (func (export "scalar_then_narrowed") (param i32) (result i32)
    (i32.add (i32.load (local.get 0))
             (i32.wrap_i64 (i64.load (i32.add (local.get 0) (i32.const 8))))))
  (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
)

(assert_return (invoke "vector_then_scalar" (i32.const 0)) (i32.const 6))
(assert_return (invoke "vector_then_scalar" (i32.const 65520)) (i32.const 0))
(assert_trap (invoke "vector_then_scalar" (i32.const 65521)) "out of bounds memory access")
(assert_trap (invoke "vector_then_scalar" (i32.const -8)) "out of bounds memory access")
(assert_trap (invoke "vector_then_scalar" (i32.const -16)) "out of bounds memory access")

(assert_return (invoke "scalar_then_vector" (i32.const 0)) (i32.const 6))
(assert_return (invoke "scalar_then_vector" (i32.const 65516)) (i32.const 0))
(assert_trap (invoke "scalar_then_vector" (i32.const 65517)) "out of bounds memory access")
(assert_trap (invoke "scalar_then_vector" (i32.const -4)) "out of bounds memory access")

(assert_return (invoke "extend_then_scalar" (i32.const 0)) (i64.const 3))
(assert_return (invoke "extend_then_scalar" (i32.const 65528)) (i64.const 0))
(assert_trap (invoke "extend_then_scalar" (i32.const 65529)) "out of bounds memory access")
(assert_trap (invoke "extend_then_scalar" (i32.const -4)) "out of bounds memory access")

(assert_return (invoke "wrapped_scalar_first" (i32.const 0)) (i32.const 5))
(assert_return (invoke "wrapped_scalar_first" (i32.const 65520)) (i32.const 0))
(assert_trap (invoke "wrapped_scalar_first" (i32.const -8)) "out of bounds memory access")
(assert_trap (invoke "wrapped_scalar_first" (i32.const 65521)) "out of bounds memory access")

(assert_return (invoke "store_then_loads" (i32.const 32)) (i32.const 9))
(assert_return (invoke "store_then_loads" (i32.const 65504)) (i32.const 9))
(assert_trap (invoke "store_then_loads" (i32.const 65505)) "out of bounds memory access")
(assert_trap (invoke "store_then_loads" (i32.const 65528)) "out of bounds memory access")
(assert_trap (invoke "store_then_loads" (i32.const -16)) "out of bounds memory access")
;; at 65505 the store ran and the load after it trapped; at 65528 the
;; store itself trapped, before writing a byte
(assert_return (invoke "load" (i32.const 65517)) (i32.const 10))
(assert_return (invoke "load" (i32.const 65528)) (i32.const 0))

(assert_return (invoke "scalar_then_narrowed" (i32.const 65520)) (i32.const 0))
(assert_trap (invoke "scalar_then_narrowed" (i32.const 65521)) "out of bounds memory access")
(assert_trap (invoke "scalar_then_narrowed" (i32.const 65533)) "out of bounds memory access")
