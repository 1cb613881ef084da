/* Compression workload: LZ77 with hash chains plus canonical Huffman
 * coding (a deflate-like block format of its own), compressing generated
 * text, decompressing it again and checking the round trip with CRC-32. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW (1u << 15)
#define HASH_BITS 15
#define MIN_MATCH 3
#define MAX_MATCH 258
#define BLOCK (1u << 16)
#define NLIT 286
#define NDIST 30
#define MAX_BITS 15

static const uint16_t len_base[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
				      35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
				      3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129,
				       193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
				       6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
				       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/* ---- bit output and input (LSB first) ---------------------------------- */

typedef struct bitw {
	uint8_t *out;
	size_t n, cap;
	uint64_t acc;
	unsigned nbits;
} bitw;

static void put_bits(bitw *w, uint32_t v, unsigned n)
{
	w->acc |= (uint64_t)v << w->nbits;
	w->nbits += n;
	while (w->nbits >= 8) {
		if (w->n == w->cap) {
			w->cap = w->cap ? w->cap * 2 : 1 << 16;
			w->out = realloc(w->out, w->cap);
			if (!w->out)
				exit(1);
		}
		w->out[w->n++] = (uint8_t)w->acc;
		w->acc >>= 8;
		w->nbits -= 8;
	}
}

typedef struct bitr {
	const uint8_t *in;
	size_t n, at;
	uint64_t acc;
	unsigned nbits;
} bitr;

static void refill(bitr *r)
{
	while (r->nbits <= 56) {
		uint64_t byte = r->at < r->n ? r->in[r->at] : 0;
		r->at++;
		r->acc |= byte << r->nbits;
		r->nbits += 8;
	}
}

static uint32_t get_bits(bitr *r, unsigned n)
{
	if (r->nbits < n)
		refill(r);
	uint32_t v = (uint32_t)(r->acc & ((1ull << n) - 1));
	r->acc >>= n;
	r->nbits -= n;
	return v;
}

/* ---- Huffman code construction ----------------------------------------- */

typedef struct hnode {
	uint32_t freq;
	int16_t left, right;
} hnode;

/* Code lengths for freq[0..n) limited to MAX_BITS (zero for unused). */
static void build_lengths(const uint32_t *freq, int n, uint8_t *len)
{
	hnode nodes[2 * NLIT];
	int heap[NLIT], nh = 0, nn = 0;
	memset(len, 0, (size_t)n);
	for (int i = 0; i < n; i++)
		if (freq[i]) {
			nodes[nn] = (hnode){freq[i], -1, (int16_t)i};
			heap[nh++] = nn++;
		}
	if (nh == 0)
		return;
	if (nh == 1) {
		len[nodes[heap[0]].right] = 1;
		return;
	}
	/* Selection by linear scans: n is small and this runs once a block. */
	while (nh > 1) {
		int pick[2];
		for (int k = 0; k < 2; k++) {
			int best = 0;
			for (int i = 1; i < nh; i++)
				if (nodes[heap[i]].freq < nodes[heap[best]].freq)
					best = i;
			pick[k] = heap[best];
			heap[best] = heap[--nh];
		}
		nodes[nn] = (hnode){nodes[pick[0]].freq + nodes[pick[1]].freq, (int16_t)pick[0], (int16_t)pick[1]};
		heap[nh++] = nn++;
	}
	/* Depths by walking down from the root (the last node made). */
	int depth[2 * NLIT], stack[2 * NLIT], ns = 0;
	depth[nn - 1] = 0;
	stack[ns++] = nn - 1;
	unsigned overflow = 0;
	while (ns) {
		int x = stack[--ns];
		if (nodes[x].left < 0) {
			int d = depth[x] > MAX_BITS ? MAX_BITS : depth[x];
			overflow += depth[x] > MAX_BITS;
			len[nodes[x].right] = (uint8_t)d;
			continue;
		}
		depth[nodes[x].left] = depth[x] + 1;
		depth[nodes[x].right] = depth[x] + 1;
		stack[ns++] = nodes[x].left;
		stack[ns++] = nodes[x].right;
	}
	if (!overflow)
		return;
	/* Clamped lengths break the Kraft sum: lengthen the longest codes
	 * below the limit until it holds again. */
	for (;;) {
		uint64_t kraft = 0;
		for (int i = 0; i < n; i++)
			if (len[i])
				kraft += 1ull << (MAX_BITS - len[i]);
		if (kraft <= 1ull << MAX_BITS)
			return;
		int worst = -1;
		for (int i = 0; i < n; i++)
			if (len[i] && len[i] < MAX_BITS && (worst < 0 || len[i] > len[worst]))
				worst = i;
		len[worst]++;
	}
}

