/* val_stack.c: the operand and control stacks of the spec's validation algorithm. */
#include "val_internal.h"

#include <stdlib.h>

bool val_fail(val_ctx *c, const char *msg) {
  return tw_fail(c->d, c->offset, "%s", msg);
}

/* The reference interpreter names the index, and spec tests match the
 * prefix, so "unknown local 3" satisfies "unknown local". */
bool val_unknown(val_ctx *c, const char *what, uint32_t index) {
  return tw_fail(c->d, c->offset, "unknown %s %u", what, index);
}

static const uint8_t all_types[] = {
  VT_I32, VT_I64, VT_F32, VT_F64, VT_V128, VT_FUNCREF, VT_EXTERNREF,
};

const uint8_t *val_single_type(uint8_t t) {
  for (size_t i = 0; i < sizeof all_types; i++)
    if (all_types[i] == t) return &all_types[i];
  return NULL;
}

bool val_is_reftype(uint8_t t) {
  return t == VT_FUNCREF || t == VT_EXTERNREF;
}

/* Grows *buf to hold at least need elements; host memory exhaustion is a
 * diagnostic, not an abort, since library code never exits. */
static bool reserve(val_ctx *c, void **buf, uint32_t *cap, size_t elem, uint64_t need) {
  if (need <= *cap) return true;
  uint64_t want = *cap ? *cap : 64;
  while (want < need) want *= 2;
  if (want > UINT32_MAX) return val_fail(c, "out of memory");
  void *p = realloc(*buf, (size_t)want * elem);
  if (!p) return val_fail(c, "out of memory");
  *buf = p;
  *cap = (uint32_t)want;
  return true;
}

bool val_push(val_ctx *c, uint8_t t) {
  if (!reserve(c, (void **)&c->vals, &c->vals_cap, 1, (uint64_t)c->nvals + 1)) return false;
  c->vals[c->nvals++] = t;
  return true;
}

bool val_pop(val_ctx *c, uint8_t *out) {
  const val_frame *f = &c->ctrls[c->nctrls - 1];
  if (c->nvals == f->height) {
    if (!f->unreachable) return val_fail(c, "type mismatch");
    *out = VT_UNKNOWN;
    return true;
  }
  *out = c->vals[--c->nvals];
  return true;
}

static bool matches(uint8_t actual, uint8_t expect) {
  return actual == expect || actual == VT_UNKNOWN || expect == VT_UNKNOWN;
}

bool val_pop_expect(val_ctx *c, uint8_t expect) {
  uint8_t actual;
  if (!val_pop(c, &actual)) return false;
  if (!matches(actual, expect)) return val_fail(c, "type mismatch");
  return true;
}

bool val_pop_i32s(val_ctx *c, int n) {
  for (int i = 0; i < n; i++)
    if (!val_pop_expect(c, VT_I32)) return false;
  return true;
}

bool val_push_n(val_ctx *c, const uint8_t *ts, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!val_push(c, ts[i])) return false;
  return true;
}

bool val_pop_n(val_ctx *c, const uint8_t *ts, uint32_t n) {
  for (uint32_t i = n; i > 0; i--)
    if (!val_pop_expect(c, ts[i - 1])) return false;
  return true;
}

/* The spec's push_vals(pop_vals(ts)) for br_table targets: the stack is
 * left as it was, below the frame's height unreachable code supplies
 * Unknown values. */
bool val_peek_n(val_ctx *c, const uint8_t *ts, uint32_t n) {
  const val_frame *f = &c->ctrls[c->nctrls - 1];
  for (uint32_t i = 0; i < n; i++) {
    uint8_t expect = ts[n - 1 - i];
    if (c->nvals - f->height > i) {
      if (!matches(c->vals[c->nvals - 1 - i], expect)) return val_fail(c, "type mismatch");
    } else if (!f->unreachable) {
      return val_fail(c, "type mismatch");
    }
  }
  return true;
}

bool val_push_ctrl(val_ctx *c, uint16_t op, const uint8_t *start, uint32_t nstart,
                   const uint8_t *end, uint32_t nend) {
  if (!reserve(c, (void **)&c->ctrls, &c->ctrls_cap, sizeof *c->ctrls,
               (uint64_t)c->nctrls + 1))
    return false;
  c->ctrls[c->nctrls++] = (val_frame){
    .op = op, .start = start, .nstart = nstart, .end = end, .nend = nend,
    .height = c->nvals, .unreachable = false,
  };
  return val_push_n(c, start, nstart);
}

bool val_pop_ctrl(val_ctx *c, val_frame *out) {
  if (c->nctrls == 0) return val_fail(c, "type mismatch");
  const val_frame *f = &c->ctrls[c->nctrls - 1];
  if (!val_pop_n(c, f->end, f->nend)) return false;
  if (c->nvals != f->height) return val_fail(c, "type mismatch");
  *out = *f;
  c->nctrls--;
  return true;
}

void val_set_unreachable(val_ctx *c) {
  val_frame *f = &c->ctrls[c->nctrls - 1];
  c->nvals = f->height;
  f->unreachable = true;
}
