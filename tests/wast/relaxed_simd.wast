;; relaxed_simd.wast: twasmc's relaxed SIMD (Wasm 3.0).  Each instruction
;; may give any of several results; twasmc always gives the one named in
;; docs/ARCHITECTURE.md, so these assertions are exact.  The comments list
;; the results the spec allows where inputs make them differ.

(module
  (func (export "relaxed_swizzle") (param v128 v128) (result v128)
    (i8x16.relaxed_swizzle (local.get 0) (local.get 1)))
  (func (export "relaxed_trunc_f32x4_s") (param v128) (result v128)
    (i32x4.relaxed_trunc_f32x4_s (local.get 0)))
  (func (export "relaxed_trunc_f32x4_u") (param v128) (result v128)
    (i32x4.relaxed_trunc_f32x4_u (local.get 0)))
  (func (export "relaxed_trunc_f64x2_s_zero") (param v128) (result v128)
    (i32x4.relaxed_trunc_f64x2_s_zero (local.get 0)))
  (func (export "relaxed_trunc_f64x2_u_zero") (param v128) (result v128)
    (i32x4.relaxed_trunc_f64x2_u_zero (local.get 0)))
  (func (export "f32x4.relaxed_madd") (param v128 v128 v128) (result v128)
    (f32x4.relaxed_madd (local.get 0) (local.get 1) (local.get 2)))
  (func (export "f32x4.relaxed_nmadd") (param v128 v128 v128) (result v128)
    (f32x4.relaxed_nmadd (local.get 0) (local.get 1) (local.get 2)))
  (func (export "f64x2.relaxed_madd") (param v128 v128 v128) (result v128)
    (f64x2.relaxed_madd (local.get 0) (local.get 1) (local.get 2)))
  (func (export "f64x2.relaxed_nmadd") (param v128 v128 v128) (result v128)
    (f64x2.relaxed_nmadd (local.get 0) (local.get 1) (local.get 2)))
  (func (export "i8x16.relaxed_laneselect") (param v128 v128 v128) (result v128)
    (i8x16.relaxed_laneselect (local.get 0) (local.get 1) (local.get 2)))
  (func (export "i16x8.relaxed_laneselect") (param v128 v128 v128) (result v128)
    (i16x8.relaxed_laneselect (local.get 0) (local.get 1) (local.get 2)))
  (func (export "i32x4.relaxed_laneselect") (param v128 v128 v128) (result v128)
    (i32x4.relaxed_laneselect (local.get 0) (local.get 1) (local.get 2)))
  (func (export "i64x2.relaxed_laneselect") (param v128 v128 v128) (result v128)
    (i64x2.relaxed_laneselect (local.get 0) (local.get 1) (local.get 2)))
  (func (export "f32x4.relaxed_min") (param v128 v128) (result v128)
    (f32x4.relaxed_min (local.get 0) (local.get 1)))
  (func (export "f32x4.relaxed_max") (param v128 v128) (result v128)
    (f32x4.relaxed_max (local.get 0) (local.get 1)))
  (func (export "f64x2.relaxed_min") (param v128 v128) (result v128)
    (f64x2.relaxed_min (local.get 0) (local.get 1)))
  (func (export "f64x2.relaxed_max") (param v128 v128) (result v128)
    (f64x2.relaxed_max (local.get 0) (local.get 1)))
  (func (export "relaxed_q15mulr_s") (param v128 v128) (result v128)
    (i16x8.relaxed_q15mulr_s (local.get 0) (local.get 1)))
  ;; a relaxed result computed from constants (which LLVM may fold) equals
  ;; the one computed at run time
  (func (export "madd_folded_vs_run_time") (param v128 v128 v128) (result v128)
    (f32x4.eq
      (f32x4.relaxed_madd (v128.const f32x4 0x1.fffffep+127 0x1.fffffep+127 0x1.fffffep+127 0x1.fffffep+127)
                          (v128.const f32x4 2.0 2.0 2.0 2.0)
                          (v128.const f32x4 -0x1.fffffep+127 -0x1.fffffep+127 -0x1.fffffep+127 -0x1.fffffep+127))
      (f32x4.relaxed_madd (local.get 0) (local.get 1) (local.get 2))))
)

