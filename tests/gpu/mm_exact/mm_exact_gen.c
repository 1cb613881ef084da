/* mm_exact_gen.c: writes the PTX of the exact matmul kernels that
 * mm_exact.c loads, into the folder given as argv[1], one NAME.ptx each.
 * Every kernel takes (mem, M, N, K, &A, &B, &C, then strides in elements):
 * row-major kernels a row stride per matrix (columns contiguous), general
 * kernels a row and a column stride per matrix.  align 1 as the detector
 * emits it, so the aligned and unaligned bodies both run.  Built here:
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Icompiler -Ikernels -Iptx \
 *       tests/gpu/mm_exact/mm_exact_gen.c build/lib/libtwasmc.a \
 *       $(llvm-config-19 --ldflags) -lLLVM-19 -o mm_exact_gen */
#include <stdio.h>
#include <stdlib.h>

#include "ptx.h"

#define C(v) {false, v}
#define P(i) {true, i}

typedef struct {
  const char *name;
  kn_mm_type type;
  bool ab_signed, accumulate, general;
  unsigned sm;
} gen_case;

static const gen_case cases[] = {
  {"mm_f32", KN_MM_F32, false, false, false, 90},
  {"mm_f32_acc", KN_MM_F32, false, true, false, 90},
  {"mm_f32_gen", KN_MM_F32, false, true, true, 90},
  {"mm_f32_sm80", KN_MM_F32, false, false, false, 80},
  {"mm_f32_sm75", KN_MM_F32, false, false, false, 75},
  {"mm_f64", KN_MM_F64, false, false, false, 90},
  {"mm_f64_acc", KN_MM_F64, false, true, false, 90},
  {"mm_i32", KN_MM_I32, false, false, false, 90},
  {"mm_i32_gen", KN_MM_I32, false, true, true, 90},
  /* sm_80 and up take wmma for int8: the exact kernel is sm_75's. */
  {"mm_s8", KN_MM_I8_I32, true, false, false, 75},
  {"mm_u8_acc", KN_MM_I8_I32, false, true, false, 75},
};

static kn_desc desc_of(const gen_case *c) {
  kn_desc d = {.kind = KN_MATMUL};
  kn_matmul *m = &d.matmul;
  *m = (kn_matmul){.m = P(0), .n = P(1), .k = P(2), .type = c->type, .a_signed = c->ab_signed, .b_signed = c->ab_signed,
                   .accumulate = c->accumulate, .align = 1};
  if (c->general) {
    m->a = (kn_layout){.offset = P(3), .row_stride = P(6), .col_stride = P(7)};
    m->b = (kn_layout){.offset = P(4), .row_stride = P(8), .col_stride = P(9)};
    m->c = (kn_layout){.offset = P(5), .row_stride = P(10), .col_stride = P(11)};
    d.nparams = 12;
  } else {
    m->a = (kn_layout){.offset = P(3), .row_stride = P(6), .col_stride = C(1)};
    m->b = (kn_layout){.offset = P(4), .row_stride = P(7), .col_stride = C(1)};
    m->c = (kn_layout){.offset = P(5), .row_stride = P(8), .col_stride = C(1)};
    d.nparams = 9;
  }
  return d;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const gen_case *c = &cases[i];
    kn_desc d = desc_of(c);
    tw_arena arena = {0};
    tw_diag diag = {0};
    ptx_out out;
    ptx_arch arch = {c->sm, false};
    if (!ptx_generate(&d, c->name, &arch, 1, &arena, &out, &diag)) {
      fprintf(stderr, "%s: %s\n", c->name, diag.msg);
      return 1;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.ptx", dir, c->name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(out.codes[0].text, f) < 0 || fclose(f)) {
      fprintf(stderr, "%s: cannot write\n", path);
      return 1;
    }
    printf("%s: sm_%u, PTX %u.%u, block %ux%u, %ux%u of C per block\n", path, c->sm,
           out.codes[0].ptx_isa / 10, out.codes[0].ptx_isa % 10, out.plan.launch.block[0],
           out.plan.launch.block[1], out.plan.launch.per_block[0], out.plan.launch.per_block[1]);
    tw_arena_free(&arena);
  }
  return 0;
}
