/* Interpreter workload: a small dynamically typed scripting language
 * (tokenizer, one-pass compiler to stack bytecode, switch-dispatched VM,
 * interned strings, hash tables, mark-sweep garbage collector) running
 * scripts for recursion, string building, tables and method calls. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- values and heap objects ------------------------------------------ */

enum { V_NIL, V_INT, V_STR, V_TABLE, V_FUNC, V_NATIVE };

typedef struct obj {
	struct obj *next;
	uint8_t type;
	uint8_t marked;
} obj;

typedef struct value {
	int type;
	union {
		int64_t i;
		obj *o;
		struct proto *fn;
		int native;
	} as;
} value;

typedef struct str {
	obj hdr;
	uint32_t len, hash;
	char chars[];
} str;

typedef struct entry {
	value key, val;
} entry;

typedef struct table {
	obj hdr;
	entry *slots;
	uint32_t cap, used, live;
} table;

typedef struct proto {
	const char *name;
	int nparams, nlocals;
	uint8_t *code;
	int ncode, capcode;
	value *consts;
	int nconsts, capconsts;
} proto;

static obj *heap_objects;
static size_t heap_bytes, heap_next_gc = 1 << 20;
static uint64_t gc_runs;

static void die(const char *what)
{
	fprintf(stderr, "interp: %s\n", what);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p && n)
		die("out of memory");
	return p;
}

static value v_nil(void) { return (value){.type = V_NIL}; }
static value v_int(int64_t i) { return (value){.type = V_INT, .as.i = i}; }
static value v_obj(obj *o) { return (value){.type = o->type, .as.o = o}; }

/* ---- interned strings: a weak open-addressing set --------------------- */

static str **strings;
static uint32_t strings_cap, strings_used;

static uint32_t hash_bytes(const char *s, uint32_t n)
{
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static void gc_maybe(void);

static void strings_insert(str *s)
{
	uint32_t mask = strings_cap - 1, i = s->hash & mask;
	while (strings[i] && strings[i] != (str *)1)
		i = (i + 1) & mask;
	strings[i] = s;
}

static void strings_grow(void)
{
	str **old = strings;
	uint32_t old_cap = strings_cap;
	strings_cap = old_cap ? old_cap * 2 : 1024;
	strings = calloc(strings_cap, sizeof *strings);
	if (!strings)
		die("out of memory");
	strings_used = 0;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i] && old[i] != (str *)1) {
			strings_insert(old[i]);
			strings_used++;
		}
	free(old);
}

static obj *new_obj(size_t size, int type)
{
	gc_maybe();
	obj *o = xrealloc(NULL, size);
	o->type = (uint8_t)type;
	o->marked = 0;
	o->next = heap_objects;
	heap_objects = o;
	heap_bytes += size;
	return o;
}

/* The interned string of n bytes at s (one object per distinct content). */
static str *intern(const char *s, uint32_t n)
{
	uint32_t h = hash_bytes(s, n);
	if (strings_cap) {
		uint32_t mask = strings_cap - 1;
		for (uint32_t i = h & mask; strings[i]; i = (i + 1) & mask) {
			str *c = strings[i];
			if (c != (str *)1 && c->hash == h && c->len == n && memcmp(c->chars, s, n) == 0)
				return c;
		}
	}
	str *r = (str *)new_obj(sizeof(str) + n + 1, V_STR);
	r->len = n;
	r->hash = h;
	memcpy(r->chars, s, n);
	r->chars[n] = 0;
	if ((strings_used + 1) * 2 > strings_cap)
		strings_grow();
	strings_insert(r);
	strings_used++;
	return r;
}

/* ---- tables ------------------------------------------------------------ */

static uint32_t hash_value(value k)
{
	if (k.type == V_STR)
		return ((str *)k.as.o)->hash;
	uint64_t x = (uint64_t)k.as.i * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(x >> 32) ^ (uint32_t)x;
}

static int same(value a, value b)
{
	if (a.type != b.type)
		return 0;
	switch (a.type) {
	case V_NIL: return 1;
	case V_INT: return a.as.i == b.as.i;
	case V_FUNC: return a.as.fn == b.as.fn;
	case V_NATIVE: return a.as.native == b.as.native;
	default: return a.as.o == b.as.o;
	}
}