;; swizzle: an index past 15 gives 0 (allowed: 0 or a[index % 16]).
(assert_return (invoke "relaxed_swizzle"
                       (v128.const i8x16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
                       (v128.const i8x16 15 14 16 17 127 128 255 0 1 2 3 31 32 48 250 5))
               (v128.const i8x16 15 14 0 0 0 0 0 0 1 2 3 0 0 0 0 5))

;; truncations saturate, NaN gives 0 (allowed also: INT32_MIN or
;; UINT32_MAX for out-of-range and NaN lanes).
(assert_return (invoke "relaxed_trunc_f32x4_s"
                       (v128.const f32x4 -2147483648.0 -2147483904.0 2147483647.0 2147483904.0))
               (v128.const i32x4 -2147483648 -2147483648 2147483647 2147483647))
(assert_return (invoke "relaxed_trunc_f32x4_s" (v128.const f32x4 nan -nan nan:0x444444 -1.75))
               (v128.const i32x4 0 0 0 -1))
(assert_return (invoke "relaxed_trunc_f32x4_u" (v128.const f32x4 0 -1.0 4294967040.0 4294967296.0))
               (v128.const i32x4 0 0 4294967040 0xffffffff))
(assert_return (invoke "relaxed_trunc_f32x4_u" (v128.const f32x4 nan -nan 3.9 -0.5))
               (v128.const i32x4 0 0 3 0))
(assert_return (invoke "relaxed_trunc_f64x2_s_zero" (v128.const f64x2 -2147483904.0 2147483904.0))
               (v128.const i32x4 -2147483648 2147483647 0 0))
(assert_return (invoke "relaxed_trunc_f64x2_s_zero" (v128.const f64x2 nan -7.5))
               (v128.const i32x4 0 -7 0 0))
(assert_return (invoke "relaxed_trunc_f64x2_u_zero" (v128.const f64x2 -1.0 4294967296.0))
               (v128.const i32x4 0 0xffffffff 0 0))
(assert_return (invoke "relaxed_trunc_f64x2_u_zero" (v128.const f64x2 nan 4294967295.5))
               (v128.const i32x4 0 0xffffffff 0 0))

;; madd and nmadd round twice, after the product and after the sum
;; (allowed: that, or one rounding of the fused result).
;; FLT_MAX * 2 - FLT_MAX: inf (fused: FLT_MAX)
(assert_return (invoke "f32x4.relaxed_madd"
                       (v128.const f32x4 0x1.fffffep+127 0x1.fffffep+127 0x1.fffffep+127 0x1.fffffep+127)
                       (v128.const f32x4 2.0 2.0 2.0 2.0)
                       (v128.const f32x4 -0x1.fffffep+127 -0x1.fffffep+127 -0x1.fffffep+127 -0x1.fffffep+127))
               (v128.const f32x4 inf inf inf inf))
;; (1 + 2^-22)(1 + 2^-15) - (1 + 2^-15 + 2^-22): 0 (fused: 2^-37)
(assert_return (invoke "f32x4.relaxed_madd"
                       (v128.const f32x4 0x1.000004p+0 0x1.000004p+0 0x1.000004p+0 0x1.000004p+0)
                       (v128.const f32x4 0x1.0002p+0 0x1.0002p+0 0x1.0002p+0 0x1.0002p+0)
                       (v128.const f32x4 -0x1.000204p+0 -0x1.000204p+0 -0x1.000204p+0 -0x1.000204p+0))
               (v128.const f32x4 0 0 0 0))
(assert_return (invoke "f32x4.relaxed_nmadd"
                       (v128.const f32x4 -0x1.000004p+0 1.0 2.0 -3.0)
                       (v128.const f32x4 0x1.0002p+0 1.0 -4.0 5.0)
                       (v128.const f32x4 -0x1.000204p+0 1.0 0.5 -1.0))
               (v128.const f32x4 0 0 8.5 14.0))
(assert_return (invoke "f64x2.relaxed_madd"
                       (v128.const f64x2 0x1.00000004p+0 0x1.fffffffffffffp+1023)
                       (v128.const f64x2 0x1.000002p+0 2.0)
                       (v128.const f64x2 -0x1.00000204p+0 -0x1.fffffffffffffp+1023))
               (v128.const f64x2 0 inf))
(assert_return (invoke "f64x2.relaxed_nmadd"
                       (v128.const f64x2 0x1.00000004p+0 1.5)
                       (v128.const f64x2 -0x1.000002p+0 2.0)
                       (v128.const f64x2 -0x1.00000204p+0 4.0))
               (v128.const f64x2 0 1.0))
(assert_return (invoke "madd_folded_vs_run_time"
                       (v128.const f32x4 0x1.fffffep+127 0x1.fffffep+127 0x1.fffffep+127 0x1.fffffep+127)
                       (v128.const f32x4 2.0 2.0 2.0 2.0)
                       (v128.const f32x4 -0x1.fffffep+127 -0x1.fffffep+127 -0x1.fffffep+127 -0x1.fffffep+127))
               (v128.const i32x4 -1 -1 -1 -1))

;; laneselect takes every bit from the mask, as bitselect (allowed: that,
;; or each lane by its mask lane's top bit when the mask lane is not all
;; ones or all zeros).
(assert_return (invoke "i8x16.relaxed_laneselect"
                       (v128.const i8x16 0 1 0x12 0x12 4 5 6 7 8 9 10 11 12 13 14 15)
                       (v128.const i8x16 16 17 0x34 0x34 20 21 22 23 24 25 26 27 28 29 30 31)
                       (v128.const i8x16 0xff 0 0xf0 0x0f 0 0 0 0 0 0 0 0 0 0 0 0))
               (v128.const i8x16 0 17 0x14 0x32 20 21 22 23 24 25 26 27 28 29 30 31))
(assert_return (invoke "i16x8.relaxed_laneselect"
                       (v128.const i16x8 0 1 0x1234 0x1234 4 5 6 7)
                       (v128.const i16x8 8 9 0x5678 0x5678 12 13 14 15)
                       (v128.const i16x8 0xffff 0 0xff00 0x00ff 0 0 0 0))
               (v128.const i16x8 0 9 0x1278 0x5634 12 13 14 15))
(assert_return (invoke "i32x4.relaxed_laneselect"
                       (v128.const i32x4 0 1 0x12345678 0x12345678)
                       (v128.const i32x4 4 5 0x90abcdef 0x90abcdef)
                       (v128.const i32x4 0xffffffff 0 0xffff0000 0x0000ffff))
               (v128.const i32x4 0 5 0x1234cdef 0x90ab5678))
(assert_return (invoke "i64x2.relaxed_laneselect"
                       (v128.const i64x2 0 0x1234123412341234)
                       (v128.const i64x2 1 0x5678567856785678)
                       (v128.const i64x2 0xffffffffffffffff 0xffffffff00000000))
               (v128.const i64x2 0 0x1234123456785678))

;; min and max are Wasm's min and max: NaN if either is, -0 below +0
;; (allowed also: the other operand for NaN lanes, either zero for zeros).
(assert_return (invoke "f32x4.relaxed_min" (v128.const f32x4 -nan nan 0 0) (v128.const f32x4 0 0 -nan nan))
               (v128.const f32x4 nan:canonical nan:canonical nan:canonical nan:canonical))
(assert_return (invoke "f32x4.relaxed_min" (v128.const f32x4 +0.0 -0.0 +0.0 -0.0) (v128.const f32x4 -0.0 +0.0 +0.0 -0.0))
               (v128.const f32x4 -0.0 -0.0 +0.0 -0.0))
(assert_return (invoke "f32x4.relaxed_max" (v128.const f32x4 +0.0 -0.0 +0.0 -0.0) (v128.const f32x4 -0.0 +0.0 +0.0 -0.0))
               (v128.const f32x4 +0.0 +0.0 +0.0 -0.0))
(assert_return (invoke "f32x4.relaxed_max" (v128.const f32x4 1.5 -3 nan:0x200000 inf) (v128.const f32x4 2 -4 1 -inf))
               (v128.const f32x4 2 -3 nan:arithmetic inf))
(assert_return (invoke "f64x2.relaxed_min" (v128.const f64x2 -nan 0) (v128.const f64x2 0 nan))
               (v128.const f64x2 nan:canonical nan:canonical))
(assert_return (invoke "f64x2.relaxed_min" (v128.const f64x2 +0.0 -0.0) (v128.const f64x2 -0.0 +0.0))
               (v128.const f64x2 -0.0 -0.0))
(assert_return (invoke "f64x2.relaxed_max" (v128.const f64x2 +0.0 -0.0) (v128.const f64x2 -0.0 +0.0))
               (v128.const f64x2 +0.0 +0.0))
(assert_return (invoke "f64x2.relaxed_max" (v128.const f64x2 -1e300 7) (v128.const f64x2 -inf 7.5))
               (v128.const f64x2 -1e300 7.5))

;; q15mulr saturates -0x8000 * -0x8000 to 0x7fff (allowed: that or -0x8000).
(assert_return (invoke "relaxed_q15mulr_s"
                       (v128.const i16x8 -32768 -32768 32767 16384 -16384 1 -1 0)
                       (v128.const i16x8 -32768 32767 32767 16384 16384 16384 16384 5))
               (v128.const i16x8 32767 -32767 32766 8192 -8192 1 0 0))

;; The dot products, in a binary module: wabt 1.0.32 spells them
;; i16x8.dot_i8x16_i7x16_s and i32x4.dot_i8x16_i7x16_add_s, later wabts as
;; the spec does (i16x8.relaxed_dot_i8x16_i7x16_s, ...).  Both take b's
;; bytes as signed and let the i16 pair sums wrap (allowed: b's bytes
;; unsigned, and sums saturating).
(module binary
  "\00\61\73\6d\01\00\00\00\01\0e\02\60\02\7b\7b\01\7b\60\03\7b\7b\7b\01\7b\03\03\02\00\01"
  "\07\49\02\1f\69\31\36\78\38\2e\72\65\6c\61\78\65\64\5f\64\6f\74\5f\69\38\78\31\36\5f"
  "\69\37\78\31\36\5f\73\00\00\23\69\33\32\78\34\2e\72\65\6c\61\78\65\64\5f\64\6f\74\5f"
  "\69\38\78\31\36\5f\69\37\78\31\36\5f\61\64\64\5f\73\00\01\0a\17\02\09\00\20\00\20\01"
  "\fd\92\02\0b\0b\00\20\00\20\01\20\02\fd\93\02\0b")

(assert_return (invoke "i16x8.relaxed_dot_i8x16_i7x16_s"
                       (v128.const i8x16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
                       (v128.const i8x16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15))
               (v128.const i16x8 1 13 41 85 145 221 313 421))
(assert_return (invoke "i16x8.relaxed_dot_i8x16_i7x16_s"
                       (v128.const i8x16 -128 -128 127 127 0 0 0 0 0 0 0 0 0 0 0 0)
                       (v128.const i8x16 127 127 127 127 0 0 0 0 0 0 0 0 0 0 0 0))
               (v128.const i16x8 -32512 32258 0 0 0 0 0 0))
;; -128 * -127 * 2: 32512 (b unsigned: -33024 saturated to -32768, or 33024)
(assert_return (invoke "i16x8.relaxed_dot_i8x16_i7x16_s"
                       (v128.const i8x16 -128 -128 0 0 0 0 0 0 0 0 0 0 0 0 0 0)
                       (v128.const i8x16 -127 -127 0 0 0 0 0 0 0 0 0 0 0 0 0 0))
               (v128.const i16x8 32512 0 0 0 0 0 0 0))
;; -128 * -128 * 2 = 32768 wraps (saturating: 32767)
(assert_return (invoke "i16x8.relaxed_dot_i8x16_i7x16_s"
                       (v128.const i8x16 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128)
                       (v128.const i8x16 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128))
               (v128.const i16x8 -32768 -32768 -32768 -32768 -32768 -32768 -32768 -32768))
(assert_return (invoke "i32x4.relaxed_dot_i8x16_i7x16_add_s"
                       (v128.const i8x16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
                       (v128.const i8x16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
                       (v128.const i32x4 0 1 2 3))
               (v128.const i32x4 14 127 368 737))
(assert_return (invoke "i32x4.relaxed_dot_i8x16_i7x16_add_s"
                       (v128.const i8x16 -128 -128 -128 -128 0 0 0 0 0 0 0 0 0 0 0 0)
                       (v128.const i8x16 -127 -127 -127 -127 0 0 0 0 0 0 0 0 0 0 0 0)
                       (v128.const i32x4 1 2 3 4))
               (v128.const i32x4 65025 2 3 4))
;; both i16 pair sums wrap to -32768 (saturating: 32767 each)
(assert_return (invoke "i32x4.relaxed_dot_i8x16_i7x16_add_s"
                       (v128.const i8x16 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128)
                       (v128.const i8x16 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128 -128)
                       (v128.const i32x4 0 0 0 0x7fffffff))
               (v128.const i32x4 -65536 -65536 -65536 0x7ffeffff))
