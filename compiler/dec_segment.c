/* dec_segment.c: the element and data sections (all Wasm 2.0 segment forms). */
#include "dec_internal.h"

/* Element segment flags: bit 0 passive-or-declarative, bit 1 explicit table
 * index (active) or declarative (bit 0 set), bit 2 items as expressions. */
enum { ELEM_NOT_ACTIVE = 1, ELEM_TABLE_OR_DECL = 2, ELEM_EXPRS = 4 };

/* A function index item, stored as the ref.func it stands for so later
 * stages see one item form. */
static bool func_index_item(dec_reader *r, wasm_constexpr *item) {
  wasm_insn *in = tw_arena_alloc(r->arena, sizeof *in);
  in->op = OP_REF_FUNC;
  in->offset = item->offset = (uint32_t)r->pos;
  item->code = in;
  item->ncode = 1;
  return dec_u32r(r, &in->u.index);
}

static bool elem_items(dec_reader *r, wasm_elem *e, bool exprs) {
  if (!dec_count(r, &e->nitems)) return false;
  wasm_constexpr *items = tw_arena_alloc(r->arena, (size_t)e->nitems * sizeof *items);
  for (uint32_t i = 0; i < e->nitems; i++)
    if (!(exprs ? dec_constexpr(r, &items[i]) : func_index_item(r, &items[i]))) return false;
  e->items = items;
  return true;
}

/* The element type: an elemkind byte (0x00, funcref) for index items, a
 * reference type for expression items; absent (funcref) in forms 0 and 4. */
static bool elem_type(dec_reader *r, wasm_elem *e, uint32_t flags) {
  e->elem_type = VT_FUNCREF;
  if (!(flags & (ELEM_NOT_ACTIVE | ELEM_TABLE_OR_DECL))) return true;
  if (flags & ELEM_EXPRS) return dec_reftype(r, &e->elem_type);
  size_t at = r->pos;
  uint8_t kind;
  if (!dec_byte(r, &kind)) return false;
  if (kind != 0x00) return tw_fail(r->d, (uint32_t)at, "malformed element kind");
  return true;
}

static bool elem_segment(dec_reader *r, wasm_elem *e) {
  uint32_t flags;
  size_t at = r->pos;
  e->offset = (uint32_t)at;
  if (!dec_u32r(r, &flags)) return false;
  if (flags > 7) return tw_fail(r->d, (uint32_t)at, "malformed elements segment kind");
  if (flags & ELEM_NOT_ACTIVE) {
    e->mode = (flags & ELEM_TABLE_OR_DECL) ? SEG_DECLARATIVE : SEG_PASSIVE;
  } else {
    e->mode = SEG_ACTIVE;
    if ((flags & ELEM_TABLE_OR_DECL) && !dec_u32r(r, &e->table_index)) return false;
    if (!dec_constexpr(r, &e->offset_expr)) return false;
  }
  return elem_type(r, e, flags) && elem_items(r, e, flags & ELEM_EXPRS);
}

bool dec_elem_section(dec_reader *r) {
  wasm_module *m = r->m;
  if (!dec_count(r, &m->nelems)) return false;
  m->elems = tw_arena_alloc(r->arena, (size_t)m->nelems * sizeof *m->elems);
  for (uint32_t i = 0; i < m->nelems; i++)
    if (!elem_segment(r, &m->elems[i])) return false;
  return true;
}

/* Data segment flags: 0 active on memory 0, 1 passive, 2 active with an
 * explicit memory index. */
static bool data_segment(dec_reader *r, wasm_data *s) {
  uint32_t flags;
  size_t at = r->pos;
  s->offset = (uint32_t)at;
  if (!dec_u32r(r, &flags)) return false;
  if (flags > 2) return tw_fail(r->d, (uint32_t)at, "malformed data segment kind");
  s->mode = flags == 1 ? SEG_PASSIVE : SEG_ACTIVE;
  if (flags == 2 && !dec_u32r(r, &s->mem_index)) return false;
  if (flags != 1 && !dec_constexpr(r, &s->offset_expr)) return false;
  if (!dec_u32r(r, &s->size)) return false;
  if (s->size > r->end - r->pos) {
    r->pos = r->end;
    return dec_fail_eof(r);
  }
  s->bytes = r->bytes + r->pos;
  r->pos += s->size;
  return true;
}

bool dec_data_section(dec_reader *r) {
  wasm_module *m = r->m;
  r->has_data_section = true;
  if (!dec_count(r, &m->ndatas)) return false;
  m->datas = tw_arena_alloc(r->arena, (size_t)m->ndatas * sizeof *m->datas);
  for (uint32_t i = 0; i < m->ndatas; i++)
    if (!data_segment(r, &m->datas[i])) return false;
  return true;
}