static entry *table_find(table *t, value k)
{
	uint32_t mask = t->cap - 1;
	for (uint32_t i = hash_value(k) & mask;; i = (i + 1) & mask) {
		entry *e = &t->slots[i];
		if (e->key.type == V_NIL || same(e->key, k))
			return e;
	}
}

static value table_get(table *t, value k)
{
	if (!t->cap)
		return v_nil();
	entry *e = table_find(t, k);
	return e->key.type == V_NIL ? v_nil() : e->val;
}

static void table_set(table *t, value k, value v)
{
	if (k.type == V_NIL)
		die("nil table key");
	if ((t->used + 1) * 4 > t->cap * 3) {
		entry *old = t->slots;
		uint32_t old_cap = t->cap;
		t->cap = old_cap ? old_cap * 2 : 8;
		t->slots = calloc(t->cap, sizeof *t->slots);
		if (!t->slots)
			die("out of memory");
		heap_bytes += (t->cap - old_cap) * sizeof *t->slots;
		t->used = 0;
		for (uint32_t i = 0; i < old_cap; i++)
			if (old[i].key.type != V_NIL) {
				*table_find(t, old[i].key) = old[i];
				t->used++;
			}
		free(old);
	}
	entry *e = table_find(t, k);
	if (e->key.type == V_NIL) {
		e->key = k;
		t->used++;
		e->val = v_nil();
	}
	t->live += (v.type != V_NIL) - (e->val.type != V_NIL);
	e->val = v;
}

/* ---- garbage collector -------------------------------------------------- */

#define STACK_MAX (1 << 16)
static value stack[STACK_MAX];
static value *sp = stack;
static table *globals;
static proto **protos;
static int nprotos;
static obj **gray;
static size_t ngray, capgray;

static void mark(value v)
{
	if (v.type != V_STR && v.type != V_TABLE)
		return;
	obj *o = v.as.o;
	if (o->marked)
		return;
	o->marked = 1;
	if (o->type == V_TABLE) {
		if (ngray == capgray) {
			capgray = capgray ? capgray * 2 : 256;
			gray = xrealloc(gray, capgray * sizeof *gray);
		}
		gray[ngray++] = o;
	}
}

static void trace(void)
{
	while (ngray) {
		table *t = (table *)gray[--ngray];
		for (uint32_t i = 0; i < t->cap; i++)
			if (t->slots[i].key.type != V_NIL) {
				mark(t->slots[i].key);
				mark(t->slots[i].val);
			}
	}
}

static void sweep(void)
{
	for (uint32_t i = 0; i < strings_cap; i++)
		if (strings[i] && strings[i] != (str *)1 && !strings[i]->hdr.marked) {
			strings[i] = (str *)1; /* tombstone: probes continue past it */
			strings_used--;
		}
	obj **link = &heap_objects;
	while (*link) {
		obj *o = *link;
		if (o->marked) {
			o->marked = 0;
			link = &o->next;
			continue;
		}
		*link = o->next;
		if (o->type == V_TABLE) {
			table *t = (table *)o;
			heap_bytes -= sizeof *t + t->cap * sizeof *t->slots;
			free(t->slots);
		} else {
			heap_bytes -= sizeof(str) + ((str *)o)->len + 1;
		}
		free(o);
	}
}

static void gc_collect(void)
{
	gc_runs++;
	for (value *v = stack; v < sp; v++)
		mark(*v);
	if (globals)
		mark(v_obj(&globals->hdr));
	for (int p = 0; p < nprotos; p++)
		for (int i = 0; i < protos[p]->nconsts; i++)
			mark(protos[p]->consts[i]);
	trace();
	sweep();
	heap_next_gc = heap_bytes * 2 > (1u << 20) ? heap_bytes * 2 : (1u << 20);
}

static void gc_maybe(void)
{
	if (heap_bytes > heap_next_gc)
		gc_collect();
}

/* ---- bytecode ---------------------------------------------------------- */

enum op {
	OP_CONST, OP_NIL, OP_GETL, OP_SETL, OP_GETG, OP_SETG, OP_POP,
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_NEG, OP_NOT,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_CONCAT,
	OP_JMP, OP_JZ, OP_JZ_KEEP, OP_JNZ_KEEP, OP_LOOP,
	OP_CALL, OP_RET, OP_NEWTABLE, OP_GETIDX, OP_SETIDX, OP_GETFIELD, OP_SETFIELD,
};

