/* libc_edges.c: memcmp, strcmp and strlen against byte-wise reference
 * versions on many lengths, alignments and byte values; with an argument,
 * a call that runs into the end of linear memory (test_cpu_codegen.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* volatile reads: no compiler turns these back into library calls */
static int ref_memcmp(const volatile unsigned char *a, const volatile unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] - b[i];
	return 0;
}

static int ref_strcmp(const volatile unsigned char *a, const volatile unsigned char *b)
{
	size_t i = 0;
	while (a[i] == b[i] && a[i])
		i++;
	return a[i] - b[i];
}

static size_t ref_strlen(const volatile unsigned char *s)
{
	size_t i = 0;
	while (s[i])
		i++;
	return i;
}

static uint32_t rng = 12345;
static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static unsigned char buf_a[512], buf_b[512];

static void fill(unsigned char *p, size_t n, int nul)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v = next() % 4 ? 'a' + next() % 3 : next() & 255;
		p[i] = (unsigned char)(nul ? (v ? v : 1) : v);
	}
}

/* Each routine is called from two places, as in real programs, so that
 * wasm-opt keeps it a function. */
static int cmp_mem(const void *a, const void *b, size_t n) { return memcmp(a, b, n); }
static int cmp_str(const char *a, const char *b) { return strcmp(a, b); }
static size_t len_str(const char *s) { return strlen(s); }

int main(int argc, char **argv)
{
	unsigned char *end = (unsigned char *)(uintptr_t)(__builtin_wasm_memory_size(0) * 65536ul);
	if (argc > 1) {
		/* bytes up to the end of memory, no NUL among them */
		memset(end - 64, 'x', 64);
		memcpy(buf_a, end - 64, 64);
		buf_a[64] = 0;
		if (!strcmp(argv[1], "strlen"))
			printf("%zu\n", strlen((char *)end - 20));
		else if (!strcmp(argv[1], "strcmp"))
			printf("%d\n", strcmp((char *)end - 20, (char *)buf_a));
		else if (!strcmp(argv[1], "memcmp-differs")) {
			buf_a[3] = 'y'; /* differs before the end: no trap */
			printf("%d\n", memcmp(end - 20, buf_a, 100));
		} else if (!strcmp(argv[1], "memcmp-equal"))
			printf("%d\n", memcmp(end - 20, buf_a, 100));
		else if (!strcmp(argv[1], "strcmp-differs")) {
			buf_a[5] = 'a';
			printf("%d\n", strcmp((char *)end - 20, (char *)buf_a));
		}
		return 0;
	}
	unsigned long bad = 0, checks = 0;
	for (int round = 0; round < 20000; round++) {
		size_t n = next() % 80, ia = next() % 32, ib = next() % 32;
		unsigned char *a = buf_a + ia, *b = buf_b + ib;
		fill(a, n + 1, round & 1);
		memcpy(b, a, n + 1);
		if (n && next() % 3) {
			size_t k = next() % n;
			b[k] = (unsigned char)next();
		}
		a[n] = 0;
		if (round % 5 == 0)
			b[n] = 0;
		int want = ref_memcmp(a, b, n);
		bad += (round & 2 ? cmp_mem(a, b, n) : memcmp(a, b, n)) != want;
		bad += (round & 2 ? strcmp((char *)a, (char *)b) : cmp_str((char *)a, (char *)b)) !=
		       ref_strcmp(a, b);
		bad += (round & 2 ? len_str((char *)a) : strlen((char *)a)) != ref_strlen(a);
		checks += 3;
	}
	printf("checks %lu mismatches %lu\n", checks, bad);
	return bad != 0;
}
