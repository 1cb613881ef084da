/* libc_edges.c: memcmp, strcmp, strlen, memcpy, memmove, memset, strcpy
 * and stpcpy
 * against byte-wise reference versions on many lengths, alignments and
 * byte values, plus a hash of memcpy on overlapping ranges (whatever the
 * library's order of copies gives: compared with another engine); with an
 * argument, a call that runs into the end of linear memory
 * (test_cpu_codegen.c). */
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

static unsigned char buf_a[512], buf_b[512], buf_c[512];

static void fill(unsigned char *p, size_t n, int nul)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v = next() % 4 ? 'a' + next() % 3 : next() & 255;
		p[i] = (unsigned char)(nul ? (v ? v : 1) : v);
	}
}

/* Each routine is called from several places, as in real programs, so
 * that wasm-opt keeps it a function (at -O3 it inlines one called once). */
static int cmp_mem(const void *a, const void *b, size_t n) { return memcmp(a, b, n); }
static char *cpy_str(char *d, const char *s) { return strcpy(d, s); }
static char *pcpy_str(char *d, const char *s) { return stpcpy(d, s); }
static void *copy_mem(void *d, const void *s, size_t n) { return memcpy(d, s, n); }
static void *move_mem(void *d, const void *s, size_t n) { return memmove(d, s, n); }
static void *set_mem(void *d, int c, size_t n) { return memset(d, c, n); }

static unsigned char big[2048], ref[2048];

/* memmove and memset against byte loops; memcpy on disjoint ranges too. */
static unsigned long check_bulk(void)
{
	unsigned long bad = 0;
	for (int round = 0; round < 4000; round++) {
		size_t n = next() % 300, d = next() % 700, s = next() % 700;
		fill(big, sizeof big, 0);
		memcpy(ref, big, sizeof big);
		int kind = round % 3;
		void *got;
		if (kind == 0) {
			got = round & 4 ? move_mem(big + d, big + s, n) : memmove(big + d, big + s, n);
			if (round % 7 == 0)
				got = memmove(big + d, big + d, n); /* no change */
			unsigned char tmp[300];
			for (size_t i = 0; i < n; i++)
				tmp[i] = ((volatile unsigned char *)ref)[s + i];
			for (size_t i = 0; i < n; i++)
				((volatile unsigned char *)ref)[d + i] = tmp[i];
		} else if (kind == 1) {
			int c = (int)next();
			got = round & 4 ? set_mem(big + d, c, n) : memset(big + d, c, n);
			for (size_t i = 0; i < n; i++)
				((volatile unsigned char *)ref)[d + i] = (unsigned char)c;
		} else {
			s = 1000 + s; /* apart from [d, d + n) */
			got = round & 4 ? copy_mem(big + d, big + s, n) : memcpy(big + d, big + s, n);
			for (size_t i = 0; i < n; i++)
				((volatile unsigned char *)ref)[d + i] = ((volatile unsigned char *)ref)[s + i];
		}
		bad += got != big + d;
		bad += ref_memcmp(big, ref, sizeof big) != 0;
	}
	return bad;
}

/* Every length up to 70 (short copies are where a native path would
 * use pieces of 1, 4, 8 and 16 bytes): memmove at every distance up to 20 either
 * way, memcpy on disjoint ranges at every alignment; 4047 checks. */
static unsigned long check_small(void)
{
	unsigned long bad = 0;
	for (size_t n = 0; n <= 70; n++) {
		for (int delta = -20; delta <= 20; delta++) {
			size_t s = 300, d = (size_t)(300 + delta);
			fill(big, sizeof big, 1);
			memcpy(ref, big, sizeof big);
			void *got = n & 1 ? move_mem(big + d, big + s, n) : memmove(big + d, big + s, n);
			unsigned char tmp[80];
			for (size_t i = 0; i < n; i++)
				tmp[i] = ((volatile unsigned char *)ref)[s + i];
			for (size_t i = 0; i < n; i++)
				((volatile unsigned char *)ref)[d + i] = tmp[i];
			bad += got != big + d;
			bad += ref_memcmp(big, ref, sizeof big) != 0;
		}
		for (size_t al = 0; al < 16; al++) {
			size_t s = 1200 + (al * 7) % 16, d = 100 + al;
			fill(big, sizeof big, 0);
			memcpy(ref, big, sizeof big);
			void *got = n & 1 ? copy_mem(big + d, big + s, n) : memcpy(big + d, big + s, n);
			for (size_t i = 0; i < n; i++)
				((volatile unsigned char *)ref)[d + i] = ((volatile unsigned char *)ref)[s + i];
			bad += got != big + d;
			bad += ref_memcmp(big, ref, sizeof big) != 0;
		}
	}
	return bad;
}

/* memcpy on overlapping ranges: the library's own order of copies. */
static uint32_t overlap_hash(void)
{
	uint32_t h = 2166136261u;
	for (int round = 0; round < 500; round++) {
		size_t n = next() % 200, d = 100 + next() % 100, s = d + next() % 64 - 32;
		for (size_t i = 0; i < sizeof big; i++)
			big[i] = (unsigned char)(i * 7 + round);
		copy_mem(big + d, big + s, n);
		memmove(big + 500, big + 400 + round % 64, 64);
		big[300 + round % 80] = 0; /* a string at 200, copied down over itself */
		cpy_str((char *)big + 200 - round % 9, (char *)big + 200);
		for (size_t i = 0; i < 400; i++)
			h = (h ^ big[i]) * 16777619u;
	}
	return h;
}
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
		else if (!strcmp(argv[1], "strlen-end")) {
			/* the NUL in the last 16 bytes: starts whose 16-byte chunk
			 * lies in memory (to end - 16) and those whose does not */
			size_t sum = 0;
			end[-3] = 0;
			for (int k = 20; k >= 3; k--)
				sum = sum * 3 + len_str((char *)end - k);
			printf("%zu\n", sum);
		}
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
		} else if (!strcmp(argv[1], "memset"))
			set_mem(end - 20, 0, 40);
		else if (!strcmp(argv[1], "memcpy"))
			copy_mem(buf_a, end - 20, 40);
		else if (!strcmp(argv[1], "memmove"))
			move_mem(end - 30, end - 20, 40);
		else if (!strcmp(argv[1], "stpcpy")) /* the copy runs past the end */
			printf("%p\n", (void *)pcpy_str((char *)end - 20, (char *)buf_a));
		else if (!strcmp(argv[1], "strcpy")) /* no NUL before the end */
			cpy_str((char *)buf_b, (char *)end - 20);
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
		unsigned char *c = buf_c + next() % 32;
		memset(buf_c, 0x55, sizeof buf_c);
		char *end_c = round & 1 ? pcpy_str((char *)c, (char *)a) : stpcpy((char *)c, (char *)a);
		bad += end_c != (char *)c + ref_strlen(a) || ref_memcmp(c, a, ref_strlen(a) + 1) != 0 ||
		       ((volatile unsigned char *)c)[ref_strlen(a) + 1] != 0x55;
		bad += (round & 1 ? cpy_str((char *)c + 1, (char *)a) : strcpy((char *)c + 1, (char *)a)) != (char *)c + 1;
		bad += ref_memcmp(c + 1, a, ref_strlen(a) + 1) != 0;
		checks += 5;
	}
	bad += check_bulk();
	checks += 8000;
	bad += check_small();
	checks += 4047;
	printf("checks %lu mismatches %lu\n", checks, bad);
	printf("overlapping memcpy %08x\n", overlap_hash());
	return bad != 0;
}
