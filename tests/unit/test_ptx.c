/* test_ptx.c: Check suite "ptx": kernel descriptors -> PTX for sm_75/80/90,
 * checked for ASCII, ISA version, exactness, and with ptxas when present. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/Target.h>

#include "ptx.h"
#include "ptx_internal.h"

#define NONE .a = -1, .b = -1, .c = -1
#define PARAM(t, p) {.op = KN_E_PARAM, .type = t, NONE, .param = p}
#define CONST(t, v) {.op = KN_E_CONST, .type = t, NONE, .bits = v}
#define IV(t, d) {.op = KN_E_IV, .type = t, NONE, .iv = d}
#define LOAD(t, m, s, ...) \
  {.op = KN_E_LOAD, .type = t, NONE, .load = {.mem = m, .sign = s, .addr = __VA_ARGS__}}
#define UN(o, t, x) {.op = o, .type = t, .a = x, .b = -1, .c = -1}
#define BIN(o, t, x, y) {.op = o, .type = t, .a = x, .b = y, .c = -1}
#define CMP(p, x, y) {.op = KN_E_CMP, .type = KN_I1, .a = x, .b = y, .c = -1, .cmp = p}
#define SEL(t, k, x, y) {.op = KN_E_SELECT, .type = t, .a = k, .b = x, .c = y}
#define NODES(arr) .nodes = arr, .nnodes = sizeof arr / sizeof arr[0]
#define C(v) {false, v}
#define P(i) {true, i}
/* base(param b) + i*size: a 1-D array at a param byte offset. */
#define ARRAY(b, size) {.iv_coeff = {size}, .nparam_terms = 1, .param_index = {b}, \
                        .param_coeff = {1}, .align = size}

/* saxpy: y[i] = a * x[i] + y[i]; p0 n, p1 a (f32 bits), p2 &x, p3 &y. */
static const kn_expr saxpy_nodes[] = {
  PARAM(KN_F32, 1),
  LOAD(KN_F32, KN_F32, false, ARRAY(2, 4)),
  BIN(KN_E_MUL, KN_F32, 0, 1),
  LOAD(KN_F32, KN_F32, false, ARRAY(3, 4)),
  BIN(KN_E_ADD, KN_F32, 2, 3),
};

/* As the detector emits it (align 1): y[i] = a * x[i] + b; p0 n, p1 a,
 * p2 b, p3 &x, p4 &y. */
#define ARRAY1(b, size) {.iv_coeff = {size}, .nparam_terms = 1, .param_index = {b}, \
                         .param_coeff = {1}, .align = 1}
static const kn_expr axpb_nodes[] = {
  PARAM(KN_F32, 1),
  LOAD(KN_F32, KN_F32, false, ARRAY1(3, 4)),
  BIN(KN_E_MUL, KN_F32, 0, 1),
  PARAM(KN_F32, 2),
  BIN(KN_E_ADD, KN_F32, 2, 3),
};

/* Jacobi on a 64x64 f32 grid at 0x1000 into one at 0x20000, interior only:
 * out[i+1][j+1] = 0.25f * (a[i][j+1] + a[i+2][j+1] + a[i+1][j] + a[i+1][j+2]). */
#define GRID(base, di, dj) {.c0 = (base) + (di) * 256 + (dj) * 4, .iv_coeff = {256, 4}, .align = 4}
static const kn_expr jacobi_nodes[] = {
  LOAD(KN_F32, KN_F32, false, GRID(0x1000, 0, 1)),
  LOAD(KN_F32, KN_F32, false, GRID(0x1000, 2, 1)),
  BIN(KN_E_ADD, KN_F32, 0, 1),
  LOAD(KN_F32, KN_F32, false, GRID(0x1000, 1, 0)),
  BIN(KN_E_ADD, KN_F32, 2, 3),
  LOAD(KN_F32, KN_F32, false, GRID(0x1000, 1, 2)),
  BIN(KN_E_ADD, KN_F32, 4, 5),
  CONST(KN_F32, 0x3e800000),   /* 0.25f */
  BIN(KN_E_MUL, KN_F32, 7, 6),
};

/* out[i] = sqrt(x[i]) / max(y[i], 1.0) - min(-x, y); p0 n, p1 &x, p2 &y, p3 &out. */
static const kn_expr f64_nodes[] = {
  LOAD(KN_F64, KN_F64, false, ARRAY(1, 8)),
  UN(KN_E_SQRT, KN_F64, 0),
  LOAD(KN_F64, KN_F64, false, ARRAY(2, 8)),
  CONST(KN_F64, 0x3ff0000000000000ull),
  BIN(KN_E_MAX, KN_F64, 2, 3),
  BIN(KN_E_DIV, KN_F64, 1, 4),
  UN(KN_E_NEG, KN_F64, 0),
  BIN(KN_E_MIN, KN_F64, 6, 2),
  BIN(KN_E_SUB, KN_F64, 5, 7),
};

/* out[i] = (x[i] << i) > sext(b[i]) ? x[i] >>s 3 : trunc_sat(f[i]) >>u p1;
 * p0 n, p1 shift, p2 &x (i32), p3 &b (i8), p4 &f (f32), p5 &out. */
static const kn_expr i32_nodes[] = {
  LOAD(KN_I32, KN_I32, false, ARRAY(2, 4)),
  IV(KN_I32, 0),
  BIN(KN_E_SHL, KN_I32, 0, 1),
  LOAD(KN_I32, KN_I8, true, ARRAY(3, 1)),
  CMP(KN_CMP_SGT, 2, 3),
  CONST(KN_I32, 3),
  BIN(KN_E_ASHR, KN_I32, 0, 5),
  LOAD(KN_F32, KN_F32, false, ARRAY(4, 4)),
  UN(KN_E_FPTOSI_SAT, KN_I32, 7),
  PARAM(KN_I32, 1),
  BIN(KN_E_LSHR, KN_I32, 8, 9),
  SEL(KN_I32, 4, 6, 10),
};

/* i64: sum of x[i] * zext(u16[i]); p0 n, p1 init, p2 &x, p3 &u. */
static const kn_expr sum_nodes[] = {
  LOAD(KN_I64, KN_I64, false, ARRAY(2, 8)),
  LOAD(KN_I64, KN_I16, false, ARRAY(3, 2)),
  BIN(KN_E_MUL, KN_I64, 0, 1),
};

/* i32: max of x[i] ^ p2; p0 n, p1 init, p2 mask, p3 &x. */
static const kn_expr max_nodes[] = {
  LOAD(KN_I32, KN_I32, false, ARRAY(3, 4)),
  PARAM(KN_I32, 2),
  BIN(KN_E_XOR, KN_I32, 0, 1),
};

/* f32: x[i] * y[i] summed in order; p0 n, p1 init, p2 &x, p3 &y (as the
 * detector emits it: align 1). */
static const kn_expr dot_nodes[] = {
  LOAD(KN_F32, KN_F32, false, ARRAY1(2, 4)),
  LOAD(KN_F32, KN_F32, false, ARRAY1(3, 4)),
  BIN(KN_E_MUL, KN_F32, 0, 1),
};

/* f64: x[i] summed in order; p0 n, p1 init, p2 &x. */
static const kn_expr sum_f64_nodes[] = {LOAD(KN_F64, KN_F64, false, ARRAY(2, 8))};

#define ROW_MAJOR(off, cols) {off, cols, C(1)}

typedef struct {
  const char *name;
  kn_desc desc;
  const char *expect[6];   /* substrings every arch's PTX must hold */
  bool exact;              /* no fma, no .ftz */
} ptx_case;

