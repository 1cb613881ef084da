/* primes.c: sieve of Eratosthenes over a heap array; prints a summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000000;
  unsigned char *composite = calloc((size_t)n + 1, 1);
  if (!composite) return 1;
  int count = 0, last = 0;
  for (int i = 2; i <= n; i++) {
    if (composite[i]) continue;
    count++;
    last = i;
    for (long long j = (long long)i * i; j <= n; j += i) composite[j] = 1;
  }
  printf("%d primes up to %d, the largest %d\n", count, n, last);
  free(composite);
  return 0;
}
