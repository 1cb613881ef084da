/* unit_mv.c: helpers of the matrix-vector variant suites (unit_mv.h). */
#include "unit_mv.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define P(i) {true, i}
#define C(v) {false, v}

unsigned mv_count_of(const char *text, const char *what) {
  unsigned n = 0;
  for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
  return n;
}

/* out[o] = sum_k W[o * p3 + k] * v[k]: p0 outputs, p1 K, p2 &W, p4 &v,
 * p5 &out, as the detector emits it (align 1). */
static kn_desc matvec_of(kn_mm_type type) {
  kn_desc d = {.kind = KN_MATMUL, .nparams = 6};
  d.matmul = (kn_matmul){.m = P(0), .n = C(1), .k = P(1), .type = type, .a = {P(2), P(3), C(1), C(0)},
                         .b = {P(4), C(1), C(0), C(0)}, .c = {P(5), C(1), C(0), C(0)}, .align = 1};
  return d;
}

bool mv_assembles(const char *text, unsigned sm) {
  const char *ptxas = getenv("PTXAS") ? getenv("PTXAS") : "/usr/local/cuda/bin/ptxas";
  if (access(ptxas, X_OK)) return true;
  char path[] = "/tmp/test_ptx_mv_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  ck_assert(f && fputs(text, f) >= 0 && fclose(f) == 0);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s -arch=sm_%u %s -o /dev/null", ptxas, sm, path);
  int rc = system(cmd);
  unlink(path);
  return rc == 0;
}

void mv_generate(kn_mm_type type, const char *name, tw_arena *arena, ptx_out *out) {
  kn_desc d = matvec_of(type);
  static const ptx_arch archs[] = {{75, false}, {80, false}, {90, false}};
  tw_diag diag = {0};
  ck_assert_msg(ptx_generate(&d, name, archs, 3, arena, out, &diag), "%s", diag.msg);
  ck_assert_uint_eq(out->ncodes, 3);
  for (unsigned a = 0; a < 3; a++) ck_assert_uint_eq(out->plan.codes[a].path, TWASM_PATH_MATVEC);
}
