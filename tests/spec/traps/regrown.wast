;; Memory grown by a callee inside an interpreter's dispatch loop (issue
;; 22, cpu17): a handler calls a function that executes memory.grow, later
;; handlers store into the new pages, one of them through a copy loop whose
;; versioning test reads the size (bnd_fresh.c gives such a test a load of
;; its own where the loop's latch reloaded the size only for it).  A size
;; read before the call and kept across it (a reload wrongly elided) would
;; make the stores into the new pages trap, and memory.size read the old
;; count.  One byte past the grown size
;; traps at that access; the copy traps at its first word past the end,
;; the words before it copied.  Each trapping program grows memory itself,
;; so it also traps alone (offsets.sh runs it in a fresh instance).
(module
  (memory 1 8)
  (func $grow (param i32) (result i32) (memory.grow (local.get 0)))
  ;; the old end of memory in bytes, `pages` pages added after it
  (func $alloc (param $pages i32) (result i32)
    (i32.mul (call $grow (local.get $pages)) (i32.const 65536)))
  (func (export "peek") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "pages") (result i32) (memory.size))
  ;; code at $pc, two words per instruction: 0 halt; 1 n: grow by n pages,
  ;; $p = the old end; 2 k: store pc at $p + k and add what is read back
  ;; there to the result; 3: add the page count to the result; 4 n: copy n
  ;; words from address 0 to $p
  (func (export "run") (param $pc i32) (result i32) (local $p i32) (local $acc i32) (local $i i32)
    (block $halt
      (loop $next
        (block $copy (block $size (block $store (block $grow
          (br_table $halt $grow $store $size $copy $halt (i32.load (local.get $pc))))
          (local.set $p (call $alloc (i32.load offset=4 (local.get $pc))))
          (local.set $pc (i32.add (local.get $pc) (i32.const 8)))
          (br $next))
          (i32.store (i32.add (local.get $p) (i32.load offset=4 (local.get $pc))) (local.get $pc))
          (local.set $acc (i32.add (local.get $acc)
            (i32.load (i32.add (local.get $p) (i32.load offset=4 (local.get $pc))))))
          (local.set $pc (i32.add (local.get $pc) (i32.const 8)))
          (br $next))
          (local.set $acc (i32.add (local.get $acc) (memory.size)))
          (local.set $pc (i32.add (local.get $pc) (i32.const 8)))
          (br $next))
        (local.set $i (i32.const 0))
        (block $done
          (loop $word
            (br_if $done (i32.ge_u (local.get $i) (i32.load offset=4 (local.get $pc))))
            (i32.store (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 2)))
              (i32.load (i32.shl (local.get $i) (i32.const 2))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $word)))
        (local.set $pc (i32.add (local.get $pc) (i32.const 8)))
        (br $next)))
    (local.get $acc))
  ;; 256: grow 1; store at the new page's last word; add the page count;
  ;; copy a whole page into the new one; halt
  (data (i32.const 256) "\01\00\00\00\01\00\00\00" "\02\00\00\00\fc\ff\00\00"
                        "\03\00\00\00\00\00\00\00" "\04\00\00\00\00\40\00\00"
                        "\00\00\00\00\00\00\00\00")
  ;; 512: grow 1; store one byte further (its last byte past the end)
  (data (i32.const 512) "\01\00\00\00\01\00\00\00" "\02\00\00\00\fd\ff\00\00"
                        "\00\00\00\00\00\00\00\00")
  ;; 768: grow 1; copy a page and one word (the last word past the end)
  (data (i32.const 768) "\01\00\00\00\01\00\00\00" "\04\00\00\00\01\40\00\00"
                        "\00\00\00\00\00\00\00\00")
)

(assert_return (invoke "run" (i32.const 256)) (i32.const 266))
(assert_return (invoke "pages") (i32.const 2))
(assert_return (invoke "peek" (i32.const 65792)) (i32.const 1))
(assert_return (invoke "peek" (i32.const 131068)) (i32.const 0))
(assert_trap (invoke "run" (i32.const 512)) "out of bounds memory access")
(assert_return (invoke "pages") (i32.const 3))
(assert_trap (invoke "run" (i32.const 768)) "out of bounds memory access")
(assert_return (invoke "pages") (i32.const 4))
(assert_return (invoke "peek" (i32.const 196864)) (i32.const 1))