static const ptx_case cases[] = {
  {"saxpy_f32", {.kind = KN_MAP, .nparams = 4, NODES(saxpy_nodes),
                 .map = {.ndims = 1, .trip = {P(0)}, .out_type = KN_F32,
                         .out_addr = ARRAY(3, 4), .value = 4}},
   {"mul.rn.f32", "add.rn.f32", "ld.global.f32", "st.global.f32"}, true},
  {"jacobi_f32", {.kind = KN_MAP, .nparams = 2, NODES(jacobi_nodes),
                  .map = {.ndims = 2, .trip = {P(0), P(1)}, .out_type = KN_F32,
                          .out_addr = GRID(0x20000, 1, 1), .value = 8}},
   {"add.rn.f32", "mul.rn.f32", "%ctaid.y", "%nctaid.x"}, true},
  /* Contiguous accesses: 16-byte vectors (two f64 lanes), the tail by
   * element. */
  {"sqrt_div_f64", {.kind = KN_MAP, .nparams = 4, NODES(f64_nodes),
                    .map = {.ndims = 1, .trip = {P(0)}, .out_type = KN_F64,
                            .out_addr = ARRAY(3, 8), .value = 8}},
   {"sqrt.rn.f64", "div.rn.f64", "sub.rn.f64", "ld.global.v2.f64", "st.global.v2.f64",
    "ld.global.f64"}, true},
  {"shift_select_i32", {.kind = KN_MAP, .nparams = 6, NODES(i32_nodes),
                        .map = {.ndims = 1, .trip = {P(0)}, .out_type = KN_I32,
                                .out_addr = ARRAY(5, 4), .value = 11}},
   {"shl.b32", "shr.s32", "shr.u32", "ld.global.s8", "cvt.rzi.s32.f32", "ld.global.v4.u32"}, true},
  {"sum_i64", {.kind = KN_REDUCE, .nparams = 4, NODES(sum_nodes),
               .reduce = {.trip = P(0), .op = KN_RED_ADD, .type = KN_I64, .value = 2,
                          .init_param = 1}},
   {"atom.global.add.u64", "bar.sync", ".shared"}, true},
  {"max_i32", {.kind = KN_REDUCE, .nparams = 4, NODES(max_nodes),
               .reduce = {.trip = P(0), .op = KN_RED_SMAX, .type = KN_I32, .value = 2,
                          .init_param = 1}},
   {"atom.global.max.s32", "bar.sync"}, true},
  {"mul_i32", {.kind = KN_REDUCE, .nparams = 4, NODES(max_nodes),
               .reduce = {.trip = P(0), .op = KN_RED_MUL, .type = KN_I32, .value = 2,
                          .init_param = 1}},
   {"atom.global.cas.b32", "mul.lo.s32"}, true},
  /* p0 M, p1 N, p2 K, p3 &A, p4 &B, p5 &C, all row-major.  The exact
   * kernel: 16x16 threads, 8x8 of C each, 16-byte reads of shared tiles. */
  {"matmul_f32", {.kind = KN_MATMUL, .nparams = 6,
                  .matmul = {.m = P(0), .n = P(1), .k = P(2), .type = KN_MM_F32,
                             .a = ROW_MAJOR(P(3), P(2)), .b = ROW_MAJOR(P(4), P(1)),
                             .c = ROW_MAJOR(P(5), P(1)), .align = 4}},
   {"bar.sync", "mul.rn.f32", "add.rn.f32", "ld.shared.v4.f32", ".maxntid 16, 16, 1",
    ".minnctapersm 2"}, true},
  {"matmul_f64_acc", {.kind = KN_MATMUL, .nparams = 0,
                      .matmul = {.m = C(33), .n = C(17), .k = C(45), .type = KN_MM_F64,
                                 .accumulate = true, .a = ROW_MAJOR(C(0x1000), C(45)),
                                 .b = ROW_MAJOR(C(0x10000), C(17)),
                                 .c = {C(0x20000), C(1), C(33)}, .align = 8}},
   {"bar.sync", "mul.rn.f64", "add.rn.f64", "ld.shared.v2.f64", ".minnctapersm 1"}, true},
  {"matmul_i32", {.kind = KN_MATMUL, .nparams = 3,
                  .matmul = {.m = C(64), .n = C(64), .k = C(64), .type = KN_MM_I32,
                             .a = ROW_MAJOR(P(0), C(64)), .b = ROW_MAJOR(P(1), C(64)),
                             .c = ROW_MAJOR(P(2), C(64)), .align = 4}},
   {"bar.sync", "mad.lo.s32", "st.shared.u32", "ld.shared.v4.u32"}, true},
  {"matmul_i8_i32", {.kind = KN_MATMUL, .nparams = 3,
                     .matmul = {.m = C(32), .n = C(32), .k = C(32), .type = KN_MM_I8_I32,
                                .a_signed = true, .b_signed = true, .a = ROW_MAJOR(P(0), C(32)),
                                .b = ROW_MAJOR(P(1), C(32)), .c = ROW_MAJOR(P(2), C(32)),
                                .align = 1}},
   {"bar.sync", "ld.global.s8"}, true},
  /* As the detector emits it (align 1): a naturally aligned body (f32
   * loads) and a byte-by-byte one, chosen at run time. */
  {"matmul_f32_align1", {.kind = KN_MATMUL, .nparams = 9,
                         .matmul = {.m = P(0), .n = P(1), .k = P(2), .type = KN_MM_F32,
                                    .a = ROW_MAJOR(P(3), P(6)), .b = ROW_MAJOR(P(4), P(7)),
                                    .c = ROW_MAJOR(P(5), P(8)), .align = 1}},
   {"ld.global.f32", "ld.global.u8", "st.global.f32", "st.global.u8", "mul.rn.f32"}, true},
  /* syr2k over the triangle (p0 n = m, p1 K, p2 &C, p3 &A, p4 &B, p5
   * alpha, p6 beta): B A^T (alpha-scaled A) + A B^T (alpha-scaled B)
   * per term, f64 as PolyBench has it; four single-buffered tiles, 33
   * KiB of shared memory, which ptxas takes (at most 48 KiB static). */
  {"matmul_f64_syr2k", {.kind = KN_MATMUL, .nparams = 7,
                        .matmul = {.m = P(0), .n = P(0), .k = P(1), .type = KN_MM_F64, .accumulate = true,
                                   .a = ROW_MAJOR(P(4), C(192)), .b = {P(3), C(1), C(192)},
                                   .c = ROW_MAJOR(P(2), C(192)), .align = 1,
                                   .b_scale = {.on = true, .param = 5},
                                   .start_scale = {.on = true, .param = 6},
                                   .tri = {.on = true, .add = 1},
                                   .second = {.on = true, .a = ROW_MAJOR(P(3), C(192)), .b = {P(4), C(1), C(192)},
                                              .b_scale = {.on = true, .param = 5}}}},
   {"bar.sync", "mul.rn.f64", "add.rn.f64", "mm_b2"}, true},
  {"matmul_f32_syr2k", {.kind = KN_MATMUL, .nparams = 7,
                        .matmul = {.m = P(0), .n = P(0), .k = P(1), .type = KN_MM_F32, .accumulate = true,
                                   .a = ROW_MAJOR(P(4), C(192)), .b = {P(3), C(1), C(192)},
                                   .c = ROW_MAJOR(P(2), C(192)), .align = 4,
                                   .b_scale = {.on = true, .param = 5},
                                   .tri = {.on = true, .add = 1},
                                   .second = {.on = true, .a = ROW_MAJOR(P(3), C(192)), .b = {P(4), C(1), C(192)},
                                              .b_scale = {.on = true, .param = 5}}}},
   {"bar.sync", "mul.rn.f32", "add.rn.f32", "mm_a2"}, true},
  /* Every stride a param: column-major, transposed, any layout. */
  {"matmul_f32_strided", {.kind = KN_MATMUL, .nparams = 12,
                          .matmul = {.m = P(0), .n = P(1), .k = P(2), .type = KN_MM_F32,
                                     .accumulate = true, .a = {P(3), P(6), P(7)},
                                     .b = {P(4), P(8), P(9)}, .c = {P(5), P(10), P(11)},
                                     .align = 4}},
   {"bar.sync", "mul.rn.f32", "add.rn.f32", "ld.global.f32"}, true},
  /* Batches (p0 products, matrices 256 elements apart): small products
   * take ptx_batch.c, 8 per block of 256 threads, no barriers; larger
   * ones the exact kernel with the products along grid z. */
  {"batch_f32_16", {.kind = KN_MATMUL, .nparams = 4,
                    .matmul = {.m = C(16), .n = C(16), .k = C(16), .batched = true, .batch = P(0),
                               .type = KN_MM_F32, .a = {P(1), C(16), C(1), C(256)},
                               .b = {P(2), C(16), C(1), C(256)}, .c = {P(3), C(16), C(1), C(256)},
                               .align = 1}},
   {"mul.rn.f32", "add.rn.f32", "ld.global.f32", "ld.global.u8", ".entry"}, true},
  {"batch_i8_odd", {.kind = KN_MATMUL, .nparams = 5,
                    .matmul = {.m = C(9), .n = C(17), .k = C(23), .batched = true, .batch = P(0),
                               .type = KN_MM_I8_I32, .a_signed = false, .b_signed = false, .accumulate = true,
                               .a = {P(1), C(23), C(1), P(4)}, .b = {P(2), C(17), C(1), C(0)},
                               .c = {P(3), C(1), C(9), C(160)}, .align = 1}},
   {"ld.global.u8", "st.global.u32", ".entry"}, true},
  {"batch_f64_large", {.kind = KN_MATMUL, .nparams = 7,
                       .matmul = {.m = P(0), .n = P(1), .k = P(2), .batched = true, .batch = P(3),
                                  .type = KN_MM_F64, .a = {P(4), P(2), C(1), C(4096)},
                                  .b = {P(5), P(1), C(1), C(4096)}, .c = {P(6), P(1), C(1), C(4096)},
                                  .align = 8}},
   {"%ctaid.z", "%nctaid.z", "bar.sync", "mul.rn.f64", "add.rn.f64"}, true},
  /* Alignment known only at run time: the vector copy, the element-aligned
   * one and the byte one. */
  {"axpb_f32_align1", {.kind = KN_MAP, .nparams = 5, NODES(axpb_nodes),
                       .map = {.ndims = 1, .trip = {P(0)}, .out_type = KN_F32,
                               .out_addr = ARRAY1(4, 4), .value = 4}},
   {"ld.global.v4.f32", "st.global.v4.f32", "ld.global.f32", "st.global.f32", "ld.global.u8",
    "st.global.u8"}, true},
  /* Matrix-vector products (p0 outputs, p1 K, p2 &W, p3 W's row stride,
   * p4 &v, p5 &out), as the detector emits them (align 1): W's tile staged
   * through shared memory by every thread (16-byte vectors where rows are
   * aligned), summed by the owning thread from 16-byte shared reads. */
  {"matvec_f32", {.kind = KN_MATMUL, .nparams = 6,
                  .matmul = {.m = P(0), .n = C(1), .k = P(1), .type = KN_MM_F32,
                             .a = {P(2), P(3), C(1), C(0)}, .b = {P(4), C(1), C(0), C(0)},
                             .c = {P(5), C(1), C(0), C(0)}, .align = 1}},
   {"ld.global.v4.f32", "st.shared.v4.f32", "ld.shared.v4.f32", "bar.sync", "mul.rn.f32",
    "ld.global.u8"}, true},
  /* y[j] += v[k] * W[k][j]: one output row, W read along the outputs. */
  {"vecmat_f32_acc", {.kind = KN_MATMUL, .nparams = 6,
                      .matmul = {.m = C(1), .n = P(0), .k = P(1), .type = KN_MM_F32, .accumulate = true,
                                 .a = {P(4), C(0), C(1), C(0)}, .b = {P(2), P(3), C(1), C(0)},
                                 .c = {P(5), C(0), C(1), C(0)}, .align = 4}},
   {"st.shared.f32", "ld.shared.v4.f32", "bar.sync", "mul.rn.f32", "add.rn.f32"}, true},
  /* A batch of them (attention's scores over every head: p6 heads, p7
   * the head size as the batch stride of W and v, C's rows 128 apart):
   * the products along grid y. */
  {"matvec_batch_f32", {.kind = KN_MATMUL, .nparams = 8,
                        .matmul = {.m = P(0), .n = C(1), .k = P(1), .type = KN_MM_F32, .batched = true,
                                   .batch = P(6), .a = {P(2), P(3), C(1), P(7)}, .b = {P(4), C(1), C(0), P(7)},
                                   .c = {P(5), C(1), C(0), C(128)}, .align = 1}},
   {"ld.global.v4.f32", "ld.shared.v4.f32", "bar.sync", "mul.rn.f32", "%ctaid.y", "%nctaid.y"}, true},
  {"matvec_f64", {.kind = KN_MATMUL, .nparams = 6,
                  .matmul = {.m = P(0), .n = C(1), .k = P(1), .type = KN_MM_F64,
                             .a = {P(2), P(3), C(1), C(0)}, .b = {P(4), C(1), C(0), C(0)},
                             .c = {P(5), C(1), C(0), C(0)}, .align = 8}},
   {"ld.global.v2.f64", "ld.shared.v2.f64", "mul.rn.f64", "add.rn.f64"}, true},
  {"matvec_i32", {.kind = KN_MATMUL, .nparams = 6,
                  .matmul = {.m = P(0), .n = C(1), .k = P(1), .type = KN_MM_I32,
                             .a = {P(2), P(3), C(1), C(0)}, .b = {P(4), C(1), C(0), C(0)},
                             .c = {P(5), C(1), C(0), C(0)}, .align = 4}},
   {"ld.global.v4.u32", "ld.shared.v4.u32", "mul.lo.s32"}, true},
  /* Exact float sums in order (no --fp-reassociate): one warp, the terms
   * added by a chain of add.rn, no atomics, no tree. */
  {"seqsum_f32", {.kind = KN_REDUCE, .nparams = 4, NODES(dot_nodes),
                  .reduce = {.trip = P(0), .op = KN_RED_ADD, .type = KN_F32, .value = 2,
                             .init_param = 1, .sequential = true}},
   {"mul.rn.f32", "add.rn.f32", ".maxntid 32, 1, 1", "ld.shared.v4.f32", "st.global.f32"}, true},
  {"seqsum_f64", {.kind = KN_REDUCE, .nparams = 3, NODES(sum_f64_nodes),
                  .reduce = {.trip = P(0), .op = KN_RED_ADD, .type = KN_F64, .value = 0,
                             .init_param = 1, .sequential = true}},
   {"add.rn.f64", "ld.global.f64", "st.global.f64", "bar.sync"}, true},
};

static const struct {
  unsigned sm;
  const char *version, *target;
} archs[] = {
  {75, "\n.version 6.3\n", "\n.target sm_75"},
  {80, "\n.version 7.0\n", "\n.target sm_80"},
  {90, "\n.version 7.8\n", "\n.target sm_90"},
};

#define PTXAS "/usr/local/cuda/bin/ptxas"

/* Assembles text with ptxas for sm; false with the tool's status. */
static bool ptxas_accepts(const char *text, unsigned sm, int *status) {
  char path[] = "/tmp/test_ptx_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  char cmd[256];
  snprintf(cmd, sizeof cmd, PTXAS " -arch=sm_%u %s -o /dev/null", sm, path);
  *status = system(cmd);
  unlink(path);
  return *status == 0;
}

