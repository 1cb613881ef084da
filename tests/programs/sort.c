/* sort.c: qsort over integers and strings, and a binary search. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int by_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void) {
  enum { N = 1000 };
  static int v[N];
  unsigned seed = 12345;
  for (int i = 0; i < N; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (int)(seed >> 8) % 10000 - 5000;
  }
  qsort(v, N, sizeof v[0], by_int);
  long sum = 0;
  for (int i = 0; i < N; i++) sum += v[i];
  printf("min=%d max=%d median=%d sum=%ld\n", v[0], v[N - 1], v[N / 2], sum);
  for (int i = 1; i < N; i++)
    if (v[i - 1] > v[i]) return 1;
  int key = v[123];
  int *hit = bsearch(&key, v, N, sizeof v[0], by_int);
  printf("found %d: %s\n", key, hit ? "yes" : "no");
  char *names[] = {"pear", "apple", "fig", "banana", "cherry", "date", "elderberry"};
  size_t n = sizeof names / sizeof names[0];
  qsort(names, n, sizeof names[0], by_str);
  for (size_t i = 0; i < n; i++) printf("%s%c", names[i], i + 1 < n ? ',' : '\n');
  return 0;
}
