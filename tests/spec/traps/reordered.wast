;; reordered.wast: a loop clang unrolled by 4 whose copies store a+12, a+8,
;; a+4, a (fill(a, n, from): a[i] = 3 i + from).  Re-rolled only behind a
;; test that every store is in bounds (ir_reroll_order.c); where a store
;; traps the original loop runs, so a trip whose a+12 is past the end
;; stores nothing: a and a+4 keep their old values after the trap.
(module
  (func (export "fill") (param i32 i32 i32)
    (local i32 i32 i32 i32)
    block  ;; label = @1
      local.get 1
      i32.const 0
      i32.le_s
      br_if 0 (;@1;)
      local.get 1
      i32.const 3
      i32.and
      local.set 5
      local.get 1
      i32.const 4
      i32.ge_u
      if  ;; label = @2
        local.get 2
        i32.const 9
        i32.add
        local.set 3
        local.get 1
        i32.const 2147483644
        i32.and
        local.set 6
        local.get 0
        local.set 1
        loop  ;; label = @3
          local.get 1
          i32.const 12
          i32.add
          local.get 3
          i32.store
          local.get 1
          i32.const 8
          i32.add
          local.get 3
          i32.const 3
          i32.sub
          i32.store
          local.get 1
          i32.const 4
          i32.add
          local.get 3
          i32.const 6
          i32.sub
          i32.store
          local.get 1
          local.get 3
          i32.const 9
          i32.sub
          i32.store
          local.get 1
          i32.const 16
          i32.add
          local.set 1
          local.get 3
          i32.const 12
          i32.add
          local.set 3
          local.get 6
          local.get 4
          i32.const 4
          i32.add
          local.tee 4
          i32.ne
          br_if 0 (;@3;)
        end
      end
      local.get 5
      i32.eqz
      br_if 0 (;@1;)
      local.get 2
      local.get 4
      i32.const 3
      i32.mul
      i32.add
      local.set 3
      local.get 0
      local.get 4
      i32.const 2
      i32.shl
      i32.add
      local.set 1
      loop  ;; label = @2
        local.get 1
        local.get 3
        i32.store
        local.get 3
        i32.const 3
        i32.add
        local.set 3
        local.get 1
        i32.const 4
        i32.add
        local.set 1
        local.get 5
        i32.const 1
        i32.sub
        local.tee 5
        br_if 0 (;@2;)
      end
    end)
  (func (export "peek") (param i32) (result i32)
    local.get 0
    i32.load)
  (memory (;0;) 1)
)
(assert_return (invoke "peek" (i32.const 65528)) (i32.const 0))
(assert_trap (invoke "fill" (i32.const 65528) (i32.const 4) (i32.const 7)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 65528)) (i32.const 0))
(assert_return (invoke "peek" (i32.const 65532)) (i32.const 0))
(assert_trap (invoke "fill" (i32.const 65500) (i32.const 12) (i32.const 1)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 65500)) (i32.const 1))
(assert_return (invoke "peek" (i32.const 65512)) (i32.const 10))
(assert_return (invoke "peek" (i32.const 65516)) (i32.const 13))
(assert_return (invoke "peek" (i32.const 65528)) (i32.const 22))
(assert_return (invoke "peek" (i32.const 65532)) (i32.const 0))
(invoke "fill" (i32.const 65512) (i32.const 6) (i32.const 5))
(assert_return (invoke "peek" (i32.const 65512)) (i32.const 5))
(assert_return (invoke "peek" (i32.const 65532)) (i32.const 20))
(invoke "fill" (i32.const 100) (i32.const 9) (i32.const 2))
(assert_return (invoke "peek" (i32.const 100)) (i32.const 2))
(assert_return (invoke "peek" (i32.const 132)) (i32.const 26))
