;; Accesses in recursions (issue 18, 29 Nov 2026): a load whose value is
;; the argument of a call is left to the guard pages past the call's stack
;; check (compiler/bnd_late.c: the load moves above that check, where its
;; own check was, so it faults before the call could run out of stack);
;; a recursive-descent parser whose checks are compared against
;; `trunc(size) - 1` and a web of size phis across its calls
;; (compiler/bnd_check.c); a store after a call on one path only, the
;; size then a phi whose first incoming value is another phi; recursions
;; whose callee grows memory.
;; offsets.sh checks each trap names the faulting access at -O0..-O3.
(module
  (memory 1 8)
  ;; lists of nodes [value, next]: 100 -> 200 -> 300 at 16, 24, 32; 7 at
  ;; 48, then a node at 65529 whose next field ends one byte past memory
  (data (i32.const 16) "\64\00\00\00\18\00\00\00\c8\00\00\00\20\00\00\00\2c\01\00\00\00\00\00\00")
  (data (i32.const 48) "\07\00\00\00\f9\ff\00\00")
  (global $g (mut i32) (i32.const 0))
  (func (export "g") (result i32) (global.get $g))
  (func (export "peek") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "poke") (param i32 i32) (i32.store (local.get 0) (local.get 1)))

  ;; a list copy: node = [value, next]; each level stores its copy's
  ;; value, then recurses on the next node read after that store
  (func $copy (param $n i32) (param $out i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else
        (i32.store (local.get $out) (i32.add (i32.load (local.get $n)) (i32.const 1)))
        (global.set $g (i32.add (global.get $g) (i32.const 1)))
        (i32.store offset=4 (local.get $out)
          (call $copy (i32.load offset=4 (local.get $n))
                      (i32.add (local.get $out) (i32.const 8))))
        (local.get $out))))

  ;; digits read by a recursive parser: "(" recurses, digits accumulate,
  ;; anything else ends; the cursor lives in memory at 0
  (func $atom (result i32) (local $v i32) (local $c i32)
    (local.set $c (i32.load8_u (i32.load (i32.const 0))))
    (if (i32.eq (local.get $c) (i32.const 40))
      (then
        (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
        (local.set $v (call $sum))
        (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
        (return (local.get $v))))
    (block $done
      (loop $digits
        (br_if $done (i32.gt_u (i32.sub (local.get $c) (i32.const 48)) (i32.const 9)))
        (local.set $v (i32.add (i32.mul (local.get $v) (i32.const 10))
                               (i32.sub (local.get $c) (i32.const 48))))
        (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
        (local.set $c (i32.load8_u (i32.load (i32.const 0))))
        (br $digits)))
    (local.get $v))
  (func $sum (result i32) (local $v i32)
    (local.set $v (call $atom))
    (block $done
      (loop $terms
        (br_if $done (i32.ne (i32.load8_u (i32.load (i32.const 0))) (i32.const 43)))
        (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
        (local.set $v (i32.add (local.get $v) (call $atom)))
        (br $terms)))
    (local.get $v))
  ;; writes the text "(12+(3+4)+5" (no closing parenthesis) at $at, $at
  ;; up to the end of memory, and parses it from there
  (func (export "parse-at") (param $at i32) (result i32)
    (i32.store8 (local.get $at) (i32.const 40))
    (i32.store8 offset=1 (local.get $at) (i32.const 49))
    (i32.store8 offset=2 (local.get $at) (i32.const 50))
    (i32.store8 offset=3 (local.get $at) (i32.const 43))
    (i32.store8 offset=4 (local.get $at) (i32.const 40))
    (i32.store8 offset=5 (local.get $at) (i32.const 51))
    (i32.store8 offset=6 (local.get $at) (i32.const 43))
    (i32.store8 offset=7 (local.get $at) (i32.const 52))
    (i32.store8 offset=8 (local.get $at) (i32.const 41))
    (i32.store8 offset=9 (local.get $at) (i32.const 43))
    (i32.store8 offset=10 (local.get $at) (i32.const 53))
    (i32.store (i32.const 0) (local.get $at))
    (call $sum))
  ;; the same text ending in a digit at the last byte of memory
  (func (export "parse-end") (result i32)
    (i32.store8 (i32.const 65533) (i32.const 40))
    (i32.store8 (i32.const 65534) (i32.const 55))
    (i32.store8 (i32.const 65535) (i32.const 56))
    (i32.store (i32.const 0) (i32.const 65533))
    (call $sum))

  ;; a recursion whose deepest level grows memory; each level then reads
  ;; the word at $p (inside memory only once grown) after its call
  (func $deep (param $n i32) (param $p i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (drop (memory.grow (i32.const 1))) (i32.const 0))
      (else
        (i32.add (call $deep (i32.sub (local.get $n) (i32.const 1)) (local.get $p))
                 (i32.load (local.get $p))))))
  (func (export "size") (result i32) (memory.size))
  ;; a store after a call on one path only (GVN then merges the size
  ;; loaded before with the one loaded after the call in phis: strsort's
  ;; merge step); the callee grows memory by $grow pages
  (func $maybe_grow (param $grow i32) (result i32)
    (drop (memory.grow (local.get $grow)))
    (i32.load (i32.const 16)))
  (func (export "store-after") (param $p i32) (param $grow i32) (result i32) (local $r i32)
    (if (local.get $grow)
      (then (local.set $r (call $maybe_grow (local.get $grow))))
      (else (local.set $r (i32.load (i32.const 24)))))
    (global.set $g (local.get $r))
    (i32.store (local.get $p) (local.get $r))
    (i32.store offset=4 (local.get $p) (i32.const 9))
    (memory.size))
  ;; the recursions' entries (offsets.sh names an export's function)
  (func (export "copy") (param i32 i32) (result i32) (call $copy (local.get 0) (local.get 1)))
  (func (export "deep") (param i32 i32) (result i32) (call $deep (local.get 0) (local.get 1)))
  (func (export "twice") (param i32 i32) (result i32) (call $twice (local.get 0) (local.get 1)))
  ;; a recursion that reads $p before and after its call: the first read
  ;; proves the second (memory never shrinks); $p + 4 needs its own check
  (func $twice (param $n i32) (param $p i32) (result i32)
    (local $x i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 1))
      (else
        (local.set $x (i32.load (local.get $p)))
        (local.set $x (i32.add (local.get $x)
          (call $twice (i32.sub (local.get $n) (i32.const 1)) (local.get $p))))
        (global.set $g (local.get $n))
        (i32.add (local.get $x) (i32.load offset=4 (local.get $p))))))
)

