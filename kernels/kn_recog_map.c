/* kn_recog_map.c: 1-D and 2-D maps (stencils included): every iteration of
 * the innermost loop stores one element computed from affine loads.
 *
 * LLVM unrolls loops at -O2: an unrolled body holds U copies of the store,
 * at constant offsets one element apart.  Each copy is rebuilt with the
 * virtual counter v = U * t + copy; when every copy gives the same
 * expression, the loop is the map over v.  A vector store of L lanes is
 * L such copies, one per lane (kn_lanes.c), and an 8-byte store of a
 * constant whose 4-byte halves are equal two (split_halves). */
#include "kn_internal.h"

#define MAX_STORES 32

static int collect_stores(kr_ctx *c, LLVMValueRef *stores) {
  const ir_loop *l = c->chain[0], *inner = c->chain[c->depth - 1];
  int n = 0;
  for (int b = 0; b < l->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[l->body[b]].bb); i;
         i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsAStoreInst(i) || !kr_in_slice(c, i)) continue;
      if (!inner->in_body[l->body[b]]) return kr_fail(c, "stores outside the innermost loop"), -1;
      if (n == MAX_STORES) return kr_fail(c, "stores to more than one array"), -1;
      stores[n++] = i;
    }
  return n;
}

static bool same_terms(const kr_affine *a, const kr_affine *b) {
  if (a->n != b->n) return false;
  for (int i = 0; i < a->n; i++) {
    bool found = false;
    for (int k = 0; k < b->n; k++)
      found |= a->t[i].dim == b->t[k].dim && a->t[i].param == b->t[k].param && a->t[i].coeff == b->t[k].coeff;
    if (!found) return false;
  }
  return true;
}

/* The half of an i64 constant store whose two 4-byte halves are equal,
 * or NULL.  clang's Wasm backend merges the stores of one constant to
 * neighbouring elements (`x[j] = 0.5f` unrolled: i64.store
 * 0x3F0000003F000000): the same 8 bytes as two i32 stores of the half at
 * +0 and +4 (Wasm memory is little-endian), the loop's one-step form. */
static LLVMValueRef equal_halves(LLVMValueRef store) {
  LLVMValueRef v = LLVMGetOperand(store, 0);
  LLVMTypeRef t = LLVMTypeOf(v);
  if (!LLVMIsAConstantInt(v) || LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) != 64)
    return NULL;
  uint64_t x = LLVMConstIntGetZExtValue(v);
  if ((x >> 32) != (x & 0xffffffffu)) return NULL;
  return LLVMConstInt(LLVMInt32TypeInContext(LLVMGetTypeContext(t)), x & 0xffffffffu, false);
}

/* When every store is such an i64 store (equal_halves), each becomes two
 * items, halves 0 and 1 (lane >= 0 on a scalar store); then a map of i32
 * elements, as the loop stores them unmerged.  n items, the new count. */
static int split_halves(kr_ctx *c, LLVMValueRef *stores, int *lanes, int n) {
  for (int i = 0; i < n; i++)
    if (lanes[i] >= 0 || !equal_halves(stores[i])) return n;
  if (2 * n > MAX_STORES) return kr_fail(c, "stores to more than one array"), -1;
  for (int i = n - 1; i >= 0; i--) {
    stores[2 * i] = stores[2 * i + 1] = stores[i];
    lanes[2 * i] = 0;
    lanes[2 * i + 1] = 1;
  }
  return 2 * n;
}

static bool is_half(LLVMValueRef store, int lane) {
  return lane >= 0 && LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(store, 0))) != LLVMVectorTypeKind;
}

/* An item's byte offset from its store's address: a lane's, or a half's. */
static int64_t item_offset(LLVMValueRef store, int lane) {
  return is_half(store, lane) ? 4 * (int64_t)lane : kr_lane_offset(store, lane);
}

/* The unroll copy of each store, from its address before substitution. */
static bool number_copies(kr_ctx *c, LLVMValueRef *stores, const int *lanes, int n, int *copy_of) {
  kr_affine first = {0};
  int64_t keys[MAX_STORES];
  c->copies = 1;
  /* a region's remainder striding by a live value x that is 1 on its
   * vector loop's path (kn_lanes_region.c): the copies told apart at x =
   * 1, read per j (copy 0 of n); only a guess, build_copy then compares
   * every copy at its own j */
  bool unit = c->region && c->region->unit;
  if (unit) {
    c->copies = n;
    c->copy = 0;
    c->unit_param = c->region->unit;
  }
  for (int i = 0; i < n; i++) {
    kr_affine a = kr_address(c, LLVMGetOperand(stores[i], 1));
    if (!a.ok) return c->unit_param = NULL, kr_fail(c, "non-affine address");
    if (i == 0) first = a;
    else if (!same_terms(&a, &first)) return c->unit_param = NULL, kr_fail(c, "stores to more than one array");
    keys[i] = a.c + item_offset(stores[i], lanes[i]);
  }
  c->unit_param = NULL;
  if (!kr_assign_copies(keys, n, kr_coeff(&first, c->depth - 1) * (unit ? n : 1), copy_of))
    return kr_fail(c, "stores to more than one array");
  return true;
}

