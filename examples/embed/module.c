/* module.c: the Wasm side of the embedding example (a WASI reactor). */
#include <stdint.h>
#include <string.h>

/* Provided by the C host (host.c) as env.report. */
__attribute__((import_module("env"), import_name("report"))) void report(int32_t step, int64_t value);

static int64_t memo[91];

/* Fibonacci by memoised recursion; reports every 10th value to the host. */
__attribute__((export_name("fib"))) int64_t fib(int32_t n) {
  if (n < 2) return n;
  if (n > 90) n = 90;
  if (memo[n]) return memo[n];
  int64_t v = fib(n - 1) + fib(n - 2);
  if (n % 10 == 0) report(n, v);
  return memo[n] = v;
}

static char text[256];

/* Returns the address of a buffer in linear memory holding `s` reversed;
 * the host writes the input there first. */
__attribute__((export_name("buffer"))) char *buffer(void) { return text; }

__attribute__((export_name("reverse"))) int32_t reverse(int32_t len) {
  if (len < 0 || len > (int32_t)sizeof text) return -1;
  for (int32_t i = 0, j = len - 1; i < j; i++, j--) {
    char c = text[i];
    text[i] = text[j];
    text[j] = c;
  }
  return len;
}

__attribute__((export_name("divide"))) int32_t divide(int32_t a, int32_t b) { return a / b; }
