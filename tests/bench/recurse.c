/* Deep-recursion workload: a recursive-descent parser and evaluator over
 * deeply nested expressions, a recursive flood fill (thousands of frames
 * deep), n-queens backtracking, recursive list building and folding, and
 * the Takeuchi function. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t rng = 2463534242u;
static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* ---- recursive descent over nested expressions ------------------------- */

#define MOD 1000003u

static char *text;
static size_t text_len, text_cap;
static const char *cursor;

static void put(char c)
{
	if (text_len == text_cap) {
		text_cap = text_cap ? text_cap * 2 : 1 << 16;
		text = realloc(text, text_cap);
		if (!text)
			exit(1);
	}
	text[text_len++] = c;
}

/* A random expression whose parentheses nest up to depth levels: one
 * operand continues the nesting, the others stay shallow. */
static void gen(int depth)
{
	uint32_t r = next_rand();
	if (depth <= 0 || r % 64 == 0) {
		uint32_t v = r >> 8 & 999;
		if (v >= 100)
			put((char)('0' + v / 100));
		if (v >= 10)
			put((char)('0' + v / 10 % 10));
		put((char)('0' + v % 10));
		return;
	}
	put('(');
	gen(depth - 1);
	static const char ops[] = "+-*+";
	for (uint32_t terms = 1 + (r >> 4) % 2; terms; terms--) {
		put(ops[(r >> terms) & 3]);
		gen(r & 64 ? (depth < 3 ? depth - 1 : 2) : 0);
	}
	put(')');
}

static uint32_t parse_sum(void);

static uint32_t parse_atom(void)
{
	if (*cursor == '(') {
		cursor++;
		uint32_t v = parse_sum();
		cursor++; /* ')' */
		return v;
	}
	uint32_t v = 0;
	while (*cursor >= '0' && *cursor <= '9')
		v = v * 10 + (uint32_t)(*cursor++ - '0');
	return v;
}

static uint32_t parse_product(void)
{
	uint32_t v = parse_atom();
	while (*cursor == '*') {
		cursor++;
		v = (uint32_t)((uint64_t)v * parse_atom() % MOD);
	}
	return v;
}

static uint32_t parse_sum(void)
{
	uint32_t v = parse_product();
	for (;;) {
		if (*cursor == '+') {
			cursor++;
			v = (v + parse_product()) % MOD;
		} else if (*cursor == '-') {
			cursor++;
			v = (v + MOD - parse_product()) % MOD;
		} else {
			return v;
		}
	}
}

static uint64_t parse_run(void)
{
	uint64_t acc = 0;
	for (int round = 0; round < 120; round++) {
		text_len = 0;
		for (int k = 0; k < 40; k++) {
			if (k)
				put('+');
			gen(600 + round % 30 * 20);
		}
		put(0);
		for (int rep = 0; rep < 8; rep++) {
			cursor = text;
			acc = acc * 31 + parse_sum();
		}
		acc += text_len;
	}
	return acc;
}

/* ---- recursive flood fill --------------------------------------------- */

#define W 180
#define H 180
static uint8_t grid[H][W];

static uint32_t fill(int y, int x, uint8_t colour)
{
	if (x < 0 || y < 0 || x >= W || y >= H || grid[y][x] != 1)
		return 0;
	grid[y][x] = colour;
	return 1 + fill(y, x + 1, colour) + fill(y + 1, x, colour) + fill(y, x - 1, colour) +
	       fill(y - 1, x, colour);
}

static uint64_t fill_run(void)
{
	uint64_t acc = 0;
	for (int round = 0; round < 300; round++) {
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++)
				grid[y][x] = next_rand() % 100 < 28 + (uint32_t)round % 5 ? 0 : 1;
		uint8_t colour = 2;
		uint32_t biggest = 0, regions = 0;
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++)
				if (grid[y][x] == 1) {
					uint32_t n = fill(y, x, colour);
					colour = colour == 255 ? 2 : colour + 1;
					regions++;
					if (n > biggest)
						biggest = n;
				}
		acc = acc * 1000003 + regions * 65536u + biggest;
	}
	return acc;
}

/* ---- n-queens backtracking ------------------------------------------- */

static uint32_t queens(int n, int row, uint32_t cols, uint32_t d1, uint32_t d2)
{
	if (row == n)
		return 1;
	uint32_t count = 0;
	uint32_t free_cols = ~(cols | d1 | d2) & ((1u << n) - 1);
	while (free_cols) {
		uint32_t bit = free_cols & (0 - free_cols);
		free_cols ^= bit;
		count += queens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
	}
	return count;
}

/* ---- recursive lists ---------------------------------------------------- */

typedef struct cell {
	int32_t head;
	struct cell *tail;
} cell;

static cell *cells;
static int ncells;

static cell *list_build(int n, int32_t seed)
{
	if (n == 0)
		return NULL;
	cell *c = &cells[ncells++];
	c->head = seed;
	c->tail = list_build(n - 1, (int32_t)((uint32_t)seed * 1103515245u + 12345u));
	return c;
}

static int64_t list_sum(const cell *c) { return c ? c->head % 1000 + list_sum(c->tail) : 0; }

static cell *list_map(const cell *c)
{
	if (!c)
		return NULL;
	cell *d = &cells[ncells++];
	d->head = c->head / 3 + 1;
	d->tail = list_map(c->tail);
	return d;
}

static uint32_t list_len_even(const cell *c);
static uint32_t list_len_odd(const cell *c) { return c ? 1 + list_len_even(c->tail) : 0; }
static uint32_t list_len_even(const cell *c) { return c ? 1 + list_len_odd(c->tail) : 0; }

static uint64_t list_run(void)
{
	cells = malloc(2 * 12000 * sizeof *cells);
	if (!cells)
		exit(1);
	uint64_t acc = 0;
	for (int round = 0; round < 2000; round++) {
		ncells = 0;
		cell *l = list_build(10000 + round % 2000, round);
		cell *m = list_map(l);
		acc += (uint64_t)list_sum(l) + (uint64_t)list_sum(m) + list_len_even(m);
	}
	free(cells);
	return acc;
}

/* ---- Takeuchi ----------------------------------------------------------- */

static int32_t tak(int32_t x, int32_t y, int32_t z)
{
	if (y >= x)
		return z;
	return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y));
}

int main(void)
{
	uint64_t p = parse_run();
	uint64_t f = fill_run();
	uint32_t q = queens(12, 0, 0, 0, 0);
	uint64_t l = list_run();
	int32_t t = tak(24, 16, 8);
	printf("parse %016llx fill %016llx queens %u lists %llu tak %d\n", (unsigned long long)p,
	       (unsigned long long)f, q, (unsigned long long)l, t);
	return 0;
}
