/* test_dispatch.c: dispatch of offloaded nests without a GPU: the runtime's
 * pre-launch plan (bounds, overlap, trip counts, grid, cost model) on
 * hand-made kernel tables, twasm_rt_trip_count, and compiled programs whose
 * offloaded nests must give the --no-offload build's output and traps under
 * every TWASM_DEVICE when no GPU can be used. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zstd.h>

#include "rt_offload.h"
#include "rt_tc.h"
#include "unit_sh.h"

/* ---- the plan ------------------------------------------------------------ */

/* out[x] = f(in[x]) for x < n: p0 = n (a trip count), p1 = out's address;
 * in is at byte 1024 (a constant). */
static twasm_kernel_range_abi ranges[2];
static twasm_kernel_abi map;

static void map_setup(void) {
  memset(ranges, 0, sizeof ranges);
  ranges[0] = (twasm_kernel_range_abi){.c0 = 0, .param_index = {1}, .param_coeff = {1},
                                       .nparam_terms = 1, .ndims = 1, .coeff = {4},
                                       .extent = {{.value = 0, .is_param = 1}}, .size = 4,
                                       .is_write = 1};
  ranges[1] = (twasm_kernel_range_abi){.c0 = 1024, .ndims = 1, .coeff = {4},
                                       .extent = {{.value = 0, .is_param = 1}}, .size = 4};
  map = (twasm_kernel_abi){.name = "k", .kind = TWASM_KERNEL_MAP, .nparams = 2,
                           .bind_kinds = {TWASM_BIND_TRIP, TWASM_BIND_VALUE},
                           .check_overlap = 1, .nranges = 2, .ranges = ranges,
                           .launch = {.block = {256, 1, 1}, .per_block = {256, 1, 1},
                                      .max_grid = {1000, 1, 1},
                                      .count = {{.value = 0, .is_param = 1}, {.value = 1}, {.value = 1}}},
                           .work = {{.value = 0, .is_param = 1}, {.value = 1}, {.value = 1}},
                           .nwork = 1, .ops_per_iter = 3};
}

START_TEST(plan_in_bounds) {
  map_setup();
  rt_offload_plan p;
  int64_t params[] = {1000, 65536};
  ck_assert_ptr_null(rt_offload_plan_make(&map, params, 1 << 20, &p));
  ck_assert_int_eq(p.nspans, 2);
  ck_assert_uint_eq(p.spans[0].lo, 65536);
  ck_assert_uint_eq(p.spans[0].hi, 65536 + 4000);
  ck_assert(p.spans[0].is_write && !p.spans[1].is_write);
  ck_assert_uint_eq(p.spans[1].lo, 1024);
  ck_assert_uint_eq(p.spans[1].hi, 1024 + 4000);
  ck_assert_uint_eq(p.bytes, 8000);
  ck_assert_uint_eq(p.grid[0], 4); /* ceil(1000 / 256) */
  ck_assert_uint_eq(p.grid[1], 1);
  ck_assert(p.iterations == 1000 && p.ops == 3000);
}
END_TEST

START_TEST(plan_grid_is_capped) {
  map_setup();
  rt_offload_plan p;
  int64_t params[] = {10000000, 1 << 30};
  ck_assert_ptr_null(rt_offload_plan_make(&map, params, 1ull << 32, &p));
  ck_assert_uint_eq(p.grid[0], 1000);
}
END_TEST

START_TEST(plan_out_of_bounds) {
  map_setup();
  rt_offload_plan p;
  /* the last element ends one byte past the memory */
  int64_t params[] = {1000, 65536 - 4000 + 1};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&map, params, 65536, &p), "out of bounds"));
  int64_t exact[] = {1000, 65536 - 4000};
  ck_assert_ptr_null(rt_offload_plan_make(&map, exact, 65536, &p));
  /* a huge address must not wrap into range */
  int64_t huge[] = {1000, INT64_MAX - 10};
  ck_assert_ptr_nonnull(rt_offload_plan_make(&map, huge, 1ull << 32, &p));
  int64_t negative[] = {1000, -8};
  ck_assert_ptr_nonnull(rt_offload_plan_make(&map, negative, 1ull << 32, &p));
}
END_TEST

START_TEST(plan_negative_stride) {
  map_setup();
  ranges[1].c0 = 4096;
  ranges[1].coeff[0] = -4; /* in[n-1-x] read downwards from 4096 */
  rt_offload_plan p;
  int64_t params[] = {1000, 65536};
  ck_assert_ptr_null(rt_offload_plan_make(&map, params, 1 << 20, &p));
  ck_assert_uint_eq(p.spans[1].lo, 4096 - 4 * 999);
  ck_assert_uint_eq(p.spans[1].hi, 4096 + 4);
  int64_t more[] = {1026, 65536}; /* reaches below 0 */
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&map, more, 1 << 20, &p), "out of bounds"));
}
END_TEST

START_TEST(plan_overlap) {
  map_setup();
  rt_offload_plan p;
  int64_t params[] = {1000, 1024 + 3996}; /* out's first element is in's last */
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&map, params, 1 << 20, &p), "overlaps"));
  int64_t apart[] = {1000, 1024 + 4000};
  ck_assert_ptr_null(rt_offload_plan_make(&map, apart, 1 << 20, &p));
  map.check_overlap = 0; /* the compiler proved independence */
  ck_assert_ptr_null(rt_offload_plan_make(&map, params, 1 << 20, &p));
}
END_TEST

/* The parts of one nest (twasm_rt_offload_group): two maps, each apart
 * from its own input; they may run one after the other only when no part
 * writes what the other reads or writes. */
START_TEST(plan_parts_apart) {
  map_setup();
  rt_offload_plan p[2];
  int64_t first[] = {1000, 65536}, second[] = {1000, 65536 + 4000}; /* out1 right after out0 */
  ck_assert_ptr_null(rt_offload_plan_make(&map, first, 1 << 20, &p[0]));
  ck_assert_ptr_null(rt_offload_plan_make(&map, second, 1 << 20, &p[1]));
  ck_assert_ptr_null(rt_offload_plans_apart(p, 2));
  /* both read in (byte 1024): reads are shared freely */
  int64_t same_out[] = {1000, 65536 + 3996}; /* one element written by both */
  ck_assert_ptr_null(rt_offload_plan_make(&map, same_out, 1 << 20, &p[1]));
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(p, 2), "write the same bytes"));
  int64_t into_in[] = {1000, 1024 + 4000}; /* part 1's out just past in */
  ck_assert_ptr_null(rt_offload_plan_make(&map, into_in, 1 << 20, &p[1]));
  ck_assert_ptr_null(rt_offload_plans_apart(p, 2));
  /* part 0 writes what part 1 reads (in), either order */
  int64_t over_in[] = {1000, 1024 + 400};
  map.check_overlap = 0; /* its own check aside: only the parts' */
  ck_assert_ptr_null(rt_offload_plan_make(&map, over_in, 1 << 20, &p[0]));
  ck_assert_ptr_null(rt_offload_plan_make(&map, first, 1 << 20, &p[1]));
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(p, 2), "writes bytes another part reads"));
  rt_offload_plan swapped[2] = {p[1], p[0]};
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(swapped, 2), "writes bytes another part reads"));
  ck_assert_ptr_null(rt_offload_plans_apart(p, 1));
}
END_TEST

/* Parts in order (atax, kn_recog_split.c's kr_split_loops): a later
 * part's forwarded read may be exactly the bytes an earlier part writes;
 * any other overlap still refuses the nest. */
START_TEST(plan_parts_forwarded) {
  rt_offload_plan p[2];
  memset(p, 0, sizeof p);
  p[0].nspans = 2; /* tmp = A x */
  p[0].spans[0] = (rt_offload_span){4096, 8192, false, false, false};   /* A, x */
  p[0].spans[1] = (rt_offload_span){16384, 17408, true, false, false};  /* tmp */
  p[1].nspans = 3; /* y += tmp^T A */
  p[1].spans[0] = (rt_offload_span){4096, 8192, false, false, false};   /* A */
  p[1].spans[1] = (rt_offload_span){16384, 17408, false, true, false};  /* tmp, forwarded */
  p[1].spans[2] = (rt_offload_span){20480, 21504, true, false, false};  /* y */
  ck_assert_ptr_null(rt_offload_plans_apart(p, 2));
  /* the same read not forwarded: an ordinary overlap */
  p[1].spans[1].forwarded = false;
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(p, 2), "writes bytes another part reads"));
  /* forwarded, but part 1's read one element past what part 0 wrote */
  p[1].spans[1] = (rt_offload_span){16384 + 4, 17408 + 4, false, true, false};
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(p, 2), "writes bytes another part reads"));
  /* a forwarded read comes only from an earlier part: the parts swapped */
  p[1].spans[1] = (rt_offload_span){16384, 17408, false, true, false};
  rt_offload_plan swapped[2] = {p[1], p[0]};
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(swapped, 2), "writes bytes another part reads"));
  /* the later part writing what the earlier reads (y over x) */
  p[1].spans[2] = (rt_offload_span){8000, 9000, true, false, false};
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(p, 2), "writes bytes another part reads"));
  /* or what it writes */
  p[1].spans[2] = (rt_offload_span){17000, 18000, true, false, false};
  ck_assert_ptr_nonnull(rt_offload_plans_apart(p, 2));
}
END_TEST