START_TEST(test_case_all_archs) {
  const ptx_case *tc = &cases[_i];
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ck_assert_msg(ptx_generate(&tc->desc, tc->name, NULL, 0, &arena, &out, &diag), "%s: %s",
                tc->name, diag.msg);
  ck_assert_uint_eq(out.ncodes, 3);
  ck_assert_str_eq(out.name, tc->name);
  bool have_ptxas = access(PTXAS, X_OK) == 0;
  if (!have_ptxas) printf("%s: skipped: ptxas not installed\n", tc->name);
  for (unsigned a = 0; a < 3; a++) {
    const char *text = out.codes[a].text;
    ck_assert_uint_eq(out.codes[a].sm, archs[a].sm);
    ck_assert(ptx_is_ascii(text, strlen(text)));
    ck_assert_msg(strstr(text, archs[a].version), "%s sm_%u: wrong .version", tc->name,
                  archs[a].sm);
    ck_assert_msg(strstr(text, archs[a].target), "%s: no .target", tc->name);
    ck_assert(strstr(text, ".entry"));
    for (unsigned e = 0; e < 6 && tc->expect[e]; e++)
      ck_assert_msg(strstr(text, tc->expect[e]), "%s sm_%u: no %s", tc->name, archs[a].sm,
                    tc->expect[e]);
    if (tc->exact) {
      ck_assert_msg(!strstr(text, "fma") && !strstr(text, "mad.rn") && !strstr(text, "mad.f"),
                    "%s sm_%u: fused multiply-add in an exact kernel", tc->name, archs[a].sm);
      ck_assert_msg(!strstr(text, ".ftz"), "%s sm_%u: .ftz in an exact kernel", tc->name,
                    archs[a].sm);
    }
    int status;
    if (have_ptxas)
      ck_assert_msg(ptxas_accepts(text, archs[a].sm, &status), "%s sm_%u: ptxas status %d",
                    tc->name, archs[a].sm, status);
  }
  tw_arena_free(&arena);
}
END_TEST

/* ---- calls of pure functions (KN_E_CALL, kernels/kn_recog_call.c) ---- */

static unsigned count_of(const char *text, const char *what);

/* Bitcode as off_calls.c writes it: wasm_f7(vmctx, x) = x * mem[64] + 1
 * where x > 1, else x * mem[64], through wasm_f8(vmctx, y) = y * 2 (the
 * memory base the vmctx's first field). */
static void *callee_bitcode(size_t *len) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("calls", ctx);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0), f32 = LLVMFloatTypeInContext(ctx);
  LLVMTypeRef params[2] = {ptr, f32};
  LLVMTypeRef ft = LLVMFunctionType(f32, params, 2, false);
  LLVMValueRef f7 = LLVMAddFunction(mod, "wasm_f7", ft), f8 = LLVMAddFunction(mod, "wasm_f8", ft);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f8, "entry"));
  LLVMBuildRet(b, LLVMBuildFMul(b, LLVMGetParam(f8, 1), LLVMConstReal(f32, 2.0), ""));
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ctx, f7, "entry");
  LLVMBasicBlockRef big = LLVMAppendBasicBlockInContext(ctx, f7, "big");
  LLVMBasicBlockRef small = LLVMAppendBasicBlockInContext(ctx, f7, "small");
  LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef base = LLVMBuildLoad2(b, ptr, LLVMGetParam(f7, 0), "");
  LLVMValueRef at = LLVMConstInt(LLVMInt64TypeInContext(ctx), 64, false);
  LLVMValueRef t = LLVMBuildLoad2(b, f32, LLVMBuildGEP2(b, LLVMInt8TypeInContext(ctx), base, &at, 1, ""), "");
  LLVMValueRef args[2] = {LLVMGetParam(f7, 0), LLVMBuildFMul(b, LLVMGetParam(f7, 1), t, "")};
  LLVMValueRef r = LLVMBuildCall2(b, ft, f8, args, 2, "");
  LLVMBuildCondBr(b, LLVMBuildFCmp(b, LLVMRealOGT, LLVMGetParam(f7, 1), LLVMConstReal(f32, 1.0), ""), big, small);
  LLVMPositionBuilderAtEnd(b, big);
  LLVMBuildRet(b, LLVMBuildFAdd(b, r, LLVMConstReal(f32, 1.0), ""));
  LLVMPositionBuilderAtEnd(b, small);
  LLVMBuildRet(b, r);
  LLVMDisposeBuilder(b);
  LLVMMemoryBufferRef buf = LLVMWriteBitcodeToMemoryBuffer(mod);
  *len = LLVMGetBufferSize(buf);
  void *bc = malloc(*len);
  memcpy(bc, LLVMGetBufferStart(buf), *len);
  LLVMDisposeMemoryBuffer(buf);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  return bc;
}

/* y[i] = f7(x[i]); p0 n, p1 &x, p2 &y. */
static const kn_expr call_nodes[] = {
  LOAD(KN_F32, KN_F32, false, ARRAY(1, 4)),
  {.op = KN_E_CALL, .type = KN_F32, .a = 0, .b = -1, .c = -1, .func = 7},
};

START_TEST(test_call_linked) {
  kn_desc d = {.kind = KN_MAP, .nparams = 3, NODES(call_nodes),
               .map = {.ndims = 1, .trip = {P(0)}, .out_type = KN_F32, .out_addr = ARRAY(2, 4), .value = 1}};
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  /* a call without its callee's code is refused */
  ck_assert(!ptx_generate(&d, "c", NULL, 0, &arena, &out, &diag));
  ck_assert_msg(strstr(diag.msg, "without its callee's code") != NULL, "%s", diag.msg);
  size_t len;
  void *bc = callee_bitcode(&len);
  d.calls_bc = bc, d.calls_bc_len = len;
  diag = (tw_diag){0};
  ck_assert_msg(ptx_generate(&d, "c", NULL, 0, &arena, &out, &diag), "%s", diag.msg);
  /* the call counts as its callee's work in the cost model */
  ck_assert_uint_eq(out.plan.ops_per_iter, 1 + TWASM_COST_CALL_OPS);
  for (unsigned i = 0; i < out.ncodes; i++) {
    const char *text = out.codes[i].text;
    /* inlined: no call left, the callee's multiplies, compare and add there, the table read at 64 */
    ck_assert_msg(!strstr(text, "call.uni") && !strstr(text, "call "), "sm_%u: a call left", out.codes[i].sm);
    ck_assert_uint_ge(count_of(text, "mul.rn.f32"), 2);
    ck_assert(strstr(text, "add.rn.f32") && strstr(text, "setp.gt.f32") && strstr(text, "+64]"));
    ck_assert(!strstr(text, "fma") && !strstr(text, ".ftz"));
  }
  /* a callee of another type than its node's */
  kn_expr wrong[2] = {call_nodes[0], call_nodes[1]};
  wrong[1].func = 9;
  d.nodes = wrong;
  diag = (tw_diag){0};
  ck_assert(!ptx_generate(&d, "c", NULL, 0, &arena, &out, &diag));
  ck_assert_msg(strstr(diag.msg, "callee wasm_f9 missing") != NULL, "%s", diag.msg);
  free(bc);
  tw_arena_free(&arena);
}
END_TEST

START_TEST(test_isa_versions_recorded) {
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ck_assert(ptx_generate(&cases[0].desc, "v", NULL, 0, &arena, &out, &diag));
  ck_assert_uint_eq(out.codes[0].ptx_isa, 63);
  ck_assert_uint_eq(out.codes[1].ptx_isa, 70);
  ck_assert_uint_eq(out.codes[2].ptx_isa, 78);
  tw_arena_free(&arena);
}
END_TEST

START_TEST(test_one_requested_arch) {
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  const ptx_arch only[] = {{80, false}};
  ck_assert(ptx_generate(&cases[0].desc, "k", only, 1, &arena, &out, &diag));
  ck_assert_uint_eq(out.ncodes, 1);
  ck_assert(strstr(out.codes[0].text, ".target sm_80"));
  tw_arena_free(&arena);
}
END_TEST

START_TEST(test_unicode_name_sanitised) {
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ck_assert(ptx_generate(&cases[0].desc, "9caf\xc3\xa9-loop.1", NULL, 0, &arena, &out, &diag));
  ck_assert_str_eq(out.name, "_9caf___loop_1");
  for (unsigned a = 0; a < out.ncodes; a++) {
    ck_assert(ptx_is_ascii(out.codes[a].text, strlen(out.codes[a].text)));
    ck_assert(strstr(out.codes[a].text, ".entry _9caf___loop_1("));
  }
  tw_arena_free(&arena);
}
END_TEST

START_TEST(test_is_ascii) {
  ck_assert(ptx_is_ascii("ld.global.f32 %f1, [%rd1];", 26));
  ck_assert(!ptx_is_ascii("// caf\xc3\xa9", 9));
}
END_TEST

/* Float add reductions change results when reassociated: refused unless
 * the descriptor carries the flag. */
START_TEST(test_float_reduce_needs_flag) {
  static const kn_expr nodes[] = {LOAD(KN_F32, KN_F32, false, ARRAY(2, 4))};
  kn_desc d = {.kind = KN_REDUCE, .nparams = 3, NODES(nodes),
               .reduce = {.trip = P(0), .op = KN_RED_ADD, .type = KN_F32, .init_param = 1}};
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ck_assert(!ptx_generate(&d, "fsum", NULL, 0, &arena, &out, &diag));
  ck_assert(strstr(diag.msg, "reassociate"));
  d.reduce.reassociate = true;
  ck_assert_msg(ptx_generate(&d, "fsum", NULL, 0, &arena, &out, &diag), "%s", diag.msg);
  ck_assert(strstr(out.codes[0].text, "atom.global.add.f32"));
  tw_arena_free(&arena);
}
END_TEST