/* Canonical codes from lengths, bit-reversed for LSB-first output. */
static void build_codes(const uint8_t *len, int n, uint16_t *code)
{
	uint16_t count[MAX_BITS + 1] = {0}, next[MAX_BITS + 2];
	for (int i = 0; i < n; i++)
		count[len[i]]++;
	count[0] = 0;
	uint16_t c = 0;
	for (int b = 1; b <= MAX_BITS; b++) {
		c = (uint16_t)((c + count[b - 1]) << 1);
		next[b] = c;
	}
	for (int i = 0; i < n; i++) {
		if (!len[i])
			continue;
		uint16_t v = next[len[i]]++, r = 0;
		for (int b = 0; b < len[i]; b++)
			r = (uint16_t)(r << 1 | (v >> b & 1));
		code[i] = r;
	}
}

/* ---- compressor -------------------------------------------------------- */

typedef struct sym {
	uint16_t lit_or_len; /* < 256 literal, else match length */
	uint16_t dist;
} sym;

static int len_code(unsigned l)
{
	int c = 0;
	while (c < 28 && len_base[c + 1] <= l)
		c++;
	return c;
}

static int dist_code(unsigned d)
{
	int c = 0;
	while (c < 29 && dist_base[c + 1] <= d)
		c++;
	return c;
}

static void emit_block(bitw *w, const sym *syms, size_t nsyms)
{
	uint32_t lf[NLIT] = {0}, df[NDIST] = {0};
	for (size_t i = 0; i < nsyms; i++) {
		if (syms[i].dist) {
			lf[257 + len_code(syms[i].lit_or_len)]++;
			df[dist_code(syms[i].dist)]++;
		} else {
			lf[syms[i].lit_or_len]++;
		}
	}
	lf[256] = 1;
	uint8_t ll[NLIT], dl[NDIST];
	uint16_t lc[NLIT], dc[NDIST];
	build_lengths(lf, NLIT, ll);
	build_lengths(df, NDIST, dl);
	build_codes(ll, NLIT, lc);
	build_codes(dl, NDIST, dc);
	for (int i = 0; i < NLIT; i++)
		put_bits(w, ll[i], 4);
	for (int i = 0; i < NDIST; i++)
		put_bits(w, dl[i], 4);
	for (size_t i = 0; i < nsyms; i++) {
		if (!syms[i].dist) {
			put_bits(w, lc[syms[i].lit_or_len], ll[syms[i].lit_or_len]);
			continue;
		}
		int l = len_code(syms[i].lit_or_len), d = dist_code(syms[i].dist);
		put_bits(w, lc[257 + l], ll[257 + l]);
		put_bits(w, syms[i].lit_or_len - len_base[l], len_extra[l]);
		put_bits(w, dc[d], dl[d]);
		put_bits(w, syms[i].dist - dist_base[d], dist_extra[d]);
	}
	put_bits(w, lc[256], ll[256]);
}

static uint32_t hash3(const uint8_t *p) { return ((uint32_t)p[0] << 16 | p[1] << 8 | p[2]) * 2654435761u >> (32 - HASH_BITS); }

