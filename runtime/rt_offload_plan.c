/* rt_offload_plan.c: what must hold before a kernel may replace its loop
 * nest, computed from the kernel table and the live params alone. */
#include "rt_offload.h"

#include <stdlib.h>
#include <string.h>

typedef __int128 wide;

static bool size_of(const twasm_kernel_size_abi *s, const twasm_kernel_abi *k,
                    const int64_t *params, int64_t *out) {
  if (!s->is_param) return (*out = s->value, true);
  if (s->value < 0 || (uint64_t)s->value >= k->nparams) return false;
  *out = params[s->value];
  return true;
}

static bool same_form(const twasm_kernel_range_abi *a, const twasm_kernel_range_abi *b) {
  if (a->c0 != b->c0 || a->nparam_terms != b->nparam_terms || a->ndims != b->ndims) return false;
  if (a->table_dim != b->table_dim ||
      (a->table_dim && (a->table.is_param != b->table.is_param || a->table.value != b->table.value)))
    return false;
  for (uint32_t t = 0; t < a->nparam_terms && t < TWASM_KERNEL_ADDR_PARAMS; t++)
    if (a->param_index[t] != b->param_index[t] || a->param_coeff[t] != b->param_coeff[t]) return false;
  for (uint32_t d = 0; d < a->ndims && d < TWASM_KERNEL_RANGE_DIMS; d++)
    if (a->coeff[d] != b->coeff[d] || a->pcoeff[d] != b->pcoeff[d] ||
        (a->pcoeff[d] && a->pindex[d] != b->pindex[d]))
      return false;
  return true;
}

/* A read of exactly the elements written, each by its own iteration (the
 * compiler proved that much), is no overlap. */
static bool reads_own_output(const twasm_kernel_abi *k, const twasm_kernel_range_abi *r) {
  for (uint32_t i = 0; i < k->nranges; i++)
    if (k->ranges[i].is_write && same_form(&k->ranges[i], r)) return true;
  return false;
}

/* Whether every point of written range r has its own bytes, so that the
 * order of the writes cannot matter: sorted by stride, each stride must
 * pass everything the smaller ones reach plus one element (mixed radix).
 * A matmul writes each C element once per k: the dim with no stride at
 * all is the k loop and does not count; a batched matmul's batch dim is one more dim
 * here, so products of the batch writing the same element are refused. */
static bool writes_distinct(const twasm_kernel_abi *k, const twasm_kernel_range_abi *r,
                            const int64_t *params) {
  wide stride[TWASM_KERNEL_RANGE_DIMS];
  int64_t ext[TWASM_KERNEL_RANGE_DIMS];
  int n = 0;
  for (uint32_t d = 0; d < r->ndims; d++) {
    int64_t e;
    if (!size_of(&r->extent[d], k, params, &e)) return false;
    /* a table's rows: disjoint rows checked one by one (table_rows) */
    if (e <= 1 || d + 1 == r->table_dim) continue;
    wide s = r->coeff[d];
    if (r->pcoeff[d]) s += (wide)r->pcoeff[d] * params[r->pindex[d]];
    if (s < 0) s = -s;
    /* the k dim of a matmul does not address C at all; a live stride
     * that is 0 (rows or products on one element) does not count as it */
    if (r->coeff[d] == 0 && r->pcoeff[d] == 0 && k->kind == TWASM_KERNEL_MATMUL) continue;
    int at = n++;
    for (; at > 0 && stride[at - 1] > s; at--) stride[at] = stride[at - 1], ext[at] = ext[at - 1];
    stride[at] = s;
    ext[at] = e;
  }
  wide reach = r->size;
  for (int i = 0; i < n; i++) {
    if (stride[i] < reach) return false;
    reach += stride[i] * (ext[i] - 1);
  }
  return true;
}

/* The hull [*lo, *hi] of range r's start addresses: its constant and
 * parameter terms, and each dimension's reach but dimension skip's (a
 * table's row index, whose extent goes to *skipped; UINT32_MAX: none).
 * *empty when some extent is 0 (nothing accessed). */