START_TEST(test_bad_operand_rejected) {
  static const kn_expr nodes[] = {
    PARAM(KN_F32, 0),
    BIN(KN_E_ADD, KN_F32, 0, 1),   /* operand 1 is not earlier */
  };
  kn_desc d = {.kind = KN_MAP, .nparams = 1, NODES(nodes),
               .map = {.ndims = 1, .trip = {C(8)}, .out_type = KN_F32, .value = 1}};
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ck_assert(!ptx_generate(&d, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert(strstr(diag.msg, "node 1"));
  tw_arena_free(&arena);
}
END_TEST

START_TEST(test_type_mismatch_rejected) {
  static const kn_expr nodes[] = {
    PARAM(KN_F32, 0),
    PARAM(KN_I32, 0),
    BIN(KN_E_ADD, KN_F32, 0, 1),
  };
  kn_desc d = {.kind = KN_MAP, .nparams = 1, NODES(nodes),
               .map = {.ndims = 1, .trip = {C(8)}, .out_type = KN_F32, .value = 2}};
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ck_assert(!ptx_generate(&d, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert(strstr(diag.msg, "wrong type"));
  tw_arena_free(&arena);
}
END_TEST

START_TEST(test_launch_grid) {
  const kn_desc *jacobi = &cases[1].desc, *mm = &cases[7].desc, *sum = &cases[4].desc;
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  uint32_t grid[3];
  ck_assert(ptx_generate(jacobi, "j", (const ptx_arch[]){{75, false}}, 1, &arena, &out, &diag));
  ptx_launch_grid(&out.plan.launch, (const int64_t[]){62, 100}, grid);
  ck_assert_uint_eq(out.plan.launch.block[0] * out.plan.launch.block[1], 64);
  ck_assert_uint_eq(out.plan.launch.per_block[0], out.plan.launch.block[0]);
  ck_assert_uint_eq(out.plan.launch.per_block[1], out.plan.launch.block[1] * 4); /* 4 rows a thread */
  ck_assert_uint_eq(grid[0], (100 + out.plan.launch.block[0] - 1) / out.plan.launch.block[0]);
  ck_assert_uint_eq(grid[1], (62 + out.plan.launch.per_block[1] - 1) / out.plan.launch.per_block[1]);
  ck_assert_uint_eq(grid[2], 1);
  ck_assert(ptx_generate(mm, "m", (const ptx_arch[]){{75, false}}, 1, &arena, &out, &diag));
  ck_assert_uint_eq(out.plan.launch.block[0], 16);
  ck_assert_uint_eq(out.plan.launch.block[1], 16);
  ptx_launch_grid(&out.plan.launch, (const int64_t[]){300, 1000, 7, 0, 0, 0}, grid);
  ck_assert_uint_eq(grid[0], 8);   /* 128x128 of C per block */
  ck_assert_uint_eq(grid[1], 3);
  ck_assert(ptx_generate(sum, "s", (const ptx_arch[]){{75, false}}, 1, &arena, &out, &diag));
  ck_assert(out.plan.launch.result_arg);
  ck_assert_uint_eq(out.plan.launch.result_bytes, 8);
  ptx_launch_grid(&out.plan.launch, (const int64_t[]){-5, 0, 0, 0}, grid);
  ck_assert_uint_eq(grid[0], 1);
  ptx_launch_grid(&out.plan.launch, (const int64_t[]){1ll << 40, 0, 0, 0}, grid);
  ck_assert_uint_eq(grid[0], out.plan.launch.max_grid[0]);
  tw_arena_free(&arena);
}
END_TEST

static bool generate_map(const kn_expr *nodes, unsigned nnodes, kn_addr out, unsigned value,
                         tw_arena *arena, ptx_out *out_code) {
  kn_desc d = {.kind = KN_MAP, .nparams = 5, .nodes = nodes, .nnodes = nnodes,
               .map = {.ndims = 1, .trip = {P(0)}, .out_type = KN_F32, .out_addr = out,
                       .value = value}};
  tw_diag diag = {0};
  bool ok = ptx_generate(&d, "m", NULL, 0, arena, out_code, &diag);
  ck_assert_msg(ok, "%s", diag.msg);
  return ok;
}

/* A map whose output or input strides past one element per step has no
 * vector copy, and its blocks take 4 elements per thread. */
START_TEST(test_map_strided_no_vectors) {
  static const kn_expr strided_in[] = {
    PARAM(KN_F32, 1),
    LOAD(KN_F32, KN_F32, false, ARRAY1(3, 8)),
    BIN(KN_E_MUL, KN_F32, 0, 1),
  };
  tw_arena arena = {0};
  ptx_out out;
  kn_addr dense = ARRAY1(4, 4), sparse = ARRAY1(4, 12);
  const struct {
    const kn_expr *nodes;
    unsigned nnodes;
    kn_addr out;
  } maps[] = {{strided_in, 3, dense}, {axpb_nodes, 5, sparse}};
  for (unsigned i = 0; i < 2; i++) {
    generate_map(maps[i].nodes, maps[i].nnodes, maps[i].out, maps[i].nnodes - 1, &arena, &out);
    ck_assert_uint_eq(out.plan.launch.per_block[0], out.plan.launch.block[0] * 4);
    for (unsigned a = 0; a < out.ncodes; a++) {
      const char *text = out.codes[a].text;
      ck_assert_msg(!strstr(text, ".v4.") && !strstr(text, ".v2."), "map %u sm_%u: vectors", i,
                    out.codes[a].sm);
      ck_assert_msg(strstr(text, "ld.global.f32") && strstr(text, "ld.global.u8"),
                    "map %u sm_%u: no element-aligned and byte copies", i, out.codes[a].sm);
    }
  }
  tw_arena_free(&arena);
}
END_TEST

/* The vector copy: blocks sized for one 16-byte vector per thread, taken
 * when the low 4 bits of every contiguous access's address are clear; a
 * load every element reads (coefficient 0) does not prevent it. */
START_TEST(test_map_vector_copy) {
  static const kn_expr scaled[] = {
    LOAD(KN_F32, KN_F32, false, {.nparam_terms = 1, .param_index = {1}, .param_coeff = {1},
                                 .align = 1}),
    LOAD(KN_F32, KN_F32, false, ARRAY1(3, 4)),
    BIN(KN_E_MUL, KN_F32, 0, 1),
  };
  tw_arena arena = {0};
  ptx_out out;
  generate_map(axpb_nodes, 5, (kn_addr)ARRAY1(4, 4), 4, &arena, &out);
  ck_assert_uint_eq(out.plan.launch.per_block[0], out.plan.launch.block[0] * 4);
  for (unsigned a = 0; a < out.ncodes; a++) ck_assert(strstr(out.codes[a].text, ", 15;"));
  generate_map(scaled, 3, (kn_addr)ARRAY1(4, 4), 2, &arena, &out);
  for (unsigned a = 0; a < out.ncodes; a++) {
    const char *text = out.codes[a].text;
    ck_assert_msg(strstr(text, "ld.global.v4.f32") && strstr(text, "st.global.v4.f32"),
                  "sm_%u: no vector copy", out.codes[a].sm);
  }
  tw_arena_free(&arena);
}
END_TEST

static unsigned count_of(const char *text, const char *what) {
  unsigned n = 0;
  for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
  return n;
}

/* Exact matmuls round every product and every sum on its own: as many
 * adds as multiplies (none fused into an fma, none dropped), 64 of each
 * per k step of the unrolled tile. */
START_TEST(test_matmul_products_unfused) {
  static const struct {
    unsigned index;
    const char *mul, *add;
  } checks[] = {{7, "mul.rn.f32", "add.rn.f32"}, {8, "mul.rn.f64", "add.rn.f64"}};
  for (unsigned c = 0; c < sizeof checks / sizeof checks[0]; c++) {
    const ptx_case *tc = &cases[checks[c].index];
    tw_arena arena = {0};
    tw_diag diag = {0};
    ptx_out out;
    ck_assert_msg(ptx_generate(&tc->desc, tc->name, NULL, 0, &arena, &out, &diag), "%s", diag.msg);
    for (unsigned a = 0; a < out.ncodes; a++) {
      unsigned muls = count_of(out.codes[a].text, checks[c].mul);
      ck_assert_uint_eq(muls, count_of(out.codes[a].text, checks[c].add));
      ck_assert_uint_ge(muls, 8 * 64);
    }
    tw_arena_free(&arena);
  }
}
END_TEST

static const ptx_case *case_named(const char *name) {
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (!strcmp(cases[i].name, name)) return &cases[i];
  ck_abort_msg("no case %s", name);
  return NULL;
}

/* The whole-chunk sum of an exact float sum (ptx_seqsum.c), read off its
 * PTX: terms stored to shared memory by the lanes, read back as vectors
 * (`ld.shared.v4.f32 {%fA, %fB, %fC, %fD}, [seq_terms+OFF]`), and each
 * element added to the running sum in address order, each add's sum the
 * operand of the next (one chain, `add.rn.f32 %fS, %fPREV, %fTERM`).
 * Returns the length of the longest such chain over terms 0, 1, 2, ... */
static int ordered_chain(const char *text) {
  enum { MAXREG = 1 << 16 };
  static int term_of[MAXREG];
  for (int i = 0; i < MAXREG; i++) term_of[i] = -1;
  int best = 0, len = 0, prev = -1;
  for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    int r[4], off = 0, d, a, b;
    if (sscanf(line, " ld.shared.v4.f32 {%%f%d, %%f%d, %%f%d, %%f%d}, [seq_terms+%d]", &r[0], &r[1], &r[2],
               &r[3], &off) >= 4) {
      for (int k = 0; k < 4; k++)
        if (r[k] >= 0 && r[k] < MAXREG) term_of[r[k]] = off / 4 + k;
    } else if (sscanf(line, " add.rn.f32 %%f%d, %%f%d, %%f%d;", &d, &a, &b) == 3) {
      bool next = b >= 0 && b < MAXREG && term_of[b] == len && (len == 0 || a == prev);
      len = next ? len + 1 : (b >= 0 && b < MAXREG && term_of[b] == 0 ? 1 : 0);
      prev = d;
      if (len > best) best = len;
    }
  }
  return best;
}

/* An exact float sum adds every term in order, never fused with its
 * product (mul.rn then add.rn), on every arch. */
START_TEST(test_seqsum_adds_in_order) {
  const ptx_case *tc = case_named("seqsum_f32");
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ck_assert_msg(ptx_generate(&tc->desc, tc->name, NULL, 0, &arena, &out, &diag), "%s", diag.msg);
  ck_assert_uint_eq(out.plan.family, TWASM_PATH_SEQ);
  ck_assert_uint_eq(out.plan.launch.block[0], 32);
  ck_assert_uint_eq(out.plan.launch.max_grid[0], 1);
  ck_assert(out.plan.launch.result_arg);
  for (unsigned a = 0; a < out.ncodes; a++) {
    const char *text = out.codes[a].text;
    ck_assert_uint_eq(out.plan.codes[a].path, TWASM_PATH_SEQ);
    ck_assert_msg(ordered_chain(text) == 512, "sm_%u: longest in-order chain %d of 512", out.codes[a].sm,
                  ordered_chain(text));
    ck_assert(!strstr(text, "fma") && !strstr(text, "atom."));
  }
  /* without the flag, and not sequential: still refused */
  kn_desc d = tc->desc;
  d.reduce.sequential = false;
  ck_assert(!ptx_generate(&d, "fsum", NULL, 0, &arena, &out, &diag));
  tw_arena_free(&arena);
}
END_TEST

/* Scaled products (alpha * A, B scaled, sums from C * beta): the plan
 * keeps them on the exact kernel even where tf32 would take tensor cores
 * or one column the matrix-vector kernel, and the kernel multiplies each
 * staged A (B) element once per load (2 loads of 4 per thread in the one
 * aligned body) and each start once (64 per thread): that many more
 * mul.rn than add.rn, none fused. */
START_TEST(test_matmul_scaled) {
  static const struct {
    bool a, b, start;
    unsigned extra_muls;
  } checks[] = {{true, false, false, 8}, {false, true, false, 8}, {false, false, true, 64}, {true, false, true, 72}};
  for (unsigned c = 0; c < sizeof checks / sizeof checks[0]; c++) {
    kn_desc d = case_named("matmul_f32_strided")->desc;
    kn_mm_scale on = {.on = true, .first = c % 2 == 0, .param = 12};
    d.nparams = 13;
    if (checks[c].a) d.matmul.a_scale = on;
    if (checks[c].b) d.matmul.b_scale = on;
    if (checks[c].start) d.matmul.start_scale = on;
    for (unsigned one_col = 0; one_col < 2; one_col++) {
      if (one_col) d.matmul.n = (kn_size)C(1);
      ptx_options opts = {.tf32 = true};
      ptx_plan plan;
      tw_diag diag = {0};
      ck_assert_msg(ptx_plan_make(&d, NULL, 0, &opts, &plan, &diag), "%s", diag.msg);
      ck_assert_uint_eq(plan.family, TWASM_PATH_EXACT);
      ck_assert(!plan.tensor_cores);
      for (unsigned i = 0; i < plan.ncodes; i++) ck_assert_uint_eq(plan.codes[i].path, TWASM_PATH_EXACT);
      ck_assert_ptr_nonnull(strstr(plan.reason, "scaled"));
    }
    d.matmul.n = (kn_size)P(1);
    tw_arena arena = {0};
    tw_diag diag = {0};
    ptx_out out;
    ck_assert_msg(ptx_generate(&d, "scaled", NULL, 0, &arena, &out, &diag), "%s", diag.msg);
    for (unsigned a = 0; a < out.ncodes; a++) {
      const char *text = out.codes[a].text;
      ck_assert_uint_eq(count_of(text, "mul.rn.f32"), count_of(text, "add.rn.f32") + checks[c].extra_muls);
      ck_assert(!strstr(text, "fma") && !strstr(text, "mad.rn"));
    }
    tw_arena_free(&arena);
  }
  /* unscaled, the same shapes take tensor cores and the matvec kernel */
  kn_desc d = case_named("matmul_f32_strided")->desc;
  ptx_options opts = {.tf32 = true};
  ptx_plan plan;
  tw_diag diag = {0};
  ck_assert(ptx_plan_make(&d, NULL, 0, &opts, &plan, &diag));
  ck_assert_uint_eq(plan.family, TWASM_PATH_WMMA);
  d.matmul.n = (kn_size)C(1);
  opts.tf32 = false;
  ck_assert(ptx_plan_make(&d, NULL, 0, &opts, &plan, &diag));
  ck_assert_uint_eq(plan.family, TWASM_PATH_MATVEC);
}
END_TEST

/* A product over a triangle (kn_mm_tri) takes the exact kernel alone,
 * even unscaled and where tensor cores or the matrix-vector kernel would
 * take the rectangle, and its kernel differs from the rectangle's (the
 * store test col < row + add, the tile skip); with a batch, or an offset
 * other than 0 or 1, it is no descriptor the kernels take. */
START_TEST(test_matmul_triangle) {
  kn_desc d = case_named("matmul_f32_strided")->desc;
  d.matmul.n = d.matmul.m;
  ptx_options opts = {.tf32 = true};
  ptx_plan plan;
  tw_diag diag = {0};
  ck_assert(ptx_plan_make(&d, NULL, 0, &opts, &plan, &diag));
  ck_assert_uint_eq(plan.family, TWASM_PATH_WMMA);
  kn_desc tri = d;
  tri.matmul.tri = (kn_mm_tri){.on = true, .add = 1};
  ck_assert_msg(ptx_plan_make(&tri, NULL, 0, &opts, &plan, &diag), "%s", diag.msg);
  ck_assert_uint_eq(plan.family, TWASM_PATH_EXACT);
  for (unsigned i = 0; i < plan.ncodes; i++) ck_assert_uint_eq(plan.codes[i].path, TWASM_PATH_EXACT);
  tw_arena arena = {0};
  ptx_out rect, out;
  ck_assert_msg(ptx_generate(&d, "rect", (const ptx_arch[]){{75, false}}, 1, &arena, &rect, &diag), "%s", diag.msg);
  ck_assert_msg(ptx_generate(&tri, "rect", (const ptx_arch[]){{75, false}}, 1, &arena, &out, &diag), "%s", diag.msg);
  ck_assert_str_ne(rect.codes[0].text, out.codes[0].text);
  ck_assert(!strstr(out.codes[0].text, "fma") && !strstr(out.codes[0].text, "mad.rn"));
  tri.matmul.tri.add = 2;
  ck_assert(!ptx_generate(&tri, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "triangle"));
  tri.matmul.tri.add = 1;
  tri.matmul.batched = true;
  tri.matmul.batch = (kn_size)C(2);
  ck_assert(!ptx_generate(&tri, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "triangle"));
  tw_arena_free(&arena);
}
END_TEST

/* An upper triangle (c >= r) with its mirrored store (covariance's
 * `C[j][i] = C[i][j]`): the exact kernel, a kernel other than the lower
 * triangle's, with twice its global stores (each output at (r, c) and
 * (c, r)); a mirror without an upper triangle, or a diagonal off a strict
 * one, is no descriptor the kernels take. */
START_TEST(test_matmul_upper_mirror) {
  kn_desc d = case_named("matmul_f32_strided")->desc;
  d.matmul.n = d.matmul.m;
  ptx_options opts = {.tf32 = true};
  ptx_plan plan;
  tw_diag diag = {0};
  kn_desc lower = d, upper = d;
  lower.matmul.tri = (kn_mm_tri){.on = true, .add = 1};
  upper.matmul.tri = (kn_mm_tri){.on = true, .add = 0, .upper = true, .mirror = true};
  ck_assert_msg(ptx_plan_make(&upper, NULL, 0, &opts, &plan, &diag), "%s", diag.msg);
  for (unsigned i = 0; i < plan.ncodes; i++) ck_assert_uint_eq(plan.codes[i].path, TWASM_PATH_EXACT);
  tw_arena arena = {0};
  ptx_out lo, up;
  ck_assert_msg(ptx_generate(&lower, "t", (const ptx_arch[]){{75, false}}, 1, &arena, &lo, &diag), "%s", diag.msg);
  ck_assert_msg(ptx_generate(&upper, "t", (const ptx_arch[]){{75, false}}, 1, &arena, &up, &diag), "%s", diag.msg);
  ck_assert_str_ne(lo.codes[0].text, up.codes[0].text);
  ck_assert(!strstr(up.codes[0].text, "fma") && !strstr(up.codes[0].text, "mad.rn"));
  unsigned st_lo = count_of(lo.codes[0].text, "st.global"), st_up = count_of(up.codes[0].text, "st.global");
  ck_assert_msg(st_up == 2 * st_lo, "stores: upper with mirror %u, lower %u", st_up, st_lo);
  kn_desc bad = upper;
  bad.matmul.tri.upper = false;
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &up, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "mirror"));
  /* correlation's strict triangle: rows m, columns m + 1 (any n), the
   * diagonal's constant stored as its bits; not on a non-strict one */
  kn_desc strict = upper;
  strict.matmul.tri.add = 1;
  strict.matmul.n = (kn_size)C(64);
  strict.matmul.accumulate = false;
  ptx_out st;
  ck_assert_msg(ptx_generate(&strict, "t", (const ptx_arch[]){{75, false}}, 1, &arena, &st, &diag), "%s", diag.msg);
  strict.matmul.tri.diag = true;
  strict.matmul.tri.diag_bits = 0x3f800000; /* 1.0f */
  ptx_out sd;
  ck_assert_msg(ptx_generate(&strict, "t", (const ptx_arch[]){{75, false}}, 1, &arena, &sd, &diag), "%s", diag.msg);
  ck_assert_uint_gt(count_of(sd.codes[0].text, "st.global"), count_of(st.codes[0].text, "st.global"));
  ck_assert_ptr_nonnull(strstr(sd.codes[0].text, "1065353216")); /* 0x3f800000 */
  strict.matmul.tri.add = 0;
  ck_assert(!ptx_generate(&strict, "bad", NULL, 0, &arena, &sd, &diag));
  tw_arena_free(&arena);
}
END_TEST

/* A second product per term (kn_mm_second, syr2k's A B^T + B A^T) takes
 * the exact kernel alone, even where tensor cores would take the first
 * product alone; its kernel stages four matrices (mm_a2, mm_b2 in shared
 * memory) and fuses nothing; with a batch, or integers, it is no
 * descriptor the kernels take. */
START_TEST(test_matmul_second) {
  kn_desc d = case_named("matmul_f32")->desc;
  ptx_options opts = {.tf32 = true};
  ptx_plan plan;
  tw_diag diag = {0};
  ck_assert(ptx_plan_make(&d, NULL, 0, &opts, &plan, &diag));
  ck_assert_uint_eq(plan.family, TWASM_PATH_WMMA);
  kn_desc two = d;
  two.matmul.second = (kn_mm_second){.on = true, .a = d.matmul.b, .b = d.matmul.a};
  ck_assert_msg(ptx_plan_make(&two, NULL, 0, &opts, &plan, &diag), "%s", diag.msg);
  ck_assert_uint_eq(plan.family, TWASM_PATH_EXACT);
  ck_assert_ptr_nonnull(strstr(plan.reason, "two products"));
  tw_arena arena = {0};
  ptx_out one, out;
  const ptx_arch sm75[] = {{75, false}};
  ck_assert_msg(ptx_generate(&d, "one", sm75, 1, &arena, &one, &diag), "%s", diag.msg);
  ck_assert_msg(ptx_generate(&two, "two", sm75, 1, &arena, &out, &diag), "%s", diag.msg);
  ck_assert(!strstr(one.codes[0].text, "mm_b2"));
  ck_assert_ptr_nonnull(strstr(out.codes[0].text, "mm_a2"));
  ck_assert_ptr_nonnull(strstr(out.codes[0].text, "mm_b2"));
  ck_assert(!strstr(out.codes[0].text, "fma") && !strstr(out.codes[0].text, "mad.rn"));
  two.matmul.batched = true;
  two.matmul.batch = (kn_size)C(2);
  ck_assert(!ptx_generate(&two, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "second product"));
  two.matmul.batched = false;
  two.matmul.type = KN_MM_I32;
  ck_assert(!ptx_generate(&two, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "second product"));
  tw_arena_free(&arena);
}
END_TEST

/* A sum divided or scaled before its store (kn_mm_post, `C[i][j] = sum /
 * d`) takes the exact kernel alone, even where tensor cores or the
 * matrix-vector kernel would take the product; the kernel divides (or
 * multiplies) each of a thread's 64 sums once as it stores it, nothing
 * fused; of integers, or with its factor past the params, it is no
 * descriptor the kernels take. */
START_TEST(test_matmul_post) {
  kn_desc d = case_named("matmul_f32_strided")->desc;
  d.nparams = 13;
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out plain, out;
  const ptx_arch sm75[] = {{75, false}};
  ck_assert_msg(ptx_generate(&d, "plain", sm75, 1, &arena, &plain, &diag), "%s", diag.msg);
  ck_assert(!strstr(plain.codes[0].text, "div.rn.f32"));
  for (unsigned c = 0; c < 3; c++) {
    kn_desc p = d;
    p.matmul.post = (kn_mm_post){.on = true, .div = c == 0, .first = c == 2, .param = 12};
    for (unsigned one_col = 0; one_col < 2; one_col++) {
      kn_desc q = p;
      if (one_col) q.matmul.n = (kn_size)C(1);
      ptx_options opts = {.tf32 = true};
      ptx_plan plan;
      ck_assert_msg(ptx_plan_make(&q, NULL, 0, &opts, &plan, &diag), "%s", diag.msg);
      ck_assert_uint_eq(plan.family, TWASM_PATH_EXACT);
      for (unsigned i = 0; i < plan.ncodes; i++) ck_assert_uint_eq(plan.codes[i].path, TWASM_PATH_EXACT);
      ck_assert_ptr_nonnull(strstr(plan.reason, c == 0 ? "each sum divided before" : "each sum scaled before"));
    }
    ck_assert_msg(ptx_generate(&p, "post", sm75, 1, &arena, &out, &diag), "%s", diag.msg);
    const char *text = out.codes[0].text, *base = plain.codes[0].text;
    ck_assert(!strstr(text, "fma") && !strstr(text, "mad.rn"));
    if (c == 0) {
      ck_assert_uint_ge(count_of(text, "div.rn.f32"), 64);
      ck_assert_uint_eq(count_of(text, "mul.rn.f32"), count_of(base, "mul.rn.f32"));
    } else {
      ck_assert_uint_ge(count_of(text, "mul.rn.f32"), count_of(base, "mul.rn.f32") + 64);
      ck_assert(!strstr(text, "div.rn.f32"));
    }
  }
  kn_desc bad = d;
  bad.matmul.post = (kn_mm_post){.on = true, .div = true, .param = 13};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "factor after the sum"));
  bad = case_named("matmul_i8_i32")->desc;
  bad.matmul.post = (kn_mm_post){.on = true, .param = 0};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "factor after the sum"));
  tw_arena_free(&arena);
}
END_TEST