static size_t compress(const uint8_t *in, size_t n, int max_chain, uint8_t **out)
{
	int32_t *head = malloc(sizeof(int32_t) << HASH_BITS), *prev = malloc(n * sizeof(int32_t));
	sym *syms = malloc(BLOCK * sizeof *syms);
	if (!head || !prev || !syms)
		exit(1);
	memset(head, 0xff, sizeof(int32_t) << HASH_BITS);
	bitw w = {0};
	put_bits(&w, (uint32_t)n, 32);
	size_t i = 0, nsyms = 0;
	while (i < n) {
		unsigned best_len = 0, best_dist = 0;
		if (i + MIN_MATCH <= n) {
			uint32_t h = hash3(in + i);
			int32_t cand = head[h];
			size_t max = n - i < MAX_MATCH ? n - i : MAX_MATCH;
			for (int chain = 0; cand >= 0 && i - (size_t)cand <= WINDOW && chain < max_chain; chain++) {
				const uint8_t *a = in + cand, *b = in + i;
				if (a[best_len] == b[best_len]) {
					unsigned l = 0;
					while (l < max && a[l] == b[l])
						l++;
					if (l > best_len) {
						best_len = l;
						best_dist = (unsigned)(i - (size_t)cand);
						if (l == max)
							break;
					}
				}
				cand = prev[cand];
			}
			prev[i] = head[h];
			head[h] = (int32_t)i;
		}
		if (best_len >= MIN_MATCH) {
			syms[nsyms++] = (sym){(uint16_t)best_len, (uint16_t)best_dist};
			for (size_t k = 1; k < best_len; k++)
				if (i + k + MIN_MATCH <= n) {
					uint32_t h = hash3(in + i + k);
					prev[i + k] = head[h];
					head[h] = (int32_t)(i + k);
				}
			i += best_len;
		} else {
			syms[nsyms++] = (sym){in[i], 0};
			i++;
		}
		if (nsyms == BLOCK || i == n) {
			put_bits(&w, i == n, 1);
			emit_block(&w, syms, nsyms);
			nsyms = 0;
		}
	}
	put_bits(&w, 0, 7);
	free(head);
	free(prev);
	free(syms);
	*out = w.out;
	return w.n;
}

/* ---- decompressor ------------------------------------------------------ */

#define FAST_BITS 10

typedef struct decoder {
	uint16_t fast[1 << FAST_BITS]; /* symbol << 4 | length, 0 = slow path */
	uint16_t count[MAX_BITS + 1];
	uint16_t sorted[NLIT];
} decoder;

static void build_decoder(decoder *d, const uint8_t *len, int n)
{
	uint16_t code[NLIT], offs[MAX_BITS + 2];
	memset(d->fast, 0, sizeof d->fast);
	memset(d->count, 0, sizeof d->count);
	for (int i = 0; i < n; i++)
		d->count[len[i]]++;
	d->count[0] = 0;
	offs[1] = 0;
	for (int b = 1; b <= MAX_BITS; b++)
		offs[b + 1] = (uint16_t)(offs[b] + d->count[b]);
	for (int i = 0; i < n; i++)
		if (len[i])
			d->sorted[offs[len[i]]++] = (uint16_t)i;
	build_codes(len, n, code);
	for (int i = 0; i < n; i++)
		if (len[i] && len[i] <= FAST_BITS)
			for (unsigned r = code[i]; r < (1u << FAST_BITS); r += 1u << len[i])
				d->fast[r] = (uint16_t)(i << 4 | len[i]);
}

static int decode_sym(bitr *r, const decoder *d)
{
	if (r->nbits < MAX_BITS)
		refill(r);
	uint16_t e = d->fast[r->acc & ((1u << FAST_BITS) - 1)];
	if (e) {
		r->acc >>= e & 15;
		r->nbits -= e & 15;
		return e >> 4;
	}
	/* Canonical decode one bit at a time (codes are stored reversed). */
	int code = 0, first = 0, index = 0;
	for (int b = 1; b <= MAX_BITS; b++) {
		code |= (int)get_bits(r, 1);
		int count = d->count[b];
		if (code - first < count)
			return d->sorted[index + code - first];
		index += count;
		first = (first + count) << 1;
		code <<= 1;
	}
	return -1;
}

