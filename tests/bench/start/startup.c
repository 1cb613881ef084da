/* startup.c: a short program that holds kernels but never launches one
 * (its loops are far too small to pay for a launch): what every run pays
 * for the GPU being there.  Prints a histogram of its arguments' bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void clear(unsigned *counts, int n) {
  for (int i = 0; i < n; i++) counts[i] = 0;
}

static void scale(float *out, const unsigned *counts, float by, int n) {
  for (int i = 0; i < n; i++) out[i] = (float)counts[i] * by;
}

int main(int argc, char **argv) {
  int n = 256;
  unsigned *counts = malloc(n * sizeof *counts);
  float *share = malloc(n * sizeof *share);
  clear(counts, n);
  unsigned total = 0;
  for (int a = 1; a < argc; a++)
    for (const unsigned char *p = (const unsigned char *)argv[a]; *p; p++) counts[*p]++, total++;
  scale(share, counts, total ? 1.0f / (float)total : 0.0f, n);
  for (int i = 0; i < n; i++)
    if (counts[i]) printf("%c %u %.3f\n", i, counts[i], share[i]);
  printf("%u bytes in %d arguments\n", total, argc - 1);
  return 0;
}