/* Reads of the output array at another element than the one written make
 * iterations depend on each other; reads of other bases must not overlap
 * the output, which the runtime checks. */
static bool check_dependences(kr_ctx *c, const kn_addr *out, unsigned first, unsigned count) {
  for (unsigned i = first; i < first + count; i++) {
    const kn_expr *e = &c->nodes[i];
    if (e->op != KN_E_LOAD) continue;
    const kn_addr *in = &e->load.addr;
    bool same_base = in->nparam_terms == out->nparam_terms;
    for (unsigned k = 0; same_base && k < in->nparam_terms; k++)
      same_base = in->param_index[k] == out->param_index[k] && in->param_coeff[k] == out->param_coeff[k];
    if (!same_base) {
      c->out->check_overlap = true;
      continue;
    }
    if (in->c0 != out->c0 || !kr_same_strides(in, out)) return kr_fail(c, "loop-carried dependence");
  }
  return true;
}

/* Builds copy c->copy of the store: its address and its value's nodes. */
static bool build_copy(kr_ctx *c, LLVMValueRef store, int lane, kn_addr *addr, kn_type *out_type,
                       int32_t *value) {
  LLVMValueRef v = LLVMGetOperand(store, 0);
  bool half = is_half(store, lane);
  if (half) v = equal_halves(store); /* an i32 constant: no lane of it */
  LLVMTypeRef t = lane >= 0 && !half ? LLVMGetElementType(LLVMTypeOf(v)) : LLVMTypeOf(v);
  if (!kr_type_of(t, out_type)) return kr_fail(c, "stores an unsupported type");
  /* A narrow store of a truncated value: the descriptor truncates. */
  if ((*out_type == KN_I8 || *out_type == KN_I16) && LLVMIsATruncInst(v)) v = LLVMGetOperand(v, 0);
  kr_affine a = kr_address(c, LLVMGetOperand(store, 1));
  a.c += item_offset(store, lane);
  if (!a.ok || !kr_to_addr(c, &a, 0, c->depth == 2 ? 1 : -1, 1, addr))
    return kr_fail(c, "non-affine address");
  c->nmemo = 0;
  c->in_lanes = lane >= 0 && !half;
  c->lane = lane;
  *value = kr_expr(c, v);
  c->in_lanes = false;
  if (*value < 0) return false;
  return c->copy != 0 || kr_add_range(c, &a, kr_type_size(*out_type), true);
}

bool kr_map(kr_ctx *c) {
  LLVMValueRef stores[MAX_STORES];
  int copy_of[MAX_STORES], lanes[MAX_STORES];
  int n = collect_stores(c, stores);
  if (n >= 0) n = kr_lane_items(c, stores, lanes, n, MAX_STORES); /* a vector store: a copy per lane */
  if (n >= 0) n = split_halves(c, stores, lanes, n);
  if (n < 0 || !number_copies(c, stores, lanes, n, copy_of)) return false;
  c->copies = n;
  if (!kr_set_trips(c, (unsigned)n)) return false;
  kn_map *m = &c->out->desc.map;
  unsigned first = 0, count = 0;
  for (int copy = 0; copy < n; copy++) {
    int s = 0;
    while (copy_of[s] != copy) s++;
    c->copy = copy;
    unsigned start = c->nnodes;
    int nranges = c->out->nranges;
    kn_addr addr;
    kn_type type;
    int32_t value = -1;
    if (!build_copy(c, stores[s], lanes[s], &addr, &type, &value)) return false;
    if (copy == 0) {
      first = start;
      count = c->nnodes - start;
      *m = (kn_map){.ndims = (unsigned)c->depth, .out_type = type, .out_addr = addr, .value = value};
      continue;
    }
    bool same = type == m->out_type && c->nnodes - start == count && kr_same_nodes(c, first, start, count) &&
                addr.c0 == m->out_addr.c0 && kr_same_strides(&addr, &m->out_addr);
    if (!same) return kr_fail(c, "unrolled copies differ");
    c->nnodes = start;
    c->out->nranges = nranges;
  }
  for (int d = 0; d < c->depth; d++) m->trip[d] = c->trips[d];
  /* an outer loop that rewrites the same elements (a repetition or
   * time-step loop) makes no map: the nest inside it is tried alone */
  for (int d = 0; d < c->depth; d++)
    if (m->out_addr.iv_coeff[d] == 0 && m->out_addr.iv_pcoeff[d] == 0)
      return kr_fail(c, "every iteration of a loop writes the same elements");
  c->out->desc.kind = KN_MAP;
  return check_dependences(c, &m->out_addr, first, count);
}
