;; rerolled.wast: the offset a trap names inside a loop the re-roll
;; rewrote (ir_reroll.c by two, ir_reroll_rem.c by 4).  The re-rolled loop
;; runs every iteration with copy 0's instructions, so a trip that traps at
;; a later copy's access (clang's dot product and sum load copy 3 first;
;; in order, the trip's third element past the end), or in the remainder,
;; named copy 0's load where -O0 names the load the Wasm executes.  Loops
;; that touch memory and lie in no other loop are now re-rolled only
;; behind the range test (ir_reroll_order.c): where it fails, the original
;; loop runs and traps at its own instruction (offsets.sh checks the
;; offset at -O0..-O3; the sums before the traps check the values).
;; dot, sum: clang -O2 (`s += x[i] * y[i]`, `s += x[i]`), by 4, loads of
;; copies 3, 2, 1, 0; sum_up: sum with the copies in order; sum2: a sum
;; unrolled by two with its odd iteration after the loop; sum_c: by two
;; with a constant count (four loads from p - 16), kept copy and new loop
;; leaving to one block.
(module
  (func (export "poke") (param i32 i32) (local.get 0) (local.get 1) (i32.store))
  (func (export "dot") (param i32 i32 i32) (result f32)
    (local i32 i32 i32 i32 i32 f32)
    local.get 2
    i32.const 0
    i32.le_s
    if  ;; label = @1
      f32.const 0x0p+0 (;=0;)
      return
    end
    local.get 2
    i32.const 3
    i32.and
    local.set 5
    block  ;; label = @1
      local.get 2
      i32.const 1
      i32.sub
      i32.const 3
      i32.lt_u
      if  ;; label = @2
        br 1 (;@1;)
      end
      local.get 2
      i32.const -4
      i32.and
      local.set 7
      i32.const 0
      local.set 2
      loop  ;; label = @2
        local.get 0
        local.get 2
        i32.add
        local.tee 3
        i32.const 12
        i32.add
        f32.load
        local.get 1
        local.get 2
        i32.add
        local.tee 6
        i32.const 12
        i32.add
        f32.load
        f32.mul
        local.get 3
        i32.const 8
        i32.add
        f32.load
        local.get 6
        i32.const 8
        i32.add
        f32.load
        f32.mul
        local.get 3
        i32.const 4
        i32.add
        f32.load
        local.get 6
        i32.const 4
        i32.add
        f32.load
        f32.mul
        local.get 3
        f32.load
        local.get 6
        f32.load
        f32.mul
        local.get 8
        f32.add
        f32.add
        f32.add
        f32.add
        local.set 8
        local.get 2
        i32.const 16
        i32.add
        local.set 2
        local.get 7
        local.get 4
        i32.const 4
        i32.add
        local.tee 4
        i32.ne
        br_if 0 (;@2;)
      end
    end
    local.get 5
    if  ;; label = @1
      local.get 0
      local.get 4
      i32.const 2
      i32.shl
      local.tee 3
      i32.add
      local.set 2
      local.get 1
      local.get 3
      i32.add
      local.set 3
      loop  ;; label = @2
        local.get 2
        f32.load
        local.get 3
        f32.load
        f32.mul
        local.get 8
        f32.add
        local.set 8
        local.get 2
        i32.const 4
        i32.add
        local.set 2
        local.get 3
        i32.const 4
        i32.add
        local.set 3
        local.get 5
        i32.const 1
        i32.sub
        local.tee 5
        br_if 0 (;@2;)
      end
    end
    local.get 8)
  (func (export "sum") (param i32 i32) (result i32)
    (local i32 i32 i32 i32)
    local.get 1
    i32.const 0
    i32.le_s
    if  ;; label = @1
      i32.const 0
      return
    end
    local.get 1
    i32.const 3
    i32.and
    local.set 4
    block  ;; label = @1
      local.get 1
      i32.const 1
      i32.sub
      i32.const 3
      i32.lt_u
      if  ;; label = @2
        br 1 (;@1;)
      end
      local.get 1
      i32.const -4
      i32.and
      local.set 5
      local.get 0
      local.set 1
      loop  ;; label = @2
        local.get 1
        i32.const 12
        i32.add
        i32.load
        local.get 1
        i32.const 8
        i32.add
        i32.load
        local.get 1
        i32.const 4
        i32.add
        i32.load
        local.get 1
        i32.load
        local.get 2
        i32.add
        i32.add
        i32.add
        i32.add
        local.set 2
        local.get 1
        i32.const 16
        i32.add
        local.set 1
        local.get 5
        local.get 3
        i32.const 4
        i32.add
        local.tee 3
        i32.ne
        br_if 0 (;@2;)
      end
    end
    local.get 4
    if  ;; label = @1
      local.get 0
      local.get 3
      i32.const 2
      i32.shl
      i32.add
      local.set 1
      loop  ;; label = @2
        local.get 1
        i32.load
        local.get 2
        i32.add
        local.set 2
        local.get 1
        i32.const 4
        i32.add
        local.set 1
        local.get 4
        i32.const 1
        i32.sub
        local.tee 4
        br_if 0 (;@2;)
      end
    end
    local.get 2)
  (func (export "sum_up") (param i32 i32) (result i32)
    (local i32 i32 i32 i32)
    local.get 1
    i32.const 0
    i32.le_s
    if  ;; label = @1
      i32.const 0
      return
    end
    local.get 1
    i32.const 3
    i32.and
    local.set 4
    block  ;; label = @1
      local.get 1
      i32.const 1
      i32.sub
      i32.const 3
      i32.lt_u
      if  ;; label = @2
        br 1 (;@1;)
      end
      local.get 1
      i32.const -4
      i32.and
      local.set 5
      local.get 0
      local.set 1
      loop  ;; label = @2
        local.get 1
        i32.load
        local.get 2
        i32.add
        local.get 1
        i32.const 4
        i32.add
        i32.load
        i32.add
        local.get 1
        i32.const 8
        i32.add
        i32.load
        i32.add
        local.get 1
        i32.const 12
        i32.add
        i32.load
        i32.add
        local.set 2
        local.get 1
        i32.const 16
        i32.add
        local.set 1
        local.get 5
        local.get 3
        i32.const 4
        i32.add
        local.tee 3
        i32.ne
        br_if 0 (;@2;)
      end
    end
    local.get 4
    if  ;; label = @1
      local.get 0
      local.get 3
      i32.const 2
      i32.shl
      i32.add
      local.set 1
      loop  ;; label = @2
        local.get 1
        i32.load
        local.get 2
        i32.add
        local.set 2
        local.get 1
        i32.const 4
        i32.add
        local.set 1
        local.get 4
        i32.const 1
        i32.sub
        local.tee 4
        br_if 0 (;@2;)
      end
    end
    local.get 2)
  (func (export "sum2") (param $p i32) (param $n i32) (result i32)
    (local $s i32) (local $j i32) (local $m i32)
    local.get $n
    i32.const 0
    i32.le_s
    if
      i32.const 0
      return
    end
    block
      local.get $n
      i32.const 1
      i32.eq
      br_if 0
      local.get $n
      i32.const -2
      i32.and
      local.set $m
      loop
        local.get $p
        local.get $j
        i32.const 2
        i32.shl
        i32.add
        i32.load
        local.get $s
        i32.add
        local.get $p
        local.get $j
        i32.const 1
        i32.add
        i32.const 2
        i32.shl
        i32.add
        i32.load
        i32.add
        local.set $s
        local.get $j
        i32.const 2
        i32.add
        local.tee $j
        local.get $m
        i32.ne
        br_if 0
      end
    end
    local.get $n
    i32.const 1
    i32.and
    if
      local.get $p
      local.get $j
      i32.const 2
      i32.shl
      i32.add
      i32.load
      local.get $s
      i32.add
      local.set $s
    end
    local.get $s)
  (func (export "sum_c") (param $p i32) (result i32)
    (local $i i32) (local $s i32)
    i32.const -16
    local.set $i
    loop
      local.get $p
      local.get $i
      i32.add
      i32.load
      local.get $s
      i32.add
      local.get $p
      local.get $i
      i32.const 4
      i32.add
      i32.add
      i32.load
      i32.add
      local.set $s
      local.get $i
      i32.const 8
      i32.add
      local.tee $i
      br_if 0
    end
    local.get $s)
  (memory 1)
)
(invoke "poke" (i32.const 65520) (i32.const 1))
(invoke "poke" (i32.const 65524) (i32.const 2))
(invoke "poke" (i32.const 65528) (i32.const 3))
(invoke "poke" (i32.const 65532) (i32.const 4))
(assert_return (invoke "sum" (i32.const 65520) (i32.const 4)) (i32.const 10))
(assert_return (invoke "sum_up" (i32.const 65520) (i32.const 4)) (i32.const 10))
(assert_return (invoke "sum2" (i32.const 65520) (i32.const 4)) (i32.const 10))
(assert_return (invoke "sum2" (i32.const 65520) (i32.const 3)) (i32.const 6))
(assert_return (invoke "sum" (i32.const 65524) (i32.const 3)) (i32.const 9))
(assert_trap (invoke "dot" (i32.const 65528) (i32.const 0) (i32.const 4)) "out of bounds memory access")
(assert_trap (invoke "dot" (i32.const 0) (i32.const 65528) (i32.const 4)) "out of bounds memory access")
(assert_trap (invoke "dot" (i32.const 65520) (i32.const 0) (i32.const 9)) "out of bounds memory access")
(assert_trap (invoke "dot" (i32.const 65516) (i32.const 0) (i32.const 6)) "out of bounds memory access")
(assert_trap (invoke "sum" (i32.const 65528) (i32.const 4)) "out of bounds memory access")
(assert_trap (invoke "sum" (i32.const 65524) (i32.const 4)) "out of bounds memory access")
(assert_trap (invoke "sum" (i32.const 65520) (i32.const 6)) "out of bounds memory access")
(assert_trap (invoke "sum_up" (i32.const 65528) (i32.const 4)) "out of bounds memory access")
(assert_trap (invoke "sum_up" (i32.const 65520) (i32.const 5)) "out of bounds memory access")
(assert_trap (invoke "sum2" (i32.const 65532) (i32.const 2)) "out of bounds memory access")
(assert_trap (invoke "sum2" (i32.const 65528) (i32.const 3)) "out of bounds memory access")
(assert_trap (invoke "sum2" (i32.const 65524) (i32.const 5)) "out of bounds memory access")
(assert_return (invoke "sum_c" (i32.const 65536)) (i32.const 10))
(assert_trap (invoke "sum_c" (i32.const 65540)) "out of bounds memory access")
(assert_trap (invoke "sum_c" (i32.const 65544)) "out of bounds memory access")
