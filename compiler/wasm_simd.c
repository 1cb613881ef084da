/* wasm_simd.c: the table of 0xFD-prefixed instructions, by sub-opcode. */
#include "wasm_simd.h"

#define V VT_V128
#define I32 VT_I32
#define I64 VT_I64
#define F32 VT_F32
#define F64 VT_F64

/* Shapes of the table's rows. */
#define UN(n) {n, SIMD_IM_NONE, {V}, V, 0, 0}
#define BIN(n) {n, SIMD_IM_NONE, {V, V}, V, 0, 0}
#define TERN(n) {n, SIMD_IM_NONE, {V, V, V}, V, 0, 0}
#define TEST(n) {n, SIMD_IM_NONE, {V}, I32, 0, 0}
#define SHIFT(n) {n, SIMD_IM_NONE, {V, I32}, V, 0, 0}
#define SPLAT(n, t) {n, SIMD_IM_NONE, {t}, V, 0, 0}
#define EXTRACT(n, t, lanes) {n, SIMD_IM_LANE, {V}, t, lanes, 0}
#define REPLACE(n, t, lanes) {n, SIMD_IM_LANE, {V, t}, V, lanes, 0}
#define LOAD(n, align) {n, SIMD_IM_MEM, {I32}, V, 0, align}
#define LOAD_LANE(n, lanes, align) {n, SIMD_IM_MEM_LANE, {I32, V}, V, lanes, align}
#define STORE_LANE(n, lanes, align) {n, SIMD_IM_MEM_LANE, {I32, V}, 0, lanes, align}

/* Integer comparisons of one shape: eq ne lt_s lt_u gt_s gt_u le_s le_u ge_s ge_u. */
#define ICMP(s) BIN(s ".eq"), BIN(s ".ne"), BIN(s ".lt_s"), BIN(s ".lt_u"), BIN(s ".gt_s"), \
                BIN(s ".gt_u"), BIN(s ".le_s"), BIN(s ".le_u"), BIN(s ".ge_s"), BIN(s ".ge_u")
#define FCMP(s) BIN(s ".eq"), BIN(s ".ne"), BIN(s ".lt"), BIN(s ".gt"), BIN(s ".le"), BIN(s ".ge")