static const char *range_hull(const twasm_kernel_abi *k, const twasm_kernel_range_abi *r,
                              const int64_t *params, uint32_t skip, wide *lo, wide *hi,
                              int64_t *skipped, bool *empty) {
  if (r->nparam_terms > TWASM_KERNEL_ADDR_PARAMS || r->ndims > TWASM_KERNEL_RANGE_DIMS)
    return "malformed kernel table";
  *lo = *hi = r->c0;
  for (uint32_t t = 0; t < r->nparam_terms; t++) {
    if (r->param_index[t] >= k->nparams) return "malformed kernel table";
    wide v = (wide)r->param_coeff[t] * params[r->param_index[t]];
    *lo += v, *hi += v;
  }
  *empty = false;
  for (uint32_t d = 0; d < r->ndims; d++) {
    int64_t ext;
    if (!size_of(&r->extent[d], k, params, &ext)) return "malformed kernel table";
    if (ext <= 0) return (*empty = true, NULL);
    if (d == skip) {
      *skipped = ext;
      continue;
    }
    wide coeff = r->coeff[d];
    if (r->pcoeff[d]) {
      if (r->pindex[d] >= k->nparams) return "malformed kernel table";
      coeff += (wide)r->pcoeff[d] * params[r->pindex[d]];
    }
    wide reach = coeff * (ext - 1);
    if (reach < 0) *lo += reach;
    else *hi += reach;
  }
  return NULL;
}

/* The span of range r; *empty when some extent is 0 (nothing accessed). */
static const char *span_of(const twasm_kernel_abi *k, const twasm_kernel_range_abi *r,
                           const int64_t *params, uint64_t mem_size, rt_offload_span *s,
                           bool *empty) {
  wide lo, hi;
  const char *why = range_hull(k, r, params, UINT32_MAX, &lo, &hi, NULL, empty);
  if (why || *empty) return why;
  if (lo < 0 || hi + r->size > (wide)mem_size)
    return "an access would be out of bounds (the CPU loop traps where Wasm says)";
  *s = (rt_offload_span){(uint64_t)lo, (uint64_t)(hi + r->size), r->is_write != 0, false, false};
  return NULL;
}

/* The rows of every range through a table, one span each (ABI 14). */
typedef struct {
  rt_offload_span *v;
  size_t n, cap;
} row_list;

static bool row_push(row_list *l, rt_offload_span s) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    rt_offload_span *v = realloc(l->v, cap * sizeof *v);
    if (!v) return false;
    l->v = v, l->cap = cap;
  }
  l->v[l->n++] = s;
  return true;
}

/* Range r through a table of row pointers: each row's bytes read from
 * the table at base, checked inside the memory and aligned to r's access
 * size, and pushed; *s their hull. */
static const char *table_rows(const twasm_kernel_abi *k, const twasm_kernel_range_abi *r,
                              const int64_t *params, const uint8_t *base, uint64_t mem_size,
                              rt_offload_span *s, bool *empty, row_list *rows) {
  uint32_t td = r->table_dim - 1;
  if (td >= r->ndims || r->size == 0) return "malformed kernel table";
  if (!base) return "rows through a table of row pointers, and no memory to read it from";
  wide lo, hi;
  int64_t nrows = 0, table;
  const char *why = range_hull(k, r, params, td, &lo, &hi, &nrows, empty);
  if (why || *empty) return why;
  if (!size_of(&r->table, k, params, &table)) return "malformed kernel table";
  if (table < 0 || (wide)table + 4 * (wide)nrows > (wide)mem_size)
    return "an access would be out of bounds (the CPU loop traps where Wasm says)";
  /* the kernel reads the row pointers as aligned words */
  if (table % 4) return "a row-pointer table is not aligned to 4 bytes";
  wide hull_lo = (wide)mem_size, hull_hi = 0;
  for (int64_t x = 0; x < nrows; x++) {
    uint32_t start;
    memcpy(&start, base + table + 4 * x, 4);
    wide a = (wide)start + lo, b = (wide)start + hi + r->size;
    if (a < 0 || b > (wide)mem_size)
      return "an access would be out of bounds (the CPU loop traps where Wasm says)";
    if (a % r->size) return "a row of a row-pointer table is not aligned to its elements";
    if (!row_push(rows, (rt_offload_span){(uint64_t)a, (uint64_t)b, r->is_write != 0, false, true}))
      return "out of memory";
    if (a < hull_lo) hull_lo = a;
    if (b > hull_hi) hull_hi = b;
  }
  *s = (rt_offload_span){(uint64_t)hull_lo, (uint64_t)hull_hi, r->is_write != 0, false, true};
  return NULL;
}

