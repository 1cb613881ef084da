/* JSON workload: a generator writing pseudo-random documents (nested
 * objects and arrays, strings with escapes, integers), a recursive-descent
 * parser building a tree of malloc'd nodes with object members in
 * per-object hash tables, queries by key path, and a serialiser writing
 * the tree back out (then parsed again and compared).  Integers only, so
 * that every build prints the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng = 0x9e3779b9u;
static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* ---- output buffer ------------------------------------------------------ */

typedef struct {
	char *p;
	size_t len, cap;
} buf;

static void put(buf *b, char c)
{
	if (b->len == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 16;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			exit(1);
	}
	b->p[b->len++] = c;
}

static void puts_n(buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(b, s[i]);
}

static void put_int(buf *b, int64_t v)
{
	char tmp[24];
	int n = 0;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do
		tmp[n++] = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		put(b, '-');
	while (n)
		put(b, tmp[--n]);
}

/* ---- generator ---------------------------------------------------------- */

static const char *const words[] = {"id", "name", "value", "items", "tags", "owner", "size", "kind",
				    "left", "right", "next", "data", "count", "meta", "x", "y"};

static void gen_string(buf *b)
{
	put(b, '"');
	int n = 1 + (int)(next_rand() % 12);
	for (int i = 0; i < n; i++) {
		uint32_t r = next_rand() % 40;
		if (r == 0)
			puts_n(b, "\\n", 2);
		else if (r == 1)
			puts_n(b, "\\\"", 2);
		else if (r == 2)
			puts_n(b, "\\u00e9", 6);
		else
			put(b, (char)('a' + r % 26));
	}
	put(b, '"');
}

static void gen_value(buf *b, int depth)
{
	uint32_t r = next_rand() % (depth > 0 ? 10 : 4);
	if (r < 2) {
		put_int(b, (int64_t)(next_rand() % 200001) - 100000);
	} else if (r < 4) {
		gen_string(b);
	} else if (r < 7) {
		put(b, '{');
		int n = (int)(next_rand() % 7);
		for (int i = 0; i < n; i++) {
			if (i)
				put(b, ',');
			put(b, '"');
			const char *w = words[(next_rand() + (uint32_t)i) % 16];
			puts_n(b, w, strlen(w));
			put_int(b, i);
			puts_n(b, "\":", 2);
			gen_value(b, depth - 1);
		}
		put(b, '}');
	} else {
		put(b, '[');
		int n = (int)(next_rand() % 6);
		for (int i = 0; i < n; i++) {
			if (i)
				puts_n(b, ", ", 2);
			gen_value(b, depth - 1);
		}
		put(b, ']');
	}
}

/* ---- tree ---------------------------------------------------------------- */

enum { J_INT, J_STR, J_ARR, J_OBJ };

typedef struct node node;
struct node {
	int kind;
	int64_t num;           /* J_INT */
	char *str;             /* J_STR; object members: the key */
	size_t len;
	node **items;          /* J_ARR, J_OBJ: in order */
	size_t n;
	node **slots;          /* J_OBJ: open addressing on the key's hash */
	size_t nslots;
	node *val;             /* object member: its value */
};