/* ---- tokenizer --------------------------------------------------------- */

enum tok { T_EOF, T_NUM, T_STR, T_NAME, T_PUNCT, T_FN, T_VAR, T_IF, T_ELSE, T_WHILE, T_RETURN, T_NILKW };

static const char *src;
static int tok;
static char tok_text[256];
static int tok_len;
static int64_t tok_num;

static const char *const keywords[] = {"fn", "var", "if", "else", "while", "return", "nil"};

static void next(void)
{
	while (*src == ' ' || *src == '\n' || *src == '\t' || *src == '#') {
		if (*src == '#')
			while (*src && *src != '\n')
				src++;
		else
			src++;
	}
	const char *start = src;
	tok_len = 0;
	if (!*src) {
		tok = T_EOF;
	} else if (*src >= '0' && *src <= '9') {
		tok_num = 0;
		while (*src >= '0' && *src <= '9')
			tok_num = tok_num * 10 + (*src++ - '0');
		tok = T_NUM;
	} else if (*src == '"') {
		src++;
		while (*src != '"') {
			if (!*src || tok_len >= 255)
				die("bad string literal");
			tok_text[tok_len++] = *src++;
		}
		src++;
		tok = T_STR;
	} else if ((*src >= 'a' && *src <= 'z') || (*src >= 'A' && *src <= 'Z') || *src == '_') {
		while ((*src >= 'a' && *src <= 'z') || (*src >= 'A' && *src <= 'Z') || *src == '_' ||
		       (*src >= '0' && *src <= '9'))
			src++;
		tok_len = (int)(src - start);
		memcpy(tok_text, start, (size_t)tok_len);
		tok = T_NAME;
		for (int k = 0; k < 7; k++)
			if ((int)strlen(keywords[k]) == tok_len && memcmp(keywords[k], start, (size_t)tok_len) == 0)
				tok = T_FN + k;
	} else {
		static const char *const two[] = {"==", "!=", "<=", ">=", "&&", "||", ".."};
		tok = T_PUNCT;
		tok_len = 1;
		for (int k = 0; k < 7; k++)
			if (src[0] == two[k][0] && src[1] == two[k][1])
				tok_len = 2;
		memcpy(tok_text, src, (size_t)tok_len);
		src += tok_len;
	}
	tok_text[tok_len] = 0;
}

static int is_punct(const char *p) { return tok == T_PUNCT && strcmp(tok_text, p) == 0; }

static void expect(const char *p)
{
	if (!is_punct(p)) {
		fprintf(stderr, "interp: expected %s near '%s'\n", p, tok_text);
		exit(1);
	}
	next();
}

/* ---- compiler ---------------------------------------------------------- */

static proto *cur;
static char local_names[64][32];
static int nlocal_names;
static int last_op_at = -1;

static void emit(int byte)
{
	if (cur->ncode == cur->capcode) {
		cur->capcode = cur->capcode ? cur->capcode * 2 : 64;
		cur->code = xrealloc(cur->code, (size_t)cur->capcode);
	}
	cur->code[cur->ncode++] = (uint8_t)byte;
}

static void emit_op(int op, int arg)
{
	last_op_at = cur->ncode;
	emit(op);
	if (op == OP_CONST || op == OP_GETL || op == OP_SETL || op == OP_GETG || op == OP_SETG ||
	    op == OP_CALL || op == OP_GETFIELD || op == OP_SETFIELD) {
		emit(arg & 0xff);
		emit(arg >> 8);
	}
}

static int emit_jump(int op)
{
	emit_op(op, 0);
	emit(0);
	emit(0);
	return cur->ncode - 2;
}

static void patch(int at)
{
	cur->code[at] = (uint8_t)(cur->ncode & 0xff);
	cur->code[at + 1] = (uint8_t)(cur->ncode >> 8);
}

