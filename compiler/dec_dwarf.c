/* dec_dwarf.c: function names from DWARF (clang -g) for functions the
 * name section does not name: each DW_TAG_subprogram whose low_pc is the
 * start of a function body.  Read-only and bounded; bad data only means
 * fewer names. */
#include <stdlib.h>
#include <string.h>

#include "dec_internal.h"

enum {
  TAG_COMPILE_UNIT = 0x11, TAG_PARTIAL_UNIT = 0x3c, TAG_SUBPROGRAM = 0x2e,
  AT_NAME = 0x03, AT_LOW_PC = 0x11, AT_ABSTRACT_ORIGIN = 0x31, AT_SPECIFICATION = 0x47,
  AT_STR_OFFSETS_BASE = 0x72, AT_ADDR_BASE = 0x73,
  UT_COMPILE = 1, UT_PARTIAL = 3,
};

/* DWARF forms, by what their value is. */
enum { V_NONE, V_NUM, V_ADDR, V_ADDRX, V_STR, V_STRP, V_LINE_STRP, V_STRX, V_REF, V_REF_ADDR };

typedef struct {
  const uint8_t *p, *end;
  bool bad;
} cursor;

typedef struct {
  const uint8_t *info, *abbrev, *str, *line_str, *str_offsets, *addr;
  size_t info_n, abbrev_n, str_n, line_str_n, str_offsets_n, addr_n;
} sections;

/* One compilation unit being read. */
typedef struct {
  const sections *s;
  const uint8_t *unit;      /* its header, where CU-relative refs count from */
  unsigned version, addr_size;
  const uint8_t *abbrevs;   /* its abbreviation table */
  uint64_t str_offsets_base, addr_base;
} unit;

/* A value read for one attribute. */
typedef struct {
  int kind;
  uint64_t num;
  const char *str;
} value;

static uint64_t fixed(cursor *c, unsigned n) {
  if (c->bad || (size_t)(c->end - c->p) < n) {
    c->bad = true;
    return 0;
  }
  uint64_t v = 0;
  for (unsigned i = 0; i < n && i < 8; i++) v |= (uint64_t)c->p[i] << (8 * i); /* data16: skipped */
  c->p += n;
  return v;
}

