/* wmma_gen.c: writes the PTX that wmma_mm.c loads into the folder given as
 * argv[1]: mm_s8.ptx, mm_u8.ptx, mm_tf32.ptx (sm_90, tensor cores) and
 * mm_s8_exact.ptx (sm_75: the exact kernel), and the sm_90 + sm_90a pairs
 * mm_s8u8 (s8 A x u8 B), mm_s8_bias (C = bias row + A B, the bias
 * offset a 7th param) and mm_s8_acc (C += A B).  Every kernel takes (mem, M, N, K, &A, &B, &C),
 * row-major, align 1 as the detector emits it.  Built
 * here:
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Icompiler -Ikernels -Iptx \
 *       tests/gpu/wmma/wmma_gen.c build/lib/libtwasmc.a \
 *       $(llvm-config-19 --ldflags) -lLLVM-19 -o wmma_gen */
#include <stdio.h>
#include <stdlib.h>

#include "ptx.h"

#define P(i) {true, i}
#define C(v) {false, v}

typedef struct {
  const char *name;
  kn_mm_type type;
  bool ab_signed, tf32;
  unsigned sm;
  bool b_unsigned;         /* s8 x u8 */
  bool bias;               /* C = bias row (param 6) + A B */
  bool acc;                /* C += A B */
} gen_case;

static const gen_case cases[] = {
  {"mm_s8", KN_MM_I8_I32, true, false, 90, false, false, false},
  {"mm_u8", KN_MM_I8_I32, false, false, 90, false, false, false},
  {"mm_tf32", KN_MM_F32, false, true, 90, false, false, false},
  {"mm_s8_exact", KN_MM_I8_I32, true, false, 75, false, false, false},
  {"mm_s8_sm80", KN_MM_I8_I32, true, false, 80, false, false, false},
  {"mm_tf32_sm80", KN_MM_F32, false, true, 80, false, false, false},
  {"mm_s8u8", KN_MM_I8_I32, true, false, 90, true, false, false},
  {"mm_s8_bias", KN_MM_I8_I32, true, false, 90, false, true, false},
  {"mm_s8_acc", KN_MM_I8_I32, true, false, 90, false, false, true},
};

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const gen_case *c = &cases[i];
    kn_desc d = {.kind = KN_MATMUL, .nparams = c->bias ? 7 : 6};
    d.matmul = (kn_matmul){.m = P(0), .n = P(1), .k = P(2), .type = c->type,
                           .a_signed = c->ab_signed, .b_signed = c->ab_signed && !c->b_unsigned,
                           .align = 1, .a = {P(3), P(2), C(1)}, .b = {P(4), P(1), C(1)},
                           .c = {P(5), P(1), C(1)}, .accumulate = c->bias || c->acc, .has_start = c->bias,
                           .start = {P(6), C(0), C(1)}};
    tw_arena arena = {0};
    tw_diag diag = {0};
    ptx_out out;
    ptx_arch arch = {c->sm, false};
    ptx_options opts = {.tf32 = c->tf32};
    if (!ptx_generate_opts(&d, c->name, &arch, 1, &opts, &arena, &out, &diag)) {
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
    printf("%s: sm_%u, PTX %u.%u, block %ux%ux%u, %ux%u of C per block\n", path, c->sm,
           out.codes[0].ptx_isa / 10, out.codes[0].ptx_isa % 10, out.plan.launch.block[0],
           out.plan.launch.block[1], out.plan.launch.block[2], out.plan.launch.per_block[0],
           out.plan.launch.per_block[1]);
    /* sm_90 requests also get the sm_90a (wgmma) kernel */
    for (unsigned k = 1; k < out.ncodes; k++) {
      if (!out.codes[k].specific) continue;
      snprintf(path, sizeof path, "%s/%s_90a.ptx", dir, c->name);
      f = fopen(path, "w");
      if (!f || fputs(out.codes[k].text, f) < 0 || fclose(f)) {
        fprintf(stderr, "%s: cannot write\n", path);
        return 1;
      }
      printf("%s: sm_%ua, PTX %u.%u\n", path, out.codes[k].sm, out.codes[k].ptx_isa / 10,
             out.codes[k].ptx_isa % 10);
    }
    tw_arena_free(&arena);
  }
  return 0;
}