static int add_const(value v)
{
	for (int i = 0; i < cur->nconsts; i++)
		if (same(cur->consts[i], v))
			return i;
	if (cur->nconsts == cur->capconsts) {
		cur->capconsts = cur->capconsts ? cur->capconsts * 2 : 16;
		cur->consts = xrealloc(cur->consts, (size_t)cur->capconsts * sizeof *cur->consts);
	}
	cur->consts[cur->nconsts] = v;
	return cur->nconsts++;
}

static int name_const(void) { return add_const(v_obj(&intern(tok_text, (uint32_t)tok_len)->hdr)); }

static int find_local(const char *name)
{
	for (int i = nlocal_names - 1; i >= 0; i--)
		if (strcmp(local_names[i], name) == 0)
			return i;
	return -1;
}

static int in_function(void) { return cur != protos[0]; }

static void expr(void);

static void primary(void)
{
	if (tok == T_NUM) {
		emit_op(OP_CONST, add_const(v_int(tok_num)));
		next();
	} else if (tok == T_STR) {
		emit_op(OP_CONST, name_const());
		next();
	} else if (tok == T_NILKW) {
		emit_op(OP_NIL, 0);
		next();
	} else if (tok == T_NAME) {
		int l = in_function() ? find_local(tok_text) : -1;
		if (l >= 0)
			emit_op(OP_GETL, l);
		else
			emit_op(OP_GETG, name_const());
		next();
	} else if (is_punct("(")) {
		next();
		expr();
		expect(")");
	} else if (is_punct("{")) {
		next();
		expect("}");
		emit_op(OP_NEWTABLE, 0);
	} else {
		fprintf(stderr, "interp: unexpected '%s'\n", tok_text);
		exit(1);
	}
}

static void postfix(void)
{
	primary();
	for (;;) {
		if (is_punct("(")) {
			next();
			int n = 0;
			while (!is_punct(")")) {
				expr();
				n++;
				if (!is_punct(")"))
					expect(",");
			}
			next();
			emit_op(OP_CALL, n);
		} else if (is_punct("[")) {
			next();
			expr();
			expect("]");
			emit_op(OP_GETIDX, 0);
		} else if (is_punct(".") && tok_len == 1) {
			next();
			emit_op(OP_GETFIELD, name_const());
			next();
		} else {
			return;
		}
	}
}

static void unary(void)
{
	if (is_punct("-")) {
		next();
		unary();
		emit_op(OP_NEG, 0);
	} else if (is_punct("!")) {
		next();
		unary();
		emit_op(OP_NOT, 0);
	} else {
		postfix();
	}
}

/* Binary operators by precedence level, lowest first (&& and || apart). */
static const struct {
	const char *text;
	int level, op;
} binops[] = {
	{"==", 0, OP_EQ}, {"!=", 0, OP_NE}, {"<", 0, OP_LT}, {"<=", 0, OP_LE}, {">", 0, OP_GT},
	{">=", 0, OP_GE}, {"..", 1, OP_CONCAT}, {"+", 2, OP_ADD}, {"-", 2, OP_SUB},
	{"*", 3, OP_MUL}, {"/", 3, OP_DIV}, {"%", 3, OP_MOD},
};

static void binary(int level)
{
	if (level > 3) {
		unary();
		return;
	}
	binary(level + 1);
	for (;;) {
		int op = -1;
		for (size_t k = 0; k < sizeof binops / sizeof binops[0]; k++)
			if (binops[k].level == level && is_punct(binops[k].text))
				op = binops[k].op;
		if (op < 0)
			return;
		next();
		binary(level + 1);
		emit_op(op, 0);
	}
}

static void logic(int is_or)
{
	if (is_or)
		logic(0);
	else
		binary(0);
	while (is_punct(is_or ? "||" : "&&")) {
		next();
		int j = emit_jump(is_or ? OP_JNZ_KEEP : OP_JZ_KEEP);
		if (is_or)
			logic(0);
		else
			binary(0);
		patch(j);
	}
}

static void expr(void) { logic(1); }

static void block(void);

static int declare_local(const char *name)
{
	int l = find_local(name);
	if (l >= 0)
		return l;
	if (nlocal_names == 64)
		die("too many locals");
	strcpy(local_names[nlocal_names], name);
	if (nlocal_names + 1 > cur->nlocals)
		cur->nlocals = nlocal_names + 1;
	return nlocal_names++;
}