static uint32_t hash_str(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static node *new_node(int kind)
{
	node *n = calloc(1, sizeof *n);
	if (!n)
		exit(1);
	n->kind = kind;
	return n;
}

static void add_item(node *c, node *it)
{
	if ((c->n & (c->n - 1)) == 0) {
		c->items = realloc(c->items, (c->n ? c->n * 2 : 1) * sizeof *c->items);
		if (!c->items)
			exit(1);
	}
	c->items[c->n++] = it;
}

static void index_members(node *o)
{
	o->nslots = 4;
	while (o->nslots < o->n * 2)
		o->nslots *= 2;
	o->slots = calloc(o->nslots, sizeof *o->slots);
	if (!o->slots)
		exit(1);
	for (size_t i = 0; i < o->n; i++) {
		node *m = o->items[i];
		size_t at = hash_str(m->str, m->len) & (o->nslots - 1);
		while (o->slots[at])
			at = (at + 1) & (o->nslots - 1);
		o->slots[at] = m;
	}
}

static node *member(const node *o, const char *key)
{
	if (o->kind != J_OBJ)
		return NULL;
	size_t n = strlen(key);
	size_t at = hash_str(key, n) & (o->nslots - 1);
	for (node *m; (m = o->slots[at]); at = (at + 1) & (o->nslots - 1))
		if (m->len == n && memcmp(m->str, key, n) == 0)
			return m->val;
	return NULL;
}

static void free_node(node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		free_node(n->items[i]);
	free_node(n->val);
	free(n->items);
	free(n->slots);
	free(n->str);
	free(n);
}

/* ---- parser --------------------------------------------------------------- */

static const char *at;

static void skip_ws(void)
{
	while (*at == ' ' || *at == '\n' || *at == '\t' || *at == '\r')
		at++;
}

static int hex(char c)
{
	return c <= '9' ? c - '0' : (c | 32) - 'a' + 10;
}

static char *parse_str(size_t *len)
{
	at++; /* '"' */
	buf b = {0};
	while (*at != '"') {
		char c = *at++;
		if (c == '\\') {
			c = *at++;
			if (c == 'n')
				c = '\n';
			else if (c == 'u') {
				int u = hex(at[0]) << 12 | hex(at[1]) << 8 | hex(at[2]) << 4 | hex(at[3]);
				at += 4;
				put(&b, (char)(0xc0 | u >> 6));
				c = (char)(0x80 | (u & 63));
			}
		}
		put(&b, c);
	}
	at++;
	*len = b.len;
	put(&b, 0);
	return b.p;
}

static node *parse_value(void)
{
	skip_ws();
	node *n;
	if (*at == '{') {
		n = new_node(J_OBJ);
		at++;
		skip_ws();
		while (*at != '}') {
			node *m = new_node(J_STR);
			m->str = parse_str(&m->len);
			skip_ws();
			at++; /* ':' */
			m->val = parse_value();
			add_item(n, m);
			skip_ws();
			if (*at == ',')
				at++, skip_ws();
		}
		at++;
		index_members(n);
	} else if (*at == '[') {
		n = new_node(J_ARR);
		at++;
		skip_ws();
		while (*at != ']') {
			add_item(n, parse_value());
			skip_ws();
			if (*at == ',')
				at++;
		}
		at++;
	} else if (*at == '"') {
		n = new_node(J_STR);
		n->str = parse_str(&n->len);
	} else {
		n = new_node(J_INT);
		int neg = *at == '-';
		at += neg;
		while (*at >= '0' && *at <= '9')
			n->num = n->num * 10 + (*at++ - '0');
		if (neg)
			n->num = -n->num;
	}
	return n;
}

/* ---- serialiser and queries ------------------------------------------------ */

static void write_str(buf *b, const char *s, size_t n)
{
	put(b, '"');
	for (size_t i = 0; i < n; i++) {
		uint8_t c = (uint8_t)s[i];
		if (c == '\n')
			puts_n(b, "\\n", 2);
		else if (c == '"')
			puts_n(b, "\\\"", 2);
		else if (c >= 0xc0 && i + 1 < n) {
			int u = (c & 31) << 6 | ((uint8_t)s[++i] & 63);
			static const char digits[] = "0123456789abcdef";
			puts_n(b, "\\u00", 4);
			put(b, digits[u >> 4 & 15]);
			put(b, digits[u & 15]);
		} else
			put(b, (char)c);
	}
	put(b, '"');
}

static void write_value(buf *b, const node *n)
{
	switch (n->kind) {
	case J_INT: put_int(b, n->num); break;
	case J_STR: write_str(b, n->str, n->len); break;
	case J_ARR:
		put(b, '[');
		for (size_t i = 0; i < n->n; i++) {
			if (i)
				puts_n(b, ", ", 2);
			write_value(b, n->items[i]);
		}
		put(b, ']');
		break;
	default:
		put(b, '{');
		for (size_t i = 0; i < n->n; i++) {
			if (i)
				put(b, ',');
			write_str(b, n->items[i]->str, n->items[i]->len);
			put(b, ':');
			write_value(b, n->items[i]->val);
		}
		put(b, '}');
	}
}

/* Sum of integers and string lengths, and a walk by keys. */
static int64_t weigh(const node *n)
{
	if (n->kind == J_INT)
		return n->num;
	if (n->kind == J_STR)
		return (int64_t)n->len;
	int64_t s = (int64_t)n->n;
	for (size_t i = 0; i < n->n; i++)
		s += weigh(n->kind == J_OBJ ? n->items[i]->val : n->items[i]);
	return s;
}

static uint64_t query(const node *n, int depth)
{
	uint64_t h = 0;
	char key[16];
	for (int w = 0; n->kind == J_OBJ && w < 16; w++)
		for (int i = w % 3; i < 6; i += 3) {
			int k = (int)strlen(words[w]);
			memcpy(key, words[w], (size_t)k);
			key[k] = (char)('0' + i);
			key[k + 1] = 0;
			const node *v = member(n, key);
			if (!v)
				continue;
			h = h * 31 + (uint64_t)(w * 8 + i);
			if (depth > 0)
				h += query(v, depth - 1);
		}
	if (n->kind == J_ARR)
		for (size_t i = 0; i < n->n; i++)
			h = h * 7 + query(n->items[i], depth);
	return h;
}

int main(void)
{
	uint64_t acc = 0;
	size_t bytes = 0;
	buf doc = {0}, out = {0};
	for (int round = 0; round < 16; round++) {
		doc.len = 0;
		put(&doc, '[');
		for (int k = 0; k < 400; k++) {
			if (k)
				puts_n(&doc, ",\n", 2);
			gen_value(&doc, 7);
		}
		put(&doc, ']');
		put(&doc, 0);
		bytes += doc.len;
		at = doc.p;
		node *tree = parse_value();
		out.len = 0;
		write_value(&out, tree);
		put(&out, 0);
		at = out.p;
		node *again = parse_value();
		out.len = 0;
		write_value(&out, again);
		acc = acc * 131 + (uint64_t)weigh(tree) + query(tree, 6) + hash_str(out.p, out.len);
		if (weigh(tree) != weigh(again))
			acc ^= 1;
		free_node(tree);
		free_node(again);
	}
	printf("json: %zu bytes parsed, checksum %llu\n", bytes, (unsigned long long)acc);
	free(doc.p);
	free(out.p);
	return 0;
}
