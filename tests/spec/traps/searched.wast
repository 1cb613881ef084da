;; A binary search whose loop counts its compares in a global and calls
;; wasi-libc's memcmp (tests/bench/kvstore.c's lower_bound), built from
;; the C below with `clang-19 --target=wasm32-wasi -O2 -nostdlib` and
;; libc.a's memcmp, which twasmc runs natively where both ranges lie in
;; memory (wasm2wat's text, exports written inline).  The native test
;; loads the size without the size's TBAA tag; in a loop that calls
;; nothing that writes memory bnd_insert.c tags it (29 Nov 2026), so GVN
;; takes the size loaded before the loop across the counter's store.  The
;; traps stay exact: the failing step's count is stored, then memcmp
;; faults at the first byte past memory.
;;
;;   unsigned long long compares;
;;   typedef struct { unsigned short klen; char data[30]; } rec;
;;   rec recs[8]; rec *table[8];
;;   static int key_cmp(const char *a, unsigned alen, const char *b, unsigned blen) {
;;     compares++;
;;     int c = memcmp(a, b, alen < blen ? alen : blen);
;;     return c ? c : (int)alen - (int)blen;
;;   }
;;   int find(rec **t, int n, const char *k, unsigned kl);   // lower_bound's loop
;;   void init(void);     // recs[i] = {5, "k000" '0'+i}, table[i] = &recs[i], compares = 0
;;   int search(int c, int at, rec *p);   // init first if not done; table[at] = p when p;
;;                                        // find(table, 8, "k000" c, 5)
;;   int search_rec(int c, int at, char *p, int n);  // the same with a record written
;;                                        // at p: klen 5, the first n bytes of the key
;;   int count(void);     // compares
;;   int same(const char *a, const char *b, unsigned n);   // keeps memcmp a function
;;   void put8(char *p, int v);
(module
  (type (;0;) (func (param i32 i32 i32) (result i32)))
  (type (;1;) (func))
  (type (;2;) (func (result i32)))
  (type (;3;) (func (param i32 i32)))
  (type (;4;) (func (param i32 i32 i32 i32) (result i32)))
  (func (;0;) (type 0) (param i32 i32 i32) (result i32)
    (local i32 i32 i32)
    block  ;; label = @1
      local.get 2
      i32.eqz
      br_if 0 (;@1;)
      loop  ;; label = @2
        local.get 0
        i32.load8_u
        local.tee 4
        local.get 1
        i32.load8_u
        local.tee 5
        i32.eq
        if  ;; label = @3
          local.get 1
          i32.const 1
          i32.add
          local.set 1
          local.get 0
          i32.const 1
          i32.add
          local.set 0
          local.get 2
          i32.const 1
          i32.sub
          local.tee 2
          br_if 1 (;@2;)
          br 2 (;@1;)
        end
      end
      local.get 4
      local.get 5
      i32.sub
      local.set 3
    end
    local.get 3)
  (func (export "init") (type 1)
    i32.const 1030
    i32.const 48
    i32.store8
    i32.const 1026
    i32.const 808464491
    i32.store align=2
    i32.const 1024
    i32.const 5
    i32.store16
    i32.const 1280
    i32.const 1024
    i32.store
    i32.const 1062
    i32.const 49
    i32.store8
    i32.const 1058
    i32.const 808464491
    i32.store align=2
    i32.const 1056
    i32.const 5
    i32.store16
    i32.const 1284
    i32.const 1056
    i32.store
    i32.const 1094
    i32.const 50
    i32.store8
    i32.const 1090
    i32.const 808464491
    i32.store align=2
    i32.const 1088
    i32.const 5
    i32.store16
    i32.const 1288
    i32.const 1088
    i32.store
    i32.const 1126
    i32.const 51
    i32.store8
    i32.const 1122
    i32.const 808464491
    i32.store align=2
    i32.const 1120
    i32.const 5
    i32.store16
    i32.const 1292
    i32.const 1120
    i32.store
    i32.const 1158
    i32.const 52
    i32.store8
    i32.const 1154
    i32.const 808464491
    i32.store align=2
    i32.const 1152
    i32.const 5
    i32.store16
    i32.const 1186
    i32.const 808464491
    i32.store align=2
    i32.const 1296
    i32.const 1152
    i32.store
    i32.const 1190
    i32.const 53
    i32.store8
    i32.const 1184
    i32.const 5
    i32.store16
    i32.const 1300
    i32.const 1184
    i32.store
    i32.const 1218
    i32.const 808464491
    i32.store align=2
    i32.const 1222
    i32.const 54
    i32.store8
    i32.const 1216
    i32.const 5
    i32.store16
    i32.const 1304
    i32.const 1216
    i32.store
    i32.const 1250
    i32.const 808464491
    i32.store align=2
    i32.const 1254
    i32.const 55
    i32.store8
    i32.const 1248
    i32.const 5
    i32.store16
    i32.const 1308
    i32.const 1248
    i32.store
    i32.const 1312
    i64.const 0
    i64.store)
  (func (export "search") (type 0) (param i32 i32 i32) (result i32)
    (local i32 i64 i32)
    block (result i32)  ;; label = @1
      i32.const 1280
      i32.load
      i32.eqz
      if  ;; label = @2
        i32.const 1030
        i32.const 48
        i32.store8
        i32.const 1026
        i32.const 808464491
        i32.store align=2
        i32.const 1024
        i32.const 5
        i32.store16
        i32.const 1280
        i32.const 1024
        i32.store
        i32.const 1062
        i32.const 49
        i32.store8
        i32.const 1058
        i32.const 808464491
        i32.store align=2
        i32.const 1056
        i32.const 5
        i32.store16
        i32.const 1284
        i32.const 1056
        i32.store
        i32.const 1094
        i32.const 50
        i32.store8
        i32.const 1090
        i32.const 808464491
        i32.store align=2
        i32.const 1088
        i32.const 5
        i32.store16
        i32.const 1288
        i32.const 1088
        i32.store
        i32.const 1126
        i32.const 51
        i32.store8
        i32.const 1122
        i32.const 808464491
        i32.store align=2
        i32.const 1120
        i32.const 5
        i32.store16
        i32.const 1292
        i32.const 1120
        i32.store
        i32.const 1158
        i32.const 52
        i32.store8
        i32.const 1154
        i32.const 808464491
        i32.store align=2
        i32.const 1152
        i32.const 5
        i32.store16
        i32.const 1186
        i32.const 808464491
        i32.store align=2
        i32.const 1296
        i32.const 1152
        i32.store
        i32.const 1190
        i32.const 53
        i32.store8
        i32.const 1184
        i32.const 5
        i32.store16
        i32.const 1300
        i32.const 1184
        i32.store
        i32.const 1218
        i32.const 808464491
        i32.store align=2
        i32.const 1222
        i32.const 54
        i32.store8
        i32.const 1216
        i32.const 5
        i32.store16
        i32.const 1304
        i32.const 1216
        i32.store
        i32.const 1250
        i32.const 808464491
        i32.store align=2
        i32.const 1254
        i32.const 55
        i32.store8
        i32.const 1248
        i32.const 5
        i32.store16
        i32.const 1308
        i32.const 1248
        i32.store
        i32.const 1312
        i64.const 0
        i64.store
      end
      i32.const 1332
      local.get 0
      i32.store8
      i32.const 1328
      i32.const 808464491
      i32.store
      local.get 2
      if  ;; label = @2
        local.get 1
        i32.const 2
        i32.shl
        i32.const 1280
        i32.add
        local.get 2
        i32.store
      end
      i32.const 1312
      i64.load
      i64.const 1
      i64.add
      local.set 4
      i32.const 8
      local.set 2
      i32.const 0
      local.set 0
      loop  ;; label = @2
        i32.const -1
        local.get 0
        local.get 2
        i32.ge_s
        br_if 1 (;@1;)
        drop
        i32.const 1312
        local.get 4
        i64.store
        local.get 0
        local.get 2
        i32.add
        i32.const 1
        i32.shr_u
        local.tee 1
        i32.const 1
        i32.add
        local.get 0
        local.get 1
        i32.const 2
        i32.shl
        i32.const 1280
        i32.add
        i32.load
        local.tee 3
        i32.const 2
        i32.add
        i32.const 1328
        local.get 3
        i32.load16_u
        local.tee 3
        i32.const 5
        local.get 3
        i32.const 5
        i32.lt_u
        select
        call 0
        local.tee 5
        local.get 3
        i32.const 5
        i32.sub
        local.get 5
        select
        local.tee 3
        i32.const 0
        i32.lt_s
        local.tee 5
        select
        local.set 0
        local.get 2
        local.get 1
        local.get 5
        select
        local.set 2
        local.get 4
        i64.const 1
        i64.add
        local.set 4
        local.get 3
        br_if 0 (;@2;)
      end
      local.get 1
    end)
  (func (export "count") (type 2) (result i32)
    i32.const 1312
    i32.load)
  (func (export "same") (type 0) (param i32 i32 i32) (result i32)
    local.get 0
    local.get 1
    local.get 2
    call 0
    i32.eqz)
  (func (export "put8") (type 3) (param i32 i32)
    local.get 0
    local.get 1
    i32.store8)
  (func (export "search_rec") (type 4) (param i32 i32 i32 i32) (result i32)
    (local i32 i32 i64)
    block (result i32)  ;; label = @1
      i32.const 1280
      i32.load
      i32.eqz
      if  ;; label = @2
        i32.const 1030
        i32.const 48
        i32.store8
        i32.const 1026
        i32.const 808464491
        i32.store align=2
        i32.const 1024
        i32.const 5
        i32.store16
        i32.const 1280
        i32.const 1024
        i32.store
        i32.const 1062
        i32.const 49
        i32.store8
        i32.const 1058
        i32.const 808464491
        i32.store align=2
        i32.const 1056
        i32.const 5
        i32.store16
        i32.const 1284
        i32.const 1056
        i32.store
        i32.const 1094
        i32.const 50
        i32.store8
        i32.const 1090
        i32.const 808464491
        i32.store align=2
        i32.const 1088
        i32.const 5
        i32.store16
        i32.const 1288
        i32.const 1088
        i32.store
        i32.const 1126
        i32.const 51
        i32.store8
        i32.const 1122
        i32.const 808464491
        i32.store align=2
        i32.const 1120
        i32.const 5
        i32.store16
        i32.const 1292
        i32.const 1120
        i32.store
        i32.const 1158
        i32.const 52
        i32.store8
        i32.const 1154
        i32.const 808464491
        i32.store align=2
        i32.const 1152
        i32.const 5
        i32.store16
        i32.const 1186
        i32.const 808464491
        i32.store align=2
        i32.const 1296
        i32.const 1152
        i32.store
        i32.const 1190
        i32.const 53
        i32.store8
        i32.const 1184
        i32.const 5
        i32.store16
        i32.const 1300
        i32.const 1184
        i32.store
        i32.const 1218
        i32.const 808464491
        i32.store align=2
        i32.const 1222
        i32.const 54
        i32.store8
        i32.const 1216
        i32.const 5
        i32.store16
        i32.const 1304
        i32.const 1216
        i32.store
        i32.const 1250
        i32.const 808464491
        i32.store align=2
        i32.const 1254
        i32.const 55
        i32.store8
        i32.const 1248
        i32.const 5
        i32.store16
        i32.const 1308
        i32.const 1248
        i32.store
        i32.const 1312
        i64.const 0
        i64.store
      end
      i32.const 1332
      local.get 0
      i32.store8
      i32.const 1328
      i32.const 808464491
      i32.store
      local.get 2
      i32.const 5
      i32.store16 align=1
      block  ;; label = @2
        local.get 3
        i32.const 0
        i32.le_s
        br_if 0 (;@2;)
        local.get 3
        i32.const 3
        i32.and
        local.set 4
        i32.const 0
        local.set 0
        local.get 3
        i32.const 4
        i32.ge_u
        if  ;; label = @3
          local.get 3
          i32.const 2147483644
          i32.and
          local.set 5
          loop  ;; label = @4
            local.get 0
            local.get 2
            i32.add
            local.tee 3
            i32.const 2
            i32.add
            local.get 0
            i32.const 1328
            i32.add
            i32.load8_u
            i32.store8
            local.get 3
            i32.const 3
            i32.add
            local.get 0
            i32.const 1329
            i32.add
            i32.load8_u
            i32.store8
            local.get 3
            i32.const 4
            i32.add
            local.get 0
            i32.const 1330
            i32.add
            i32.load8_u
            i32.store8
            local.get 3
            i32.const 5
            i32.add
            local.get 0
            i32.const 1331
            i32.add
            i32.load8_u
            i32.store8
            local.get 5
            local.get 0
            i32.const 4
            i32.add
            local.tee 0
            i32.ne
            br_if 0 (;@4;)
          end
        end
        local.get 4
        i32.eqz
        br_if 0 (;@2;)
        local.get 2
        i32.const 2
        i32.add
        local.set 3
        loop  ;; label = @3
          local.get 0
          local.get 3
          i32.add
          local.get 0
          i32.const 1328
          i32.add
          i32.load8_u
          i32.store8
          local.get 0
          i32.const 1
          i32.add
          local.set 0
          local.get 4
          i32.const 1
          i32.sub
          local.tee 4
          br_if 0 (;@3;)
        end
      end
      local.get 1
      i32.const 2
      i32.shl
      i32.const 1280
      i32.add
      local.get 2
      i32.store
      i32.const 1312
      i64.load
      i64.const 1
      i64.add
      local.set 6
      i32.const 8
      local.set 0
      i32.const 0
      local.set 3
      loop  ;; label = @2
        i32.const -1
        local.get 0
        local.get 3
        i32.le_s
        br_if 1 (;@1;)
        drop
        i32.const 1312
        local.get 6
        i64.store
        local.get 0
        local.get 3
        i32.add
        i32.const 1
        i32.shr_u
        local.tee 4
        i32.const 1
        i32.add
        local.get 3
        local.get 4
        i32.const 2
        i32.shl
        i32.const 1280
        i32.add
        i32.load
        local.tee 2
        i32.const 2
        i32.add
        i32.const 1328
        local.get 2
        i32.load16_u
        local.tee 2
        i32.const 5
        local.get 2
        i32.const 5
        i32.lt_u
        select
        call 0
        local.tee 5
        local.get 2
        i32.const 5
        i32.sub
        local.get 5
        select
        local.tee 2
        i32.const 0
        i32.lt_s
        local.tee 5
        select
        local.set 3
        local.get 0
        local.get 4
        local.get 5
        select
        local.set 0
        local.get 6
        i64.const 1
        i64.add
        local.set 6
        local.get 2
        br_if 0 (;@2;)
      end
      local.get 4
    end)
  (memory (;0;) 2)
  (export "memory" (memory 0))
)

(invoke "init")
;; "k0004": the first step hits
(assert_return (invoke "search" (i32.const 52) (i32.const 0) (i32.const 0)) (i32.const 4))
(assert_return (invoke "count") (i32.const 1))
;; "k0007": steps at 4, 6, 7
(assert_return (invoke "search" (i32.const 55) (i32.const 0) (i32.const 0)) (i32.const 7))
(assert_return (invoke "count") (i32.const 4))
;; "k0009": missing after 3 steps
(assert_return (invoke "search" (i32.const 57) (i32.const 0) (i32.const 0)) (i32.const -1))
(assert_return (invoke "count") (i32.const 7))
;; entry 4 -> a record at 131065 (memory is 131072 bytes), its key "k0004"
;; in memory's last 5 bytes: found, inside
(assert_return (invoke "search_rec" (i32.const 52) (i32.const 4) (i32.const 131065) (i32.const 5)) (i32.const 4))
(assert_return (invoke "count") (i32.const 8))
(assert_return (invoke "same" (i32.const 131067) (i32.const 131067) (i32.const 5)) (i32.const 1))
;; a record at 131066: "k000" in memory's last 4 bytes, the fifth past
;; it: the step's count is stored, then memcmp traps
(assert_trap (invoke "search_rec" (i32.const 52) (i32.const 4) (i32.const 131066) (i32.const 4)) "out of bounds memory access")
(assert_return (invoke "count") (i32.const 9))
(assert_trap (invoke "same" (i32.const 131068) (i32.const 131068) (i32.const 5)) "out of bounds memory access")
;; the record's klen read past memory: clang's code stores the count
;; before that read, so the step's count is done too
(assert_trap (invoke "search" (i32.const 52) (i32.const 4) (i32.const 131071)) "out of bounds memory access")
(assert_return (invoke "count") (i32.const 10))