;; each trapping call also traps alone, in a fresh instance (offsets.sh)
(assert_return (invoke "copy" (i32.const 16) (i32.const 1024)) (i32.const 1024))
(assert_return (invoke "peek" (i32.const 1024)) (i32.const 101))
(assert_return (invoke "peek" (i32.const 1040)) (i32.const 301))
(assert_return (invoke "peek" (i32.const 1044)) (i32.const 0))
(assert_return (invoke "g") (i32.const 3))
;; the second node's value is stored and counted, then the read of its
;; next field traps: no store after it
(assert_trap (invoke "copy" (i32.const 48) (i32.const 2048)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 2048)) (i32.const 8))
(assert_return (invoke "peek" (i32.const 2056)) (i32.const 1))
(assert_return (invoke "peek" (i32.const 2060)) (i32.const 0))
(assert_return (invoke "peek" (i32.const 2052)) (i32.const 0))
(assert_return (invoke "g") (i32.const 5))

(assert_return (invoke "parse-at" (i32.const 100)) (i32.const 24))
(assert_return (invoke "parse-at" (i32.const 65523)) (i32.const 24))
(assert_trap (invoke "parse-at" (i32.const 65524)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 0)) (i32.const 65536))
(assert_trap (invoke "parse-at" (i32.const 65525)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 0)) (i32.const 65536))
(assert_trap (invoke "parse-end") "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 0)) (i32.const 65536))

(invoke "poke" (i32.const 64) (i32.const 2))
(invoke "poke" (i32.const 68) (i32.const 10))
(assert_return (invoke "twice" (i32.const 3) (i32.const 64)) (i32.const 37))
(assert_return (invoke "g") (i32.const 3))
(assert_trap (invoke "twice" (i32.const 3) (i32.const 65532)) "out of bounds memory access")
(assert_return (invoke "g") (i32.const 1))

(assert_return (invoke "store-after" (i32.const 65528) (i32.const 0)) (i32.const 1))
(assert_return (invoke "peek" (i32.const 65528)) (i32.const 200))
(assert_trap (invoke "store-after" (i32.const 65532) (i32.const 0)) "out of bounds memory access")
(assert_return (invoke "peek" (i32.const 65532)) (i32.const 200))
(assert_return (invoke "store-after" (i32.const 65532) (i32.const 1)) (i32.const 2))
(assert_return (invoke "peek" (i32.const 65532)) (i32.const 100))
(assert_return (invoke "peek" (i32.const 65536)) (i32.const 9))
(assert_trap (invoke "store-after" (i32.const 196604) (i32.const 1)) "out of bounds memory access")
(assert_return (invoke "g") (i32.const 100))
(assert_return (invoke "peek" (i32.const 196604)) (i32.const 100))

;; the words read after the calls lie in memory only once the deepest
;; level has grown it
(assert_return (invoke "size") (i32.const 3))
(assert_return (invoke "deep" (i32.const 0) (i32.const 65536)) (i32.const 0))
(assert_return (invoke "size") (i32.const 4))
(assert_return (invoke "deep" (i32.const 5) (i32.const 262144)) (i32.const 0))
(assert_return (invoke "size") (i32.const 5))
(assert_trap (invoke "deep" (i32.const 5) (i32.const 393213)) "out of bounds memory access")
(assert_return (invoke "size") (i32.const 6))
