/* Database workload: an in-memory key-value store on a B-tree of
 * variable-length byte-string keys (memcmp ordering, memcpy into nodes,
 * many small calls), with a string-keyed hash index beside it (strcmp,
 * strlen), doing insert, lookup, delete and range scans of a million keys. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORDER 16            /* minimum degree t: nodes hold t-1 .. 2t-1 keys */
#define MAXK (2 * ORDER - 1)
#define NKEYS 250000

typedef struct record {
	uint16_t klen, vlen;
	char data[];            /* key bytes, then value bytes */
} record;

typedef struct node {
	int n;
	int leaf;
	record *rec[MAXK];
	struct node *child[MAXK + 1];
} node;

static node *root;
static uint64_t compares;

static int key_cmp(const char *a, unsigned alen, const char *b, unsigned blen)
{
	compares++;
	int c = memcmp(a, b, alen < blen ? alen : blen);
	return c ? c : (int)alen - (int)blen;
}

static int rec_cmp(const record *r, const char *k, unsigned klen)
{
	return key_cmp(r->data, r->klen, k, klen);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		fputs("kvstore: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

static record *make_record(const char *k, unsigned klen, const char *v, unsigned vlen)
{
	record *r = xmalloc(sizeof *r + klen + vlen);
	r->klen = (uint16_t)klen;
	r->vlen = (uint16_t)vlen;
	memcpy(r->data, k, klen);
	memcpy(r->data + klen, v, vlen);
	return r;
}

static node *new_node(int leaf)
{
	node *x = xmalloc(sizeof *x);
	x->n = 0;
	x->leaf = leaf;
	return x;
}

/* First index i in x with key(i) >= k (binary search). */
static int lower_bound(const node *x, const char *k, unsigned klen, int *found)
{
	int lo = 0, hi = x->n;
	*found = 0;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		int c = rec_cmp(x->rec[mid], k, klen);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const record *bt_find(const char *k, unsigned klen)
{
	const node *x = root;
	while (x) {
		int found, i = lower_bound(x, k, klen, &found);
		if (found)
			return x->rec[i];
		x = x->leaf ? NULL : x->child[i];
	}
	return NULL;
}

static void split_child(node *x, int i)
{
	node *y = x->child[i], *z = new_node(y->leaf);
	z->n = ORDER - 1;
	memcpy(z->rec, y->rec + ORDER, (ORDER - 1) * sizeof *z->rec);
	if (!y->leaf)
		memcpy(z->child, y->child + ORDER, ORDER * sizeof *z->child);
	y->n = ORDER - 1;
	memmove(x->child + i + 2, x->child + i + 1, (size_t)(x->n - i) * sizeof *x->child);
	x->child[i + 1] = z;
	memmove(x->rec + i + 1, x->rec + i, (size_t)(x->n - i) * sizeof *x->rec);
	x->rec[i] = y->rec[ORDER - 1];
	x->n++;
}

/* Inserts or replaces; returns 1 when the key was new. */
static int bt_insert(record *r)
{
	if (!root)
		root = new_node(1);
	if (root->n == MAXK) {
		node *s = new_node(0);
		s->child[0] = root;
		root = s;
		split_child(s, 0);
	}
	node *x = root;
	for (;;) {
		int found, i = lower_bound(x, r->data, r->klen, &found);
		if (found) {
			free(x->rec[i]);
			x->rec[i] = r;
			return 0;
		}
		if (x->leaf) {
			memmove(x->rec + i + 1, x->rec + i, (size_t)(x->n - i) * sizeof *x->rec);
			x->rec[i] = r;
			x->n++;
			return 1;
		}
		if (x->child[i]->n == MAXK) {
			split_child(x, i);
			int c = rec_cmp(x->rec[i], r->data, r->klen);
			if (c == 0) {
				free(x->rec[i]);
				x->rec[i] = r;
				return 0;
			}
			if (c < 0)
				i++;
		}
		x = x->child[i];
	}
}

/* Merges child i+1 and the separator i into child i. */
static void merge(node *x, int i)
{
	node *y = x->child[i], *z = x->child[i + 1];
	y->rec[y->n] = x->rec[i];
	memcpy(y->rec + y->n + 1, z->rec, (size_t)z->n * sizeof *z->rec);
	if (!y->leaf)
		memcpy(y->child + y->n + 1, z->child, (size_t)(z->n + 1) * sizeof *z->child);
	y->n += z->n + 1;
	memmove(x->rec + i, x->rec + i + 1, (size_t)(x->n - i - 1) * sizeof *x->rec);
	memmove(x->child + i + 1, x->child + i + 2, (size_t)(x->n - i - 1) * sizeof *x->child);
	x->n--;
	free(z);
}

/* Makes child i of x hold at least ORDER keys before descending into it;
 * returns the index of the child to descend into. */
static int fill_child(node *x, int i)
{
	node *c = x->child[i];
	if (c->n >= ORDER)
		return i;
	if (i > 0 && x->child[i - 1]->n >= ORDER) {
		node *l = x->child[i - 1];
		memmove(c->rec + 1, c->rec, (size_t)c->n * sizeof *c->rec);
		if (!c->leaf)
			memmove(c->child + 1, c->child, (size_t)(c->n + 1) * sizeof *c->child);
		c->rec[0] = x->rec[i - 1];
		if (!c->leaf)
			c->child[0] = l->child[l->n];
		x->rec[i - 1] = l->rec[l->n - 1];
		l->n--;
		c->n++;
		return i;
	}
	if (i < x->n && x->child[i + 1]->n >= ORDER) {
		node *r = x->child[i + 1];
		c->rec[c->n] = x->rec[i];
		if (!c->leaf)
			c->child[c->n + 1] = r->child[0];
		x->rec[i] = r->rec[0];
		memmove(r->rec, r->rec + 1, (size_t)(r->n - 1) * sizeof *r->rec);
		if (!r->leaf)
			memmove(r->child, r->child + 1, (size_t)r->n * sizeof *r->child);
		r->n--;
		c->n++;
		return i;
	}
	if (i == x->n)
		i--;
	merge(x, i);
	return i;
}

static record *take_max(node *x)
{
	while (!x->leaf)
		x = x->child[fill_child(x, x->n)];
	return x->rec[--x->n];
}

static record *take_min(node *x)
{
	while (!x->leaf)
		x = x->child[fill_child(x, 0)];
	record *r = x->rec[0];
	memmove(x->rec, x->rec + 1, (size_t)(x->n - 1) * sizeof *x->rec);
	x->n--;
	return r;
}

/* Removes the key; returns 1 when it was there (CLRS single pass down). */
static int bt_delete(const char *k, unsigned klen)
{
	node *x = root;
	int removed = 0;
	while (x) {
		int found, i = lower_bound(x, k, klen, &found);
		if (found && x->leaf) {
			free(x->rec[i]);
			memmove(x->rec + i, x->rec + i + 1, (size_t)(x->n - i - 1) * sizeof *x->rec);
			x->n--;
			removed = 1;
			break;
		}
		if (found) {
			if (x->child[i]->n >= ORDER) {
				free(x->rec[i]);
				x->rec[i] = take_max(x->child[i]);
				removed = 1;
				break;
			}
			if (x->child[i + 1]->n >= ORDER) {
				free(x->rec[i]);
				x->rec[i] = take_min(x->child[i + 1]);
				removed = 1;
				break;
			}
			merge(x, i);
			if (x->n == 0 && x == root) {
				root = x->child[0];
				free(x);
				x = root;
			} else {
				x = x->child[i];
			}
			continue;
		}
		if (x->leaf)
			break;
		i = fill_child(x, i);
		node *next = x->child[i];
		if (x->n == 0 && x == root) {
			root = next;
			free(x);
		}
		x = next;
	}
	return removed;
}

/* Visits up to limit records with key >= k in order; returns how many. */
static int scan_from(const node *x, const char *k, unsigned klen, int limit, uint64_t *acc)
{
	if (!x || limit <= 0)
		return 0;
	int found, i = lower_bound(x, k, klen, &found), done = 0;
	for (; i <= x->n && done < limit; i++) {
		if (!x->leaf)
			done += scan_from(x->child[i], k, klen, limit - done, acc);
		if (i < x->n && done < limit) {
			const record *r = x->rec[i];
			if (rec_cmp(r, k, klen) >= 0) {
				*acc = *acc * 1099511628211ull ^ r->data[r->klen + r->vlen - 1] ^ r->klen;
				done++;
			}
		}
	}
	return done;
}

/* ---- a string-keyed hash index beside the tree (C strings) ------------- */

#define HBITS 21
static char **hkeys;
static uint32_t *hvals;

static uint32_t str_hash(const char *s)
{
	uint32_t h = 5381;
	while (*s)
		h = h * 33 ^ (uint8_t)*s++;
	return h;
}

static void h_put(const char *key, uint32_t v)
{
	uint32_t mask = (1u << HBITS) - 1, i = str_hash(key) & mask;
	while (hkeys[i] && strcmp(hkeys[i], key) != 0)
		i = (i + 1) & mask;
	if (!hkeys[i]) {
		size_t n = strlen(key) + 1;
		hkeys[i] = xmalloc(n);
		memcpy(hkeys[i], key, n);
	}
	hvals[i] = v;
}

static int h_get(const char *key, uint32_t *v)
{
	uint32_t mask = (1u << HBITS) - 1, i = str_hash(key) & mask;
	for (; hkeys[i]; i = (i + 1) & mask)
		if (strcmp(hkeys[i], key) == 0) {
			*v = hvals[i];
			return 1;
		}
	return 0;
}

/* ---- workload ---------------------------------------------------------- */

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return x;
}

/* Key i: a shared prefix (as table and index names make them), then the
 * scrambled number in decimal, so comparisons run past the prefix. */
static unsigned make_key(uint32_t i, char *buf)
{
	static const char prefix[] = "customer/orders/2024/";
	memcpy(buf, prefix, sizeof prefix - 1);
	unsigned n = sizeof prefix - 1;
	uint32_t x = mix(i) % 100000000u;
	char digits[10];
	int d = 0;
	do {
		digits[d++] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	while (d < 8)
		digits[d++] = '0';
	while (d)
		buf[n++] = digits[--d];
	buf[n++] = '#';
	buf[n++] = (char)('a' + i % 26);
	buf[n] = 0;
	return n;
}

static unsigned make_value(uint32_t i, char *buf)
{
	unsigned n = 8 + i % 40;
	for (unsigned j = 0; j < n; j++)
		buf[j] = (char)('A' + (i * 7 + j * 13) % 26);
	return n;
}

int main(void)
{
	char key[64], val[64];
	hkeys = calloc(1u << HBITS, sizeof *hkeys);
	hvals = calloc(1u << HBITS, sizeof *hvals);
	if (!hkeys || !hvals)
		return 1;
	uint32_t inserted = 0, found = 0, missing = 0, deleted = 0, indexed = 0;
	uint64_t vsum = 0;
	for (uint32_t i = 0; i < NKEYS; i++) {
		unsigned kl = make_key(i, key), vl = make_value(i, val);
		inserted += (uint32_t)bt_insert(make_record(key, kl, val, vl));
		if (i % 4 == 0)
			h_put(key, i);
	}
	for (uint32_t i = 0; i < NKEYS; i++) {
		unsigned kl = make_key(i, key);
		const record *r = bt_find(key, kl);
		if (r) {
			found++;
			vsum += (uint8_t)r->data[r->klen] + r->vlen;
		}
		key[kl - 1] = '~'; /* never inserted */
		missing += bt_find(key, kl) == NULL;
		uint32_t v;
		key[kl - 1] = (char)('a' + i % 26);
		if (h_get(key, &v))
			indexed += v % 7;
	}
	for (uint32_t i = 0; i < NKEYS; i += 2) {
		unsigned kl = make_key(i, key);
		deleted += (uint32_t)bt_delete(key, kl);
	}
	uint64_t acc = 0;
	uint32_t scanned = 0;
	for (uint32_t i = 0; i < 5000; i++) {
		unsigned kl = make_key(i * 37, key);
		scanned += (uint32_t)scan_from(root, key, kl, 50, &acc);
	}
	uint32_t after = 0;
	for (uint32_t i = 0; i < NKEYS; i += 3) {
		unsigned kl = make_key(i, key);
		after += bt_find(key, kl) != NULL;
	}
	printf("inserted %u found %u missing %u deleted %u after %u indexed %u\n", inserted, found,
	       missing, deleted, after, indexed);
	printf("values %llu scanned %u scan hash %016llx compares %llu\n", (unsigned long long)vsum,
	       scanned, (unsigned long long)acc, (unsigned long long)compares);
	return 0;
}
