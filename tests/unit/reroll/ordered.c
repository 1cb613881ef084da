/* Store-only loops whose by-4 copies clang's Wasm backend stores in
 * another order than the iterations (a+12, a+8, a+4, a): re-rolled behind
 * a test that every store is in bounds, the original loop kept for the
 * rest (ir_reroll_order.c); the output must not change. */
#include <stdio.h>

__attribute__((noinline)) void fill(int *a, int n, int from) {
  for (int i = 0; i < n; i++) a[i] = 3 * i + from;
}

__attribute__((noinline)) void ramp(float *a, int n, int from) {
  for (int i = 0; i < n; i++) a[i] = (float)(3 * i + from) * 0.5f;
}

/* quant.c's fill: the value steps by 2654435761 (mod 2^32), by-4 copies
 * stored 0, 3, 2, 1; the step of one iteration is known from the copies
 * only (a quarter of the trip's step is ambiguous modulo 2^30). */
__attribute__((noinline)) void hashfill(unsigned *c, int n) {
  for (int i = 0; i < n; i++) c[i] = (unsigned)i * 2654435761u;
}

/* detect/counter.c's prefix: copies stored a+16 .. a+4, the values after
 * the loop (a[0] + i, i + 1) computed in its exit block for the rest. */
__attribute__((noinline)) void prefix(int *a, int n) {
  for (int i = 1; i < n; i++) a[i] = a[i - 1] + 1;
}

static int xs[48];
static unsigned us[48];
static float fs[48];

int main(void) {
  for (int n = -3; n <= 40; n++) {
    for (int i = 0; i < 48; i++) xs[i] = -i, fs[i] = (float)i;
    fill(xs + (n & 3), n, n * 7);
    ramp(fs + 1, n, -n);
    for (int i = 0; i < 48; i++) us[i] = 5u * (unsigned)i;
    hashfill(us + (n & 1), n);
    prefix(xs + 2, n);
    unsigned h = 0;
    for (int i = 0; i < 48; i++) h = h * 31u + (unsigned)xs[i] + (unsigned)(fs[i] * 4.0f) + us[i];
    printf("%d %u\n", n, h);
  }
  return 0;
}
