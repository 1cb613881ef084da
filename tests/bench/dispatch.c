/* Indirect-call workload: objects with vtables (a shape hierarchy), an
 * event loop dispatching through a handler table, a merge sort calling its
 * comparator through a pointer, and an expression tree evaluated by
 * per-node function pointers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- vtables ----------------------------------------------------------- */

struct shape;
typedef struct shape_ops {
	int64_t (*area)(const struct shape *);
	int64_t (*perimeter)(const struct shape *);
	void (*scale)(struct shape *, int32_t);
	uint32_t (*tag)(const struct shape *);
} shape_ops;

typedef struct shape {
	const shape_ops *ops;
	int32_t a, b, c;
} shape;

static int64_t rect_area(const shape *s) { return (int64_t)s->a * s->b; }
static int64_t rect_perimeter(const shape *s) { return 2 * ((int64_t)s->a + s->b); }
static void rect_scale(shape *s, int32_t k) { s->a = s->a * k % 1000 + 1; s->b = s->b * k % 1000 + 1; }
static uint32_t rect_tag(const shape *s) { return 0x52u ^ (uint32_t)s->a; }

static int64_t square_area(const shape *s) { return (int64_t)s->a * s->a; }
static int64_t square_perimeter(const shape *s) { return 4 * (int64_t)s->a; }
static void square_scale(shape *s, int32_t k) { s->a = s->a * k % 997 + 1; }
static uint32_t square_tag(const shape *s) { return 0x53u + (uint32_t)s->a; }

static int64_t tri_area(const shape *s) { return (int64_t)s->a * s->b / 2; }
static int64_t tri_perimeter(const shape *s) { return (int64_t)s->a + s->b + s->c; }
static void tri_scale(shape *s, int32_t k)
{
	s->a = s->a * k % 991 + 1;
	s->b = s->b * k % 983 + 1;
	s->c = s->a + s->b - 1;
}
static uint32_t tri_tag(const shape *s) { return 0x54u * (uint32_t)s->c; }

static int64_t circle_area(const shape *s) { return 355 * (int64_t)s->a * s->a / 113; }
static int64_t circle_perimeter(const shape *s) { return 710 * (int64_t)s->a / 113; }
static void circle_scale(shape *s, int32_t k) { s->a = (s->a + k) % 1009 + 1; }
static uint32_t circle_tag(const shape *s) { return 0x43u << (s->a & 7); }

static int64_t ring_area(const shape *s) { return 355 * ((int64_t)s->a * s->a - (int64_t)s->b * s->b) / 113; }
static int64_t ring_perimeter(const shape *s) { return 710 * ((int64_t)s->a + s->b) / 113; }
static void ring_scale(shape *s, int32_t k)
{
	s->a = (s->a * k) % 1013 + 2;
	s->b = s->a / 2;
}
static uint32_t ring_tag(const shape *s) { return (uint32_t)(s->a * 31 + s->b); }

static const shape_ops kinds[] = {
	{rect_area, rect_perimeter, rect_scale, rect_tag},
	{square_area, square_perimeter, square_scale, square_tag},
	{tri_area, tri_perimeter, tri_scale, tri_tag},
	{circle_area, circle_perimeter, circle_scale, circle_tag},
	{ring_area, ring_perimeter, ring_scale, ring_tag},
};

static uint32_t rng = 12345;
static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

#define NSHAPES 4096

static uint64_t shapes_run(void)
{
	static shape shapes[NSHAPES];
	for (int i = 0; i < NSHAPES; i++) {
		uint32_t r = next_rand();
		shapes[i] = (shape){&kinds[r % 5], (int32_t)(r >> 8 & 255) + 1, (int32_t)(r >> 16 & 127) + 1, 0};
		if (r % 5 == 2)
			shapes[i].c = shapes[i].a + shapes[i].b - 1;
		if (r % 5 == 4)
			shapes[i].b = shapes[i].a / 2;
	}
	uint64_t acc = 0;
	for (int round = 0; round < 4000; round++) {
		for (int i = 0; i < NSHAPES; i++) {
			shape *s = &shapes[i];
			acc += (uint64_t)s->ops->area(s) + (uint64_t)s->ops->perimeter(s);
			acc ^= s->ops->tag(s);
			if ((i + round) % 16 == 0)
				s->ops->scale(s, round % 7 + 2);
		}
	}
	return acc;
}

/* ---- event loop with a handler table ----------------------------------- */

typedef struct machine {
	uint32_t regs[8];
	uint32_t queue[256];
	uint32_t head, tail;
	uint64_t handled;
} machine;

typedef void (*handler)(machine *, uint32_t);

static void post(machine *m, uint32_t ev)
{
	if (m->tail - m->head < 256)
		m->queue[m->tail++ & 255] = ev;
}

static void on_tick(machine *m, uint32_t arg) { m->regs[0] += arg; }
static void on_key(machine *m, uint32_t arg) { m->regs[1] = m->regs[1] * 31 + arg; }
static void on_move(machine *m, uint32_t arg)
{
	m->regs[2] += arg & 0xff;
	m->regs[3] += arg >> 8;
	if ((m->regs[2] & 63) == 0)
		post(m, 4u << 24 | (arg & 0xffff));
}
static void on_timer(machine *m, uint32_t arg)
{
	m->regs[4] ^= arg;
	if (arg & 1)
		post(m, 0u << 24 | (arg >> 1));
}
static void on_redraw(machine *m, uint32_t arg) { m->regs[5] = (m->regs[5] + arg) * 2654435761u; }
static void on_io(machine *m, uint32_t arg)
{
	m->regs[6] += arg % 97;
	if (arg % 5 == 0)
		post(m, 1u << 24 | (arg & 0xff));
}
static void on_idle(machine *m, uint32_t arg) { m->regs[7] += (arg | 1) & 15; }
static void on_quit(machine *m, uint32_t arg) { m->regs[0] ^= arg << 3; }