/* A sum combined with an element at its own index (kn_mm_post's elem:
 * `r[i] = b[i] - sum`, `C[i][j] = sum + D[i][j]`): the exact kernel
 * alone, its reason, one sub.rn (add.rn) per stored sum past the plain
 * kernel's, nothing fused; with elem, a param past the params is no
 * matter (none is read), an out-of-range layout param is, and so are two
 * operations at once or a divisor-first division. */
START_TEST(test_matmul_post_elem) {
  kn_desc d = case_named("matmul_f32_strided")->desc;
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out plain, out;
  const ptx_arch sm75[] = {{75, false}};
  ck_assert_msg(ptx_generate(&d, "plain", sm75, 1, &arena, &plain, &diag), "%s", diag.msg);
  const char *base = plain.codes[0].text;
  for (unsigned c = 0; c < 2; c++) {
    kn_desc p = d;
    p.matmul.post = (kn_mm_post){.on = true, .sub = c == 0, .add = c == 1, .first = c == 0, .param = 99,
                                 .elem = true, .e = d.matmul.c};
    ptx_options opts = {.tf32 = true};
    ptx_plan plan;
    kn_desc q = p;
    q.matmul.n = (kn_size)C(1);
    ck_assert_msg(ptx_plan_make(&q, NULL, 0, &opts, &plan, &diag), "%s", diag.msg);
    ck_assert_uint_eq(plan.family, TWASM_PATH_EXACT);
    ck_assert_ptr_nonnull(strstr(plan.reason, "each sum combined with an element"));
    ck_assert_msg(ptx_generate(&p, "post", sm75, 1, &arena, &out, &diag), "%s", diag.msg);
    const char *text = out.codes[0].text, *op = c == 0 ? "sub.rn.f32" : "add.rn.f32";
    ck_assert(!strstr(text, "fma") && !strstr(text, "mad.rn"));
    ck_assert_uint_ge(count_of(text, op), count_of(base, op) + 64);
    ck_assert_uint_gt(count_of(text, "ld.global"), count_of(base, "ld.global"));
  }
  kn_desc bad = d;
  bad.matmul.post = (kn_mm_post){.on = true, .add = true, .sub = true, .elem = true, .e = d.matmul.c};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  bad.matmul.post = (kn_mm_post){.on = true, .div = true, .first = true, .elem = true, .e = d.matmul.c};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  bad.matmul.post = (kn_mm_post){.on = true, .add = true, .elem = true, .e = d.matmul.c};
  bad.matmul.post.e.offset = (kn_size){true, 40};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  tw_arena_free(&arena);
}
END_TEST

