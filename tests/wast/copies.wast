;; copies.wast (tests/wast): rows_i8 of tests/unit/reroll/copies.c (clang
;; -O2): for 16 rows i, c[i*8 + j] = the sum of 32 products a[i*32 + p] *
;; b[p*8 + j], its j loop unrolled completely into eight k loops (each by
;; two), each followed by its store.  At -O2 and -O3 the re-roll puts the
;; eight back in one loop around copy 0 (ir_reroll_copies.c), its accesses
;; moved by j times their step: a trap in copy 3's store or copy 5's load
;; must leave exactly the stores of the copies before it.  The offset such
;; a trap reports is copy 0's access (the new loop's instructions are copy
;; 0's, as in every re-rolled loop), so these cases are here, run at -O2
;; and -O3 by hand (`build/bin/twasm-spec -O 2 tests/wast/copies.wast`);
;; traps in copy 0, whose offsets are exact: tests/spec/traps/copies.wast.
(module
  (func (export "rows") (param i32 i32 i32)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32)
    local.get 1
    i32.const 15
    i32.add
    local.set 3
    local.get 1
    i32.const 14
    i32.add
    local.set 4
    local.get 1
    i32.const 13
    i32.add
    local.set 5
    local.get 1
    i32.const 12
    i32.add
    local.set 6
    local.get 1
    i32.const 11
    i32.add
    local.set 7
    local.get 1
    i32.const 10
    i32.add
    local.set 8
    local.get 1
    i32.const 9
    i32.add
    local.set 9
    local.get 2
    i32.const 24
    i32.add
    local.set 10
    local.get 2
    i32.const 20
    i32.add
    local.set 11
    local.get 2
    i32.const 16
    i32.add
    local.set 12
    local.get 2
    i32.const 12
    i32.add
    local.set 13
    local.get 2
    i32.const 8
    i32.add
    local.set 14
    local.get 2
    i32.const 4
    i32.add
    local.set 15
    local.get 2
    i32.const 28
    i32.add
    local.set 16
    i32.const 0
    local.set 17
    loop  ;; label = @1
      local.get 17
      i32.const 5
      i32.shl
      local.set 18
      local.get 1
      local.set 19
      i32.const 0
      local.set 20
      i32.const 0
      local.set 21
      loop  ;; label = @2
        local.get 19
        i32.const 8
        i32.add
        i32.load8_s
        local.get 0
        local.get 20
        i32.add
        local.tee 22
        i32.const 1
        i32.add
        i32.load8_s
        i32.mul
        local.get 19
        i32.load8_s
        local.get 22
        i32.load8_s
        i32.mul
        local.get 21
        i32.add
        i32.add
        local.set 21
        local.get 19
        i32.const 16
        i32.add
        local.set 19
        local.get 20
        i32.const 2
        i32.add
        local.tee 20
        i32.const 32
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 2
      local.get 18
      i32.add
      local.get 21
      i32.store
      i32.const 0
      local.set 20
      local.get 9
      local.set 19
      i32.const 0
      local.set 21
      loop  ;; label = @2
        local.get 19
        i32.load8_s
        local.get 0
        local.get 20
        i32.add
        local.tee 22
        i32.const 1
        i32.add
        i32.load8_s
        i32.mul
        local.get 19
        i32.const -8
        i32.add
        i32.load8_s
        local.get 22
        i32.load8_s
        i32.mul
        local.get 21
        i32.add
        i32.add
        local.set 21
        local.get 19
        i32.const 16
        i32.add
        local.set 19
        local.get 20
        i32.const 2
        i32.add
        local.tee 20
        i32.const 32
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 15
      local.get 18
      i32.add
      local.get 21
      i32.store
      i32.const 0
      local.set 20
      local.get 8
      local.set 19
      i32.const 0
      local.set 21
      loop  ;; label = @2
        local.get 19
        i32.load8_s
        local.get 0
        local.get 20
        i32.add
        local.tee 22
        i32.const 1
        i32.add
        i32.load8_s
        i32.mul
        local.get 19
        i32.const -8
        i32.add
        i32.load8_s
        local.get 22
        i32.load8_s
        i32.mul
        local.get 21
        i32.add
        i32.add
        local.set 21
        local.get 19
        i32.const 16
        i32.add
        local.set 19
        local.get 20
        i32.const 2
        i32.add
        local.tee 20
        i32.const 32
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 14
      local.get 18
      i32.add
      local.get 21
      i32.store
      i32.const 0
      local.set 20
      local.get 7
      local.set 19
      i32.const 0
      local.set 21
      loop  ;; label = @2
        local.get 19
        i32.load8_s
        local.get 0
        local.get 20
        i32.add
        local.tee 22
        i32.const 1
        i32.add
        i32.load8_s
        i32.mul
        local.get 19
        i32.const -8
        i32.add
        i32.load8_s
        local.get 22
        i32.load8_s
        i32.mul
        local.get 21
        i32.add
        i32.add
        local.set 21
        local.get 19
        i32.const 16
        i32.add
        local.set 19
        local.get 20
        i32.const 2
        i32.add
        local.tee 20
        i32.const 32
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 13
      local.get 18
      i32.add
      local.get 21
      i32.store
      i32.const 0
      local.set 20
      local.get 6
      local.set 19
      i32.const 0
      local.set 21
      loop  ;; label = @2
        local.get 19
        i32.load8_s
        local.get 0
        local.get 20
        i32.add
        local.tee 22
        i32.const 1
        i32.add
        i32.load8_s
        i32.mul
        local.get 19
        i32.const -8
        i32.add
        i32.load8_s
        local.get 22
        i32.load8_s
        i32.mul
        local.get 21
        i32.add
        i32.add
        local.set 21
        local.get 19
        i32.const 16
        i32.add
        local.set 19
        local.get 20
        i32.const 2
        i32.add
        local.tee 20
        i32.const 32
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 12
      local.get 18
      i32.add
      local.get 21
      i32.store
      i32.const 0
      local.set 20
      local.get 5
      local.set 19
      i32.const 0
      local.set 21
      loop  ;; label = @2
        local.get 19
        i32.load8_s
        local.get 0
        local.get 20
        i32.add
        local.tee 22
        i32.const 1
        i32.add
        i32.load8_s
        i32.mul
        local.get 19
        i32.const -8
        i32.add
        i32.load8_s
        local.get 22
        i32.load8_s
        i32.mul
        local.get 21
        i32.add
        i32.add
        local.set 21
        local.get 19
        i32.const 16
        i32.add
        local.set 19
        local.get 20
        i32.const 2
        i32.add
        local.tee 20
        i32.const 32
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 11
      local.get 18
      i32.add
      local.get 21
      i32.store
      i32.const 0
      local.set 20
      local.get 4
      local.set 19
      i32.const 0
      local.set 21
      loop  ;; label = @2
        local.get 19
        i32.load8_s
        local.get 0
        local.get 20
        i32.add
        local.tee 22
        i32.const 1
        i32.add
        i32.load8_s
        i32.mul
        local.get 19
        i32.const -8
        i32.add
        i32.load8_s
        local.get 22
        i32.load8_s
        i32.mul
        local.get 21
        i32.add
        i32.add
        local.set 21
        local.get 19
        i32.const 16
        i32.add
        local.set 19
        local.get 20
        i32.const 2
        i32.add
        local.tee 20
        i32.const 32
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 10
      local.get 18
      i32.add
      local.get 21
      i32.store
      i32.const 0
      local.set 20
      local.get 3
      local.set 19
      i32.const 0
      local.set 21
      loop  ;; label = @2
        local.get 19
        i32.load8_s
        local.get 0
        local.get 20
        i32.add
        local.tee 22
        i32.const 1
        i32.add
        i32.load8_s
        i32.mul
        local.get 19
        i32.const -8
        i32.add
        i32.load8_s
        local.get 22
        i32.load8_s
        i32.mul
        local.get 21
        i32.add
        i32.add
        local.set 21
        local.get 19
        i32.const 16
        i32.add
        local.set 19
        local.get 20
        i32.const 2
        i32.add
        local.tee 20
        i32.const 32
        i32.ne
        br_if 0 (;@2;)
      end
      local.get 16
      local.get 18
      i32.add
      local.get 21
      i32.store
      local.get 0
      i32.const 32
      i32.add
      local.set 0
      local.get 17
      i32.const 1
      i32.add
      local.tee 17
      i32.const 16
      i32.ne
      br_if 0 (;@1;)
    end)
  (func (export "peek") (param i32) (result i32)
    local.get 0
    i32.load)
  (memory 1)
  ;; a: 512 bytes of 1 at 0, b: 256 bytes of 2 at 1024 (every sum is 64);
  ;; 32 bytes of -1 at 4096 and 16 at 65520
  (data (i32.const 0) "\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01")
  (data (i32.const 1024) "\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02")
  (data (i32.const 4096) "\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff")
  (data (i32.const 65520) "\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff")
)
(assert_return (invoke "peek" (i32.const 65524)) (i32.const -1))
;; c at 65524: copies 0-2 store at 65524, 65528, 65532, copy 3 traps
(assert_trap (invoke "rows" (i32.const 0) (i32.const 1024) (i32.const 65524)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 65520)) (i32.const -1))
(assert_return (invoke "peek" (i32.const 65524)) (i32.const 64))
(assert_return (invoke "peek" (i32.const 65528)) (i32.const 64))
(assert_return (invoke "peek" (i32.const 65532)) (i32.const 64))
;; b at 65283: copy j loads b + j + 8p, past the end first in copy 5 at
;; p = 31 (65536); copies 0-4 of row 0 have stored their sums (of the
;; bytes at 65520 and up: -1 from 65523, the first call's 64s), copies 5-7
;; nothing (c's 32 bytes at 4096 start as -1)
(assert_trap (invoke "rows" (i32.const 0) (i32.const 65283) (i32.const 4096)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 4096)) (i32.const -1))
(assert_return (invoke "peek" (i32.const 4100)) (i32.const 128))
(assert_return (invoke "peek" (i32.const 4104)) (i32.const 0))
(assert_return (invoke "peek" (i32.const 4108)) (i32.const 0))
(assert_return (invoke "peek" (i32.const 4112)) (i32.const 0))
(assert_return (invoke "peek" (i32.const 4116)) (i32.const -1))
(assert_return (invoke "peek" (i32.const 4120)) (i32.const -1))
(assert_return (invoke "peek" (i32.const 4124)) (i32.const -1))
(invoke "rows" (i32.const 0) (i32.const 1024) (i32.const 8192))
(assert_return (invoke "peek" (i32.const 8192)) (i32.const 64))
(assert_return (invoke "peek" (i32.const 8700)) (i32.const 64))
(assert_return (invoke "peek" (i32.const 8704)) (i32.const 0))
