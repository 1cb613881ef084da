;; Accesses whose check the guard pages stand in for (compiler/bnd_late.c):
;; the access made volatile between barriers, its label naming it.  What
;; happened before the access stays done, what comes after it does not
;; happen, an access code generation could drop or narrow still faults,
;; and a partial access writes nothing.  offsets.sh checks that each trap
;; names the faulting access at -O0..-O3.
(module
  (memory 1)
  (global $g (mut i32) (i32.const 0))
  (func (export "g") (result i32) (global.get $g))
  (func (export "peek32") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "peek64") (param i32) (result i64) (i64.load (local.get 0)))

  ;; a store, then a load the guard page catches
  (func (export "store-then-load") (param i32) (result i32)
    (i32.store (i32.const 64) (i32.const 5))
    (i32.load offset=8 (local.get 0)))
  ;; a load, then a store elsewhere that must not happen
  (func (export "load-then-store") (param i32) (result i32) (local $x i32)
    (local.set $x (i32.load (local.get 0)))
    (i32.store (i32.const 96) (i32.const 9))
    (local.get $x))
  ;; a load whose value nobody reads
  (func (export "load-unused") (param i32)
    (drop (i32.load (local.get 0)))
    (global.set $g (i32.const 3)))
  (func (export "load-dead-local") (param i32) (local $x i64)
    (local.set $x (i64.load (local.get 0)))
    (global.set $g (i32.const 4)))
  ;; loads whose value code generation would narrow to bytes inside memory
  (func (export "load-low-byte") (param i32) (result i32)
    (i32.and (i32.load (local.get 0)) (i32.const 255)))
  (func (export "load-high-half") (param i32) (result i64)
    (i64.shr_u (i64.load (local.get 0)) (i64.const 32)))
  ;; a read-modify-write of one byte of a word half outside memory
  (func (export "or-word") (param i32)
    (i32.store (local.get 0) (i32.or (i32.load (local.get 0)) (i32.const 256))))
  ;; stores that end outside memory, after one inside
  (func (export "store-pair") (param i32)
    (i32.store (local.get 0) (i32.const 0x01010101))
    (i64.store offset=4 (local.get 0) (i64.const -1)))
  ;; the largest offsets: the reservation covers index + offset + width
  (func (export "far-load") (param i32) (result i64)
    (i64.load offset=4294967295 (local.get 0)))
  (func (export "far-store") (param i32)
    (i32.store offset=4294967292 (local.get 0) (i32.const 1)))
  (func (export "far-v128") (param i32) (result i32)
    (i32x4.extract_lane 3 (v128.load offset=4294967295 (local.get 0))))
)

(assert_return (invoke "store-then-load" (i32.const 0)) (i32.const 0))
(assert_trap (invoke "store-then-load" (i32.const 65528)) "out of bounds memory access")
(assert_return (invoke "peek32" (i32.const 64)) (i32.const 5))
(assert_trap (invoke "load-then-store" (i32.const 65534)) "out of bounds memory access")
(assert_return (invoke "peek32" (i32.const 96)) (i32.const 0))
(assert_trap (invoke "load-unused" (i32.const 65533)) "out of bounds memory access")
(assert_return (invoke "g") (i32.const 0))
(assert_trap (invoke "load-dead-local" (i32.const 65529)) "out of bounds memory access")
(assert_return (invoke "g") (i32.const 0))
(assert_return (invoke "load-low-byte" (i32.const 0)) (i32.const 0))
(assert_trap (invoke "load-low-byte" (i32.const 65535)) "out of bounds memory access")
(assert_trap (invoke "load-high-half" (i32.const 65530)) "out of bounds memory access")
(assert_trap (invoke "or-word" (i32.const 65534)) "out of bounds memory access")
(assert_return (invoke "peek32" (i32.const 65532)) (i32.const 0))
(assert_trap (invoke "store-pair" (i32.const 65528)) "out of bounds memory access")
(assert_return (invoke "peek32" (i32.const 65528)) (i32.const 0x01010101))
(assert_return (invoke "peek32" (i32.const 65532)) (i32.const 0))
(assert_trap (invoke "far-load" (i32.const 0)) "out of bounds memory access")
(assert_trap (invoke "far-load" (i32.const -1)) "out of bounds memory access")
(assert_trap (invoke "far-store" (i32.const -1)) "out of bounds memory access")
(assert_trap (invoke "far-v128" (i32.const -1)) "out of bounds memory access")
(assert_trap (invoke "far-v128" (i32.const 1)) "out of bounds memory access")
