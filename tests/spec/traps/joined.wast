;; Accesses at a join of checks (compiler/bnd_late.c, guard mode): loop
;; rotation copies the check of a loop's first access into the preheader
;; and the latch, the access staying at the header through a phi of the
;; checked addresses (an interpreter's dispatch load).  The copies are
;; left to the guard page together; what the iteration before the fault
;; stored stays done, and the trap names the access.  The size the checks
;; compare with is GVN's phi of `size - reach` on the paths in
;; (bnd_check.c); the checks left read the size where they are
;; (bnd_fresh.c), memory growing inside the loop.  Memory of one page (at
;; most three); bytes 1..4 at 65532.
(module
  (memory 1 3)
  (global $g (mut i32) (i32.const 0))
  (data (i32.const 65532) "\01\02\03\04")
  (func (export "g") (result i32) (global.get $g))
  (func (export "peek32") (param i32) (result i32) (i32.load (local.get 0)))
  ;; walks bytes from pc until a zero one, storing the count each step
  (func (export "walk") (param $pc i32) (result i32) (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (local.get $pc))))
        (global.set $g (local.get $pc))
        (i32.store (i32.const 0) (local.get $n))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (local.set $pc (i32.add (local.get $pc) (i32.const 1)))
        (br $next)))
    (local.get $n))
  ;; a dispatch loop: opcode byte at pc, 1 and 2 skip one and two bytes
  ;; (the second reading a 16-bit operand after it), others stop
  (func (export "dispatch") (param $pc i32) (result i32) (local $acc i32)
    (block $stop
      (loop $next
        (block $two
          (block $one
            (br_table $stop $one $two $stop (i32.load8_u (local.get $pc))))
          (local.set $acc (i32.add (local.get $acc) (i32.const 1)))
          (i32.store (i32.const 4) (local.get $acc))
          (local.set $pc (i32.add (local.get $pc) (i32.const 1)))
          (br $next))
        (local.set $acc (i32.add (local.get $acc) (i32.load16_u offset=1 (local.get $pc))))
        (i32.store (i32.const 8) (local.get $acc))
        (local.set $pc (i32.add (local.get $pc) (i32.const 3)))
        (br $next)))
    (local.get $acc))
  ;; a 16-bit read past a check the loop's phi of sizes feeds
  (func (export "pairs") (param $p i32) (param $n i32) (result i32) (local $s i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $s (i32.add (local.get $s) (i32.load16_u (local.get $p))))
        (global.set $g (local.get $s))
        (local.set $p (i32.add (local.get $p) (i32.const 2)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $s))
  (func (export "peek8") (param i32) (result i32) (i32.load8_u (local.get 0)))
  ;; stores 7 at pc, pc + 1, ... (n bytes), growing memory by a page at
  ;; the last byte of each page
  (func (export "grow_walk") (param $pc i32) (param $n i32) (result i32)
    (loop $next
      (i32.store8 (local.get $pc) (i32.const 7))
      (if (i32.eq (i32.and (local.get $pc) (i32.const 0xffff)) (i32.const 0xffff))
        (then (drop (memory.grow (i32.const 1)))))
      (local.set $pc (i32.add (local.get $pc) (i32.const 1)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $next (local.get $n)))
    (memory.size))
  ;; the same through a dispatch on the byte at pc (0: grow, else skip)
  (func (export "grow_dispatch") (param $pc i32) (result i32) (local $n i32)
    (block $stop
      (loop $next
        (block $skip
          (block $grow
            (br_table $grow $skip $stop (i32.load8_u (local.get $pc))))
          (br_if $stop (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
          (i32.store8 offset=1 (local.get $pc) (i32.const 2)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (local.set $pc (i32.add (local.get $pc) (i32.const 1)))
        (br $next)))
    (local.get $n))
)

(assert_return (invoke "walk" (i32.const 0)) (i32.const 0))
(assert_return (invoke "walk" (i32.const 65531)) (i32.const 0))
(assert_trap (invoke "walk" (i32.const 65532)) "out of bounds memory access")
(assert_return (invoke "g") (i32.const 65535))
(assert_return (invoke "peek32" (i32.const 0)) (i32.const 3))
(assert_trap (invoke "walk" (i32.const 65535)) "out of bounds memory access")
(assert_return (invoke "peek32" (i32.const 0)) (i32.const 0))
(assert_trap (invoke "walk" (i32.const 65536)) "out of bounds memory access")
(assert_trap (invoke "walk" (i32.const -1)) "out of bounds memory access")
;; 65532: 1 -> 65533: 2 reads 0x0403 at 65534 -> 65536: out of bounds
(assert_trap (invoke "dispatch" (i32.const 65532)) "out of bounds memory access")
(assert_return (invoke "peek32" (i32.const 4)) (i32.const 1))
(assert_return (invoke "peek32" (i32.const 8)) (i32.const 0x0404))
;; 65534: 3 stops
(assert_return (invoke "dispatch" (i32.const 65534)) (i32.const 0))
;; 65535: 4 stops
(assert_return (invoke "dispatch" (i32.const 65535)) (i32.const 0))
(assert_return (invoke "dispatch" (i32.const 100)) (i32.const 0))
(assert_trap (invoke "dispatch" (i32.const 65536)) "out of bounds memory access")
(assert_return (invoke "pairs" (i32.const 65532) (i32.const 2)) (i32.const 0x0604))
(assert_trap (invoke "pairs" (i32.const 65532) (i32.const 3)) "out of bounds memory access")
(assert_return (invoke "g") (i32.const 0x0604))
(assert_trap (invoke "pairs" (i32.const 65535) (i32.const 1)) "out of bounds memory access")
(assert_return (invoke "g") (i32.const 0x0604))
;; growing: after the walks above memory is one page
(assert_return (invoke "grow_walk" (i32.const 65534) (i32.const 4)) (i32.const 2))
(assert_return (invoke "peek8" (i32.const 65537)) (i32.const 7))
(assert_return (invoke "grow_walk" (i32.const 131070) (i32.const 4)) (i32.const 3))
(assert_return (invoke "peek8" (i32.const 131073)) (i32.const 7))
;; at the maximum: the grow fails, the store past it traps
(assert_trap (invoke "grow_walk" (i32.const 196606) (i32.const 4)) "out of bounds memory access")
(assert_return (invoke "peek8" (i32.const 196607)) (i32.const 7))
(assert_trap (invoke "peek8" (i32.const 196608)) "out of bounds memory access")
;; 196604: 0 (grow fails: stop)
(assert_return (invoke "grow_dispatch" (i32.const 196604)) (i32.const 0))

;; the dispatch growing memory on its way: bytes 1 1 0 at 65533
(module
  (memory 1 2)
  (data (i32.const 65533) "\01\01")
  (func (export "put8") (param i32 i32) (i32.store8 (local.get 0) (local.get 1)))
  (func (export "size") (result i32) (memory.size))
  (func (export "grow_dispatch") (param $pc i32) (result i32) (local $n i32)
    (block $stop
      (loop $next
        (block $skip
          (block $grow
            (br_table $grow $skip $stop (i32.load8_u (local.get $pc))))
          (br_if $stop (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
          (i32.store8 offset=1 (local.get $pc) (i32.const 2)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (local.set $pc (i32.add (local.get $pc) (i32.const 1)))
        (br $next)))
    (local.get $n))
)
(assert_trap (invoke "grow_dispatch" (i32.const 65536)) "out of bounds memory access")
;; 65533, 65534: skip; 65535: grow, 2 at 65536; 65536: stop
(assert_return (invoke "grow_dispatch" (i32.const 65533)) (i32.const 3))
(assert_return (invoke "size") (i32.const 2))
(invoke "put8" (i32.const 131070) (i32.const 1))
(invoke "put8" (i32.const 131071) (i32.const 1))
(assert_trap (invoke "grow_dispatch" (i32.const 131070)) "out of bounds memory access")
;; 65535: grow fails at the maximum: stop
(assert_return (invoke "grow_dispatch" (i32.const 65535)) (i32.const 0))