/* An epilogue after the parts (gesummv, kn_recog_split.c): a later
 * part's forwarded write may be exactly the bytes an earlier part writes,
 * in either pair order of the check; not when not forwarded, not other
 * bytes, and not over what an earlier part reads. */
START_TEST(plan_parts_forwarded_write) {
  rt_offload_plan p[3];
  memset(p, 0, sizeof p);
  p[0].nspans = 2; /* tmp = A x */
  p[0].spans[0] = (rt_offload_span){4096, 8192, false, false, false};
  p[0].spans[1] = (rt_offload_span){16384, 17408, true, false, false};
  p[1].nspans = 2; /* y = B x */
  p[1].spans[0] = (rt_offload_span){8192, 12288, false, false, false};
  p[1].spans[1] = (rt_offload_span){20480, 21504, true, false, false};
  p[2].nspans = 2; /* y = alpha tmp + beta y */
  p[2].spans[0] = (rt_offload_span){16384, 17408, false, true, false};
  p[2].spans[1] = (rt_offload_span){20480, 21504, true, true, false};
  ck_assert_ptr_null(rt_offload_plans_apart(p, 3));
  /* the write not forwarded: two parts write the same bytes */
  p[2].spans[1].forwarded = false;
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(p, 3), "write the same bytes"));
  /* forwarded, one element off */
  p[2].spans[1] = (rt_offload_span){20480 + 8, 21504 + 8, true, true, false};
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(p, 3), "write the same bytes"));
  /* forwarded, over what an earlier part reads (x inside y) */
  p[2].spans[1] = (rt_offload_span){20480, 21504, true, true, false};
  p[0].spans[0] = (rt_offload_span){4096, 21000, false, false, false};
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(p, 3), "writes bytes another part reads"));
  /* a forwarded write comes only after the part it matches: swapped */
  p[0].spans[0] = (rt_offload_span){4096, 8192, false, false, false};
  rt_offload_plan swapped[3] = {p[0], p[2], p[1]};
  ck_assert_ptr_nonnull(strstr(rt_offload_plans_apart(swapped, 3), "write the same bytes"));
}
END_TEST

START_TEST(plan_reading_own_output_is_no_overlap) {
  map_setup();
  ranges[1] = ranges[0];
  ranges[1].is_write = 0; /* out[x] = f(out[x]) */
  rt_offload_plan p;
  int64_t params[] = {1000, 65536};
  ck_assert_ptr_null(rt_offload_plan_make(&map, params, 1 << 20, &p));
  ck_assert_int_eq(p.nspans, 1);
  /* still bounds-checked */
  ck_assert_ptr_nonnull(rt_offload_plan_make(&map, params, 65536 + 100, &p));
}
END_TEST

START_TEST(plan_unknown_trip_and_empty) {
  map_setup();
  rt_offload_plan p;
  int64_t unknown[] = {-1, 65536};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&map, unknown, 1 << 20, &p), "trip count"));
  map.bind_kinds[0] = TWASM_BIND_VALUE;
  int64_t none[] = {0, 1ull << 40}; /* nothing accessed: no range to check */
  ck_assert_ptr_null(rt_offload_plan_make(&map, none, 1 << 20, &p));
  ck_assert_int_eq(p.nspans, 0);
}
END_TEST

START_TEST(plan_rejects_malformed_tables) {
  map_setup();
  rt_offload_plan p;
  int64_t params[] = {1000, 65536};
  ranges[0].param_index[0] = 7;
  ck_assert_ptr_nonnull(rt_offload_plan_make(&map, params, 1 << 20, &p));
  map_setup();
  ranges[1].extent[0].value = 9;
  ck_assert_ptr_nonnull(rt_offload_plan_make(&map, params, 1 << 20, &p));
}
END_TEST

/* out[i * s + j] for i, j < n with a run-time row stride s = p2. */
START_TEST(plan_run_time_strides) {
  map_setup();
  map.nparams = 3;
  ranges[0].ndims = 2;
  ranges[0].coeff[0] = 0, ranges[0].pcoeff[0] = 4, ranges[0].pindex[0] = 2;
  ranges[0].coeff[1] = 4;
  ranges[0].extent[1] = (twasm_kernel_size_abi){.value = 0, .is_param = 1};
  map.nranges = 1;
  rt_offload_plan p;
  int64_t params[] = {100, 65536, 100};
  ck_assert_ptr_null(rt_offload_plan_make(&map, params, 1 << 20, &p));
  ck_assert_uint_eq(p.spans[0].lo, 65536);
  ck_assert_uint_eq(p.spans[0].hi, 65536 + 4 * (99 * 100 + 99) + 4);
  /* rows longer than the stride: two (i, j) share an element */
  int64_t narrow[] = {100, 65536, 99};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&map, narrow, 1 << 20, &p), "same element"));
  /* the stride also counts in the bounds check */
  int64_t wide_rows[] = {100, 65536, 10000};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&map, wide_rows, 1 << 20, &p), "out of bounds"));
}
END_TEST

/* A batch of p0 products C[b] = A[b] x B[b] of 16x16x16 f32 (dims b, i, j,
 * k): A at 4096, B at 4096 + 2^20, C at p1 with p2 elements between
 * products (a live batch stride), rows of 16; the small-product launch (8
 * products per block). */
static twasm_kernel_range_abi mm_ranges[3];
static twasm_kernel_abi batch;

static void batch_setup(void) {
  const twasm_kernel_size_abi nb = {.value = 0, .is_param = 1}, sixteen = {.value = 16};
  memset(mm_ranges, 0, sizeof mm_ranges);
  /* A[b][i][k]: 1024 b + 64 i + 4 k */
  mm_ranges[0] = (twasm_kernel_range_abi){.c0 = 4096, .ndims = 4, .coeff = {1024, 64, 0, 4},
                                          .extent = {nb, sixteen, sixteen, sixteen}, .size = 4};
  /* B[b][k][j]: 1024 b + 64 k + 4 j */
  mm_ranges[1] = (twasm_kernel_range_abi){.c0 = 4096 + (1 << 20), .ndims = 4, .coeff = {1024, 0, 4, 64},
                                          .extent = {nb, sixteen, sixteen, sixteen}, .size = 4};
  /* C[b][i][j]: 4 p2 b + 64 i + 4 j, at p1 */
  mm_ranges[2] = (twasm_kernel_range_abi){.param_index = {1}, .param_coeff = {1}, .nparam_terms = 1,
                                          .ndims = 4, .coeff = {0, 64, 4, 0}, .pcoeff = {4}, .pindex = {2},
                                          .extent = {nb, sixteen, sixteen, sixteen}, .size = 4,
                                          .is_write = 1};
  batch = (twasm_kernel_abi){.name = "b", .kind = TWASM_KERNEL_MATMUL, .nparams = 3,
                             .bind_kinds = {TWASM_BIND_TRIP, TWASM_BIND_VALUE, TWASM_BIND_VALUE},
                             .check_overlap = 1, .nranges = 3, .ranges = mm_ranges,
                             .launch = {.block = {256, 1, 1}, .per_block = {8, 1, 1},
                                        .max_grid = {1 << 20, 1, 1},
                                        .count = {nb, {.value = 1}, {.value = 1}}},
                             .work = {nb, sixteen, sixteen, sixteen}, .nwork = 4, .ops_per_iter = 2,
                             .batch = nb};
}