/* Reference BLAS's epilogues (kn_mm_blend, issue 19 round 10): `C =
 * alpha*sum + beta*C` (scaled), `y += alpha*sum` (unscaled), and SGEMM's
 * `beta == 0` arm (guarded): the exact kernel alone, its reason, per
 * stored sum past the plain kernel's one more add.rn and one more mul.rn
 * (two: alpha's and beta's), a load of C, nothing fused, assembled by
 * ptxas for sm_80 and sm_90; its factor or guard past the params, or
 * integers, are no kernel. */
START_TEST(test_matmul_blend) {
  kn_desc d = case_named("matmul_f32_strided")->desc;
  d.matmul.accumulate = false;
  d.nparams = 15;
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out plain, out;
  const ptx_arch archs[] = {{75, false}, {80, false}, {90, false}};
  ck_assert_msg(ptx_generate(&d, "plain", archs, 1, &arena, &plain, &diag), "%s", diag.msg);
  const char *base = plain.codes[0].text;
  bool have_ptxas = access(PTXAS, X_OK) == 0;
  if (!have_ptxas) printf("test_matmul_blend: ptxas skipped: not installed\n");
  for (unsigned c = 0; c < 3; c++) {
    kn_desc p = d;
    p.matmul.post = (kn_mm_post){.on = true, .param = 12};
    p.matmul.blend = (kn_mm_blend){.on = true, .first = c == 1, .scaled = c != 1, .scale_first = c == 2,
                                   .param = 13, .e = d.matmul.c, .guarded = c == 2, .guard_param = 14};
    ptx_options opts = {.tf32 = true};
    ptx_plan plan;
    kn_desc q = p;
    q.matmul.n = (kn_size)C(1);
    ck_assert_msg(ptx_plan_make(&q, NULL, 0, &opts, &plan, &diag), "%s", diag.msg);
    ck_assert_uint_eq(plan.family, TWASM_PATH_EXACT);
    ck_assert_ptr_nonnull(strstr(plan.reason, "an element at each sum's own index added"));
    ck_assert_msg(ptx_generate(&p, "blend", archs, 3, &arena, &out, &diag), "%s", diag.msg);
    const char *text = out.codes[0].text;
    ck_assert(!strstr(text, "fma") && !strstr(text, "mad.rn") && !strstr(text, ".ftz"));
    ck_assert_uint_ge(count_of(text, "add.rn.f32"), count_of(base, "add.rn.f32") + 64);
    ck_assert_uint_ge(count_of(text, "mul.rn.f32"), count_of(base, "mul.rn.f32") + (c == 1 ? 64 : 128));
    ck_assert_uint_gt(count_of(text, "ld.global"), count_of(base, "ld.global"));
    if (c == 2) ck_assert_uint_ge(count_of(text, "selp."), count_of(base, "selp.") + 64);
    for (unsigned a = 1; a < 3 && have_ptxas; a++) {
      int status;
      ck_assert_msg(ptxas_accepts(out.codes[a].text, out.codes[a].sm, &status), "blend %u sm_%u: ptxas status %d", c,
                    out.codes[a].sm, status);
    }
  }
  kn_desc bad = d;
  bad.matmul.blend = (kn_mm_blend){.on = true, .scaled = true, .param = 15, .e = d.matmul.c};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "element added after the sum"));
  bad.matmul.blend = (kn_mm_blend){.on = true, .guarded = true, .guard_param = 15, .e = d.matmul.c};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  bad.matmul.blend = (kn_mm_blend){.on = true, .e = d.matmul.c};
  bad.matmul.blend.e.offset = (kn_size){true, 40};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  bad = case_named("matmul_i32")->desc;
  bad.matmul.blend = (kn_mm_blend){.on = true, .e = bad.matmul.c};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  tw_arena_free(&arena);
}
END_TEST

/* Rows through tables of row pointers (kn_layout's row_table, mm_rows's
 * A, B and C; mv_rows's A with one column): the plan takes the exact
 * kernel, never the matrix-vector or tensor-core one, with tf32 too; the
 * kernel reads each row's start from its table (ld.global.u32) before
 * the element; ptxas takes it for sm_80 and sm_90.  A table with a batch
 * is refused. */
START_TEST(test_matmul_row_tables) {
  kn_desc d = case_named("matmul_f32_strided")->desc;
  d.matmul.accumulate = false;
  d.nparams = 15;
  d.matmul.a = (kn_layout){.offset = C(0), .row_stride = C(0), .col_stride = C(1), .row_table = true, .table = P(12)};
  kn_desc flat = d;
  flat.matmul.a = case_named("matmul_f32_strided")->desc.matmul.a;
  tw_arena arena = {0};
  tw_diag diag = {0};
  const ptx_arch archs[] = {{75, false}, {80, false}, {90, false}};
  bool have_ptxas = access(PTXAS, X_OK) == 0;
  if (!have_ptxas) printf("test_matmul_row_tables: ptxas skipped: not installed\n");
  ptx_out out, base;
  for (unsigned c = 0; c < 3; c++) {
    kn_desc p = d;
    if (c == 1) { /* mm_rows: B and C through tables too */
      p.matmul.b = (kn_layout){.offset = C(0), .col_stride = C(1), .row_table = true, .table = P(13)};
      p.matmul.c = (kn_layout){.offset = C(0), .col_stride = C(1), .row_table = true, .table = P(14)};
    }
    if (c == 2) p.matmul.n = (kn_size)C(1); /* mv_rows: one column */
    ptx_options opts = {.tf32 = true};
    ptx_plan plan;
    ck_assert_msg(ptx_plan_make(&p, NULL, 0, &opts, &plan, &diag), "%s", diag.msg);
    ck_assert_uint_eq(plan.family, TWASM_PATH_EXACT);
    ck_assert_ptr_nonnull(strstr(plan.reason, "table of row pointers"));
    ck_assert_msg(ptx_generate(&p, "rows", archs, 3, &arena, &out, &diag), "%s", diag.msg);
    kn_desc f = flat;
    f.matmul.n = p.matmul.n;
    ck_assert_msg(ptx_generate(&f, "flat", archs, 1, &arena, &base, &diag), "%s", diag.msg);
    const char *text = out.codes[0].text;
    ck_assert(!strstr(text, "fma") && !strstr(text, "mad.rn"));
    ck_assert_uint_eq(count_of(text, "mul.rn.f32"), count_of(text, "add.rn.f32"));
    ck_assert_uint_gt(count_of(text, "ld.global.u32"), count_of(base.codes[0].text, "ld.global.u32"));
    for (unsigned a = 1; a < 3 && have_ptxas; a++) {
      int status;
      ck_assert_msg(ptxas_accepts(out.codes[a].text, out.codes[a].sm, &status), "rows %u sm_%u: ptxas status %d", c,
                    out.codes[a].sm, status);
    }
  }
  kn_desc bad = case_named("batch_f32_16")->desc;
  bad.nparams = 5;
  bad.matmul.a = (kn_layout){.offset = C(0), .col_stride = C(1), .row_table = true, .table = P(4)};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &base, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "rows through a table"));
  tw_arena_free(&arena);
}
END_TEST

/* What the Wasm code computes: alpha*sum (post, either operand order),
 * then t = beta*C (C*beta, or C alone), then y + t (t + y), each rounded
 * in f32 (volatile: no contraction), or y alone where the guard says. */
static uint32_t blend_expected(const kn_matmul *m, float sum, float alpha, float c, float beta, bool g) {
  volatile float y = m->post.first ? alpha * sum : sum * alpha;
  volatile float t = c;
  if (m->blend.scaled) t = m->blend.scale_first ? beta * c : c * beta;
  volatile float both = m->blend.first ? t + y : y + t;
  float r = m->blend.guarded && g != m->blend.guard_on ? y : both;
  uint32_t bits;
  memcpy(&bits, &r, sizeof bits);
  return bits;
}

/* The epilogue's IR (ptx_mm_combine, what the exact kernel builds before
 * its store) compiled for the host by MCJIT, run on sums, elements and
 * factors with zeros of both signs, infinities, NaN, subnormals and
 * values whose products and sums round: its bits equal blend_expected's
 * (any NaN for a NaN) for every flag of kn_mm_blend and post's operand
 * order.  A fused or reordered epilogue differs on these values. */
START_TEST(test_blend_reference) {
  static const float vals[] = {0.0f, -0.0f, 1.0f, -1.5f, 3.0e38f, -3.0e38f, 1.0e-45f, 1.17549435e-38f,
                               0.1f, 1.0f / 3.0f, 16777217.0f, 7.0e-39f, INFINITY, -INFINITY, NAN, 1.0e-8f};
  enum { NV = sizeof vals / sizeof vals[0] };
  LLVMLinkInMCJIT();
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  unsigned checked = 0;
  for (unsigned flags = 0; flags < 32; flags++) {
    kn_matmul m = {.type = KN_MM_F32};
    m.post = (kn_mm_post){.on = true, .first = flags & 1};
    m.blend = (kn_mm_blend){.on = true, .first = flags & 2, .scaled = flags & 4, .scale_first = flags & 8,
                            .guarded = flags & 16, .guard_on = flags & 8};
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("blend", ctx);
    LLVMTypeRef f32 = LLVMFloatTypeInContext(ctx), i32 = LLVMInt32TypeInContext(ctx);
    LLVMTypeRef args[] = {f32, f32, f32, f32, i32};
    LLVMValueRef fn = LLVMAddFunction(mod, "epilogue", LLVMFunctionType(i32, args, 5, false));
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, fn, "entry"));
    ptx_mm_operands o = {.post = LLVMGetParam(fn, 1), .elem = LLVMGetParam(fn, 2), .factor = LLVMGetParam(fn, 3),
                         .guard = LLVMBuildTrunc(b, LLVMGetParam(fn, 4), LLVMInt1TypeInContext(ctx), "")};
    LLVMValueRef y = ptx_mm_combine(b, &m, LLVMGetParam(fn, 0), &o);
    LLVMBuildRet(b, LLVMBuildBitCast(b, y, i32, ""));
    LLVMDisposeBuilder(b);
    LLVMExecutionEngineRef ee;
    char *err = NULL;
    struct LLVMMCJITCompilerOptions jo;
    LLVMInitializeMCJITCompilerOptions(&jo, sizeof jo);
    jo.OptLevel = 2;
    ck_assert_msg(!LLVMCreateMCJITCompilerForModule(&ee, mod, &jo, sizeof jo, &err), "MCJIT: %s", err);
    uint32_t (*run)(float, float, float, float, uint32_t) =
        (uint32_t(*)(float, float, float, float, uint32_t))LLVMGetFunctionAddress(ee, "epilogue");
    ck_assert_ptr_nonnull(run);
    for (unsigned i = 0; i < NV * NV * NV; i++) {
      float sum = vals[i % NV], alpha = vals[(i / NV) % NV], c = vals[i / (NV * NV)];
      float beta = vals[(i * 7 + 3) % NV];
      for (uint32_t g = 0; g < 2; g++) {
        uint32_t got = run(sum, alpha, c, beta, g), want = blend_expected(&m, sum, alpha, c, beta, g);
        float gf, wf;
        memcpy(&gf, &got, sizeof gf);
        memcpy(&wf, &want, sizeof wf);
        ck_assert_msg(got == want || (isnan(gf) && isnan(wf)),
                      "flags %u: sum %a alpha %a c %a beta %a guard %u: %08x, expected %08x", flags, (double)sum,
                      (double)alpha, (double)c, (double)beta, g, got, want);
        checked++;
      }
    }
    LLVMDisposeExecutionEngine(ee);
    LLVMContextDispose(ctx);
  }
  ck_assert_uint_eq(checked, 32 * NV * NV * NV * 2);
}
END_TEST

