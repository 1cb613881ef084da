;; A load between a check and its access, proved by an earlier access a
;; join away (bnd_late.c `after_access`, 30 Nov 2026): the access's block
;; dominates the load's, on the same index, reaching at least as far.
;; An interpreter's rehash (tests/bench/interp.c `wasm_f7`): an entry's
;; tag and hash word read, the slot found past an if/else, then the
;; entry's 8-byte words copied.  The check of the first store stayed
;; (the copy's first load sits between it and the store), and held a
;; register across the whole function.  Memory of one page; at 0 an
;; entry: tag 1, bytes 5..8, words 16 and 32 (whose hash moves q by 0);
;; at 65528 a tag 1 whose hash word lies past memory.
(module
  (memory 1)
  (data (i32.const 0) "\01\00\00\00\05\06\07\08\10\00\00\00\20\00\00\00")
  (data (i32.const 65528) "\01")
  (func (export "get8") (param i32) (result i32) (i32.load8_u (local.get 0)))
  (func (export "rehash") (param $p i32) (param $q i32) (param $k i32) (result i32)
    (local $h i32)
    (if (i32.eqz (i32.load (local.get $p))) (then (return (i32.const 0))))
    (local.set $h (i32.load offset=12 (local.get $p)))
    (if (i32.eq (local.get $k) (i32.const 2))
      (then (local.set $h (i32.mul (local.get $h) (i32.const 3))))
      (else (local.set $h (i32.xor (local.get $h) (i32.load offset=8 (local.get $p))))))
    (local.set $q (i32.add (local.get $q) (i32.shl (i32.and (local.get $h) (i32.const 15)) (i32.const 5))))
    (i64.store (local.get $q) (i64.load (local.get $p)))
    (i64.store offset=8 (local.get $q) (i64.load offset=8 (local.get $p)))
    (i32.const 1))
)

(assert_return (invoke "rehash" (i32.const 0) (i32.const 256) (i32.const 2)) (i32.const 1))
(assert_return (invoke "get8" (i32.const 256)) (i32.const 1))
(assert_return (invoke "get8" (i32.const 260)) (i32.const 5))
(assert_return (invoke "get8" (i32.const 268)) (i32.const 32))
(assert_return (invoke "rehash" (i32.const 0) (i32.const 512) (i32.const 1)) (i32.const 1))
(assert_return (invoke "get8" (i32.const 520)) (i32.const 16))

;; q + 16 past memory: the first store done, the second traps
(assert_trap (invoke "rehash" (i32.const 0) (i32.const 65528) (i32.const 2)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65528)) (i32.const 1))
(assert_return (invoke "get8" (i32.const 65532)) (i32.const 5))
;; q + 8 past memory: the first store traps, nothing written
(assert_trap (invoke "rehash" (i32.const 0) (i32.const 65532) (i32.const 1)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65532)) (i32.const 5))
;; p + 16 past memory (its tag, 1, inside): the hash word's load traps
;; before any store
(assert_trap (invoke "rehash" (i32.const 65528) (i32.const 768) (i32.const 1)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 768)) (i32.const 0))
;; a zero tag: nothing read past it
(assert_return (invoke "rehash" (i32.const 16) (i32.const 65535) (i32.const 2)) (i32.const 0))