START_TEST(plan_batch) {
  batch_setup();
  rt_offload_plan p;
  int64_t params[] = {100, 1 << 22, 256};
  ck_assert_ptr_null(rt_offload_plan_make(&batch, params, 1 << 23, &p));
  ck_assert_int_eq(p.batch, 100);
  ck_assert(p.iterations == 100.0 * 16 * 16 * 16 && p.ops == 2 * p.iterations);
  ck_assert_uint_eq(p.grid[0], 13); /* ceil(100 / 8) */
  ck_assert_int_eq(p.nspans, 3);
  ck_assert_uint_eq(p.spans[2].lo, 1 << 22);
  ck_assert_uint_eq(p.spans[2].hi, (1 << 22) + 100 * 1024);
  /* products padded apart are distinct too */
  int64_t padded[] = {100, 1 << 22, 300};
  ck_assert_ptr_null(rt_offload_plan_make(&batch, padded, 1 << 23, &p));
}
END_TEST

/* Products whose outputs share elements (a live stride below 256, or 0)
 * would race: refused, the CPU loop runs them in order. */
START_TEST(plan_batch_outputs_overlap) {
  batch_setup();
  rt_offload_plan p;
  int64_t half[] = {100, 1 << 22, 128};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&batch, half, 1 << 23, &p), "write the same element"));
  int64_t zero[] = {100, 1 << 22, 0};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&batch, zero, 1 << 23, &p), "write the same element"));
  int64_t one_row[] = {100, 1 << 22, 255};
  ck_assert_ptr_nonnull(rt_offload_plan_make(&batch, one_row, 1 << 23, &p));
  /* one product cannot collide with another */
  int64_t single[] = {1, 1 << 22, 0};
  ck_assert_ptr_null(rt_offload_plan_make(&batch, single, 1 << 23, &p));
}
END_TEST

/* Rows through a table of row pointers (ABI 14): C = A B over one column
 * (y = A x), A's rows through a table at p2 (each row its own
 * allocation), or C's rows through one at p2 too.  p0 = m, p1 = k,
 * p3 = x, p4 = y (or C's table).  The runtime reads the row pointers from
 * the memory and checks each row. */
static twasm_kernel_range_abi row_ranges[4];
static twasm_kernel_abi rows_k;
static uint8_t row_mem[1 << 16];

static void put_u32(uint32_t at, uint32_t v) { memcpy(row_mem + at, &v, 4); }

/* m rows of k floats at 4096 + 512 r, their table at 1024, x at 24576, y
 * at 28672 (or C's rows at 16384 + 256 r, C's table at 2048). */
static void rows_setup(bool c_rows) {
  memset(row_ranges, 0, sizeof row_ranges);
  memset(row_mem, 0, sizeof row_mem);
  const twasm_kernel_size_abi m = {.value = 0, .is_param = 1}, k = {.value = 1, .is_param = 1};
  /* A: table dim 0 (rows), then 4 bytes per column */
  row_ranges[0] = (twasm_kernel_range_abi){.ndims = 2, .coeff = {0, 4}, .extent = {m, k}, .size = 4,
                                           .table_dim = 1, .table = {.value = 2, .is_param = 1}};
  /* A's table: m row pointers at p2 */
  row_ranges[1] = (twasm_kernel_range_abi){.param_index = {2}, .param_coeff = {1}, .nparam_terms = 1,
                                           .ndims = 1, .coeff = {4}, .extent = {m}, .size = 4};
  row_ranges[2] = (twasm_kernel_range_abi){.param_index = {3}, .param_coeff = {1}, .nparam_terms = 1,
                                           .ndims = 1, .coeff = {4}, .extent = {k}, .size = 4};
  /* y: 4 bytes per row, or C's rows through the table at p4 (one column) */
  row_ranges[3] = c_rows ? (twasm_kernel_range_abi){.ndims = 2, .coeff = {0, 0}, .extent = {m, k}, .size = 4,
                                                    .is_write = 1, .table_dim = 1,
                                                    .table = {.value = 4, .is_param = 1}}
                         : (twasm_kernel_range_abi){.param_index = {4}, .param_coeff = {1}, .nparam_terms = 1,
                                                    .ndims = 2, .coeff = {4, 0}, .extent = {m, k}, .size = 4,
                                                    .is_write = 1};
  rows_k = (twasm_kernel_abi){.name = "k", .kind = TWASM_KERNEL_MATMUL, .nparams = 5,
                              .bind_kinds = {TWASM_BIND_TRIP, TWASM_BIND_TRIP},
                              .check_overlap = 1, .nranges = 4, .ranges = row_ranges,
                              .launch = {.block = {256, 1, 1}, .per_block = {256, 1, 1},
                                         .max_grid = {1000, 1, 1},
                                         .count = {{.value = 0, .is_param = 1}, {.value = 1}, {.value = 1}}},
                              .work = {{.value = 1}, m, {.value = 1}, k},
                              .nwork = 4, .ops_per_iter = 2};
  for (uint32_t r = 0; r < 16; r++) {
    put_u32(1024 + 4 * r, 4096 + 512 * r);
    put_u32(2048 + 4 * r, 16384 + 256 * r);
  }
}

START_TEST(plan_row_tables) {
  rows_setup(false);
  rt_offload_plan p;
  int64_t params[] = {16, 50, 1024, 24576, 28672};
  ck_assert_ptr_null(rt_offload_plan_make_in(&rows_k, params, row_mem, sizeof row_mem, &p));
  /* A's rows one span, their hull, flagged; the bytes only the rows' */
  ck_assert_int_eq(p.nspans, 4);
  ck_assert(p.spans[0].rows && !p.spans[0].is_write && !p.spans[1].rows);
  ck_assert_uint_eq(p.spans[0].lo, 4096);
  ck_assert_uint_eq(p.spans[0].hi, 4096 + 512 * 15 + 200);
  ck_assert_uint_eq(p.bytes, 16 * 200 + 64 + 200 + 64);
  /* y lies between two rows of A, touching neither: the hull is no
   * overlap, the rows are checked one by one */
  int64_t between[] = {16, 50, 1024, 24576, 4096 + 200};
  ck_assert_ptr_null(rt_offload_plan_make_in(&rows_k, between, row_mem, sizeof row_mem, &p));
  /* ... unless it reaches into the next row */
  int64_t into[] = {16, 50, 1024, 24576, 4096 + 480};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make_in(&rows_k, into, row_mem, sizeof row_mem, &p),
                               "overlaps an input"));
  /* y over the table itself: an ordinary overlap */
  int64_t over_table[] = {16, 50, 1024, 24576, 1024};
  ck_assert_ptr_nonnull(rt_offload_plan_make_in(&rows_k, over_table, row_mem, sizeof row_mem, &p));
  /* no memory to read the table from: refused */
  ck_assert_ptr_nonnull(rt_offload_plan_make(&rows_k, params, sizeof row_mem, &p));
}
END_TEST

START_TEST(plan_row_table_checks_each_row) {
  rows_setup(false);
  rt_offload_plan p;
  int64_t params[] = {16, 50, 1024, 24576, 28672};
  /* one row past the memory's end */
  put_u32(1024 + 4 * 7, sizeof row_mem - 100);
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make_in(&rows_k, params, row_mem, sizeof row_mem, &p),
                               "out of bounds"));
  /* one row not aligned to its floats */
  put_u32(1024 + 4 * 7, 4096 + 512 * 7 + 2);
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make_in(&rows_k, params, row_mem, sizeof row_mem, &p),
                               "not aligned"));
  /* a row over y */
  put_u32(1024 + 4 * 7, 28672 - 8);
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make_in(&rows_k, params, row_mem, sizeof row_mem, &p),
                               "overlaps an input"));
  /* two rows of A alias each other: reads, no harm */
  put_u32(1024 + 4 * 7, 4096);
  ck_assert_ptr_null(rt_offload_plan_make_in(&rows_k, params, row_mem, sizeof row_mem, &p));
  /* the table not on a 4-byte boundary (the kernel reads words) */
  int64_t odd[] = {16, 50, 1026, 24576, 28672};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make_in(&rows_k, odd, row_mem, sizeof row_mem, &p),
                               "not aligned to 4 bytes"));
  /* the table itself past the memory's end */
  int64_t far[] = {16, 50, (int64_t)sizeof row_mem - 32, 24576, 28672};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make_in(&rows_k, far, row_mem, sizeof row_mem, &p),
                               "out of bounds"));
}
END_TEST