static const wasm_simd_op ops[WASM_SIMD_LAST + 1] = {
  [0x00] = LOAD("v128.load", 4),
  [0x01] = LOAD("v128.load8x8_s", 3), [0x02] = LOAD("v128.load8x8_u", 3),
  [0x03] = LOAD("v128.load16x4_s", 3), [0x04] = LOAD("v128.load16x4_u", 3),
  [0x05] = LOAD("v128.load32x2_s", 3), [0x06] = LOAD("v128.load32x2_u", 3),
  [0x07] = LOAD("v128.load8_splat", 0), [0x08] = LOAD("v128.load16_splat", 1),
  [0x09] = LOAD("v128.load32_splat", 2), [0x0A] = LOAD("v128.load64_splat", 3),
  [0x0B] = {"v128.store", SIMD_IM_MEM, {I32, V}, 0, 0, 4},
  [0x0C] = {"v128.const", SIMD_IM_BYTES, {0}, V, 0, 0},
  [0x0D] = {"i8x16.shuffle", SIMD_IM_BYTES, {V, V}, V, 32, 0},
  [0x0E] = BIN("i8x16.swizzle"),
  [0x0F] = SPLAT("i8x16.splat", I32), [0x10] = SPLAT("i16x8.splat", I32),
  [0x11] = SPLAT("i32x4.splat", I32), [0x12] = SPLAT("i64x2.splat", I64),
  [0x13] = SPLAT("f32x4.splat", F32), [0x14] = SPLAT("f64x2.splat", F64),
  [0x15] = EXTRACT("i8x16.extract_lane_s", I32, 16), [0x16] = EXTRACT("i8x16.extract_lane_u", I32, 16),
  [0x17] = REPLACE("i8x16.replace_lane", I32, 16),
  [0x18] = EXTRACT("i16x8.extract_lane_s", I32, 8), [0x19] = EXTRACT("i16x8.extract_lane_u", I32, 8),
  [0x1A] = REPLACE("i16x8.replace_lane", I32, 8),
  [0x1B] = EXTRACT("i32x4.extract_lane", I32, 4), [0x1C] = REPLACE("i32x4.replace_lane", I32, 4),
  [0x1D] = EXTRACT("i64x2.extract_lane", I64, 2), [0x1E] = REPLACE("i64x2.replace_lane", I64, 2),
  [0x1F] = EXTRACT("f32x4.extract_lane", F32, 4), [0x20] = REPLACE("f32x4.replace_lane", F32, 4),
  [0x21] = EXTRACT("f64x2.extract_lane", F64, 2), [0x22] = REPLACE("f64x2.replace_lane", F64, 2),
  [0x23] = ICMP("i8x16"),  /* .. 0x2C */
  [0x2D] = ICMP("i16x8"),  /* .. 0x36 */
  [0x37] = ICMP("i32x4"),  /* .. 0x40 */
  [0x41] = FCMP("f32x4"),  /* .. 0x46 */
  [0x47] = FCMP("f64x2"),  /* .. 0x4C */
  [0x4D] = UN("v128.not"), [0x4E] = BIN("v128.and"), [0x4F] = BIN("v128.andnot"),
  [0x50] = BIN("v128.or"), [0x51] = BIN("v128.xor"), [0x52] = TERN("v128.bitselect"),
  [0x53] = TEST("v128.any_true"),
  [0x54] = LOAD_LANE("v128.load8_lane", 16, 0), [0x55] = LOAD_LANE("v128.load16_lane", 8, 1),
  [0x56] = LOAD_LANE("v128.load32_lane", 4, 2), [0x57] = LOAD_LANE("v128.load64_lane", 2, 3),
  [0x58] = STORE_LANE("v128.store8_lane", 16, 0), [0x59] = STORE_LANE("v128.store16_lane", 8, 1),
  [0x5A] = STORE_LANE("v128.store32_lane", 4, 2), [0x5B] = STORE_LANE("v128.store64_lane", 2, 3),
  [0x5C] = LOAD("v128.load32_zero", 2), [0x5D] = LOAD("v128.load64_zero", 3),
  [0x5E] = UN("f32x4.demote_f64x2_zero"), [0x5F] = UN("f64x2.promote_low_f32x4"),
  [0x60] = UN("i8x16.abs"), [0x61] = UN("i8x16.neg"), [0x62] = UN("i8x16.popcnt"),
  [0x63] = TEST("i8x16.all_true"), [0x64] = TEST("i8x16.bitmask"),
  [0x65] = BIN("i8x16.narrow_i16x8_s"), [0x66] = BIN("i8x16.narrow_i16x8_u"),
  [0x67] = UN("f32x4.ceil"), [0x68] = UN("f32x4.floor"), [0x69] = UN("f32x4.trunc"),
  [0x6A] = UN("f32x4.nearest"),
  [0x6B] = SHIFT("i8x16.shl"), [0x6C] = SHIFT("i8x16.shr_s"), [0x6D] = SHIFT("i8x16.shr_u"),
  [0x6E] = BIN("i8x16.add"), [0x6F] = BIN("i8x16.add_sat_s"), [0x70] = BIN("i8x16.add_sat_u"),
  [0x71] = BIN("i8x16.sub"), [0x72] = BIN("i8x16.sub_sat_s"), [0x73] = BIN("i8x16.sub_sat_u"),
  [0x74] = UN("f64x2.ceil"), [0x75] = UN("f64x2.floor"),
  [0x76] = BIN("i8x16.min_s"), [0x77] = BIN("i8x16.min_u"), [0x78] = BIN("i8x16.max_s"),
  [0x79] = BIN("i8x16.max_u"), [0x7A] = UN("f64x2.trunc"), [0x7B] = BIN("i8x16.avgr_u"),
  [0x7C] = UN("i16x8.extadd_pairwise_i8x16_s"), [0x7D] = UN("i16x8.extadd_pairwise_i8x16_u"),
  [0x7E] = UN("i32x4.extadd_pairwise_i16x8_s"), [0x7F] = UN("i32x4.extadd_pairwise_i16x8_u"),
  [0x80] = UN("i16x8.abs"), [0x81] = UN("i16x8.neg"), [0x82] = BIN("i16x8.q15mulr_sat_s"),
  [0x83] = TEST("i16x8.all_true"), [0x84] = TEST("i16x8.bitmask"),
  [0x85] = BIN("i16x8.narrow_i32x4_s"), [0x86] = BIN("i16x8.narrow_i32x4_u"),
  [0x87] = UN("i16x8.extend_low_i8x16_s"), [0x88] = UN("i16x8.extend_high_i8x16_s"),
  [0x89] = UN("i16x8.extend_low_i8x16_u"), [0x8A] = UN("i16x8.extend_high_i8x16_u"),
  [0x8B] = SHIFT("i16x8.shl"), [0x8C] = SHIFT("i16x8.shr_s"), [0x8D] = SHIFT("i16x8.shr_u"),
  [0x8E] = BIN("i16x8.add"), [0x8F] = BIN("i16x8.add_sat_s"), [0x90] = BIN("i16x8.add_sat_u"),
  [0x91] = BIN("i16x8.sub"), [0x92] = BIN("i16x8.sub_sat_s"), [0x93] = BIN("i16x8.sub_sat_u"),
  [0x94] = UN("f64x2.nearest"), [0x95] = BIN("i16x8.mul"),
  [0x96] = BIN("i16x8.min_s"), [0x97] = BIN("i16x8.min_u"), [0x98] = BIN("i16x8.max_s"),
  [0x99] = BIN("i16x8.max_u"), [0x9B] = BIN("i16x8.avgr_u"),
  [0x9C] = BIN("i16x8.extmul_low_i8x16_s"), [0x9D] = BIN("i16x8.extmul_high_i8x16_s"),
  [0x9E] = BIN("i16x8.extmul_low_i8x16_u"), [0x9F] = BIN("i16x8.extmul_high_i8x16_u"),
  [0xA0] = UN("i32x4.abs"), [0xA1] = UN("i32x4.neg"),
  [0xA3] = TEST("i32x4.all_true"), [0xA4] = TEST("i32x4.bitmask"),
  [0xA7] = UN("i32x4.extend_low_i16x8_s"), [0xA8] = UN("i32x4.extend_high_i16x8_s"),
  [0xA9] = UN("i32x4.extend_low_i16x8_u"), [0xAA] = UN("i32x4.extend_high_i16x8_u"),
  [0xAB] = SHIFT("i32x4.shl"), [0xAC] = SHIFT("i32x4.shr_s"), [0xAD] = SHIFT("i32x4.shr_u"),
  [0xAE] = BIN("i32x4.add"), [0xB1] = BIN("i32x4.sub"), [0xB5] = BIN("i32x4.mul"),
  [0xB6] = BIN("i32x4.min_s"), [0xB7] = BIN("i32x4.min_u"), [0xB8] = BIN("i32x4.max_s"),
  [0xB9] = BIN("i32x4.max_u"), [0xBA] = BIN("i32x4.dot_i16x8_s"),
  [0xBC] = BIN("i32x4.extmul_low_i16x8_s"), [0xBD] = BIN("i32x4.extmul_high_i16x8_s"),
  [0xBE] = BIN("i32x4.extmul_low_i16x8_u"), [0xBF] = BIN("i32x4.extmul_high_i16x8_u"),
  [0xC0] = UN("i64x2.abs"), [0xC1] = UN("i64x2.neg"),
  [0xC3] = TEST("i64x2.all_true"), [0xC4] = TEST("i64x2.bitmask"),
  [0xC7] = UN("i64x2.extend_low_i32x4_s"), [0xC8] = UN("i64x2.extend_high_i32x4_s"),
  [0xC9] = UN("i64x2.extend_low_i32x4_u"), [0xCA] = UN("i64x2.extend_high_i32x4_u"),
  [0xCB] = SHIFT("i64x2.shl"), [0xCC] = SHIFT("i64x2.shr_s"), [0xCD] = SHIFT("i64x2.shr_u"),
  [0xCE] = BIN("i64x2.add"), [0xD1] = BIN("i64x2.sub"), [0xD5] = BIN("i64x2.mul"),
  [0xD6] = BIN("i64x2.eq"), [0xD7] = BIN("i64x2.ne"), [0xD8] = BIN("i64x2.lt_s"),
  [0xD9] = BIN("i64x2.gt_s"), [0xDA] = BIN("i64x2.le_s"), [0xDB] = BIN("i64x2.ge_s"),
  [0xDC] = BIN("i64x2.extmul_low_i32x4_s"), [0xDD] = BIN("i64x2.extmul_high_i32x4_s"),
  [0xDE] = BIN("i64x2.extmul_low_i32x4_u"), [0xDF] = BIN("i64x2.extmul_high_i32x4_u"),
  [0xE0] = UN("f32x4.abs"), [0xE1] = UN("f32x4.neg"), [0xE3] = UN("f32x4.sqrt"),
  [0xE4] = BIN("f32x4.add"), [0xE5] = BIN("f32x4.sub"), [0xE6] = BIN("f32x4.mul"),
  [0xE7] = BIN("f32x4.div"), [0xE8] = BIN("f32x4.min"), [0xE9] = BIN("f32x4.max"),
  [0xEA] = BIN("f32x4.pmin"), [0xEB] = BIN("f32x4.pmax"),
  [0xEC] = UN("f64x2.abs"), [0xED] = UN("f64x2.neg"), [0xEF] = UN("f64x2.sqrt"),
  [0xF0] = BIN("f64x2.add"), [0xF1] = BIN("f64x2.sub"), [0xF2] = BIN("f64x2.mul"),
  [0xF3] = BIN("f64x2.div"), [0xF4] = BIN("f64x2.min"), [0xF5] = BIN("f64x2.max"),
  [0xF6] = BIN("f64x2.pmin"), [0xF7] = BIN("f64x2.pmax"),
  [0xF8] = UN("i32x4.trunc_sat_f32x4_s"), [0xF9] = UN("i32x4.trunc_sat_f32x4_u"),
  [0xFA] = UN("f32x4.convert_i32x4_s"), [0xFB] = UN("f32x4.convert_i32x4_u"),
  [0xFC] = UN("i32x4.trunc_sat_f64x2_s_zero"), [0xFD] = UN("i32x4.trunc_sat_f64x2_u_zero"),
  [0xFE] = UN("f64x2.convert_low_i32x4_s"), [0xFF] = UN("f64x2.convert_low_i32x4_u"),
  /* relaxed SIMD */
  [0x100] = BIN("i8x16.relaxed_swizzle"),
  [0x101] = UN("i32x4.relaxed_trunc_f32x4_s"), [0x102] = UN("i32x4.relaxed_trunc_f32x4_u"),
  [0x103] = UN("i32x4.relaxed_trunc_f64x2_s_zero"), [0x104] = UN("i32x4.relaxed_trunc_f64x2_u_zero"),
  [0x105] = TERN("f32x4.relaxed_madd"), [0x106] = TERN("f32x4.relaxed_nmadd"),
  [0x107] = TERN("f64x2.relaxed_madd"), [0x108] = TERN("f64x2.relaxed_nmadd"),
  [0x109] = TERN("i8x16.relaxed_laneselect"), [0x10A] = TERN("i16x8.relaxed_laneselect"),
  [0x10B] = TERN("i32x4.relaxed_laneselect"), [0x10C] = TERN("i64x2.relaxed_laneselect"),
  [0x10D] = BIN("f32x4.relaxed_min"), [0x10E] = BIN("f32x4.relaxed_max"),
  [0x10F] = BIN("f64x2.relaxed_min"), [0x110] = BIN("f64x2.relaxed_max"),
  [0x111] = BIN("i16x8.relaxed_q15mulr_s"), [0x112] = BIN("i16x8.relaxed_dot_i8x16_i7x16_s"),
  [0x113] = TERN("i32x4.relaxed_dot_i8x16_i7x16_add_s"),
};

const wasm_simd_op *wasm_simd_info(uint32_t sub) {
  if (sub > WASM_SIMD_LAST || !ops[sub].name) return NULL;
  return &ops[sub];
}