static void function_decl(void)
{
	char name[32];
	snprintf(name, sizeof name, "%s", tok_text);
	int g = name_const();
	next();
	proto *outer = cur;
	proto *p = calloc(1, sizeof *p);
	if (!p)
		die("out of memory");
	p->name = strdup(name);
	protos = xrealloc(protos, (size_t)(nprotos + 1) * sizeof *protos);
	protos[nprotos++] = p;
	cur = p;
	nlocal_names = 0;
	expect("(");
	while (!is_punct(")")) {
		declare_local(tok_text);
		p->nparams++;
		next();
		if (!is_punct(")"))
			expect(",");
	}
	next();
	block();
	emit_op(OP_NIL, 0);
	emit_op(OP_RET, 0);
	cur = outer;
	nlocal_names = 0;
	add_const((value){.type = V_FUNC, .as.fn = p});
	emit_op(OP_CONST, add_const((value){.type = V_FUNC, .as.fn = p}));
	emit_op(OP_SETG, g);
}

static void assign_target(int at)
{
	/* The expression just parsed is the target: turn its last read into a write. */
	int op = cur->code[at];
	int arg = cur->code[at + 1] | cur->code[at + 2] << 8;
	cur->ncode = at;
	next();
	expr();
	switch (op) {
	case OP_GETL: emit_op(OP_SETL, arg); break;
	case OP_GETG: emit_op(OP_SETG, arg); break;
	case OP_GETIDX: emit_op(OP_SETIDX, 0); break;
	case OP_GETFIELD: emit_op(OP_SETFIELD, arg); break;
	default: die("cannot assign to that");
	}
}

static void statement(void)
{
	if (tok == T_FN) {
		next();
		function_decl();
	} else if (tok == T_VAR) {
		next();
		char name[32];
		snprintf(name, sizeof name, "%s", tok_text);
		int g = in_function() ? -1 : name_const();
		next();
		expect("=");
		expr();
		if (in_function())
			emit_op(OP_SETL, declare_local(name));
		else
			emit_op(OP_SETG, g);
		expect(";");
	} else if (tok == T_IF) {
		next();
		expr();
		int jf = emit_jump(OP_JZ);
		block();
		if (tok == T_ELSE) {
			int jend = emit_jump(OP_JMP);
			patch(jf);
			next();
			if (tok == T_IF)
				statement();
			else
				block();
			patch(jend);
		} else {
			patch(jf);
		}
	} else if (tok == T_WHILE) {
		next();
		int top = cur->ncode;
		expr();
		int jf = emit_jump(OP_JZ);
		block();
		emit_op(OP_LOOP, 0);
		emit(top & 0xff);
		emit(top >> 8);
		patch(jf);
	} else if (tok == T_RETURN) {
		next();
		if (is_punct(";"))
			emit_op(OP_NIL, 0);
		else
			expr();
		emit_op(OP_RET, 0);
		expect(";");
	} else {
		expr();
		if (is_punct("="))
			assign_target(last_op_at);
		else
			emit_op(OP_POP, 0);
		expect(";");
	}
}

static void block(void)
{
	expect("{");
	while (!is_punct("}"))
		statement();
	next();
}

static proto *compile(const char *text)
{
	proto *main_fn = calloc(1, sizeof *main_fn);
	if (!main_fn)
		die("out of memory");
	main_fn->name = "main";
	protos = xrealloc(protos, (size_t)(nprotos + 1) * sizeof *protos);
	/* The script's top level is protos[0] while it compiles. */
	memmove(protos + 1, protos, (size_t)nprotos * sizeof *protos);
	protos[0] = main_fn;
	nprotos++;
	cur = main_fn;
	src = text;
	next();
	while (tok != T_EOF)
		statement();
	emit_op(OP_NIL, 0);
	emit_op(OP_RET, 0);
	return main_fn;
}

/* ---- natives ----------------------------------------------------------- */

static uint32_t int_text(int64_t v, char *buf)
{
	char tmp[24];
	uint32_t n = 0, len = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		buf[len++] = '-';
	while (n)
		buf[len++] = tmp[--n];
	return len;
}

