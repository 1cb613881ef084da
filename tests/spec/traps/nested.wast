;; nested.wast: traps inside a re-rolled loop that lies in another loop
;; (clang -O2: `for i: s = 0; for j: s += a[i n + j]; y[i] = s` and a
;; matrix-vector product, each j loop unrolled by 4 with a remainder
;; loop).  Since round 13 the re-roll of such a loop stands behind a test
;; before the outer loop that every entry of it is in bounds
;; (ir_reroll_hoist.c), the whole nest cloned as it was for when the test
;; fails; so a trap names the load the Wasm executes (a later copy, the
;; remainder, clang's copy 3 loaded first) and the rows before it are
;; stored (offsets.sh checks the offset at -O0..-O3).
(module
  (func (export "poke") (param i32 f32) (local.get 0) (local.get 1) (f32.store))
  (func (export "peek") (param i32) (result f32) (local.get 0) (f32.load))
  (func (export "rows") (param i32 i32 i32 i32)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 f32)
    local.get 2
    i32.const 0
    i32.gt_s
    if  ;; label = @1
      local.get 3
      i32.const 2
      i32.shl
      local.set 10
      local.get 3
      i32.const -4
      i32.and
      local.set 11
      local.get 3
      i32.const 3
      i32.and
      local.set 9
      local.get 3
      i32.const 0
      i32.le_s
      local.set 12
      local.get 3
      i32.const 1
      i32.sub
      i32.const 3
      i32.lt_u
      local.set 13
      local.get 0
      local.set 7
      loop  ;; label = @2
        f32.const 0x0p+0 (;=0;)
        local.set 14
        block  ;; label = @3
          local.get 12
          br_if 0 (;@3;)
          i32.const 0
          local.set 5
          local.get 13
          i32.eqz
          if  ;; label = @4
            local.get 7
            local.set 4
            loop  ;; label = @5
              local.get 14
              local.get 4
              f32.load
              f32.add
              local.get 4
              i32.const 4
              i32.add
              f32.load
              f32.add
              local.get 4
              i32.const 8
              i32.add
              f32.load
              f32.add
              local.get 4
              i32.const 12
              i32.add
              f32.load
              f32.add
              local.set 14
              local.get 4
              i32.const 16
              i32.add
              local.set 4
              local.get 11
              local.get 5
              i32.const 4
              i32.add
              local.tee 5
              i32.ne
              br_if 0 (;@5;)
            end
          end
          local.get 9
          i32.eqz
          br_if 0 (;@3;)
          local.get 0
          local.get 5
          local.get 6
          i32.add
          i32.const 2
          i32.shl
          i32.add
          local.set 4
          local.get 9
          local.set 5
          loop  ;; label = @4
            local.get 14
            local.get 4
            f32.load
            f32.add
            local.set 14
            local.get 4
            i32.const 4
            i32.add
            local.set 4
            local.get 5
            i32.const 1
            i32.sub
            local.tee 5
            br_if 0 (;@4;)
          end
        end
        local.get 1
        local.get 8
        i32.const 2
        i32.shl
        i32.add
        local.get 14
        f32.store
        local.get 3
        local.get 6
        i32.add
        local.set 6
        local.get 7
        local.get 10
        i32.add
        local.set 7
        local.get 8
        i32.const 1
        i32.add
        local.tee 8
        local.get 2
        i32.ne
        br_if 0 (;@2;)
      end
    end)
  (func (export "mv") (param i32 i32 i32 i32 i32)
    (local f32 i32 i32 i32 i32 i32 i32 i32 i32)
    local.get 3
    i32.const 0
    i32.gt_s
    if  ;; label = @1
      local.get 4
      i32.const 2
      i32.shl
      local.set 11
      local.get 4
      i32.const -2
      i32.and
      local.set 12
      local.get 4
      i32.const 1
      i32.and
      local.set 13
      local.get 0
      local.set 10
      loop  ;; label = @2
        f32.const 0x0p+0 (;=0;)
        local.set 5
        block  ;; label = @3
          local.get 4
          i32.const 0
          i32.le_s
          br_if 0 (;@3;)
          i32.const 0
          local.set 7
          local.get 4
          i32.const 1
          i32.ne
          if  ;; label = @4
            local.get 1
            local.set 8
            local.get 10
            local.set 9
            loop  ;; label = @5
              local.get 9
              i32.const 4
              i32.add
              f32.load
              local.get 8
              i32.const 4
              i32.add
              f32.load
              f32.mul
              local.get 9
              f32.load
              local.get 8
              f32.load
              f32.mul
              local.get 5
              f32.add
              f32.add
              local.set 5
              local.get 8
              i32.const 8
              i32.add
              local.set 8
              local.get 9
              i32.const 8
              i32.add
              local.set 9
              local.get 12
              local.get 7
              i32.const 2
              i32.add
              local.tee 7
              i32.ne
              br_if 0 (;@5;)
            end
          end
          local.get 13
          i32.eqz
          br_if 0 (;@3;)
          local.get 0
          local.get 7
          local.get 4
          local.get 6
          i32.mul
          i32.add
          i32.const 2
          i32.shl
          i32.add
          f32.load
          local.get 1
          local.get 7
          i32.const 2
          i32.shl
          i32.add
          f32.load
          f32.mul
          local.get 5
          f32.add
          local.set 5
        end
        local.get 2
        local.get 6
        i32.const 2
        i32.shl
        i32.add
        local.get 5
        f32.store
        local.get 10
        local.get 11
        i32.add
        local.set 10
        local.get 6
        i32.const 1
        i32.add
        local.tee 6
        local.get 3
        i32.ne
        br_if 0 (;@2;)
      end
    end)
  (memory 1)
)
(invoke "poke" (i32.const 65504) (f32.const 1))
(invoke "poke" (i32.const 65508) (f32.const 2))
(invoke "poke" (i32.const 65512) (f32.const 3))
(invoke "poke" (i32.const 65516) (f32.const 4))
(invoke "poke" (i32.const 65520) (f32.const 5))
(invoke "poke" (i32.const 65524) (f32.const 6))
(invoke "poke" (i32.const 65528) (f32.const 7))
(invoke "poke" (i32.const 65532) (f32.const 8))
(invoke "rows" (i32.const 65504) (i32.const 0) (i32.const 2) (i32.const 4))
(assert_return (invoke "peek" (i32.const 0)) (f32.const 10))
(assert_return (invoke "peek" (i32.const 4)) (f32.const 26))
(invoke "mv" (i32.const 65504) (i32.const 65504) (i32.const 80) (i32.const 1) (i32.const 8))
(assert_return (invoke "peek" (i32.const 80)) (f32.const 204))
(assert_trap (invoke "rows" (i32.const 65508) (i32.const 16) (i32.const 2) (i32.const 4)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 16)) (f32.const 14))
(assert_return (invoke "peek" (i32.const 20)) (f32.const 0))
(assert_trap (invoke "rows" (i32.const 65512) (i32.const 32) (i32.const 2) (i32.const 5)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 32)) (f32.const 25))
(assert_trap (invoke "rows" (i32.const 65532) (i32.const 48) (i32.const 1) (i32.const 4)) "out of bounds memory access")
(assert_trap (invoke "rows" (i32.const 65520) (i32.const 48) (i32.const 3) (i32.const 2)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 48)) (f32.const 11))
(assert_return (invoke "peek" (i32.const 52)) (f32.const 15))
(assert_trap (invoke "mv" (i32.const 0) (i32.const 65524) (i32.const 64) (i32.const 2) (i32.const 4)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 64)) (f32.const 0))
(assert_trap (invoke "mv" (i32.const 65504) (i32.const 0) (i32.const 96) (i32.const 3) (i32.const 4)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 96)) (f32.const 62))
(assert_return (invoke "peek" (i32.const 100)) (f32.const 206))
