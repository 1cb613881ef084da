;; simd_lanes.wast: the code shapes twasmc's lanes pass (compiler/ir/ir_lanes.c)
;; rewrites, with inputs at the edges of what each rewrite proves: a
;; nine-term sum of bytes times a constant (below 2^15: pmaddwd), sums that
;; reach 2^15 and more (not rewritten), and the absolute difference of
;; widened bytes chosen by a comparison of the narrow bytes, widened to i64.

(module
  (func $w (param v128) (result v128)
    (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u (local.get 0))))
  ;; sum of nine byte vectors' low four lanes, times 7282, >> 16 (/ 9)
  (func (export "blur9") (param v128 v128 v128 v128 v128 v128 v128 v128 v128) (result v128)
    (i32x4.shr_u
      (i32x4.mul
        (i32x4.add (call $w (local.get 8))
        (i32x4.add (call $w (local.get 7))
        (i32x4.add (call $w (local.get 6))
        (i32x4.add (call $w (local.get 5))
        (i32x4.add (call $w (local.get 4))
        (i32x4.add (call $w (local.get 3))
        (i32x4.add (call $w (local.get 2))
          (i32x4.add (call $w (local.get 1)) (call $w (local.get 0))))))))))
        (v128.const i32x4 7282 7282 7282 7282))
      (i32.const 16)))
  ;; the same sum squared: both operands below 2^15, neither constant
  (func (export "square9") (param v128 v128 v128 v128 v128 v128 v128 v128 v128) (result v128)
    (local v128)
    (local.set 9
      (i32x4.add (call $w (local.get 8))
      (i32x4.add (call $w (local.get 7))
      (i32x4.add (call $w (local.get 6))
      (i32x4.add (call $w (local.get 5))
      (i32x4.add (call $w (local.get 4))
      (i32x4.add (call $w (local.get 3))
      (i32x4.add (call $w (local.get 2))
        (i32x4.add (call $w (local.get 1)) (call $w (local.get 0)))))))))))
    (i32x4.mul (local.get 9) (local.get 9)))
  ;; 129 * 255 + ... : a sum of bytes times 129 that passes 2^15 (no rewrite)
  (func (export "wide_sum") (param v128 v128) (result v128)
    (i32x4.mul
      (i32x4.add (i32x4.mul (call $w (local.get 0)) (v128.const i32x4 129 129 129 129))
                 (call $w (local.get 1)))
      (v128.const i32x4 7 7 7 7)))
  ;; 16-bit lanes times 16-bit lanes: up to 65535 (no rewrite)
  (func (export "mul16") (param v128 v128) (result v128)
    (i32x4.mul (i32x4.extend_low_i16x8_u (local.get 0)) (i32x4.extend_low_i16x8_u (local.get 1))))
  ;; |a - b| of the low four bytes, chosen by i8x16.gt_u on the bytes
  (func (export "absdiff") (param v128 v128) (result v128)
    (local v128 v128)
    (local.set 2 (call $w (local.get 0)))
    (local.set 3 (call $w (local.get 1)))
    (v128.bitselect
      (i32x4.sub (local.get 2) (local.get 3))
      (i32x4.sub (local.get 3) (local.get 2))
      (i32x4.extend_low_i16x8_s (i16x8.extend_low_i8x16_s (i8x16.gt_u (local.get 0) (local.get 1))))))
  ;; the same, lanes 0 and 1 widened to i64 (a sum of absolute differences)
  (func (export "absdiff64") (param v128 v128 v128) (result v128)
    (i64x2.add (local.get 2)
      (i64x2.extend_low_i32x4_s
        (v128.bitselect
          (i32x4.sub (call $w (local.get 0)) (call $w (local.get 1)))
          (i32x4.sub (call $w (local.get 1)) (call $w (local.get 0)))
          (i32x4.extend_low_i16x8_s (i16x8.extend_low_i8x16_s (i8x16.gt_u (local.get 0) (local.get 1))))))))
  ;; bytes 4..7 and 12..15 of three vectors, summed in i32 lanes (shared
  ;; 16-bit half sums), and a sum whose terms come from different bytes
  (func $q1 (param v128) (result v128)
    (call $w (i8x16.shuffle 4 5 6 7 0 0 0 0 0 0 0 0 0 0 0 0 (local.get 0) (local.get 0))))
  (func $q3 (param v128) (result v128)
    (call $w (i8x16.shuffle 12 13 14 15 0 0 0 0 0 0 0 0 0 0 0 0 (local.get 0) (local.get 0))))
  (func (export "quarters") (param v128 v128 v128) (result v128)
    (i32x4.sub
      (i32x4.shl (i32x4.add (call $q3 (local.get 0)) (i32x4.add (call $q3 (local.get 1)) (call $q3 (local.get 2))))
                 (i32.const 16))
      (i32x4.add (call $q1 (local.get 0)) (i32x4.add (call $q1 (local.get 1)) (call $q1 (local.get 2))))))
  (func (export "mixed_quarters") (param v128 v128) (result v128)
    (i32x4.add (call $q1 (local.get 0)) (call $q3 (local.get 1))))
  ;; a comparison of other lanes than the subtraction's: not |a - b|
  (func (export "not_absdiff") (param v128 v128) (result v128)
    (v128.bitselect
      (i32x4.sub (call $w (local.get 0)) (call $w (local.get 1)))
      (i32x4.sub (call $w (local.get 1)) (call $w (local.get 0)))
      (i32x4.extend_low_i16x8_s (i16x8.extend_low_i8x16_s
        (i8x16.gt_u (i8x16.shuffle 1 0 3 2 4 5 6 7 8 9 10 11 12 13 14 15 (local.get 0) (local.get 0))
                    (local.get 1))))))
)