static str *to_str(value v)
{
	char buf[24];
	switch (v.type) {
	case V_STR: return (str *)v.as.o;
	case V_INT: return intern(buf, int_text(v.as.i, buf));
	case V_NIL: return intern("nil", 3);
	default: return intern("<object>", 8);
	}
}

static value native_call(int which, value *args, int n)
{
	switch (which) {
	case 0: /* print(...) */
		for (int i = 0; i < n; i++) {
			str *s = to_str(args[i]);
			fputs(i ? " " : "", stdout);
			fwrite(s->chars, 1, s->len, stdout);
		}
		fputs("\n", stdout);
		return v_nil();
	case 1: /* len(x) */
		if (n == 1 && args[0].type == V_STR)
			return v_int(((str *)args[0].as.o)->len);
		if (n == 1 && args[0].type == V_TABLE)
			return v_int(((table *)args[0].as.o)->live);
		die("len: bad argument");
		break;
	case 2: /* byte(s, i) */
		if (n == 2 && args[0].type == V_STR && args[1].type == V_INT) {
			str *s = (str *)args[0].as.o;
			uint64_t i = (uint64_t)args[1].as.i;
			return i < s->len ? v_int((uint8_t)s->chars[i]) : v_nil();
		}
		die("byte: bad argument");
		break;
	case 3: /* sub(s, from, to) */
		if (n == 3 && args[0].type == V_STR && args[1].type == V_INT && args[2].type == V_INT) {
			str *s = (str *)args[0].as.o;
			int64_t a = args[1].as.i, b = args[2].as.i;
			if (a < 0)
				a = 0;
			if (b > (int64_t)s->len)
				b = s->len;
			if (b < a)
				b = a;
			return v_obj(&intern(s->chars + a, (uint32_t)(b - a))->hdr);
		}
		die("sub: bad argument");
		break;
	}
	return v_nil();
}

static const char *const native_names[] = {"print", "len", "byte", "sub"};

/* ---- the VM ------------------------------------------------------------ */

typedef struct frame {
	proto *fn;
	const uint8_t *pc;
	value *base;
} frame;

static frame frames[4096];

static int truthy(value v) { return v.type != V_NIL && !(v.type == V_INT && v.as.i == 0); }

static int64_t need_int(value v)
{
	if (v.type != V_INT)
		die("arithmetic on a non-integer");
	return v.as.i;
}

static value concat(value a, value b)
{
	/* Strings made from integers are kept on the VM stack (reachable)
	 * until the result exists: interning may collect. */
	str *x = to_str(a);
	*sp++ = v_obj(&x->hdr);
	str *y = to_str(b);
	*sp++ = v_obj(&y->hdr);
	uint32_t n = x->len + y->len;
	char small[512];
	char *buf = n <= sizeof small ? small : xrealloc(NULL, n);
	memcpy(buf, x->chars, x->len);
	memcpy(buf + x->len, y->chars, y->len);
	str *r = intern(buf, n);
	if (buf != small)
		free(buf);
	sp -= 2;
	return v_obj(&r->hdr);
}

static int compare(int op, value a, value b)
{
	if (a.type == V_STR && b.type == V_STR) {
		str *x = (str *)a.as.o, *y = (str *)b.as.o;
		uint32_t n = x->len < y->len ? x->len : y->len;
		int c = memcmp(x->chars, y->chars, n);
		int64_t d = c ? c : (int64_t)x->len - (int64_t)y->len;
		a = v_int(d);
		b = v_int(0);
	}
	int64_t x = need_int(a), y = need_int(b);
	switch (op) {
	case OP_LT: return x < y;
	case OP_LE: return x <= y;
	case OP_GT: return x > y;
	default: return x >= y;
	}
}

#define ARG16(p) ((int)((p)[0] | (p)[1] << 8))

