/* unwaited.c: products back to back, as an LLM layer's q, k and v: three
 * matrix-vector products of one x into three outputs, the outputs' pointers
 * read from a struct between them (plain C, no restrict, separate
 * allocations), then the CPU reading each output and a fourth product
 * reading the first's output.  Compiled with the waits pass, the first
 * launches go unwaited and the code waits where the CPU reads their bytes
 * (compiler/off/off_wait.c, runtime/rt_defer.c); the output must equal a
 * CPU run's bit for bit. */
/* clang-flags: -O2 */
/* expect-gpu-launches: 40 */
/* expect-unwaited: 20 */
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  float *q, *k, *v, *o;
  int n, d;
} state;

static float *make(size_t n, unsigned *seed) {
  float *p = malloc(n * sizeof *p);
  for (size_t i = 0; i < n; i++) {
    *seed = *seed * 1103515245u + 12345u;
    p[i] = (float)((*seed >> 9) & 0xffff) / 65536.0f - 0.5f;
  }
  return p;
}

__attribute__((noinline)) static void matvec(float *out, const float *x, const float *w, int n, int d) {
  for (int i = 0; i < d; i++) {
    float sum = 0.0f;
    for (int j = 0; j < n; j++) sum += w[i * n + j] * x[j];
    out[i] = sum;
  }
}

static double total(const float *p, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += p[i] * (double)(i + 1);
  return s;
}

int main(int argc, char **argv) {
  unsigned seed = 7;
  state st = {0};
  st.n = 512, st.d = 384;
  int rounds = argc > 1 ? atoi(argv[1]) : 6;
  float *x = make((size_t)st.n, &seed);
  float *wq = make((size_t)st.n * st.d, &seed), *wk = make((size_t)st.n * st.d, &seed);
  float *wv = make((size_t)st.n * st.d, &seed), *wo = make((size_t)st.d * st.d, &seed);
  st.q = malloc(st.d * sizeof(float)), st.k = malloc(st.d * sizeof(float));
  st.v = malloc(st.d * sizeof(float)), st.o = malloc(st.d * sizeof(float));
  state *s = &st;
  for (int r = 0; r < rounds; r++) {
    matvec(s->q, x, wq, s->n, s->d);
    matvec(s->k, x, wk, s->n, s->d);
    matvec(s->v, x, wv, s->n, s->d);
    printf("round %d: q %.6f k %.6f v %.6f\n", r, total(s->q, s->d), total(s->k, s->d), total(s->v, s->d));
    matvec(s->o, s->q, wo, s->d, s->d);
    printf("round %d: o %.6f\n", r, total(s->o, s->d));
    /* the CPU writes x, which the next round's products read */
    for (int i = 0; i < s->n; i++) x[i] = x[i] * 0.5f + s->o[i % s->d] * 0.25f;
  }
  return 0;
}
