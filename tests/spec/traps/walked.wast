;; walked.wast: a copy walking its stores (`*d++ = *s++ + 1`, by 4 with
;; stores at d, d+4, d+8, d+12 off one i32): re-rolled only behind the
;; range test (ir_reroll_order.c), so where a store would trap the
;; original loop runs and stores in its own order: d and d+4 hold their
;; new values when d+8 is past the end, and the trap names that store.
;; And a dot product walking two pointers (`s += *a++ * *b++`,
;; then `*out = s`), as clang unrolls it by 4: loads at a+12, a+8, a+4, a
;; off one i32 that steps by 16, the counter down from n & ~3 to 0.  The
;; re-roll (ir_reroll_rem.c, folded addresses) makes it one load pair per
;; trip at zext(a + 4 j), behind the range test since round 13 (the
;; re-rolled loads name copy 0's instruction, so a trap inside the walk
;; must come from the original loop: docs/PERFORMANCE.md, Issue 19 round
;; 13).  Here: walks that end at the last byte of memory, a trap at `*out`
;; after a full walk, and traps inside the walk, near the end of memory
;; and near 2^32 (`*out` not stored), each at the faulting load.
(module
  (func (export "dot") (param i32 i32 i32 i32) (result f32)
    (local f32 i32)
    local.get 2
    i32.const 0
    i32.le_s
    if  ;; label = @1
      local.get 3
      f32.const 0x0p+0 (;=0;)
      f32.store
      f32.const 0x0p+0 (;=0;)
      return
    end
    local.get 2
    i32.const 3
    i32.and
    local.set 5
    block  ;; label = @1
      local.get 2
      i32.const 4
      i32.lt_u
      if  ;; label = @2
        br 1 (;@1;)
      end
      local.get 2
      i32.const 2147483644
      i32.and
      local.set 2
      loop  ;; label = @2
        local.get 0
        f32.load offset=12
        local.get 1
        f32.load offset=12
        f32.mul
        local.get 0
        f32.load offset=8
        local.get 1
        f32.load offset=8
        f32.mul
        local.get 0
        f32.load offset=4
        local.get 1
        f32.load offset=4
        f32.mul
        local.get 0
        f32.load
        local.get 1
        f32.load
        f32.mul
        local.get 4
        f32.add
        f32.add
        f32.add
        f32.add
        local.set 4
        local.get 1
        i32.const 16
        i32.add
        local.set 1
        local.get 0
        i32.const 16
        i32.add
        local.set 0
        local.get 2
        i32.const 4
        i32.sub
        local.tee 2
        br_if 0 (;@2;)
      end
    end
    local.get 5
    if  ;; label = @1
      loop  ;; label = @2
        local.get 0
        f32.load
        local.get 1
        f32.load
        f32.mul
        local.get 4
        f32.add
        local.set 4
        local.get 0
        i32.const 4
        i32.add
        local.set 0
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
    end
    local.get 3
    local.get 4
    f32.store
    local.get 4)
  (func (export "copy") (param i32 i32 i32)
    (local i32)
    block  ;; label = @1
      local.get 2
      i32.const 0
      i32.le_s
      br_if 0 (;@1;)
      local.get 2
      i32.const 3
      i32.and
      local.set 3
      local.get 2
      i32.const 4
      i32.ge_u
      if  ;; label = @2
        local.get 2
        i32.const 2147483644
        i32.and
        local.set 2
        loop  ;; label = @3
          local.get 0
          local.get 1
          f32.load
          f32.const 0x1p+0 (;=1;)
          f32.add
          f32.store
          local.get 0
          local.get 1
          f32.load offset=4
          f32.const 0x1p+0 (;=1;)
          f32.add
          f32.store offset=4
          local.get 0
          local.get 1
          f32.load offset=8
          f32.const 0x1p+0 (;=1;)
          f32.add
          f32.store offset=8
          local.get 0
          local.get 1
          f32.load offset=12
          f32.const 0x1p+0 (;=1;)
          f32.add
          f32.store offset=12
          local.get 1
          i32.const 16
          i32.add
          local.set 1
          local.get 0
          i32.const 16
          i32.add
          local.set 0
          local.get 2
          i32.const 4
          i32.sub
          local.tee 2
          br_if 0 (;@3;)
        end
      end
      local.get 3
      i32.eqz
      br_if 0 (;@1;)
      loop  ;; label = @2
        local.get 0
        local.get 1
        f32.load
        f32.const 0x1p+0 (;=1;)
        f32.add
        f32.store
        local.get 0
        i32.const 4
        i32.add
        local.set 0
        local.get 1
        i32.const 4
        i32.add
        local.set 1
        local.get 3
        i32.const 1
        i32.sub
        local.tee 3
        br_if 0 (;@2;)
      end
    end)
  (func (export "poke") (param i32 f32) (local.get 0) (local.get 1) (f32.store))
  (func (export "peek") (param i32) (result f32) (local.get 0) (f32.load))
  (memory (;0;) 1)
)
(invoke "poke" (i32.const 0) (f32.const 1))
(invoke "poke" (i32.const 4) (f32.const 2))
(invoke "poke" (i32.const 8) (f32.const 3))
(invoke "poke" (i32.const 12) (f32.const 4))
(invoke "poke" (i32.const 16) (f32.const 5))
(invoke "poke" (i32.const 20) (f32.const 6))
(invoke "poke" (i32.const 65520) (f32.const 1))
(invoke "poke" (i32.const 65524) (f32.const 1))
(invoke "poke" (i32.const 65528) (f32.const 1))
(invoke "poke" (i32.const 65532) (f32.const 1))
(assert_return (invoke "dot" (i32.const 0) (i32.const 0) (i32.const 6) (i32.const 128)) (f32.const 91))
(assert_return (invoke "peek" (i32.const 128)) (f32.const 91))
(assert_return (invoke "dot" (i32.const 65520) (i32.const 0) (i32.const 4) (i32.const 128)) (f32.const 10))
(assert_return (invoke "peek" (i32.const 128)) (f32.const 10))
(assert_return (invoke "dot" (i32.const 65512) (i32.const 65516) (i32.const 5) (i32.const 128)) (f32.const 3))
(assert_return (invoke "peek" (i32.const 128)) (f32.const 3))
(assert_return (invoke "dot" (i32.const 4) (i32.const 8) (i32.const 3) (i32.const 132)) (f32.const 38))
(assert_return (invoke "peek" (i32.const 132)) (f32.const 38))
(assert_trap (invoke "dot" (i32.const 0) (i32.const 65520) (i32.const 4) (i32.const 65534)) "out of bounds memory access")
(assert_trap (invoke "dot" (i32.const 65520) (i32.const 0) (i32.const 4) (i32.const -4)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 128)) (f32.const 3))
(assert_trap (invoke "dot" (i32.const 65528) (i32.const 0) (i32.const 4) (i32.const 128)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 128)) (f32.const 3))
(assert_trap (invoke "dot" (i32.const 65520) (i32.const 0) (i32.const 5) (i32.const 128)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 128)) (f32.const 3))
(assert_trap (invoke "dot" (i32.const 0) (i32.const -8) (i32.const 4) (i32.const 128)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 128)) (f32.const 3))
(assert_trap (invoke "dot" (i32.const -16) (i32.const 0) (i32.const 8) (i32.const 136)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 136)) (f32.const 0))
(invoke "poke" (i32.const 256) (f32.const 7))
(invoke "poke" (i32.const 260) (f32.const 8))
(invoke "poke" (i32.const 264) (f32.const 9))
(invoke "poke" (i32.const 268) (f32.const 10))
(invoke "poke" (i32.const 272) (f32.const 11))
(invoke "copy" (i32.const 512) (i32.const 256) (i32.const 5))
(assert_return (invoke "peek" (i32.const 512)) (f32.const 8))
(assert_return (invoke "peek" (i32.const 528)) (f32.const 12))
(assert_trap (invoke "copy" (i32.const 65528) (i32.const 256) (i32.const 4)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 65528)) (f32.const 8))
(assert_return (invoke "peek" (i32.const 65532)) (f32.const 9))
(assert_trap (invoke "copy" (i32.const 65520) (i32.const 256) (i32.const 5)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 65520)) (f32.const 8))
(assert_return (invoke "peek" (i32.const 65532)) (f32.const 11))
(assert_trap (invoke "copy" (i32.const 65532) (i32.const 256) (i32.const 4)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 65532)) (f32.const 8))