START_TEST(plan_row_table_output_rows_apart) {
  rows_setup(true);
  rt_offload_plan p;
  int64_t params[] = {16, 50, 1024, 24576, 2048};
  ck_assert_ptr_null(rt_offload_plan_make_in(&rows_k, params, row_mem, sizeof row_mem, &p));
  ck_assert(p.spans[3].rows && p.spans[3].is_write);
  /* two rows of C the same row: the CPU */
  put_u32(2048 + 4 * 9, 16384 + 256 * 3);
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make_in(&rows_k, params, row_mem, sizeof row_mem, &p),
                               "two rows of the output"));
  /* a row of C over a row of A */
  put_u32(2048 + 4 * 9, 4096 + 512 * 5);
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make_in(&rows_k, params, row_mem, sizeof row_mem, &p),
                               "overlaps an input"));
  /* a row of C over x */
  put_u32(2048 + 4 * 9, 24576 + 16);
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make_in(&rows_k, params, row_mem, sizeof row_mem, &p),
                               "overlaps an input"));
}
END_TEST

START_TEST(plan_batch_checks_inputs_and_bounds) {
  batch_setup();
  rt_offload_plan p;
  /* C starts inside the batch of A */
  int64_t into_a[] = {100, 4096 + 50 * 1024, 256};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&batch, into_a, 1 << 23, &p), "overlaps an input"));
  /* the last product of C ends one byte past the memory */
  int64_t past[] = {100, (1 << 23) - 100 * 1024 + 1, 256};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&batch, past, 1 << 23, &p), "out of bounds"));
  int64_t fits[] = {100, (1 << 23) - 100 * 1024, 256};
  ck_assert_ptr_null(rt_offload_plan_make(&batch, fits, 1 << 23, &p));
  /* a batch of B past the memory: the count alone decides */
  int64_t many[] = {8192, 1 << 22, 256};
  ck_assert_ptr_nonnull(strstr(rt_offload_plan_make(&batch, many, 1 << 23, &p), "out of bounds"));
}
END_TEST

START_TEST(cost_model) {
  ck_assert(!twasm_cost_worth_it(16.0 * 16 * 16 * 2, 9.0)); /* a lone 16^3 matmul */
  ck_assert(twasm_cost_worth_it(2.0 * 1024 * 1024 * 1024, 9.0));
  ck_assert(!twasm_cost_worth_it(1e12, INFINITY)); /* no GPU */
}
END_TEST

/* The packed product: taken only where its 128 x 256 tiles are filled
 * past 80 %; scratch holds every padded tile of A and B. */
START_TEST(packed_product_shapes) {
  ck_assert(rt_tc_fits(4096, 4096, 4096));
  ck_assert(rt_tc_fits(250, 500, 1037));
  ck_assert(!rt_tc_fits(127, 4096, 4096));     /* below one tile */
  ck_assert(!rt_tc_fits(4096, 255, 4096));
  ck_assert(!rt_tc_fits(4096, 4096, 16));      /* too little k */
  ck_assert(!rt_tc_fits(129, 4096, 4096));     /* 256 rows for 129: half empty */
  ck_assert(!rt_tc_fits(1024, 384, 1024));     /* 512 columns for 384 */
  ck_assert(!rt_tc_fits(1ll << 32, 4096, 64));
  ck_assert_uint_eq(rt_tc_scratch_bytes(4096, 4096, 4096, 1), 2ull * 4096 * 4096);
  ck_assert_uint_eq(rt_tc_scratch_bytes(4096, 4096, 4096, 4), 8ull * 4096 * 4096);
  /* 250 x 500 x 1037 int8: 2 row tiles (256 rows), 2 column tiles (512),
   * 9 k-tiles of 128 bytes (1152) */
  ck_assert_uint_eq(rt_tc_scratch_bytes(250, 500, 1037, 1), (256ull + 512) * 1152);
  ck_assert_uint_eq(rt_tc_scratch_bytes(250, 500, 1037, 4), (256ull + 512) * 4224);
}
END_TEST

START_TEST(trip_counts) {
  /* header runs: x = 0..9 stay, x = 10 leaves */
  ck_assert_int_eq(twasm_rt_trip_count(0, 10, 1, TWASM_TRIP_SLT | 32 << 16, 1), 11);
  ck_assert_int_eq(twasm_rt_trip_count(0, 10, 1, TWASM_TRIP_SLT | 32 << 16, 4), 44);
  /* x = start + step compared: do { } while (++i < 10) */
  ck_assert_int_eq(twasm_rt_trip_count(0, 10, 1, TWASM_TRIP_SLT | TWASM_TRIP_NEXT | 32 << 16, 1), 10);
  ck_assert_int_eq(twasm_rt_trip_count(0, 10, 3, TWASM_TRIP_NE | 32 << 16, 1), -1); /* never hits */
  ck_assert_int_eq(twasm_rt_trip_count(10, 0, -2, TWASM_TRIP_SGT | 32 << 16, 1), 6);
  /* the i32 bound -1 read unsigned is 2^32 - 1 */
  ck_assert_int_eq(twasm_rt_trip_count(0, -1, 1, TWASM_TRIP_ULT | TWASM_TRIP_NEXT | 32 << 16, 1),
                   4294967295);
  ck_assert_int_eq(twasm_rt_trip_count(0, INT64_MAX, 1, TWASM_TRIP_SLT | 64 << 16, 2), -1);
  ck_assert_int_eq(twasm_rt_trip_count(0, 10, 1, 0x77 | 32 << 16, 1), -1); /* bad predicate */
}
END_TEST

/* ---- compiled programs ----------------------------------------------------- */

static char tmpdir[64];

