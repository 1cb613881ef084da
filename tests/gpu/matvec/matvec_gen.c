/* matvec_gen.c: writes the PTX of the exact matrix-vector kernels that
 * matvec_bw.cu loads (ptx/ptx_matvec.c, as the plan picks it for a product
 * with one output column or row), into the folder argv[1], NAME.ptx each.
 * Every kernel takes (mem, OUT, K, W offset, W stride, v offset, out
 * offset), offsets in bytes into mem, the stride in elements, align 1 as
 * the detector emits it:
 *   mv_f32   out[o] = sum_k W[o * stride + k] * v[k]   (one output column)
 *   mvt_f32  out[o] = sum_k W[k * stride + o] * v[k]   (the same, W's
 *            columns contiguous: head_mix of tests/bench/gpu/llm.c)
 *   vm_f32   out[o] = sum_k v[k] * W[k * stride + o]   (one output row)
 *   mv_f64, mv_i32: mv_f32's shape in those types.
 * Built by `make gpu-bench-apps` into build/gpu/bench/matvec. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

#define C(v) {false, v}
#define P(i) {true, i}

typedef struct {
  const char *name;
  kn_mm_type type;
  enum { ONE_COLUMN, ONE_COLUMN_T, ONE_ROW } form;
} gen_case;

static const gen_case cases[] = {
  {"mv_f32", KN_MM_F32, ONE_COLUMN},   {"mvt_f32", KN_MM_F32, ONE_COLUMN_T},
  {"vm_f32", KN_MM_F32, ONE_ROW},      {"mv_f64", KN_MM_F64, ONE_COLUMN},
  {"mv_i32", KN_MM_I32, ONE_COLUMN},
};

static kn_desc desc_of(const gen_case *c) {
  kn_desc d = {.kind = KN_MATMUL, .nparams = 6};
  kn_matmul *m = &d.matmul;
/* offset, row stride, column stride; no batch, no row table */
#define LAYOUT(o, r, c) ((kn_layout){.offset = o, .row_stride = r, .col_stride = c})
  *m = (kn_matmul){.k = P(1), .type = c->type, .align = 1};
  switch (c->form) {
  case ONE_COLUMN:
  case ONE_COLUMN_T:
    m->m = (kn_size)P(0), m->n = (kn_size)C(1);
    m->a = c->form == ONE_COLUMN ? LAYOUT(P(2), P(3), C(1)) : LAYOUT(P(2), C(1), P(3));
    m->b = LAYOUT(P(4), C(1), C(0));
    m->c = LAYOUT(P(5), C(1), C(0));
    break;
  case ONE_ROW:
    m->m = (kn_size)C(1), m->n = (kn_size)P(0);
    m->a = LAYOUT(P(4), C(0), C(1));
    m->b = LAYOUT(P(2), P(3), C(1));
    m->c = LAYOUT(P(5), C(0), C(1));
    break;
  }
  return d;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  unsigned sm = argc > 2 ? (unsigned)atoi(argv[2]) : 90;  /* sm_90 unless asked (the ptxas check: 80) */
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const gen_case *c = &cases[i];
    kn_desc d = desc_of(c);
    tw_arena arena = {0};
    tw_diag diag = {0};
    ptx_out out;
    ptx_arch arch = {sm, false};
    if (!ptx_generate(&d, c->name, &arch, 1, &arena, &out, &diag)) {
      fprintf(stderr, "%s: %s\n", c->name, diag.msg);
      return 1;
    }
    if (out.plan.codes[0].path != TWASM_PATH_MATVEC) {
      fprintf(stderr, "%s: the plan did not take the matrix-vector kernel (path %u)\n", c->name,
              out.plan.codes[0].path);
      return 1;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.ptx", dir, c->name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(out.codes[0].text, f) < 0 || fclose(f)) {
      fprintf(stderr, "%s: cannot write\n", path);
      return 1;
    }
    printf("%s: sm_%u, block %u, %u outputs per block\n", path, sm, out.plan.launch.block[0],
           out.plan.launch.per_block[0]);
    tw_arena_free(&arena);
  }
  return 0;
}