(assert_return
  (invoke "blur9"
    (v128.const i8x16 255 0 1 200 0 0 0 0 0 0 0 0 0 0 0 0) (v128.const i8x16 255 0 2 200 0 0 0 0 0 0 0 0 0 0 0 0)
    (v128.const i8x16 255 0 3 200 0 0 0 0 0 0 0 0 0 0 0 0) (v128.const i8x16 255 0 4 200 0 0 0 0 0 0 0 0 0 0 0 0)
    (v128.const i8x16 255 0 5 200 0 0 0 0 0 0 0 0 0 0 0 0) (v128.const i8x16 255 0 6 200 0 0 0 0 0 0 0 0 0 0 0 0)
    (v128.const i8x16 255 0 7 200 0 0 0 0 0 0 0 0 0 0 0 0) (v128.const i8x16 255 0 8 200 0 0 0 0 0 0 0 0 0 0 0 0)
    (v128.const i8x16 255 1 9 201 0 0 0 0 0 0 0 0 0 0 0 0))
  (v128.const i32x4 255 0 5 200))
(assert_return
  (invoke "square9"
    (v128.const i8x16 255 0 1 200 0 0 0 0 0 0 0 0 0 0 0 0) (v128.const i8x16 255 0 2 200 0 0 0 0 0 0 0 0 0 0 0 0)
    (v128.const i8x16 255 0 3 200 0 0 0 0 0 0 0 0 0 0 0 0) (v128.const i8x16 255 0 4 200 0 0 0 0 0 0 0 0 0 0 0 0)
    (v128.const i8x16 255 0 5 200 0 0 0 0 0 0 0 0 0 0 0 0) (v128.const i8x16 255 0 6 200 0 0 0 0 0 0 0 0 0 0 0 0)
    (v128.const i8x16 255 0 7 200 0 0 0 0 0 0 0 0 0 0 0 0) (v128.const i8x16 255 0 8 200 0 0 0 0 0 0 0 0 0 0 0 0)
    (v128.const i8x16 255 1 9 201 0 0 0 0 0 0 0 0 0 0 0 0))
  (v128.const i32x4 5267025 1 2025 3243601))
(assert_return
  (invoke "wide_sum" (v128.const i8x16 255 254 0 1 0 0 0 0 0 0 0 0 0 0 0 0)
                     (v128.const i8x16 255 255 0 255 0 0 0 0 0 0 0 0 0 0 0 0))
  (v128.const i32x4 232050 231147 0 2688))
(assert_return
  (invoke "mul16" (v128.const i16x8 65535 32768 32767 2 0 0 0 0) (v128.const i16x8 65535 32768 32767 40000 0 0 0 0))
  (v128.const i32x4 4294836225 1073741824 1073676289 80000))
(assert_return
  (invoke "absdiff" (v128.const i8x16 0 255 7 100 0 0 0 0 0 0 0 0 0 0 0 0)
                    (v128.const i8x16 255 0 7 200 0 0 0 0 0 0 0 0 0 0 0 0))
  (v128.const i32x4 255 255 0 100))
(assert_return
  (invoke "absdiff64" (v128.const i8x16 0 255 7 100 0 0 0 0 0 0 0 0 0 0 0 0)
                      (v128.const i8x16 255 1 7 200 0 0 0 0 0 0 0 0 0 0 0 0)
                      (v128.const i64x2 -1 0x7fffffffffffffff))
  (v128.const i64x2 254 0x80000000000000fd))
(assert_return
  (invoke "not_absdiff" (v128.const i8x16 0 255 7 100 0 0 0 0 0 0 0 0 0 0 0 0)
                        (v128.const i8x16 255 0 7 200 0 0 0 0 0 0 0 0 0 0 0 0))
  (v128.const i32x4 255 -255 0 100))
(assert_return
  (invoke "quarters" (v128.const i8x16 0 0 0 0 255 1 2 3 0 0 0 0 255 0 9 200)
                     (v128.const i8x16 0 0 0 0 255 0 4 5 0 0 0 0 255 0 9 200)
                     (v128.const i8x16 0 0 0 0 255 0 6 7 0 0 0 0 255 1 9 201))
  (v128.const i32x4 50134275 65535 1769460 39387121))
(assert_return
  (invoke "mixed_quarters" (v128.const i8x16 0 0 0 0 255 1 2 3 0 0 0 0 9 9 9 9)
                           (v128.const i8x16 0 0 0 0 7 7 7 7 0 0 0 0 255 0 9 200))
  (v128.const i32x4 510 1 11 203))