/* A sum compared with a constant and selected (kn_mm_act: `s > 0 ? s :
 * 0`, a ReLU): the exact kernel alone, its reason, the compare and the
 * select per stored sum past the plain kernel's (setp.gt, selp), no
 * max.f32 (whose -0 and NaN rules are not the select's); after an
 * element's add (kn_mm_post) too; a constant predicate, a NaN constant or
 * an integer product is no kernel. */
START_TEST(test_matmul_act) {
  kn_desc d = case_named("matmul_f32_strided")->desc;
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out plain, out;
  const ptx_arch sm75[] = {{75, false}};
  ck_assert_msg(ptx_generate(&d, "plain", sm75, 1, &arena, &plain, &diag), "%s", diag.msg);
  const char *base = plain.codes[0].text;
  for (unsigned c = 0; c < 2; c++) {
    kn_desc p = d;
    p.matmul.act = (kn_mm_act){.on = true, .pred = LLVMRealOGT, .left = true, .when_true = true};
    if (c == 1) p.matmul.post = (kn_mm_post){.on = true, .add = true, .elem = true, .e = d.matmul.c};
    ptx_options opts = {.tf32 = true};
    ptx_plan plan;
    ck_assert_msg(ptx_plan_make(&p, NULL, 0, &opts, &plan, &diag), "%s", diag.msg);
    ck_assert_uint_eq(plan.family, TWASM_PATH_EXACT);
    ck_assert_ptr_nonnull(strstr(plan.reason, "compared with a constant and selected"));
    ck_assert_msg(ptx_generate(&p, "act", sm75, 1, &arena, &out, &diag), "%s", diag.msg);
    const char *text = out.codes[0].text;
    ck_assert(!strstr(text, "max.f32") && !strstr(text, "fma") && !strstr(text, "mad.rn"));
    ck_assert_uint_ge(count_of(text, "setp.gt.f32"), count_of(base, "setp.gt.f32") + 64);
    ck_assert_uint_ge(count_of(text, "selp."), count_of(base, "selp.") + 64);
    if (c == 1) ck_assert_uint_ge(count_of(text, "add.rn.f32"), count_of(base, "add.rn.f32") + 64);
  }
  kn_desc bad = d;
  bad.matmul.act = (kn_mm_act){.on = true, .pred = LLVMRealPredicateTrue, .left = true};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  bad.matmul.act = (kn_mm_act){.on = true, .pred = LLVMRealOGT, .left = true, .sel = NAN};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  bad = case_named("matmul_i32")->desc;
  bad.matmul.act = (kn_mm_act){.on = true, .pred = LLVMRealOGT, .left = true, .when_true = true};
  ck_assert(!ptx_generate(&bad, "bad", NULL, 0, &arena, &out, &diag));
  tw_arena_free(&arena);
}
END_TEST

/* A leaky ReLU (kn_mm_act's mul: `s > 0 ? s : 0.01f * s`): the other
 * value one mul.rn per stored sum, never fused; Wasm's f32.max(s, 0)
 * (nan_add): a NaN test and an add.rn per stored sum besides the compare
 * and select; neither as max.f32 (issue 19 round 6). */
START_TEST(test_matmul_act_leaky_max) {
  kn_desc d = case_named("matmul_f32_strided")->desc;
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out plain, out;
  const ptx_arch sm75[] = {{75, false}};
  ck_assert_msg(ptx_generate(&d, "plain", sm75, 1, &arena, &plain, &diag), "%s", diag.msg);
  const char *base = plain.codes[0].text;
  for (unsigned c = 0; c < 2; c++) {
    kn_desc p = d;
    p.matmul.act = (kn_mm_act){.on = true, .pred = LLVMRealOGT, .left = true, .when_true = true,
                               .sel = c == 0 ? (double)0.01f : 0.0, .mul = c == 0, .nan_add = c == 1};
    ck_assert_msg(ptx_generate(&p, "act", sm75, 1, &arena, &out, &diag), "%s", diag.msg);
    const char *text = out.codes[0].text;
    ck_assert(!strstr(text, "max.f32") && !strstr(text, "fma") && !strstr(text, "mad.rn"));
    ck_assert_uint_ge(count_of(text, "setp.gt.f32"), count_of(base, "setp.gt.f32") + 64);
    if (c == 0) ck_assert_uint_ge(count_of(text, "mul.rn.f32"), count_of(base, "mul.rn.f32") + 64);
    if (c == 1) {
      ck_assert_uint_ge(count_of(text, "setp.nan.f32"), count_of(base, "setp.nan.f32") + 64);
      ck_assert_uint_ge(count_of(text, "add.rn.f32"), count_of(base, "add.rn.f32") + 64);
    }
  }
  tw_arena_free(&arena);
}
END_TEST

/* A clamp (kn_matmul's act2 after act: `fminf(fmaxf(s, 0), 6)`): a
 * second compare and select per stored sum, never min.f32/max.f32; act2
 * without act is no descriptor the kernel takes (issue 19 round 7). */
START_TEST(test_matmul_act_clamp) {
  kn_desc d = case_named("matmul_f32_strided")->desc;
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out one, two;
  const ptx_arch sm75[] = {{75, false}};
  d.matmul.act = (kn_mm_act){.on = true, .pred = LLVMRealOGT, .left = true, .when_true = true};
  ck_assert_msg(ptx_generate(&d, "one", sm75, 1, &arena, &one, &diag), "%s", diag.msg);
  d.matmul.act2 = (kn_mm_act){.on = true, .pred = LLVMRealOLT, .left = true, .when_true = true, .cmp = 6.0,
                              .sel = 6.0};
  ck_assert_msg(ptx_generate(&d, "two", sm75, 1, &arena, &two, &diag), "%s", diag.msg);
  const char *t1 = one.codes[0].text, *t2 = two.codes[0].text;
  ck_assert(!strstr(t2, "max.f32") && !strstr(t2, "min.f32"));
  ck_assert_uint_ge(count_of(t2, "setp.lt.f32"), count_of(t1, "setp.lt.f32") + 64);
  ck_assert_uint_eq(count_of(t2, "setp.gt.f32"), count_of(t1, "setp.gt.f32"));
  d.matmul.act.on = false;
  ck_assert(!ptx_generate(&d, "bad", sm75, 1, &arena, &two, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "compare and select"));
  tw_arena_free(&arena);
}
END_TEST

/* A scale on an int8 product, or a scaled start without accumulate, is
 * no descriptor the kernels take. */
START_TEST(test_matmul_bad_scale) {
  kn_desc d = case_named("matmul_i8_i32")->desc;
  d.nparams = 4;
  d.matmul.a_scale = (kn_mm_scale){.on = true, .param = 3};
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ck_assert(!ptx_generate(&d, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "scale"));
  d = case_named("matmul_f32")->desc;
  d.matmul.start_scale = (kn_mm_scale){.on = true, .param = 0};
  diag = (tw_diag){0};
  ck_assert(!ptx_generate(&d, "bad", NULL, 0, &arena, &out, &diag));
  ck_assert_ptr_nonnull(strstr(diag.msg, "scale"));
  tw_arena_free(&arena);
}
END_TEST


/* A batch of small products: int8 on tensor cores (mma.sync m16n8k32,
 * s32 sums without .satfinite) on sm_80+ only; f32 only with tf32
 * (m16n8k8, inputs rounded by cvt.rna), else one mul.rn and one add.rn
 * per k step of each element (16 per body, two bodies). */
START_TEST(test_batch_tensor_cores) {
  static const struct {
    const char *name;
    bool tf32;
    const char *mma, *also;
  } checks[] = {
    {"batch_i8_odd", false, "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32", NULL},
    {"batch_f32_16", true, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "cvt.rna.tf32.f32"},
    {"batch_f32_16", false, NULL, NULL},
  };
  for (unsigned c = 0; c < sizeof checks / sizeof checks[0]; c++) {
    const ptx_case *tc = case_named(checks[c].name);
    tw_arena arena = {0};
    tw_diag diag = {0};
    ptx_out out;
    ptx_options opts = {.tf32 = checks[c].tf32};
    ck_assert_msg(ptx_generate_opts(&tc->desc, tc->name, NULL, 0, &opts, &arena, &out, &diag), "%s",
                  diag.msg);
    ck_assert_uint_eq(out.plan.launch.block[0], 256);
    ck_assert_uint_eq(out.plan.launch.per_block[0], 8);
    ck_assert(out.plan.launch.count[0].is_param && out.plan.launch.count[0].value == 0);
    for (unsigned a = 0; a < out.ncodes; a++) {
      const char *text = out.codes[a].text;
      bool tc_arch = out.codes[a].sm >= 80 && checks[c].mma;
      ck_assert_int_eq(ptx_path_tensor_cores(out.plan.codes[a].path), tc_arch);
      ck_assert_msg((strstr(text, "mma.sync") != NULL) == tc_arch, "%s sm_%u", tc->name, out.codes[a].sm);
      if (tc_arch) ck_assert(strstr(text, checks[c].mma));
      if (tc_arch && checks[c].also) ck_assert(strstr(text, checks[c].also));
      ck_assert(!strstr(text, ".satfinite"));
      if (!checks[c].mma) {
        unsigned muls = count_of(text, "mul.rn.f32");
        ck_assert_uint_eq(muls, count_of(text, "add.rn.f32"));
        ck_assert_uint_ge(muls, 2 * 16);
      }
      int status;
      if (access(PTXAS, X_OK) == 0)
        ck_assert_msg(ptxas_accepts(text, out.codes[a].sm, &status), "%s sm_%u: ptxas status %d",
                      tc->name, out.codes[a].sm, status);
    }
    tw_arena_free(&arena);
  }
}
END_TEST

/* The plan: per arch the path (exact below sm_80, tensor cores above
 * where the type and size allow), the sm_90a code with its entries, the
 * reason the report gives. */
static kn_desc with_type(const char *name, kn_mm_type type, bool a_signed, bool b_signed, bool bias) {
  kn_desc d = case_named(name)->desc;
  d.matmul.type = type;
  d.matmul.a_signed = a_signed;
  d.matmul.b_signed = b_signed;
  if (bias) d.matmul.accumulate = d.matmul.has_start = true, d.matmul.start = d.matmul.c;
  return d;
}

