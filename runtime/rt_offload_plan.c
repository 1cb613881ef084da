/* rt_offload_plan.c: what must hold before a kernel may replace its loop
 * nest, computed from the kernel table and the live params alone. */
#include "rt_offload.h"

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
    if (e <= 1) continue;
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

/* The span of range r; *empty when some extent is 0 (nothing accessed). */
static const char *span_of(const twasm_kernel_abi *k, const twasm_kernel_range_abi *r,
                           const int64_t *params, uint64_t mem_size, rt_offload_span *s,
                           bool *empty) {
  if (r->nparam_terms > TWASM_KERNEL_ADDR_PARAMS || r->ndims > TWASM_KERNEL_RANGE_DIMS)
    return "malformed kernel table";
  wide lo = r->c0, hi = r->c0;
  for (uint32_t t = 0; t < r->nparam_terms; t++) {
    if (r->param_index[t] >= k->nparams) return "malformed kernel table";
    wide v = (wide)r->param_coeff[t] * params[r->param_index[t]];
    lo += v, hi += v;
  }
  *empty = false;
  for (uint32_t d = 0; d < r->ndims; d++) {
    int64_t ext;
    if (!size_of(&r->extent[d], k, params, &ext)) return "malformed kernel table";
    if (ext <= 0) return (*empty = true, NULL);
    wide coeff = r->coeff[d];
    if (r->pcoeff[d]) {
      if (r->pindex[d] >= k->nparams) return "malformed kernel table";
      coeff += (wide)r->pcoeff[d] * params[r->pindex[d]];
    }
    wide reach = coeff * (ext - 1);
    if (reach < 0) lo += reach;
    else hi += reach;
  }
  if (lo < 0 || hi + r->size > (wide)mem_size)
    return "an access would be out of bounds (the CPU loop traps where Wasm says)";
  *s = (rt_offload_span){(uint64_t)lo, (uint64_t)(hi + r->size), r->is_write != 0, false};
  return NULL;
}

static const char *spans(const twasm_kernel_abi *k, const int64_t *params, uint64_t mem_size,
                         rt_offload_plan *p) {
  if (k->nranges > RT_OFFLOAD_MAX_SPANS) return "too many accessed ranges to check";
  for (uint32_t i = 0; i < k->nranges; i++) {
    const twasm_kernel_range_abi *r = &k->ranges[i];
    bool empty;
    rt_offload_span s;
    const char *why = span_of(k, r, params, mem_size, &s, &empty);
    if (why) return why;
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
      if (p->spans[w].is_write && !p->spans[r].is_write && p->spans[r].lo < p->spans[w].hi &&
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
  memset(p, 0, sizeof *p);
  if (k->nparams > 16) return "malformed kernel table";
  for (uint32_t i = 0; i < k->nparams; i++)
    if (k->bind_kinds[i] == TWASM_BIND_TRIP && params[i] < 0)
      return "a trip count is unknown at run time";
  const char *why = spans(k, params, mem_size, p);
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
