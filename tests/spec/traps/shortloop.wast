;; A versioned loop the late stage runs checked only (bnd_unversion.c,
;; 30 Nov 2026): SQLite's OP_MakeRecord writes an integer's last 0 to 3
;; bytes big-endian, do { p[--n] = v; v >>= 8; } while (n), n = k & 3.
;; Every store of the checked copy is left to the guard pages, so the
;; versioning test before the loop goes and the checked copy runs at every
;; entry: each store still traps at its own access, the bytes stored
;; before it (the higher addresses first) kept.  Memory of one page.
(module
  (memory 1)
  (func (export "get8") (param i32) (result i32) (i32.load8_u (local.get 0)))
  (func (export "be3") (param $p i32) (param $k i32) (param $v i64) (local $n i32)
    (local.set $n (i32.and (local.get $k) (i32.const 3)))
    (if (local.get $n) (then
      (loop $next
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (i64.store8 (i32.add (local.get $p) (local.get $n)) (local.get $v))
        (local.set $v (i64.shr_u (local.get $v) (i64.const 8)))
        (br_if $next (local.get $n))))))
)

;; three bytes inside memory, big-endian
(assert_return (invoke "be3" (i32.const 100) (i32.const 3) (i64.const 0x112233)))
(assert_return (invoke "get8" (i32.const 100)) (i32.const 0x11))
(assert_return (invoke "get8" (i32.const 101)) (i32.const 0x22))
(assert_return (invoke "get8" (i32.const 102)) (i32.const 0x33))
(assert_return (invoke "get8" (i32.const 103)) (i32.const 0))

;; none: nothing written, nothing checked
(assert_return (invoke "be3" (i32.const 70000) (i32.const 4) (i64.const -1)))

;; three bytes from 65534: the byte at 65536 traps first, nothing before
;; it written
(assert_trap (invoke "be3" (i32.const 65534) (i32.const 3) (i64.const 0x445566)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65534)) (i32.const 0))
(assert_return (invoke "get8" (i32.const 65535)) (i32.const 0))

;; three bytes from 65535: the first store (at 65537) traps
(assert_trap (invoke "be3" (i32.const 65535) (i32.const 3) (i64.const 0x778899)) "out of bounds memory access")
(assert_return (invoke "get8" (i32.const 65535)) (i32.const 0))

;; three bytes from 65533: all inside, the last at 65535
(assert_return (invoke "be3" (i32.const 65533) (i32.const 3) (i64.const 0xaabbcc)))
(assert_return (invoke "get8" (i32.const 65533)) (i32.const 0xaa))
(assert_return (invoke "get8" (i32.const 65535)) (i32.const 0xcc))

;; two bytes from -1 (4294967295): the store at 4294967296 traps first
(assert_trap (invoke "be3" (i32.const -1) (i32.const 2) (i64.const 0x1234)) "out of bounds memory access")