START_TEST(test_plan_paths) {
  enum { E = TWASM_PATH_EXACT, W = TWASM_PATH_WMMA, G = TWASM_PATH_WGMMA, B = TWASM_PATH_BATCH,
         BM = TWASM_PATH_BATCH_MMA, M = TWASM_PATH_MAP, MV = TWASM_PATH_MATVEC };
#define MV_REASON \
  "one output column or row: a thread per output sums in k order, the matrix staged through shared memory"
  static const struct {
    const char *name;
    kn_mm_type type;          /* 0 (f32) with case_named's own desc when keep */
    bool keep, tf32, a_signed, b_signed, bias;
    unsigned ncodes;
    uint32_t path[4], entries3, tc_bytes;
    const char *reason;
  } cases_[] = {
    {"saxpy_f32", 0, true, false, false, false, false, 3, {M, M, M}, 0, 0, NULL},
    {"matmul_f32", 0, true, false, false, false, false, 3, {E, E, E}, 0, 0,
     "f32 takes tensor cores only with --tensor-cores=tf32"},
    {"matmul_f32", 0, true, true, false, false, false, 4, {E, W, W, G},
     TWASM_ENTRY_MAIN | TWASM_ENTRY_PACKED, 4, NULL},
    {"matmul_f32", KN_MM_F32, false, true, false, false, true, 3, {E, W, W}, 0, 0, NULL},
    {"matmul_f32", KN_MM_I8_I32, false, false, true, false, true, 4, {E, W, W, G},
     TWASM_ENTRY_MAIN | TWASM_ENTRY_PACKED, 1, "int8 with s32 sums that wrap like Wasm i32: exact"},
    {"matmul_i8_i32", 0, true, false, false, false, false, 3, {E, E, E}, 0, 0,
     "too small for tensor cores, or no sm_80+ arch"},
    {"batch_i8_odd", 0, true, false, false, false, false, 3, {B, BM, BM}, 0, 0,
     "int8 with s32 sums that wrap like Wasm i32: exact"},
    {"batch_f32_16", 0, true, false, false, false, false, 3, {B, B, B}, 0, 0,
     "f32 takes tensor cores only with --tensor-cores=tf32"},
    {"batch_f64_large", 0, true, false, false, false, false, 3, {E, E, E}, 0, 0,
     "f64 mma adds four products at once: not source order"},
    {"matvec_f32", 0, true, false, false, false, false, 3, {MV, MV, MV}, 0, 0, MV_REASON},
    {"vecmat_f32_acc", 0, true, false, false, false, false, 3, {MV, MV, MV}, 0, 0, MV_REASON},
    {"matvec_f64", 0, true, false, false, false, false, 3, {MV, MV, MV}, 0, 0, MV_REASON},
    {"matvec_i32", 0, true, false, false, false, false, 3, {MV, MV, MV}, 0, 0, MV_REASON},
    /* int8 stays with the tensor-core family (and the exact kernel on
     * sm_75): the matrix-vector kernel takes 4- and 8-byte elements */
    {"matvec_f32", KN_MM_I8_I32, false, false, true, true, false, 4, {E, W, W, G},
     TWASM_ENTRY_MAIN | TWASM_ENTRY_PACKED, 1, "int8 with s32 sums that wrap like Wasm i32: exact"},
  };
  for (unsigned i = 0; i < sizeof cases_ / sizeof cases_[0]; i++) {
    kn_desc d = cases_[i].keep ? case_named(cases_[i].name)->desc
                               : with_type(cases_[i].name, cases_[i].type, cases_[i].a_signed,
                                           cases_[i].b_signed, cases_[i].bias);
    ptx_options opts = {.tf32 = cases_[i].tf32};
    ptx_plan p;
    tw_diag diag = {0};
    ck_assert_msg(ptx_plan_make(&d, NULL, 0, &opts, &p, &diag), "%u: %s", i, diag.msg);
    ck_assert_uint_eq(p.ncodes, cases_[i].ncodes);
    for (unsigned c = 0; c < p.ncodes; c++) {
      ck_assert_msg(p.codes[c].path == cases_[i].path[c], "case %u code %u: path %u", i, c, p.codes[c].path);
      ck_assert(p.codes[c].arch.specific == (c == 3));
    }
    if (p.ncodes == 4) ck_assert_uint_eq(p.codes[3].entries, cases_[i].entries3);
    for (unsigned c = 0; c < p.ncodes && c < 3; c++)
      ck_assert_uint_eq(p.codes[c].entries,
                        TWASM_ENTRY_MAIN | (p.codes[c].path == MV ? TWASM_ENTRY_HOST_OUT : 0));
    ck_assert_uint_eq(p.tc_elem_bytes, cases_[i].tc_bytes);
    ck_assert_str_eq(p.reason ? p.reason : "-", cases_[i].reason ? cases_[i].reason : "-");
    /* mixed signs on wgmma need PTX ISA 8.4 */
    if (p.ncodes == 4) ck_assert_str_eq(p.codes[3].features, cases_[i].a_signed != cases_[i].b_signed ? "+ptx84" : "");
  }
}
END_TEST

/* One grid rule for both sides (twasm_grid_axis): a max_grid of 0 gives
 * one block, never an unbounded grid. */
START_TEST(test_grid_rule) {
  ck_assert_uint_eq(twasm_grid_axis(1000, 256, 0), 1);
  ck_assert_uint_eq(twasm_grid_axis(1000, 256, 65535), 4);
  ck_assert_uint_eq(twasm_grid_axis(-7, 256, 65535), 1);
  ck_assert_uint_eq(twasm_grid_axis(1ll << 40, 0, 65535), 65535);
}
END_TEST

/* The matrix-vector kernel: one multiply and one add per term in every
 * body (none fused, none dropped), a whole chunk's terms straight-line in
 * the vector body, 256 threads a block, 16 outputs per
 * block along x over the outputs (m for one column, n for one row). */
START_TEST(test_matvec_kernel) {
  static const struct {
    const char *name, *mul, *add;
    int64_t outputs_param;
    unsigned chunk;                      /* terms of a whole chunk (16 KiB of W over 16 rows) in
                                          * the vector body; 0: W's rows are not contiguous (none) */
  } checks[] = {{"matvec_f32", "mul.rn.f32", "add.rn.f32", 0, 256},
                {"vecmat_f32_acc", "mul.rn.f32", "add.rn.f32", 0, 0},
                {"matvec_f64", "mul.rn.f64", "add.rn.f64", 0, 128}};
  for (unsigned c = 0; c < sizeof checks / sizeof checks[0]; c++) {
    const ptx_case *tc = case_named(checks[c].name);
    tw_arena arena = {0};
    tw_diag diag = {0};
    ptx_out out;
    ck_assert_msg(ptx_generate(&tc->desc, tc->name, NULL, 0, &arena, &out, &diag), "%s", diag.msg);
    for (unsigned a = 0; a < out.ncodes; a++) {
      const char *text = out.codes[a].text;
      unsigned muls = count_of(text, checks[c].mul);
      ck_assert_msg(muls == count_of(text, checks[c].add), "%s sm_%u: %u multiplies, %u adds", tc->name,
                    out.codes[a].sm, muls, count_of(text, checks[c].add));
      ck_assert_uint_ge(muls, 3 * 2);   /* three bodies: a vector step and a tail each */
      /* the vector body adds a whole chunk straight-line (no loop whose
       * adds wait for each shared load): at least a chunk's terms */
      ck_assert_msg(muls >= checks[c].chunk, "%s sm_%u: %u multiplies, a chunk is %u terms", tc->name,
                    out.codes[a].sm, muls, checks[c].chunk);
      ck_assert(strstr(text, ".shared .align 16 .b8 mv_w"));
      ck_assert(!strstr(text, "fma") && !strstr(text, ".ftz"));
      /* ABI 12: the outputs' base, a pointer after the 6 params
       * (TWASM_ENTRY_HOST_OUT), read by the kernel; none after it */
      char param[96];
      snprintf(param, sizeof param, "%s_param_7", tc->name);
      ck_assert_msg(count_of(text, param) >= 2, "%s sm_%u: no out_base param read", tc->name, out.codes[a].sm);
      snprintf(param, sizeof param, "%s_param_8", tc->name);
      ck_assert(!strstr(text, param));
      ck_assert_uint_eq(out.plan.codes[a].entries, TWASM_ENTRY_MAIN | TWASM_ENTRY_HOST_OUT);
    }
    ck_assert_uint_eq(out.plan.launch.block[0] * out.plan.launch.block[1] * out.plan.launch.block[2], 256);
    ck_assert_uint_eq(out.plan.launch.per_block[0], 16);
    ck_assert(out.plan.launch.count[0].is_param && out.plan.launch.count[0].value == checks[c].outputs_param);
    uint32_t grid[3];
    ptx_launch_grid(&out.plan.launch, (const int64_t[]){32000, 768, 0, 0, 0, 0}, grid);
    ck_assert_uint_eq(grid[0], 2000);
    ck_assert_uint_eq(grid[1], 1);
    ck_assert_uint_eq(grid[2], 1);
    tw_arena_free(&arena);
  }
}
END_TEST

/* The batch along grid y: one block row per product (up to 65535), the
 * outputs along x as without one; the same multiply and add per term. */
START_TEST(test_matvec_batch) {
  const ptx_case *tc = case_named("matvec_batch_f32");
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ck_assert_msg(ptx_generate(&tc->desc, tc->name, NULL, 0, &arena, &out, &diag), "%s", diag.msg);
  ck_assert_uint_eq(out.plan.family, TWASM_PATH_MATVEC);
  for (unsigned a = 0; a < out.ncodes; a++) {
    const char *text = out.codes[a].text;
    ck_assert_uint_eq(count_of(text, "mul.rn.f32"), count_of(text, "add.rn.f32"));
    ck_assert(!strstr(text, "fma"));
  }
  uint32_t grid[3];
  ptx_launch_grid(&out.plan.launch, (const int64_t[]){101, 64, 0, 768, 0, 0, 12, 64}, grid);
  ck_assert_uint_eq(grid[0], 7);
  ck_assert_uint_eq(grid[1], 12);
  ck_assert_uint_eq(grid[2], 1);
  ptx_launch_grid(&out.plan.launch, (const int64_t[]){101, 64, 0, 768, 0, 0, 100000, 64}, grid);
  ck_assert_uint_eq(grid[1], 65535);
  tw_arena_free(&arena);
}
END_TEST

static Suite *ptx_suite(void) {
  Suite *s = suite_create("ptx");
  TCase *tc = tcase_create("kernels");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_case_all_archs, 0, sizeof cases / sizeof cases[0]);
  tcase_add_test(tc, test_isa_versions_recorded);
  tcase_add_test(tc, test_one_requested_arch);
  tcase_add_test(tc, test_unicode_name_sanitised);
  tcase_add_test(tc, test_is_ascii);
  tcase_add_test(tc, test_call_linked);
  tcase_add_test(tc, test_float_reduce_needs_flag);
  tcase_add_test(tc, test_seqsum_adds_in_order);
  tcase_add_test(tc, test_bad_operand_rejected);
  tcase_add_test(tc, test_type_mismatch_rejected);
  tcase_add_test(tc, test_launch_grid);
  tcase_add_test(tc, test_plan_paths);
  tcase_add_test(tc, test_grid_rule);
  tcase_add_test(tc, test_matmul_products_unfused);
  tcase_add_test(tc, test_matmul_scaled);
  tcase_add_test(tc, test_matmul_triangle);
  tcase_add_test(tc, test_matmul_upper_mirror);
  tcase_add_test(tc, test_matmul_second);
  tcase_add_test(tc, test_matmul_post);
  tcase_add_test(tc, test_matmul_post_elem);
  tcase_add_test(tc, test_matmul_blend);
  tcase_add_test(tc, test_matmul_row_tables);
  tcase_add_test(tc, test_blend_reference);
  tcase_add_test(tc, test_matmul_act);
  tcase_add_test(tc, test_matmul_act_leaky_max);
  tcase_add_test(tc, test_matmul_act_clamp);
  tcase_add_test(tc, test_matmul_bad_scale);
  tcase_add_test(tc, test_batch_tensor_cores);
  tcase_add_test(tc, test_map_strided_no_vectors);
  tcase_add_test(tc, test_map_vector_copy);
  tcase_add_test(tc, test_matvec_kernel);
  tcase_add_test(tc, test_matvec_batch);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(ptx_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