static size_t decompress(const uint8_t *in, size_t n, uint8_t **out)
{
	bitr r = {in, n, 0, 0, 0};
	size_t total = get_bits(&r, 16);
	total |= (size_t)get_bits(&r, 16) << 16;
	uint8_t *o = malloc(total + 1);
	decoder *ld = malloc(sizeof *ld), *dd = malloc(sizeof *dd);
	if (!o || !ld || !dd)
		exit(1);
	size_t at = 0;
	for (int last = 0; !last;) {
		last = (int)get_bits(&r, 1);
		uint8_t ll[NLIT], dl[NDIST];
		for (int i = 0; i < NLIT; i++)
			ll[i] = (uint8_t)get_bits(&r, 4);
		for (int i = 0; i < NDIST; i++)
			dl[i] = (uint8_t)get_bits(&r, 4);
		build_decoder(ld, ll, NLIT);
		build_decoder(dd, dl, NDIST);
		for (;;) {
			int s = decode_sym(&r, ld);
			if (s < 0 || (s < 256 && at >= total))
				exit(2);
			if (s < 256) {
				o[at++] = (uint8_t)s;
				continue;
			}
			if (s == 256)
				break;
			int lcode = s - 257;
			unsigned len = len_base[lcode] + get_bits(&r, len_extra[lcode]);
			int dcode = decode_sym(&r, dd);
			if (dcode < 0)
				exit(2);
			unsigned dist = dist_base[dcode] + get_bits(&r, dist_extra[dcode]);
			if (dist > at || len > total - at)
				exit(2);
			for (unsigned k = 0; k < len; k++, at++)
				o[at] = o[at - dist];
		}
	}
	free(ld);
	free(dd);
	*out = o;
	return at;
}

/* ---- input and checks -------------------------------------------------- */

static uint32_t crc_table[256];

static uint32_t crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++)
		c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static uint32_t rng = 88172645u;
static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* Text from a small vocabulary with skewed word frequencies, numbers and
 * punctuation: compressible, but not trivially. */
static size_t make_text(uint8_t *buf, size_t n)
{
	static const char *const words[] = {
		"the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with",
		"be", "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which",
		"but", "have", "an", "had", "they", "you", "were", "their", "one", "all", "we",
		"compiler", "memory", "function", "table", "module", "instance", "pointer", "value",
		"stack", "register", "branch", "interpreter", "database", "record", "page", "cursor",
	};
	size_t at = 0;
	while (at + 32 < n) {
		uint32_t r = next_rand();
		uint32_t pick = (r & 0xffff) % 1000;
		size_t w = pick < 600 ? pick % 12 : pick < 900 ? pick % 36 : pick % 52;
		size_t len = strlen(words[w]);
		memcpy(buf + at, words[w], len);
		at += len;
		if (r >> 28 == 0) {
			at += (size_t)sprintf((char *)buf + at, " %u", r >> 16 & 4095);
		}
		buf[at++] = (r >> 20 & 15) == 0 ? '.' : (r >> 20 & 15) == 1 ? ',' : ' ';
		if ((r >> 24 & 63) == 0)
			buf[at++] = '\n';
	}
	return at;
}

int main(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
	size_t cap = 6u << 20;
	uint8_t *text = malloc(cap);
	if (!text)
		return 1;
	size_t n = make_text(text, cap);
	printf("input %zu crc %08x\n", n, crc32(text, n));
	int ok = 1;
	static const int chains[] = {8, 64};
	for (int c = 0; c < 2; c++) {
		uint8_t *packed, *unpacked;
		size_t np = compress(text, n, chains[c], &packed);
		int same = 1;
		for (int rep = 0; rep < 3; rep++) {
			size_t nu = decompress(packed, np, &unpacked);
			same &= nu == n && memcmp(text, unpacked, n) == 0;
			free(unpacked);
		}
		printf("chain %d packed %zu crc %08x round trip %s\n", chains[c], np, crc32(packed, np),
		       same ? "ok" : "FAILED");
		ok &= same;
		free(packed);
	}
	free(text);
	return ok ? 0 : 1;
}
