;; Tables whose size and element array never change (compiler/low_sealed.c,
;; mark_fixed: defined, not exported, no table.grow): their size and
;; element array are loaded as invariant, their entries are not.  And
;; recursive functions without calls in loops, which load the memory
;; base at each access (compiler/low_func.c, low_mem_base).

;; A fixed table written by table.set between the calls of one loop: each
;; call must see the entry stored just before it.
(module
  (type $ii (func (param i32) (result i32)))
  (table 4 funcref)
  (elem declare func $inc $double)
  (func $inc (type $ii) (i32.add (local.get 0) (i32.const 1)))
  (func $double (type $ii) (i32.mul (local.get 0) (i32.const 2)))
  ;; n rounds; round i stores $inc (i even) or $double (i odd) at slot 2,
  ;; then calls slot 2 on the accumulator
  (func (export "alternate") (param $n i32) (result i32)
    (local $i i32) (local $acc i32)
    (local.set $acc (i32.const 1))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.and (local.get $i) (i32.const 1))
          (then (table.set 0 (i32.const 2) (ref.func $double)))
          (else (table.set 0 (i32.const 2) (ref.func $inc))))
        (local.set $acc (call_indirect (type $ii) (local.get $acc) (i32.const 2)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $acc))
  (func (export "call") (param i32 i32) (result i32)
    (call_indirect (type $ii) (local.get 1) (local.get 0)))
  (func (export "set_inc") (param i32) (table.set 0 (local.get 0) (ref.func $inc)))
  (func (export "size") (result i32) (table.size 0))
)
;; 1 -> 2 -> 4 -> 5 -> 10 -> 11
(assert_return (invoke "alternate" (i32.const 5)) (i32.const 11))
(assert_return (invoke "size") (i32.const 4))
(assert_trap (invoke "call" (i32.const 0) (i32.const 1)) "uninitialized element")
(assert_trap (invoke "call" (i32.const 4) (i32.const 1)) "undefined element")
(invoke "set_inc" (i32.const 0))
(assert_return (invoke "call" (i32.const 0) (i32.const 41)) (i32.const 42))

;; A table that grows is not fixed: calls after table.grow reach the new
;; entries, and table.size follows.
(module
  (type $ii (func (param i32) (result i32)))
  (table 1 funcref)
  (elem declare func $inc)
  (func $inc (type $ii) (i32.add (local.get 0) (i32.const 1)))
  (func (export "grow_and_call") (param $n i32) (result i32)
    (local $old i32)
    (local.set $old (table.grow 0 (ref.func $inc) (local.get $n)))
    (i32.add
      (call_indirect (type $ii) (i32.const 100) (i32.sub (i32.add (local.get $old) (local.get $n)) (i32.const 1)))
      (table.size 0)))
  (func (export "call") (param i32 i32) (result i32)
    (call_indirect (type $ii) (local.get 1) (local.get 0)))
)
(assert_trap (invoke "call" (i32.const 1) (i32.const 1)) "undefined element")
;; size 1 + 3 = 4; slot 3 holds $inc: 101 + 4
(assert_return (invoke "grow_and_call" (i32.const 3)) (i32.const 105))
(assert_return (invoke "call" (i32.const 2) (i32.const 1)) (i32.const 2))

;; A recursion that touches memory on each level and grows memory at its
;; deepest level: the levels above read and write the new pages after
;; their call returns, through the base loaded again after the call.
(module
  (memory 1)
  (func $down (param $d i32) (param $addr i32) (result i32)
    (local $r i32)
    (i32.store (local.get $addr) (local.get $d))
    (if (i32.eqz (local.get $d))
      (then
        (drop (memory.grow (i32.const 2)))
        (return (i32.load (local.get $addr)))))
    (local.set $r (call $down (i32.sub (local.get $d) (i32.const 1)) (i32.add (local.get $addr) (i32.const 4))))
    ;; page 2 exists only after the deepest level's grow
    (i32.store (i32.add (i32.const 131072) (local.get $addr)) (local.get $d))
    (i32.add (local.get $r)
      (i32.add (i32.load (local.get $addr))
               (i32.load (i32.add (i32.const 131072) (local.get $addr))))))
  (func (export "down") (param i32) (result i32) (call $down (local.get 0) (i32.const 16)))
  (func (export "pages") (result i32) (memory.size))
)
;; levels 1..10 add 2 * d each: 110, the deepest adds 0
(assert_return (invoke "down" (i32.const 10)) (i32.const 110))
(assert_return (invoke "pages") (i32.const 3))