static void run(proto *main_fn)
{
	frame *f = frames;
	f->fn = main_fn;
	f->pc = main_fn->code;
	*sp++ = v_nil(); /* the callee's slot, which the result replaces */
	f->base = sp;
	for (int i = 0; i < main_fn->nlocals; i++)
		*sp++ = v_nil();
	const uint8_t *pc = f->pc;
	value *consts = main_fn->consts;
	for (;;) {
		value a, b;
		switch (*pc++) {
		case OP_CONST: *sp++ = consts[ARG16(pc)]; pc += 2; break;
		case OP_NIL: *sp++ = v_nil(); break;
		case OP_GETL: *sp++ = f->base[ARG16(pc)]; pc += 2; break;
		case OP_SETL: f->base[ARG16(pc)] = *--sp; pc += 2; break;
		case OP_GETG: *sp++ = table_get(globals, consts[ARG16(pc)]); pc += 2; break;
		case OP_SETG: table_set(globals, consts[ARG16(pc)], sp[-1]); sp--; pc += 2; break;
		case OP_POP: sp--; break;
		case OP_ADD: b = *--sp; sp[-1] = v_int((int64_t)((uint64_t)need_int(sp[-1]) + (uint64_t)need_int(b))); break;
		case OP_SUB: b = *--sp; sp[-1] = v_int((int64_t)((uint64_t)need_int(sp[-1]) - (uint64_t)need_int(b))); break;
		case OP_MUL: b = *--sp; sp[-1] = v_int((int64_t)((uint64_t)need_int(sp[-1]) * (uint64_t)need_int(b))); break;
		case OP_DIV:
		case OP_MOD: {
			int64_t y = need_int(*--sp), x = need_int(sp[-1]);
			if (y == 0 || (x == INT64_MIN && y == -1))
				die("bad division");
			sp[-1] = v_int(pc[-1] == OP_DIV ? x / y : x % y);
			break;
		}
		case OP_NEG: sp[-1] = v_int((int64_t)(0 - (uint64_t)need_int(sp[-1]))); break;
		case OP_NOT: sp[-1] = v_int(!truthy(sp[-1])); break;
		case OP_EQ: b = *--sp; sp[-1] = v_int(same(sp[-1], b)); break;
		case OP_NE: b = *--sp; sp[-1] = v_int(!same(sp[-1], b)); break;
		case OP_LT:
		case OP_LE:
		case OP_GT:
		case OP_GE: b = *--sp; sp[-1] = v_int(compare(pc[-1], sp[-1], b)); break;
		case OP_CONCAT: a = concat(sp[-2], sp[-1]); sp[-2] = a; sp--; break;
		case OP_JMP: pc = f->fn->code + ARG16(pc); break;
		case OP_LOOP: pc = f->fn->code + ARG16(pc); gc_maybe(); break;
		case OP_JZ: pc = truthy(*--sp) ? pc + 2 : f->fn->code + ARG16(pc); break;
		case OP_JZ_KEEP:
			if (truthy(sp[-1])) { sp--; pc += 2; } else pc = f->fn->code + ARG16(pc);
			break;
		case OP_JNZ_KEEP:
			if (!truthy(sp[-1])) { sp--; pc += 2; } else pc = f->fn->code + ARG16(pc);
			break;
		case OP_CALL: {
			int n = ARG16(pc);
			pc += 2;
			value callee = sp[-n - 1];
			if (callee.type == V_NATIVE) {
				a = native_call(callee.as.native, sp - n, n);
				sp -= n;
				sp[-1] = a;
				break;
			}
			if (callee.type != V_FUNC || callee.as.fn->nparams != n)
				die("bad call");
			if (f == frames + 4095)
				die("call stack overflow");
			f->pc = pc;
			f++;
			f->fn = callee.as.fn;
			f->base = sp - n;
			for (int i = n; i < f->fn->nlocals; i++)
				*sp++ = v_nil();
			pc = f->fn->code;
			consts = f->fn->consts;
			break;
		}
		case OP_RET:
			a = sp[-1];
			sp = f->base - 1;
			*sp++ = a;
			if (f == frames)
				return;
			f--;
			pc = f->pc;
			consts = f->fn->consts;
			break;
		case OP_NEWTABLE: {
			table *t = (table *)new_obj(sizeof(table), V_TABLE);
			t->slots = NULL;
			t->cap = t->used = t->live = 0;
			*sp++ = v_obj(&t->hdr);
			break;
		}
		case OP_GETIDX:
			b = *--sp;
			if (sp[-1].type != V_TABLE)
				die("index of a non-table");
			sp[-1] = table_get((table *)sp[-1].as.o, b);
			break;
		case OP_SETIDX:
			if (sp[-3].type != V_TABLE)
				die("index of a non-table");
			table_set((table *)sp[-3].as.o, sp[-2], sp[-1]);
			sp -= 3;
			break;
		case OP_GETFIELD:
			if (sp[-1].type != V_TABLE)
				die("field of a non-table");
			sp[-1] = table_get((table *)sp[-1].as.o, consts[ARG16(pc)]);
			pc += 2;
			break;
		case OP_SETFIELD:
			if (sp[-2].type != V_TABLE)
				die("field of a non-table");
			table_set((table *)sp[-2].as.o, consts[ARG16(pc)], sp[-1]);
			sp -= 2;
			pc += 2;
			break;
		default: die("bad opcode");
		}
	}
}