static void setup(void) {
  strcpy(tmpdir, "/tmp/twasm-dispXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
  char cmd[128], out[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  unit_sh(cmd, out, sizeof out);
}

/* A map, an overlapping map, a reduction and matmuls on run-time sizes;
 * argv[2]: "oob": the map's input ends past the memory; "alias": the
 * matmul's output overlaps A from its second row on; "oobmm": only the
 * matmul's first output row lies inside the memory. */
static const char program[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "static unsigned h = 2166136261u;\n"
    "static void mix(const void *p, size_t n) { const unsigned char *b = p;\n"
    "  for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 16777619u; } }\n"
    "void scale(int n, float a, const float *x, const float *y, float *o) {\n"
    "  for (int i = 0; i < n; i++) o[i] = a * x[i] + y[i]; }\n"
    "int dot(int n, const int *a, const int *b) { int s = 0;\n"
    "  for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }\n"
    "void mm(int n, const float *a, const float *b, float *c) {\n"
    "  for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) { float t = a[i * n + k];\n"
    "    for (int j = 0; j < n; j++) c[i * n + j] += t * b[k * n + j]; } }\n"
    "void mmk(int n, const float *a, const float *b, float *c) {\n"
    "  for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) { float t = a[i * n + k];\n"
    "    for (int j = 0; j < n; j++) c[i * n + j] += t * b[k * n + j]; } }\n"
    "int main(int argc, char **argv) {\n"
    "  int n = atoi(argv[1]), m = 48;\n"
    "  float *x = malloc(4 * n), *y = malloc(4 * n), *o = malloc(4 * n);\n"
    "  int *p = malloc(4 * n), *q = malloc(4 * n);\n"
    "  float *a = malloc(4 * m * m), *b = malloc(4 * m * m), *c = calloc(m * m, 4);\n"
    "  for (int i = 0; i < n; i++) { x[i] = i * 0.37f; y[i] = 1.0f / (i + 1); p[i] = i * 7919; q[i] = i ^ 0x5a5a; }\n"
    "  for (int i = 0; i < m * m; i++) { a[i] = (i % 13) * 0.1f; b[i] = (i % 7) - 2.5f; }\n"
    "  if (argc > 2 && !strcmp(argv[2], \"oob\")) { scale(n, 2.0f, (float *)(__builtin_wasm_memory_size(0) * 65536 - 8), y, o); }\n"
    "  float *volatile out = a + m;\n"
    "  if (argc > 2 && !strcmp(argv[2], \"alias\")) { mmk(m, a, b, out); mix(a, 4 * m * m); }\n"
    "  out = (float *)(__builtin_wasm_memory_size(0) * 65536 - 4 * m);\n"
    "  if (argc > 2 && !strcmp(argv[2], \"oobmm\")) mmk(m, a, b, out);\n"
    "  mmk(m, b, a, c); mix(c, 4 * m * m);\n"
    "  scale(n, 3.1f, x, y, o); mix(o, 4 * n);\n"
    "  scale(n - 1, 2.0f, x, x + 1, x + 1); mix(x, 4 * n);\n"
    "  printf(\"dot %d\\n\", dot(n, p, q));\n"
    "  mm(m, a, b, c); mix(c, 4 * m * m);\n"
    "  printf(\"hash %08x\\n\", h);\n"
    "  return 0; }\n";

static void build(const char *flags, const char *name) {
  char cmd[2048], out[8192];
  const char *tw = getenv("TWASMC") ? getenv("TWASMC") : "build/bin/twasmc";
  /* NAME/p: the same program name in every trap message */
  snprintf(cmd, sizeof cmd, "mkdir -p %s/%s && %s %s %s/p.wasm -o %s/%s/p", tmpdir, name, tw, flags,
           tmpdir, tmpdir, name);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
}

static void build_all(void) {
  char path[128], cmd[512], out[8192];
  snprintf(path, sizeof path, "%s/p.c", tmpdir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(program, f);
  fclose(f);
  /* -O1: clang -O2 unrolls inner loops by two with a remainder step
   * after them, a shape the matmul recogniser does not take */
  snprintf(cmd, sizeof cmd, "clang-19 --target=wasm32-wasi --sysroot=/usr -O1 %s -o %s/p.wasm", path, tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s", out);
  build("--offload-report", "on");
  build("--no-offload", "off");
  build("--bounds-checks=explicit", "on_explicit");
}

/* stdout+stderr of NAME ARGS under env (no trace). */
static int run_prog(const char *env, const char *name, const char *args, char *out, size_t cap) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "env -u TWASM_TRACE %s %s/%s/p %s", env, tmpdir, name, args);
  return unit_sh(cmd, out, cap);
}

START_TEST(programs_match_without_gpu) {
  build_all();
  static const char *envs[] = {"TWASM_DEVICE=cpu", "TWASM_DEVICE=gpu", "TWASM_DEVICE=auto", ""};
  static const char *progs[] = {"on", "on_explicit"};
  char want[4096], got[4096], trace[8192], cmd[512];
  ck_assert_int_eq(run_prog("", "off", "20000", want, sizeof want), 0);
  ck_assert_ptr_nonnull(strstr(want, "hash "));
  for (int e = 0; e < 4; e++)
    for (int p = 0; p < 2; p++) {
      ck_assert_int_eq(run_prog(envs[e], progs[p], "20000", got, sizeof got), 0);
      ck_assert_msg(!strcmp(want, got), "%s %s: %s != %s", envs[e], progs[p], got, want);
    }
  /* The trace names each offloaded nest and why it stayed on the CPU. */
  snprintf(cmd, sizeof cmd, "TWASM_DEVICE=gpu TWASM_TRACE=1 %s/on/p 20000", tmpdir);
  ck_assert_int_eq(unit_sh(cmd, trace, sizeof trace), 0);
  ck_assert_msg(strstr(trace, "twasm: offload ") && strstr(trace, "(map): cpu: "), "%s", trace);
}
END_TEST

/* The trace of a gpu-forced run of an offloading build (no GPU here: the
 * run-time checks still run first and say why a nest stays). */
static void trace_of_build(const char *name, const char *args, char *out, size_t cap) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "TWASM_DEVICE=gpu TWASM_TRACE=1 %s/%s/p %s", tmpdir, name, args);
  unit_sh(cmd, out, cap);
}

static void trace_of(const char *args, char *out, size_t cap) { trace_of_build("on", args, out, cap); }

START_TEST(aliasing_matmul_stays_on_the_cpu) {
  build_all();
  char want[4096], got[4096], trace[16384];
  ck_assert_int_eq(run_prog("", "off", "20000 alias", want, sizeof want), 0);
  ck_assert_int_eq(run_prog("TWASM_DEVICE=gpu", "on", "20000 alias", got, sizeof got), 0);
  ck_assert_msg(!strcmp(want, got), "%s != %s", got, want);
  trace_of("20000 alias", trace, sizeof trace);
  ck_assert_msg(strstr(trace, "(matmul): cpu: the output overlaps an input"), "%s", trace);
  /* without the alias the same nest passes the checks */
  trace_of("20000", trace, sizeof trace);
  ck_assert_msg(!strstr(trace, "(matmul): cpu: the output overlaps") &&
                    strstr(trace, "(matmul): cpu: libcuda.so.1 not found"), "%s", trace);
}
END_TEST

/* A matrix-vector product through a struct's fields (`a->data[i *
 * a->stride + j]`, clang -O2 loads them in the nest; compiled and linked
 * in two steps, as parts_are_checked_before_any_launch): the host loads the
 * fields before the launch and the runtime checks y against their bytes.
 * argv[2] "alias": the struct lies inside y (its fields overwritten by
 * the last sums, all 0: x is 0), so the launch is refused and the CPU
 * loop runs as Wasm says; without it the checks pass (no driver here).
 * Under the fake driver that launches no-ops, the plain run launches. */
static const char field_program[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "typedef struct { int rows, cols, stride; float *data; } matrix;\n"
    "__attribute__((noinline)) void mv(const matrix *a, const float *x, float *y) {\n"
    "  for (int i = 0; i < a->rows; i++) { float s = 0.0f;\n"
    "    for (int j = 0; j < a->cols; j++) s += a->data[i * a->stride + j] * x[j];\n"
    "    y[i] = s; } }\n"
    "int main(int argc, char **argv) {\n"
    "  int n = atoi(argv[1]); int alias = argc > 2 && !strcmp(argv[2], \"alias\");\n"
    "  float *A = malloc(4 * n * n), *x = calloc(n, 4), *y = calloc(n + 8, 4);\n"
    "  for (int i = 0; i < n * n; i++) A[i] = (float)(i % 7) - 3.0f;\n"
    "  for (int i = 0; i < n && !alias; i++) x[i] = (float)(i % 5) * 0.5f;\n"
    "  matrix *a = alias ? (matrix *)(y + n - 4) : malloc(sizeof *a);\n"
    "  a->rows = n; a->cols = n; a->stride = n; a->data = A;\n"
    "  mv(a, x, y);\n"
    "  unsigned h = 2166136261u; const unsigned char *b = (const unsigned char *)y;\n"
    "  for (int i = 0; i < 4 * n; i++) h = (h ^ b[i]) * 16777619u;\n"
    "  printf(\"y %08x\\n\", h); return 0; }\n";

START_TEST(struct_fields_are_checked_against_the_output) {
  char path[128], cmd[1024], out[8192], want[4096], got[4096], trace[16384];
  const char *tw = getenv("TWASMC") ? getenv("TWASMC") : "build/bin/twasmc";
  snprintf(path, sizeof path, "%s/f.c", tmpdir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(field_program, f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -c %s -o %s/f.o && "
           "clang-19 --target=wasm32-wasi --sysroot=/usr %s/f.o -o %s/f.wasm && "
           "%s --no-offload %s/f.wasm -o %s/off && %s --offload-report %s/f.wasm -o %s/on",
           path, tmpdir, tmpdir, tmpdir, tw, tmpdir, tmpdir, tw, tmpdir, tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  ck_assert_msg(strstr(out, "mv: offloaded as matmul"), "%s", out);
  static const char *args[] = {"300", "300 alias"};
  for (int a = 0; a < 2; a++) {
    snprintf(cmd, sizeof cmd, "env -u TWASM_TRACE %s/off %s", tmpdir, args[a]);
    ck_assert_int_eq(unit_sh(cmd, want, sizeof want), 0);
    snprintf(cmd, sizeof cmd, "env -u TWASM_TRACE TWASM_DEVICE=gpu %s/on %s", tmpdir, args[a]);
    ck_assert_int_eq(unit_sh(cmd, got, sizeof got), 0);
    ck_assert_msg(!strcmp(want, got), "%s: %s != %s", args[a], got, want);
    snprintf(cmd, sizeof cmd, "TWASM_DEVICE=gpu TWASM_TRACE=1 %s/on %s", tmpdir, args[a]);
    unit_sh(cmd, trace, sizeof trace);
    ck_assert_msg(a ? strstr(trace, "(matmul): cpu: the output overlaps an input") != NULL
                    : strstr(trace, "(matmul): cpu: libcuda.so.1 not found") != NULL,
                  "%s: %s", args[a], trace);
  }
  const char *dir = getenv("FAKE_CUDA_DIR");
  if (!dir) {
    printf("dispatch: skipped the fake driver's launch: FAKE_CUDA_DIR not set (run through make unit)\n");
    return;
  }
  snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s FAKE_CUDA=any TWASM_DEVICE=gpu TWASM_TRACE=1 %s/on 300", dir, tmpdir);
  unit_sh(cmd, trace, sizeof trace);
  ck_assert_msg(strstr(trace, "(matmul): gpu: "), "%s", trace);
}
END_TEST

/* C = A B over row pointers (`float **`, each row malloc'd on its own:
 * tests/gpu/e2e/rows.c's mm_rows), a product through row tables (ABI
 * 14): the runtime reads every row pointer before a launch.  With "alias"
 * C's rows 1 and 2 are one row: the check of written rows refuses the
 * launch ("two rows of the output would overlap"); with "over" a row of
 * A is one of C's rows ("the output overlaps an input"); the outputs
 * equal the --no-offload build's either way; under the fake driver the
 * plain run launches. */
static const char rows_program[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "__attribute__((noinline)) void mm(int m, int n, int k, float **A, float **B, float **C) {\n"
    "  for (int i = 0; i < m; i++) for (int j = 0; j < n; j++) { float s = 0.0f;\n"
    "    for (int l = 0; l < k; l++) s += A[i][l] * B[l][j];\n"
    "    C[i][j] = s; } }\n"
    "static float **rows(int r, int c, unsigned s) { float **p = malloc(sizeof(float *) * r);\n"
    "  for (int i = 0; i < r; i++) { p[i] = malloc(4 * c);\n"
    "    for (int j = 0; j < c; j++) { s = s * 1103515245u + 12345u; p[i][j] = (float)((s >> 16) % 11) - 5.0f; } }\n"
    "  return p; }\n"
    "int main(int argc, char **argv) {\n"
    "  int n = atoi(argv[1]); const char *how = argc > 2 ? argv[2] : \"\";\n"
    "  float **A = rows(n, n, 1), **B = rows(n, n, 2), **C = rows(n, n, 3);\n"
    "  if (!strcmp(how, \"alias\")) C[2] = C[1];\n"
    "  if (!strcmp(how, \"over\")) C[5] = A[7];\n"
    "  mm(n, n, n, A, B, C);\n"
    "  unsigned h = 2166136261u;\n"
    "  for (int i = 0; i < n; i++) { const unsigned char *b = (const unsigned char *)C[i];\n"
    "    for (int j = 0; j < 4 * n; j++) h = (h ^ b[j]) * 16777619u; }\n"
    "  printf(\"C %08x\\n\", h); return 0; }\n";

START_TEST(row_tables_are_checked_row_by_row) {
  char path[128], cmd[1024], out[8192], want[4096], got[4096], trace[16384];
  const char *tw = getenv("TWASMC") ? getenv("TWASMC") : "build/bin/twasmc";
  snprintf(path, sizeof path, "%s/rows.c", tmpdir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(rows_program, f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -c %s -o %s/rows.o && "
           "clang-19 --target=wasm32-wasi --sysroot=/usr %s/rows.o -o %s/rows.wasm && "
           "%s --no-offload %s/rows.wasm -o %s/rows_off && %s --offload-report %s/rows.wasm -o %s/rows_on",
           path, tmpdir, tmpdir, tmpdir, tw, tmpdir, tmpdir, tw, tmpdir, tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  ck_assert_msg(strstr(out, "mm: offloaded as matmul"), "%s", out);
  static const char *args[] = {"120", "120 alias", "120 over"};
  static const char *why[] = {"(matmul): cpu: libcuda.so.1 not found", "(matmul): cpu: two rows of the output would overlap",
                              "(matmul): cpu: the output overlaps an input"};
  for (int a = 0; a < 3; a++) {
    snprintf(cmd, sizeof cmd, "env -u TWASM_TRACE %s/rows_off %s", tmpdir, args[a]);
    ck_assert_int_eq(unit_sh(cmd, want, sizeof want), 0);
    snprintf(cmd, sizeof cmd, "env -u TWASM_TRACE TWASM_DEVICE=gpu %s/rows_on %s", tmpdir, args[a]);
    ck_assert_int_eq(unit_sh(cmd, got, sizeof got), 0);
    ck_assert_msg(!strcmp(want, got), "%s: %s != %s", args[a], got, want);
    snprintf(cmd, sizeof cmd, "TWASM_DEVICE=gpu TWASM_TRACE=1 %s/rows_on %s", tmpdir, args[a]);
    unit_sh(cmd, trace, sizeof trace);
    ck_assert_msg(strstr(trace, why[a]) != NULL, "%s: %s", args[a], trace);
  }
  const char *dir = getenv("FAKE_CUDA_DIR");
  if (!dir) {
    printf("dispatch: skipped the fake driver's launch: FAKE_CUDA_DIR not set (run through make unit)\n");
    return;
  }
  snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s FAKE_CUDA=any TWASM_DEVICE=gpu TWASM_TRACE=1 %s/rows_on 120", dir, tmpdir);
  unit_sh(cmd, trace, sizeof trace);
  ck_assert_msg(strstr(trace, "(matmul): gpu: "), "%s", trace);
  snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s FAKE_CUDA=any TWASM_DEVICE=gpu TWASM_TRACE=1 %s/rows_on 120 alias", dir,
           tmpdir);
  unit_sh(cmd, trace, sizeof trace);
  ck_assert_msg(!strstr(trace, "(matmul): gpu: ") && strstr(trace, why[1]), "%s", trace);
}
END_TEST

START_TEST(matmul_rows_are_bounds_checked) {
  build_all();
  char want[4096], got[4096], trace[16384];
  ck_assert_int_eq(run_prog("", "off", "20000 oobmm", want, sizeof want), 134);
  ck_assert_int_eq(run_prog("TWASM_DEVICE=gpu", "on", "20000 oobmm", got, sizeof got), 134);
  ck_assert_msg(!strcmp(want, got), "%s != %s", got, want);
  /* In guard mode the bounds test before the nest fails first and the
   * checked copy runs, which never asks for the kernel; explicit mode
   * asks, and the runtime's range check refuses. */
  ck_assert_int_eq(run_prog("TWASM_DEVICE=gpu", "on_explicit", "20000 oobmm", got, sizeof got), 134);
  ck_assert_msg(!strcmp(want, got), "%s != %s", got, want);
  trace_of_build("on_explicit", "20000 oobmm", trace, sizeof trace);
  ck_assert_msg(strstr(trace, "(matmul): cpu: an access would be out of bounds"), "%s", trace);
  trace_of("20000 oobmm", trace, sizeof trace);
  ck_assert_msg(!strstr(trace, "(matmul): cpu: an access would be out of bounds"), "%s", trace);
}
END_TEST

/* A driver without a GPU, and one too old for any PTX offered: the
 * stand-in libcuda.so.1 of tests/fake_cuda (the Makefile passes its
 * folder in FAKE_CUDA_DIR). */
START_TEST(fake_drivers_give_the_cpu_results) {
  const char *dir = getenv("FAKE_CUDA_DIR");
  if (!dir) {
    printf("dispatch: skipped fake drivers: FAKE_CUDA_DIR not set (run through make unit)\n");
    return;
  }
  build_all();
  static const struct {
    const char *mode, *says;
  } cases[] = {{"nodevice", "cuInit: CUDA_ERROR_NO_DEVICE"},
               {"old", "(matmul): cpu: kernel not loaded"}};
  char want[4096], got[4096], env[512], trace[32768], cmd[1024];
  ck_assert_int_eq(run_prog("", "off", "20000", want, sizeof want), 0);
  for (int i = 0; i < 2; i++) {
    snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s FAKE_CUDA=%s TWASM_DEVICE=gpu", dir, cases[i].mode);
    ck_assert_int_eq(run_prog(env, "on", "20000", got, sizeof got), 0);
    ck_assert_msg(!strcmp(want, got), "%s: %s != %s", cases[i].mode, got, want);
    snprintf(cmd, sizeof cmd, "%s TWASM_TRACE=1 %s/on/p 20000", env, tmpdir);
    ck_assert_int_eq(unit_sh(cmd, trace, sizeof trace), 0);
    ck_assert_msg(strstr(trace, cases[i].says), "%s: %s", cases[i].mode, trace);
  }
  /* the old driver's device was found, its managed memory used */
  ck_assert_msg(strstr(trace, "fake sm_75") && strstr(trace, "usable)"), "%s", trace);
}
END_TEST

/* A nest of two parts (tests/gpu/e2e/polybench_bicg.c at plain -O2:
 * bicg's s and q, one kernel each, one twasm_rt_offload_group call):
 * every part's checks run before any launch, and the answer is the CPU's
 * under every mode.  The old fake driver loads no program PTX, so a call
 * whose checks all pass reaches "kernel not loaded"; the calls whose parts
 * write the same bytes (q inside s) or whose part overlaps its own input
 * (s inside r) are refused before. */
START_TEST(parts_are_checked_before_any_launch) {
  const char *dir = getenv("FAKE_CUDA_DIR");
  if (!dir) {
    printf("dispatch: skipped parts: FAKE_CUDA_DIR not set (run through make unit)\n");
    return;
  }
  const char *tw = getenv("TWASMC") ? getenv("TWASMC") : "build/bin/twasmc";
  char cmd[2048], out[8192], want[16384], got[16384], trace[32768];
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -I tests/gpu/e2e -c tests/gpu/e2e/polybench_bicg.c "
           "-o %s/b.o && clang-19 --target=wasm32-wasi --sysroot=/usr %s/b.o -o %s/b.wasm -lm && "
           "%s --offload-report %s/b.wasm -o %s/b",
           tmpdir, tmpdir, tmpdir, tw, tmpdir, tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  ck_assert_msg(strstr(out, "kernel_bicg: part 2 of 2: offloaded as matmul"), "%s", out);
  snprintf(cmd, sizeof cmd, "env -u TWASM_TRACE TWASM_DEVICE=cpu %s/b", tmpdir);
  ck_assert_int_eq(unit_sh(cmd, want, sizeof want), 0);
  static const char *modes[] = {"gpu", "auto"};
  for (int m = 0; m < 2; m++) {
    snprintf(cmd, sizeof cmd, "env -u TWASM_TRACE LD_LIBRARY_PATH=%s FAKE_CUDA=old TWASM_DEVICE=%s %s/b", dir,
             modes[m], tmpdir);
    ck_assert_int_eq(unit_sh(cmd, got, sizeof got), 0);
    ck_assert_msg(!strcmp(want, got), "%s: results differ", modes[m]);
  }
  snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s FAKE_CUDA=old TWASM_DEVICE=gpu TWASM_TRACE=1 %s/b", dir, tmpdir);
  unit_sh(cmd, trace, sizeof trace);
  static const char *says[] = {"_part0 (part 1 of 2) params: 300 280", "_part1 (part 2 of 2) params: 300 280",
                               "(matmul): cpu: kernel not loaded",
                               "(matmul): cpu: two parts of the nest write the same bytes",
                               "(matmul): cpu: the output overlaps an input"};
  for (size_t i = 0; i < sizeof says / sizeof *says; i++)
    ck_assert_msg(strstr(trace, says[i]), "want '%s' in:\n%s", says[i], trace);
}
END_TEST

/* ZSTD_decompress interposed with LD_PRELOAD: each call appends a line to
 * $TWASM_TEST_ZSTD_LOG, then the real one runs. */
static const char zstd_spy[] =
    "#include <dlfcn.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "size_t ZSTD_decompress(void *dst, size_t cap, const void *src, size_t n) {\n"
    "  FILE *f = fopen(getenv(\"TWASM_TEST_ZSTD_LOG\"), \"a\");\n"
    "  if (f) { fputs(\"ZSTD_decompress\\n\", f); fclose(f); }\n"
    "  size_t (*real)(void *, size_t, const void *, size_t) =\n"
    "      (size_t (*)(void *, size_t, const void *, size_t))dlsym(RTLD_NEXT, \"ZSTD_decompress\");\n"
    "  return real(dst, cap, src, n); }\n";

/* Runs `env ... cmd` with the spy; its output into out; how many times it
 * called ZSTD_decompress. */
static int inflations(const char *env, const char *cmd, char *out, size_t cap) {
  char line[2048], log[128];
  snprintf(log, sizeof log, "%s/zstd.log", tmpdir);
  unlink(log);
  snprintf(line, sizeof line, "env -u TWASM_TRACE LD_PRELOAD=%s/spy.so TWASM_TEST_ZSTD_LOG=%s %s %s", tmpdir, log,
           env, cmd);
  unit_sh(line, out, cap);
  FILE *f = fopen(log, "r");
  int n = 0;
  for (int ch; f && (ch = fgetc(f)) != EOF;) n += ch == '\n';
  if (f) fclose(f);
  return n;
}

/* The module's PTX is stored compressed and inflated when a GPU first
 * loads one of its kernels, once, and never in a run without a GPU, even
 * one that asks for every kernel (TWASM_DEVICE=gpu). */
START_TEST(ptx_inflated_only_for_a_gpu) {
  build_all();
  char path[128], cmd[1024], out[32768];
  snprintf(path, sizeof path, "%s/spy.c", tmpdir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(zstd_spy, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o %s/spy.so %s -ldl", tmpdir, path);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s", out);
  /* the spy sees twasmc --extract-ptx inflate the store (to check it,
   * then to write it) */
  const char *tw = getenv("TWASMC") ? getenv("TWASMC") : "build/bin/twasmc";
  snprintf(cmd, sizeof cmd, "%s --extract-ptx %s/on/p -o %s/ptx", tw, tmpdir, tmpdir);
  ck_assert_int_ge(inflations("", cmd, out, sizeof out), 1);
  snprintf(cmd, sizeof cmd, "%s/on/p 20000", tmpdir);
  ck_assert_int_eq(inflations("TWASM_DEVICE=gpu TWASM_TRACE=1", cmd, out, sizeof out), 0);
  ck_assert_msg(strstr(out, "(matmul): cpu: libcuda.so.1 not found") && !strstr(out, "PTX inflated"), "%s", out);
  ck_assert_int_eq(inflations("", cmd, out, sizeof out), 0);
  const char *dir = getenv("FAKE_CUDA_DIR");
  if (!dir) {
    printf("dispatch: skipped the fake drivers' inflations: FAKE_CUDA_DIR not set (run through make unit)\n");
    return;
  }
  /* a driver without a device: no kernel is loaded */
  char env[512];
  snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s FAKE_CUDA=nodevice TWASM_DEVICE=gpu", dir);
  ck_assert_int_eq(inflations(env, cmd, out, sizeof out), 0);
  /* one that loads them (and fails to JIT them): the store once, for
   * every kernel of the module */
  snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s FAKE_CUDA=old TWASM_DEVICE=gpu TWASM_TRACE=1", dir);
  ck_assert_int_eq(inflations(env, cmd, out, sizeof out), 1);
  const char *first = strstr(out, "kernel not loaded");
  ck_assert_msg(first && strstr(first + 1, "kernel not loaded") && strstr(out, "gpu: the module's PTX inflated"),
                "%s", out);
}
END_TEST

/* A damaged store (a byte of its frame flipped) with a GPU that would
 * load the kernels: the program says so once and gives the CPU's results. */
START_TEST(corrupt_ptx_stays_on_the_cpu) {
  const char *dir = getenv("FAKE_CUDA_DIR");
  if (!dir) {
    printf("dispatch: skipped corrupt PTX: FAKE_CUDA_DIR not set (run through make unit)\n");
    return;
  }
  build_all();
  char path[128], want[4096], got[4096], env[512];
  snprintf(path, sizeof path, "%s/on/p", tmpdir);
  FILE *f = fopen(path, "r+b");
  ck_assert_ptr_nonnull(f);
  static char exe[1 << 23];
  size_t n = fread(exe, 1, sizeof exe, f);
  ck_assert(n < sizeof exe);
  char *head = memmem(exe, n, "twasm-ptz ", 10);
  ck_assert_ptr_nonnull(head);
  char *frame = strchr(head, '\n') + 1;
  fseek(f, frame + 30 - exe, SEEK_SET);
  fputc(frame[30] ^ 0x44, f);
  fclose(f);
  ck_assert_int_eq(run_prog("", "off", "20000", want, sizeof want), 0);
  snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s FAKE_CUDA=old TWASM_DEVICE=gpu", dir);
  ck_assert_int_eq(run_prog(env, "on", "20000", got, sizeof got), 0);
  static const char line[] = "twasm: the executable's embedded PTX is corrupt (";
  const char *said = strstr(got, line);
  ck_assert_msg(said && !strstr(said + 1, line), "%s", got);
  /* the warning aside, the output is the CPU's */
  char *end = strchr(said, '\n');
  memmove((char *)said, end + 1, strlen(end + 1) + 1);
  ck_assert_msg(!strcmp(want, got), "%s != %s", got, want);
}
END_TEST

START_TEST(out_of_bounds_traps_the_same) {
  build_all();
  char want[4096], got[4096];
  int st = run_prog("", "off", "20000 oob", want, sizeof want);
  ck_assert_int_eq(st, 134);
  ck_assert_ptr_nonnull(strstr(want, "out of bounds"));
  ck_assert_int_eq(run_prog("TWASM_DEVICE=gpu", "on", "20000 oob", got, sizeof got), 134);
  ck_assert_msg(!strcmp(want, got), "%s != %s", got, want);
}
END_TEST

/* ---- the PTX store ----------------------------------------------------------- */

/* A store inflates once into its buffer; a broken one fails, says why, and
 * stays failed. */
START_TEST(ptx_store_inflates_once) {
  static const char text[] = "twasm-ptx k sm_75 63 5\n.ptx\0";
  char frame[256], buf[sizeof text], why[128] = "";
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1); /* as off_store.c */
  size_t z = ZSTD_compress2(cc, frame, sizeof frame, text, sizeof text);
  ZSTD_freeCCtx(cc);
  ck_assert(!ZSTD_isError(z));
  memset(buf, 0, sizeof buf);
  twasm_ptx_store_abi s = {(const uint8_t *)frame, z, buf, sizeof text, 0, 0};
  ck_assert(rt_ptx_inflate(&s, why, sizeof why));
  ck_assert_uint_eq(s.state, 1);
  ck_assert(!memcmp(buf, text, sizeof text));
  frame[z / 2] ^= 0x5a; /* a second call reads nothing */
  ck_assert(rt_ptx_inflate(&s, why, sizeof why));
  char buf2[sizeof text];
  twasm_ptx_store_abi bad = {(const uint8_t *)frame, z, buf2, sizeof text, 0, 0};
  ck_assert(!rt_ptx_inflate(&bad, why, sizeof why));
  ck_assert_uint_eq(bad.state, 2);
  ck_assert_msg(strstr(why, "does not inflate"), "%s", why);
  twasm_ptx_store_abi short_buf = {(const uint8_t *)frame, z - 1, buf2, sizeof text, 0, 0};
  ck_assert(!rt_ptx_inflate(&short_buf, why, sizeof why));
  ck_assert(!rt_ptx_inflate(NULL, why, sizeof why));
}
END_TEST

/* A tiny nest called 100000 times in auto mode with a driver present (the
 * fake one, so the gate stays open): the runtime refuses it as too small
 * for any launch, and the generated code's back-off (off_version.c) asks
 * again after 1, 3, 7 ... 1023 calls, so about 110 calls reach the
 * runtime instead of 100000; the results are the --no-offload build's. */
static const char tiny_program[] =
    "#include <stdio.h>\n#include <stdlib.h>\n"
    "__attribute__((noinline)) void tiny(int n, float a, const float *x, float *y) {\n"
    "  for (int i = 0; i < n; i++) y[i] += a * x[i]; }\n"
    "int main(int argc, char **argv) {\n"
    "  int n = atoi(argv[1]), calls = atoi(argv[2]);\n"
    "  float *x = malloc(4 * n), *y = calloc(n, 4);\n"
    "  for (int i = 0; i < n; i++) x[i] = (float)i / 7;\n"
    "  for (int c = 0; c < calls; c++) tiny(n, (float)(c & 7), x, y);\n"
    "  printf(\"%a %a\\n\", y[0], y[n - 1]);\n"
    "  return 0; }\n";

START_TEST(tiny_nest_backs_off) {
  const char *dir = getenv("FAKE_CUDA_DIR");
  if (!dir) {
    printf("dispatch: skipped tiny-nest back-off: FAKE_CUDA_DIR not set (run through make unit)\n");
    return;
  }
  char path[128], cmd[2048], out[16384], want[256], got[256];
  snprintf(path, sizeof path, "%s/tiny.c", tmpdir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(tiny_program, f);
  fclose(f);
  const char *tw = getenv("TWASMC") ? getenv("TWASMC") : "build/bin/twasmc";
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -fno-unroll-loops -c %s -o %s/tiny.o && "
           "clang-19 --target=wasm32-wasi --sysroot=/usr %s/tiny.o -o %s/tiny.wasm && " /* names kept */
           "%s --offload-report %s/tiny.wasm -o %s/tiny 2>&1 && %s --no-offload %s/tiny.wasm -o %s/tiny_off",
           path, tmpdir, tmpdir, tmpdir, tw, tmpdir, tmpdir, tw, tmpdir, tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%.2000s", out);
  ck_assert_msg(strstr(out, ": tiny: offloaded as map"), "%.2000s", out);
  snprintf(cmd, sizeof cmd, "%s/tiny_off 32 100000", tmpdir);
  ck_assert_int_eq(unit_sh(cmd, want, sizeof want), 0);
  /* the program's other nests (its own loop filling x, the allocator's)
   * ask too: count them with one call of tiny */
  unsigned long asked[2];
  for (int r = 0; r < 2; r++) {
    int calls = r ? 100000 : 1;
    char count[64], log[160];
    snprintf(log, sizeof log, "%s/calls.txt", tmpdir);
    unlink(log);
    snprintf(cmd, sizeof cmd,
             "env -u TWASM_TRACE LD_LIBRARY_PATH=%s TWASM_DEVICE=auto TWASM_TEST_OFFLOAD_CALLS=%s "
             "%s/tiny 32 %d",
             dir, log, tmpdir, calls);
    ck_assert_int_eq(unit_sh(cmd, got, sizeof got), 0);
    if (r) ck_assert_str_eq(got, want);
    snprintf(cmd, sizeof cmd, "cat %s", log);
    ck_assert_int_eq(unit_sh(cmd, count, sizeof count), 0);
    asked[r] = strtoul(count, NULL, 10);
  }
  ck_assert_msg(asked[0] >= 1, "the runtime was never asked");
  unsigned long more = asked[1] - asked[0];
  ck_assert_msg(more >= 50 && more <= 200, "99999 more calls of a tiny nest asked the runtime %lu more times",
                more);
}
END_TEST

static Suite *dispatch_suite(void) {
  Suite *s = suite_create("dispatch");
  TCase *plan = tcase_create("plan");
  tcase_add_test(plan, plan_in_bounds);
  tcase_add_test(plan, plan_grid_is_capped);
  tcase_add_test(plan, plan_out_of_bounds);
  tcase_add_test(plan, plan_negative_stride);
  tcase_add_test(plan, plan_overlap);
  tcase_add_test(plan, plan_parts_apart);
  tcase_add_test(plan, plan_parts_forwarded);
  tcase_add_test(plan, plan_parts_forwarded_write);
  tcase_add_test(plan, plan_reading_own_output_is_no_overlap);
  tcase_add_test(plan, plan_unknown_trip_and_empty);
  tcase_add_test(plan, plan_rejects_malformed_tables);
  tcase_add_test(plan, plan_run_time_strides);
  tcase_add_test(plan, plan_batch);
  tcase_add_test(plan, plan_batch_outputs_overlap);
  tcase_add_test(plan, plan_batch_checks_inputs_and_bounds);
  tcase_add_test(plan, plan_row_tables);
  tcase_add_test(plan, plan_row_table_checks_each_row);
  tcase_add_test(plan, plan_row_table_output_rows_apart);
  tcase_add_test(plan, cost_model);
  tcase_add_test(plan, packed_product_shapes);
  tcase_add_test(plan, trip_counts);
  tcase_add_test(plan, ptx_store_inflates_once);
  suite_add_tcase(s, plan);
  TCase *progs = tcase_create("programs");
  tcase_set_timeout(progs, 180);
  tcase_add_checked_fixture(progs, setup, teardown);
  tcase_add_test(progs, programs_match_without_gpu);
  tcase_add_test(progs, out_of_bounds_traps_the_same);
  tcase_add_test(progs, aliasing_matmul_stays_on_the_cpu);
  tcase_add_test(progs, fake_drivers_give_the_cpu_results);
  tcase_add_test(progs, parts_are_checked_before_any_launch);
  tcase_add_test(progs, ptx_inflated_only_for_a_gpu);
  tcase_add_test(progs, corrupt_ptx_stays_on_the_cpu);
  tcase_add_test(progs, matmul_rows_are_bounds_checked);
  tcase_add_test(progs, struct_fields_are_checked_against_the_output);
  tcase_add_test(progs, row_tables_are_checked_row_by_row);
  tcase_add_test(progs, tiny_nest_backs_off);
  suite_add_tcase(s, progs);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(dispatch_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