static const handler handlers[8] = {on_tick, on_key, on_move, on_timer, on_redraw, on_io, on_idle, on_quit};

static uint64_t events_run(void)
{
	static machine m;
	for (uint32_t i = 0; i < 12000000; i++) {
		post(&m, (next_rand() & 7u) << 24 | (i & 0xffffff));
		while (m.head != m.tail) {
			uint32_t ev = m.queue[m.head++ & 255];
			handlers[ev >> 24](&m, ev & 0xffffff);
			m.handled++;
		}
	}
	uint64_t acc = m.handled;
	for (int i = 0; i < 8; i++)
		acc = acc * 1000003u ^ m.regs[i];
	return acc;
}

/* ---- merge sort through a comparator pointer --------------------------- */

typedef struct item {
	uint32_t key;
	uint16_t group;
	uint16_t seq;
} item;

typedef int (*cmp_fn)(const void *, const void *);

static int by_key(const void *a, const void *b)
{
	const item *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

static int by_group_then_key(const void *a, const void *b)
{
	const item *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return by_key(a, b);
}

static void merge_sort(item *v, item *tmp, size_t n, cmp_fn cmp)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	merge_sort(v, tmp, h, cmp);
	merge_sort(v + h, tmp, n - h, cmp);
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = cmp(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	for (k = 0; k < n; k++)
		v[k] = tmp[k];
}

#define NITEMS 200000

static uint64_t sort_run(void)
{
	item *v = malloc(NITEMS * sizeof *v), *tmp = malloc(NITEMS * sizeof *tmp);
	if (!v || !tmp)
		exit(1);
	uint64_t acc = 0;
	for (int pass = 0; pass < 10; pass++) {
		for (uint32_t i = 0; i < NITEMS; i++)
			v[i] = (item){next_rand() % 100000, (uint16_t)(next_rand() % 64), (uint16_t)i};
		merge_sort(v, tmp, NITEMS, pass & 1 ? by_group_then_key : by_key);
		for (uint32_t i = 0; i < NITEMS; i += 1000)
			acc = acc * 31 + v[i].key + v[i].group + v[i].seq;
	}
	free(v);
	free(tmp);
	return acc;
}

/* ---- expression trees with per-node eval pointers ---------------------- */

typedef struct expr expr;
typedef int32_t (*eval_fn)(const expr *, const int32_t *env);
struct expr {
	eval_fn eval;
	const expr *l, *r;
	int32_t k;
};

static int32_t ev_const(const expr *e, const int32_t *env) { (void)env; return e->k; }
static int32_t ev_var(const expr *e, const int32_t *env) { return env[e->k]; }
static int32_t ev_add(const expr *e, const int32_t *env) { return (int32_t)((uint32_t)e->l->eval(e->l, env) + (uint32_t)e->r->eval(e->r, env)); }
static int32_t ev_sub(const expr *e, const int32_t *env) { return (int32_t)((uint32_t)e->l->eval(e->l, env) - (uint32_t)e->r->eval(e->r, env)); }
static int32_t ev_mul(const expr *e, const int32_t *env) { return (int32_t)((uint32_t)e->l->eval(e->l, env) * (uint32_t)e->r->eval(e->r, env)); }
static int32_t ev_max(const expr *e, const int32_t *env)
{
	int32_t a = e->l->eval(e->l, env), b = e->r->eval(e->r, env);
	return a > b ? a : b;
}

static expr pool[1 << 12];
static int npool;

static const expr *build(int depth)
{
	expr *e = &pool[npool++];
	uint32_t r = next_rand();
	if (depth == 0) {
		e->eval = r & 1 ? ev_const : ev_var;
		e->k = r & 1 ? (int32_t)(r >> 8 & 1023) : (int32_t)(r >> 8 & 7);
		return e;
	}
	static const eval_fn ops[] = {ev_add, ev_sub, ev_mul, ev_max};
	e->eval = ops[r % 4];
	e->l = build(depth - 1);
	e->r = build(r & 16 ? depth - 1 : depth / 2);
	return e;
}

static uint64_t trees_run(void)
{
	const expr *tree = build(10);
	int32_t env[8];
	uint64_t acc = 0;
	for (int32_t i = 0; i < 100000; i++) {
		for (int j = 0; j < 8; j++)
			env[j] = i * (j + 1) - 7 * j;
		acc = acc * 33 + (uint32_t)tree->eval(tree, env);
	}
	return acc + (uint64_t)npool;
}

int main(void)
{
	uint64_t s = shapes_run();
	uint64_t e = events_run();
	uint64_t o = sort_run();
	uint64_t t = trees_run();
	printf("shapes %016llx events %016llx sort %016llx trees %016llx\n", (unsigned long long)s,
	       (unsigned long long)e, (unsigned long long)o, (unsigned long long)t);
	return 0;
}