static uint64_t uleb(cursor *c) {
  uint64_t v = 0;
  for (unsigned shift = 0; !c->bad; shift += 7) {
    if (c->p >= c->end || shift > 63) break;
    uint8_t b = *c->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  c->bad = true;
  return 0;
}

static void skip(cursor *c, uint64_t n) {
  if (c->bad || (uint64_t)(c->end - c->p) < n) c->bad = true;
  else c->p += n;
}

static const char *cstring_at(const uint8_t *sec, size_t n, uint64_t off) {
  if (!sec || off >= n || !memchr(sec + off, 0, n - off)) return NULL;
  return (const char *)sec + off;
}

/* The value of one attribute of form `form` (implicit: an implicit_const's). */
static value read_form(cursor *c, const unit *u, uint64_t form, int64_t implicit, int depth) {
  static const unsigned char sizes[0x2d] = {
      [0x05] = 2, [0x06] = 4, [0x07] = 8, [0x0b] = 1, [0x0c] = 1, [0x11] = 1, [0x12] = 2,
      [0x13] = 4, [0x14] = 8, [0x17] = 4, [0x1c] = 4, [0x1d] = 4, [0x1e] = 16, [0x20] = 8,
      [0x24] = 8, [0x25] = 1, [0x26] = 2, [0x27] = 3, [0x28] = 4, [0x29] = 1, [0x2a] = 2,
      [0x2b] = 3, [0x2c] = 4};
  value v = {V_NONE, 0, NULL};
  switch (form) {
  case 0x01: v = (value){V_ADDR, fixed(c, u->addr_size), NULL}; break;           /* addr */
  case 0x03: skip(c, fixed(c, 2)); break;                                        /* block2 */
  case 0x04: skip(c, fixed(c, 4)); break;                                        /* block4 */
  case 0x09: case 0x18: skip(c, uleb(c)); break;                                 /* block, exprloc */
  case 0x0a: skip(c, fixed(c, 1)); break;                                        /* block1 */
  case 0x08:                                                                     /* string */
    v = (value){V_STR, 0, (const char *)c->p};
    if (!memchr(c->p, 0, (size_t)(c->end - c->p))) c->bad = true;
    else c->p += strlen(v.str) + 1;
    break;
  case 0x0d: case 0x0f: case 0x22: case 0x23: v.num = uleb(c); break;            /* sdata, udata, lists */
  case 0x0e: v = (value){V_STRP, fixed(c, 4), NULL}; break;                      /* strp */
  case 0x1f: v = (value){V_LINE_STRP, fixed(c, 4), NULL}; break;                 /* line_strp */
  case 0x10: v = (value){V_REF_ADDR, fixed(c, u->version <= 2 ? u->addr_size : 4), NULL}; break;
  case 0x11: case 0x12: case 0x13: case 0x14:                                   /* ref1..ref8 */
    v = (value){V_REF, fixed(c, sizes[form]), NULL};
    break;
  case 0x15: v = (value){V_REF, uleb(c), NULL}; break;                           /* ref_udata */
  case 0x16:                                                                     /* indirect */
    if (depth > 0) c->bad = true;
    else v = read_form(c, u, uleb(c), implicit, depth + 1);
    break;
  case 0x19: break;                                                              /* flag_present */
  case 0x1a: v = (value){V_STRX, uleb(c), NULL}; break;                          /* strx */
  case 0x1b: v = (value){V_ADDRX, uleb(c), NULL}; break;                         /* addrx */
  case 0x21: v.num = (uint64_t)implicit; break;                                  /* implicit_const */
  case 0x25: case 0x26: case 0x27: case 0x28: v = (value){V_STRX, fixed(c, sizes[form]), NULL}; break;
  case 0x29: case 0x2a: case 0x2b: case 0x2c: v = (value){V_ADDRX, fixed(c, sizes[form]), NULL}; break;
  default:
    if (form < sizeof sizes && sizes[form]) v.num = fixed(c, sizes[form]);
    else c->bad = true; /* a form this reader cannot size: stop the unit */
  }
  return v;
}

static const char *string_of(const unit *u, const value *v) {
  const sections *s = u->s;
  if (v->kind == V_STR) return v->str;
  if (v->kind == V_STRP) return cstring_at(s->str, s->str_n, v->num);
  if (v->kind == V_LINE_STRP) return cstring_at(s->line_str, s->line_str_n, v->num);
  if (v->kind != V_STRX || !s->str_offsets) return NULL;
  uint64_t at = u->str_offsets_base + v->num * 4;
  if (at + 4 > s->str_offsets_n) return NULL;
  cursor c = {s->str_offsets + at, s->str_offsets + s->str_offsets_n, false};
  return cstring_at(s->str, s->str_n, fixed(&c, 4));
}

static bool address_of(const unit *u, const value *v, uint64_t *out) {
  if (v->kind == V_ADDR) {
    *out = v->num;
    return true;
  }
  if (v->kind != V_ADDRX || !u->s->addr) return false;
  uint64_t at = u->addr_base + v->num * u->addr_size;
  if (at + u->addr_size > u->s->addr_n) return false;
  cursor c = {u->s->addr + at, u->s->addr + u->s->addr_n, false};
  *out = fixed(&c, u->addr_size);
  return !c.bad;
}

/* The abbreviation `code` of the unit: its tag, children flag and the
 * cursor on its attribute specs; false when it has none. */
static bool find_abbrev(const unit *u, uint64_t code, uint64_t *tag, cursor *specs) {
  const sections *s = u->s;
  cursor c = {u->abbrevs, s->abbrev + s->abbrev_n, false};
  for (;;) {
    uint64_t k = uleb(&c);
    if (c.bad || k == 0) return false;
    *tag = uleb(&c);
    fixed(&c, 1);
    *specs = c;
    if (k == code) return !c.bad;
    for (;;) {
      uint64_t at = uleb(&c), form = uleb(&c);
      if (form == 0x21) uleb(&c); /* implicit_const's value: skipped */
      if (c.bad || (!at && !form)) break;
    }
    if (c.bad) return false;
  }
}

/* What one DIE says that matters here. */
typedef struct {
  uint64_t tag;
  const char *name;
  bool has_low_pc;
  uint64_t low_pc;
  const uint8_t *origin; /* abstract_origin or specification, in .debug_info */
} die;

/* Reads the DIE at c (its attributes), leaving c after it. */
static bool read_die(cursor *c, unit *u, die *d) {
  uint64_t code = uleb(c), tag;
  memset(d, 0, sizeof *d);
  cursor specs;
  if (c->bad || code == 0 || !find_abbrev(u, code, &tag, &specs)) return false;
  d->tag = tag;
  value low = {V_NONE, 0, NULL};
  for (;;) {
    uint64_t at = uleb(&specs), form = uleb(&specs);
    /* An implicit_const is signed; no attribute read here takes one. */
    int64_t implicit = form == 0x21 ? (int64_t)uleb(&specs) : 0;
    if (specs.bad) c->bad = true;
    if (c->bad || (!at && !form)) break;
    value v = read_form(c, u, form, implicit, 0);
    if (at == AT_NAME) d->name = string_of(u, &v);
    else if (at == AT_LOW_PC) low = v;
    else if ((at == AT_ABSTRACT_ORIGIN || at == AT_SPECIFICATION) && v.kind == V_REF)
      d->origin = v.num < (uint64_t)(u->s->info + u->s->info_n - u->unit) ? u->unit + v.num : NULL;
    else if ((at == AT_ABSTRACT_ORIGIN || at == AT_SPECIFICATION) && v.kind == V_REF_ADDR)
      d->origin = v.num < u->s->info_n ? u->s->info + v.num : NULL;
    else if (at == AT_STR_OFFSETS_BASE) u->str_offsets_base = v.num;
    else if (at == AT_ADDR_BASE) u->addr_base = v.num;
  }
  /* addrx may come before addr_base in the unit's own DIE: resolved last */
  d->has_low_pc = !c->bad && address_of(u, &low, &d->low_pc);
  return !c->bad;
}

/* The name of a subprogram known only through its abstract origin or
 * specification (inlined and out-of-line copies, C++ definitions). */
static const char *origin_name(unit *u, const uint8_t *at) {
  for (int hop = 0; at && hop < 4; hop++) {
    cursor c = {at, u->s->info + u->s->info_n, false};
    die d;
    if (!read_die(&c, u, &d)) return NULL;
    if (d.name) return d.name;
    at = d.origin;
  }
  return NULL;
}

/* Functions by the code-section offset of their body (after its size). */
typedef struct {
  uint32_t offset, func;
} body_start;

static int by_offset(const void *a, const void *b) {
  uint32_t x = ((const body_start *)a)->offset, y = ((const body_start *)b)->offset;
  return x < y ? -1 : x > y;
}

static void name_function(wasm_module *m, tw_arena *arena, const body_start *starts, uint32_t n,
                          uint64_t low_pc, const char *name) {
  if (!name || low_pc > UINT32_MAX) return;
  body_start key = {(uint32_t)low_pc, 0};
  const body_start *hit = bsearch(&key, starts, n, sizeof *starts, by_offset);
  size_t len = strlen(name);
  if (!hit || m->funcs[hit->func].name || !len || len > 1024 ||
      !dec_utf8_valid((const uint8_t *)name, len))
    return;
  char *copy = tw_arena_alloc(arena, len + 1);
  memcpy(copy, name, len + 1);
  m->funcs[hit->func].name = copy;
}

/* One unit's header at c; false for units this reader skips. */
static bool unit_header(cursor *c, unit *u, const uint8_t **next) {
  u->unit = c->p;
  uint64_t length = fixed(c, 4);
  if (c->bad || length >= 0xfffffff0u || length > (uint64_t)(c->end - c->p)) return c->bad = true, false;
  *next = c->p + length;
  u->version = (unsigned)fixed(c, 2);
  uint64_t abbrev_off;
  if (u->version == 5) {
    uint64_t type = fixed(c, 1);
    u->addr_size = (unsigned)fixed(c, 1);
    abbrev_off = fixed(c, 4);
    if (type != UT_COMPILE && type != UT_PARTIAL) return false;
  } else {
    abbrev_off = fixed(c, 4);
    u->addr_size = (unsigned)fixed(c, 1);
  }
  if (c->bad || u->version < 2 || u->version > 5 || abbrev_off >= u->s->abbrev_n ||
      (u->addr_size != 4 && u->addr_size != 8))
    return false;
  u->abbrevs = u->s->abbrev + abbrev_off;
  u->str_offsets_base = u->addr_base = 0;
  return true;
}

static void read_units(const sections *s, wasm_module *m, tw_arena *arena, const body_start *starts,
                       uint32_t n) {
  cursor c = {s->info, s->info + s->info_n, false};
  while (!c.bad && c.p < c.end) {
    unit u = {.s = s};
    const uint8_t *next = NULL;
    bool readable = unit_header(&c, &u, &next);
    if (c.bad) return;
    cursor d = {c.p, next, false};
    while (readable && !d.bad && d.p < d.end) {
      if (*d.p == 0) { /* a null entry ends a list of children */
        d.p++;
        continue;
      }
      die e;
      if (!read_die(&d, &u, &e)) break;
      if (e.tag == TAG_SUBPROGRAM && e.has_low_pc)
        name_function(m, arena, starts, n, e.low_pc, e.name ? e.name : origin_name(&u, e.origin));
    }
    c.p = next;
  }
}

void dec_dwarf_names(dec_reader *r, const dec_dwarf *dw) {
  wasm_module *m = r->m;
  if (!dw->info.end || !dw->abbrev.end || !dw->code_start) return;
  body_start *starts = malloc((size_t)m->nfuncs * sizeof *starts + 1);
  if (!starts) return;
  uint32_t n = 0;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    const wasm_func *f = &m->funcs[i];
    if (f->imported || f->body_offset < dw->code_start) continue;
    size_t pos = f->body_offset;
    uint64_t size;
    if (!dec_leb(r->bytes, r->size, &pos, 32, false, &size, "", NULL)) continue;
    starts[n++] = (body_start){(uint32_t)(pos - dw->code_start), i};
  }
  qsort(starts, n, sizeof *starts, by_offset);
  sections s = {0};
  const dec_range *from[] = {&dw->info, &dw->abbrev, &dw->str, &dw->line_str, &dw->str_offsets,
                             &dw->addr};
  const uint8_t **to[] = {&s.info, &s.abbrev, &s.str, &s.line_str, &s.str_offsets, &s.addr};
  size_t *len[] = {&s.info_n, &s.abbrev_n, &s.str_n, &s.line_str_n, &s.str_offsets_n, &s.addr_n};
  for (size_t i = 0; i < sizeof from / sizeof from[0]; i++) {
    if (!from[i]->end) continue;
    *to[i] = r->bytes + from[i]->start;
    *len[i] = from[i]->end - from[i]->start;
  }
  read_units(&s, m, r->arena, starts, n);
  free(starts);
}
