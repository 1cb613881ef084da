;; Reduced (binaryen's wasm-reduce) from SQLite 3.40.1's sqlite3ParseUri,
;; compiled by clang-19 -O2 for wasm32-wasi: `nByte += (zUri[i]=='&')`, a
;; 64-bit count unrolled four times, a remainder loop, the sum passed to a
;; call.  twasmc -O2 --bounds-checks=explicit (or --skip-pass=bounds) fails:
;;   internal error: offloaded module is invalid (in wasm_f2): Instruction
;;   does not dominate all uses!
;;     %N = add i64 ...
;;     %local10.N = phi i64 [ %N, %joinA ], [ %offload.result, %joinB.loopexit ]
;; (the offload stage's versioning of the reduction, compiler/off/).  Guard
;; mode (the default) and --no-offload compile it.  Not run by make check:
;;   build/bin/twasmc -O2 --bounds-checks=explicit -c offload_reduce_dom.wat -o /tmp/x.o
(module
  (type (;0;) (func (param i32) (result i32)))
  (type (;1;) (func (param i64) (result i32)))
  (type (;2;) (func (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "env" "strlen" (func (;0;) (type 0)))
  (import "env" "sqlite3Malloc" (func (;1;) (type 1)))
  (func (;2;) (type 2) (param i32 i32 i32 i32 i32 i32) (result i32)
    (local i32 i32 i32 i32 i64)
    block  ;; label = @1
      local.get 1
      if (result i32)  ;; label = @2
        local.get 1
        call 0
        i32.const 1073741823
        i32.and
      else
        local.get 6
      end
      local.tee 6
      if  ;; label = @2
        local.get 6
        i32.const 3
        i32.and
        local.set 9
        local.get 6
        i32.const 1073741820
        i32.and
        local.set 0
        loop  ;; label = @3
          local.get 10
          local.get 1
          local.get 7
          i32.add
          local.tee 6
          i32.load8_u
          i32.const 38
          i32.eq
          i64.extend_i32_u
          i64.add
          local.get 6
          i32.const 1
          i32.add
          i32.load8_u
          i32.const 38
          i32.eq
          i64.extend_i32_u
          i64.add
          local.get 6
          i32.const 2
          i32.add
          i32.load8_u
          i32.const 38
          i32.eq
          i64.extend_i32_u
          i64.add
          local.get 6
          i32.const 3
          i32.add
          i32.load8_u
          i32.const 38
          i32.eq
          i64.extend_i32_u
          i64.add
          local.set 10
          local.get 0
          local.get 7
          i32.const 4
          i32.add
          local.tee 7
          i32.ne
          br_if 0 (;@3;)
        end
        local.get 9
        if  ;; label = @3
          loop  ;; label = @4
            local.get 10
            local.get 6
            i64.load8_u
            i64.add
            local.set 10
            local.get 6
            i32.const 1
            i32.add
            local.set 6
            local.get 9
            i32.const 1
            i32.sub
            local.tee 9
            br_if 0 (;@4;)
          end
        end
        local.get 10
        call 1
        i32.eqz
        br_if 1 (;@1;)
        i32.const 4
        local.set 0
        local.get 1
        i32.load8_u offset=6
        drop
        loop  ;; label = @3
          local.get 0
          i32.const 0
          i32.store8
          local.get 8
          i32.const 1
          i32.add
          local.set 8
          br 0 (;@3;)
        end
        unreachable
      end
      local.get 9
      i32.const 4
      i32.add
      i32.const 0
      i32.store align=1
      unreachable
    end
    i32.const 0)
  (memory (;0;) 3))
