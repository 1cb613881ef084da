;; walked.wast (tests/wast): a dot product walking two pointers (`s += *a++ * *b++`,
;; then `*out = s`), as clang unrolls it by 4: loads at a+12, a+8, a+4, a
;; off one i32 that steps by 16, the counter down from n & ~3 to 0.  The
;; re-roll (ir_reroll_rem.c, folded addresses) makes it one load pair per
;; trip at zext(a + 4 j), without a version: the loop only loads, and where
;; a copy's address would differ (a + 4 g wrapping) copy 0 is already past
;; every memory.  A trip that runs off the end traps before `*out` is
;; stored, whether a is near the end or near 2^32 (the cases at the edge
;; of memory: tests/spec/traps/walked.wast).
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
(assert_trap (invoke "dot" (i32.const 65528) (i32.const 0) (i32.const 4) (i32.const 128)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 128)) (f32.const 3))
(assert_trap (invoke "dot" (i32.const 65520) (i32.const 0) (i32.const 5) (i32.const 128)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 128)) (f32.const 3))
(assert_trap (invoke "dot" (i32.const 0) (i32.const -8) (i32.const 4) (i32.const 128)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 128)) (f32.const 3))
(assert_trap (invoke "dot" (i32.const -16) (i32.const 0) (i32.const 8) (i32.const 136)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 136)) (f32.const 0))