/* ---- scripts ----------------------------------------------------------- */

static const char *const scripts[] = {
	/* recursion and integer arithmetic */
	"fn fib(n) { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); }\n"
	"print(\"fib\", fib(29));\n",

	/* string building: concatenation, interning, substrings, bytes */
	"var total = 0; var round = 0; var longest = \"\";\n"
	"while round < 400 {\n"
	"  var s = \"\"; var i = 0;\n"
	"  while i < 120 { s = s .. \"<\" .. (i * round % 97) .. \">\"; i = i + 1; }\n"
	"  var j = 0; var h = 0;\n"
	"  while j < len(s) { h = (h * 31 + byte(s, j)) % 1000000007; j = j + 7; }\n"
	"  total = total + h + len(sub(s, round, round + 40));\n"
	"  if len(s) > len(longest) || (len(s) == len(longest) && s > longest) { longest = s; }\n"
	"  round = round + 1;\n"
	"}\n"
	"print(\"strings\", total, len(longest), sub(longest, 0, 24));\n",

	/* tables as hash maps: word counts with string keys, a sieve with int keys */
	"var counts = {}; var i = 0;\n"
	"while i < 400000 {\n"
	"  var k = \"w\" .. (i * 7919 % 3001);\n"
	"  var c = counts[k];\n"
	"  if c == nil { counts[k] = 1; } else { counts[k] = c + 1; }\n"
	"  i = i + 1;\n"
	"}\n"
	"var sum = 0; var j = 0;\n"
	"while j < 3001 { sum = sum + counts[\"w\" .. j] * j; j = j + 1; }\n"
	"print(\"words\", len(counts), sum);\n"
	"var composite = {}; var n = 500000; var p = 2; var primes = 0;\n"
	"while p < n {\n"
	"  if composite[p] == nil { primes = primes + 1; var m = p * p; while m < n { composite[m] = 1; m = m + p; } }\n"
	"  p = p + 1;\n"
	"}\n"
	"print(\"primes\", primes);\n",

	/* objects: tables with fields and methods, lots of short-lived garbage */
	"fn vec(x, y) { var v = {}; v.x = x; v.y = y; v.add = vadd; v.dot = vdot; return v; }\n"
	"fn vadd(a, b) { return vec(a.x + b.x, a.y + b.y); }\n"
	"fn vdot(a, b) { return a.x * b.x + a.y * b.y; }\n"
	"var acc = vec(0, 0); var k = 0; var d = 0;\n"
	"while k < 300000 {\n"
	"  var v = vec(k % 13 - 6, k % 7 - 3);\n"
	"  acc = acc.add(acc, v);\n"
	"  d = (d + acc.dot(acc, v)) % 1000000007;\n"
	"  k = k + 1;\n"
	"}\n"
	"print(\"vectors\", acc.x, acc.y, d);\n",
};

int main(void)
{
	globals = (table *)new_obj(sizeof(table), V_TABLE);
	globals->slots = NULL;
	globals->cap = globals->used = globals->live = 0;
	for (int i = 0; i < 4; i++) {
		value name = v_obj(&intern(native_names[i], (uint32_t)strlen(native_names[i]))->hdr);
		*sp++ = name; /* reachable while the table grows */
		table_set(globals, name, (value){.type = V_NATIVE, .as.native = i});
		sp--;
	}
	for (size_t s = 0; s < sizeof scripts / sizeof scripts[0]; s++) {
		proto *p = compile(scripts[s]);
		run(p);
		sp = stack;
	}
	gc_collect();
	printf("live objects %s\n", heap_objects ? "some" : "none");
	return 0;
}