static int by_lo(const void *x, const void *y) {
  const rt_offload_span *a = x, *b = y;
  return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* No table's row overlapping a written span or row, nor a written row
 * any span or row (the ordinary spans only where k asks for the overlap
 * check; two ordinary spans are overlaps()'s).  Sorted by start, a span
 * overlaps one before it exactly where that one ends past its start. */
static const char *rows_apart(const twasm_kernel_abi *k, const rt_offload_plan *p, row_list *rows) {
  if (!rows->n) return NULL;
  for (int i = 0; k->check_overlap && i < p->nspans; i++)
    if (!p->spans[i].rows &&
        !row_push(rows, (rt_offload_span){p->spans[i].lo, p->spans[i].hi, p->spans[i].is_write, false, false}))
      return "out of memory";
  qsort(rows->v, rows->n, sizeof *rows->v, by_lo);
  uint64_t row_any = 0, row_write = 0, other_any = 0, other_write = 0;
  for (size_t i = 0; i < rows->n; i++) {
    const rt_offload_span *x = &rows->v[i];
    bool row = x->rows;
    if (x->is_write && (row_write > x->lo || (row && other_write > x->lo)))
      return "two rows of the output would overlap (or a row and another output)";
    if ((x->is_write && (row_any > x->lo || (row && other_any > x->lo))) ||
        (!x->is_write && (row_write > x->lo || (row && other_write > x->lo))))
      return "the output overlaps an input";
    uint64_t *any = row ? &row_any : &other_any, *write = row ? &row_write : &other_write;
    if (x->hi > *any) *any = x->hi;
    if (x->is_write && x->hi > *write) *write = x->hi;
  }
  return NULL;
}

static const char *spans(const twasm_kernel_abi *k, const int64_t *params, const uint8_t *base,
                         uint64_t mem_size, rt_offload_plan *p, row_list *rows) {
  if (k->nranges > RT_OFFLOAD_MAX_SPANS) return "too many accessed ranges to check";
  for (uint32_t i = 0; i < k->nranges; i++) {
    const twasm_kernel_range_abi *r = &k->ranges[i];
    bool empty;
    rt_offload_span s;
    size_t first = rows->n;
    const char *why = r->table_dim ? table_rows(k, r, params, base, mem_size, &s, &empty, rows)
                                   : span_of(k, r, params, mem_size, &s, &empty);
    if (why) return why;
    if (r->table_dim) {
      /* a read through the table C is written through, in place: each
       * thread's own elements (reads_own_output) */
      if (!r->is_write && reads_own_output(k, r)) rows->n = first;
      if (empty || (!r->is_write && reads_own_output(k, r))) continue;
      if (r->is_write && !writes_distinct(k, r, params)) return "two iterations would write the same element";
      p->spans[p->nspans++] = s;
      for (size_t x = first; x < rows->n; x++) p->bytes += rows->v[x].hi - rows->v[x].lo;
      continue;
    }
    if (empty || (!r->is_write && reads_own_output(k, r))) continue;
    if (r->is_write && !writes_distinct(k, r, params))
      return "two iterations would write the same element";
    s.forwarded = r->forwarded != 0;
    p->spans[p->nspans++] = s;
    p->bytes += s.hi - s.lo;
  }
  return NULL;
}

static bool overlaps(const rt_offload_plan *p) {
  for (int w = 0; w < p->nspans; w++)
    for (int r = 0; r < p->nspans; r++)
      if (p->spans[w].is_write && !p->spans[r].is_write && !p->spans[w].rows && !p->spans[r].rows &&
          p->spans[r].lo < p->spans[w].hi &&
          p->spans[w].lo < p->spans[r].hi)
        return true;
  return false;
}

static void grid_of(const twasm_kernel_abi *k, const int64_t *params, rt_offload_plan *p) {
  const twasm_kernel_launch_abi *l = &k->launch;
  for (int a = 0; a < 3; a++) {
    int64_t count = 0;
    if (!size_of(&l->count[a], k, params, &count)) count = 0;
    p->grid[a] = twasm_grid_axis(count, l->per_block[a], l->max_grid[a]);
  }
}

double rt_offload_ops(const twasm_kernel_abi *k, const int64_t *params) {
  double iterations = 1;
  for (uint32_t d = 0; d < k->nwork && d < TWASM_KERNEL_WORK_DIMS; d++) {
    int64_t n;
    if (!size_of(&k->work[d], k, params, &n)) return 0;
    iterations *= n > 0 ? (double)n : 0;
  }
  return iterations * (k->ops_per_iter ? k->ops_per_iter : 1);
}

const char *rt_offload_plan_make(const twasm_kernel_abi *k, const int64_t *params,
                                 uint64_t mem_size, rt_offload_plan *p) {
  return rt_offload_plan_make_in(k, params, NULL, mem_size, p);
}

const char *rt_offload_plan_make_in(const twasm_kernel_abi *k, const int64_t *params,
                                    const uint8_t *base, uint64_t mem_size, rt_offload_plan *p) {
  memset(p, 0, sizeof *p);
  if (k->nparams > 16) return "malformed kernel table";
  for (uint32_t i = 0; i < k->nparams; i++)
    if (k->bind_kinds[i] == TWASM_BIND_TRIP && params[i] < 0)
      return "a trip count is unknown at run time";
  row_list rows = {0};
  const char *why = spans(k, params, base, mem_size, p, &rows);
  if (!why) why = rows_apart(k, p, &rows);
  free(rows.v);
  if (why) return why;
  if (k->check_overlap && overlaps(p)) return "the output overlaps an input";
  p->iterations = 1;
  for (uint32_t d = 0; d < k->nwork && d < TWASM_KERNEL_WORK_DIMS; d++) {
    int64_t n;
    if (!size_of(&k->work[d], k, params, &n)) return "malformed kernel table";
    p->work[d] = n;
    p->iterations *= n > 0 ? (double)n : 0;
  }
  p->ops = rt_offload_ops(k, params);
  if (!size_of(&k->batch, k, params, &p->batch)) return "malformed kernel table";
  grid_of(k, params, p);
  return NULL;
}

const char *rt_offload_plans_apart(const rt_offload_plan *plans, unsigned n) {
  for (unsigned a = 0; a < n; a++)
    for (unsigned b = 0; b < n; b++) {
      if (a == b) continue;
      for (int w = 0; w < plans[a].nspans; w++) {
        const rt_offload_span *x = &plans[a].spans[w];
        if (!x->is_write) continue;
        for (int r = 0; r < plans[b].nspans; r++) {
          const rt_offload_span *y = &plans[b].spans[r];
          /* a later part reading what an earlier one wrote, each element
           * on the outer iteration that wrote it: in order, the same */
          if (b > a && y->forwarded && y->lo == x->lo && y->hi == x->hi) continue;
          /* a later part's forwarded write of exactly the bytes an earlier
           * one writes, each element after it on the same outer iteration */
          if (a > b && x->forwarded && y->is_write && y->lo == x->lo && y->hi == x->hi) continue;
          if (y->lo < x->hi && x->lo < y->hi)
            return y->is_write ? "two parts of the nest write the same bytes"
                               : "a part of the nest writes bytes another part reads";
        }
      }
    }
  return NULL;
}
