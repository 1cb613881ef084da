/* ptx_matmul.c: exact matrix multiplication.  A block of 16x16 threads owns
 * a 128x128 tile of C; each thread keeps an 8x8 micro-tile of it in
 * registers (rows trow*4+0..3 and 64+trow*4+0..3, columns likewise with
 * tcol, so that shared-memory reads are 16-byte vectors without bank
 * conflicts).  A and B pass through shared memory in k-tiles of 8,
 * double-buffered: the global loads of the next k-tile are issued before
 * the products of this one and stored after them, one barrier per k-tile.
 * Launch bounds hold f32/i32 to 128 registers (2 blocks per SM); f64's 64
 * double accumulators take one block per SM.  Every element is still
 * c = c + a_ik * b_kj for k = 0, 1, ..., K-1, one rounding per multiply and
 * per add (never fused), so it matches the CPU loop bit for bit; the last,
 * partial k-tile runs only its k < K (a padded 0 * 0 would turn a -0 sum
 * into +0).  Blocks stride over tiles (and over the products of a batch
 * along z), so any grid is correct.  A second product per term (syr2k,
 * kn_mm_second) stages four matrices, one buffer each (shared memory),
 * and adds c = c + (a_ik * b_kj + a2_ik * b2_kj) as the source does. */
#include <string.h>

#include "ptx_internal.h"

enum {
  THREADS_X = 16,
  THREADS = THREADS_X * THREADS_X,
  TILE = 128,                      /* rows and columns of C per block */
  RUN = 4,                         /* a thread's rows (columns): 2 runs of RUN */
  MICRO = 2 * RUN,                 /* rows (columns) of C per thread */
  HALF = TILE / 2,                 /* distance between a thread's two runs */
  BK = 8,                          /* k of one shared tile */
  PITCH = TILE + 4,                /* shared row: padded against bank conflicts */
  BUF = BK * PITCH,                /* elements of one buffer of one matrix */
  STAGED = TILE * BK / THREADS,    /* elements of A (of B) a thread copies per k-tile */
};
_Static_assert(THREADS / (TILE / STAGED) == BK, "a q-step of the staging covers all of k");

typedef struct {
  LLVMTypeRef elem, acc;   /* memory element of A/B, accumulator (= C) */
  kn_type elem_kind, acc_kind;
  bool fl;
} mm_types;

static mm_types types_of(ptx_gen *g, kn_mm_type t) {
  static const kn_type elems[] = {KN_F32, KN_F64, KN_I32, KN_I8};
  static const kn_type accs[] = {KN_F32, KN_F64, KN_I32, KN_I32};
  return (mm_types){ptx_type(g, elems[t]), ptx_type(g, accs[t]), elems[t], accs[t],
                    t == KN_MM_F32 || t == KN_MM_F64};
}

/* Whether a compare and select is one the kernel can repeat: on floats,
 * a predicate that compares, its constants no NaN. */
static bool act_ok(const kn_matmul *m, const kn_mm_act *a) {
  return (m->type == KN_MM_F32 || m->type == KN_MM_F64) && a->pred > LLVMRealPredicateFalse &&
         a->pred < LLVMRealPredicateTrue && a->cmp == a->cmp && a->sel == a->sel;
}

/* The offset and strides of an element's layout (kn_mm_post's and
 * kn_mm_blend's e) each a size the kernel can take. */
static bool layout_sizes_ok(const kn_desc *d, const kn_layout *e, tw_diag *diag) {
  const kn_size sizes[] = {e->offset, e->row_stride, e->col_stride, e->batch_stride};
  for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (!ptx_size_check(d, sizes[i], "matmul size", diag)) return false;
  return true;
}

static bool matmul_check(const kn_desc *d, tw_diag *diag) {
  const kn_matmul *m = &d->matmul;
  if ((unsigned)m->type > KN_MM_I8_I32)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: unknown element type");
  if (m->align & (m->align - 1))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: alignment is not a power of 2");
  const kn_size sizes[] = {m->m, m->n, m->k, m->a.offset, m->a.row_stride, m->a.col_stride,
                           m->b.offset, m->b.row_stride, m->b.col_stride, m->c.offset,
                           m->c.row_stride, m->c.col_stride, kn_mm_batch(m), m->a.batch_stride,
                           m->b.batch_stride, m->c.batch_stride};
  for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (!ptx_size_check(d, sizes[i], "matmul size", diag)) return false;
  /* rows through tables (kn_layout's row_table): never with a batch */
  const kn_layout *tabled[] = {&m->a, &m->b, &m->c, &m->start};
  for (unsigned i = 0; i < 4; i++) {
    if (!tabled[i]->row_table) continue;
    if (m->batched || m->second.on || (m->post.on && m->post.elem) || m->blend.on)
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: rows through a table with a batch or a second matrix");
    if (!ptx_size_check(d, tabled[i]->table, "matmul size", diag)) return false;
  }
  const kn_mm_scale *scales[] = {&m->a_scale, &m->b_scale, &m->start_scale};
  for (unsigned i = 0; i < 3; i++)
    if (scales[i]->on && (scales[i]->param >= d->nparams || m->type == KN_MM_I8_I32))
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: bad scale factor");
  if (m->start_scale.on && !m->accumulate)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: a scaled start without accumulate");
  if (m->second.on) {
    const kn_mm_second *s2 = &m->second;
    const kn_size more[] = {s2->a.offset, s2->a.row_stride, s2->a.col_stride,
                            s2->b.offset, s2->b.row_stride, s2->b.col_stride};
    for (unsigned i = 0; i < sizeof more / sizeof more[0]; i++)
      if (!ptx_size_check(d, more[i], "matmul size", diag)) return false;
    if (m->batched || (m->type != KN_MM_F32 && m->type != KN_MM_F64) ||
        (s2->a_scale.on && s2->a_scale.param >= d->nparams) || (s2->b_scale.on && s2->b_scale.param >= d->nparams))
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: a second product with a batch, of integers or with a bad scale factor");
  }
  if (m->post.on && ((!m->post.elem && m->post.param >= d->nparams) || (m->type != KN_MM_F32 && m->type != KN_MM_F64) ||
                     (m->post.div + m->post.add + m->post.sub > 1) || (m->post.div && m->post.first)))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: a factor after the sum of integers or out of range");
  if ((m->act.on && !act_ok(m, &m->act)) || (m->act2.on && (!m->act.on || !act_ok(m, &m->act2))))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: a compare and select after a sum of integers, "
                                            "with a constant compare or a NaN");
  if (m->post.on && m->post.elem && !layout_sizes_ok(d, &m->post.e, diag)) return false;
  if (m->blend.on) {
    const kn_mm_blend *bl = &m->blend;
    if ((bl->scaled && bl->param >= d->nparams) || (bl->guarded && bl->guard_param >= d->nparams) ||
        (m->type != KN_MM_F32 && m->type != KN_MM_F64))
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: an element added after the sum of integers or with a "
                                              "param out of range");
    if (!layout_sizes_ok(d, &bl->e, diag)) return false;
  }
  if (m->tri.on && (m->batched || m->tri.add < 0 || m->tri.add > 1))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: a triangle with a batch or an offset other than 0 or 1");
  if ((m->tri.upper && !m->tri.on) || (m->tri.mirror && (!m->tri.upper || m->second.on)) ||
      (m->tri.diag && (!m->tri.upper || m->tri.add != 1 || m->accumulate || (m->type != KN_MM_F32 && m->type != KN_MM_F64))))
    return tw_fail(diag, TW_DIAG_NO_OFFSET,
                   "matmul kernel: a mirrored store off an upper triangle, or a diagonal off a strict one of floats");
  return true;
}

/* Where one staged element of a k-tile lies: k and the other index (row of
 * A, column of B) within the tile. */
typedef struct {
  LLVMValueRef k, other;
} mm_place;

typedef struct {
  ptx_gen *g;
  mm_types ty;
  unsigned align_ab, align_c;      /* of global accesses in this copy of the body */
  LLVMValueRef M, N, K;
  LLVMValueRef batch;              /* the product of a batch, NULL without one */
  LLVMValueRef tcol, trow;         /* thread column / row in the block */
  unsigned nmat, nbuf;             /* A, B (, A2, B2 of a second product); 2 buffers, or 1 */
  LLVMValueRef shared[4];          /* A, B, A2, B2: [nbuf buffers][BK][PITCH] */
  mm_place place[4][STAGED];
  LLVMValueRef staged[4][STAGED];  /* register stage of the next k-tile */
  LLVMValueRef acc[MICRO * MICRO];
} mm_gen;


/* Element (row, col) of the product this block works on. */
static LLVMValueRef element_at(mm_gen *w, const kn_layout *l, unsigned bytes, LLVMValueRef row,
                               LLVMValueRef col) {
  return ptx_element_at(w->g, l, bytes, w->batch, row, col);
}

static bool is_const(kn_size s, int64_t v) { return !s.is_param && s.value == v; }

/* Staged element q of this thread in the tile of one matrix: k and the
 * other index (row of A, column of B).  32 consecutive threads take
 * consecutive addresses where the layout is known (along k for a
 * row-major A or a column-major B, along the other index otherwise), so
 * global loads coalesce; either way k does not depend on q (one clamp per
 * k-tile) and q only adds a constant to the other index. */
static mm_place place_of(mm_gen *w, const kn_layout *l, bool is_a, LLVMValueRef tid, unsigned q) {
  ptx_gen *g = w->g;
  const kn_size k_stride = is_a ? l->col_stride : l->row_stride;
  const kn_size o_stride = is_a ? l->row_stride : l->col_stride;
  bool k_fastest = is_a ? !(is_const(o_stride, 1) && !is_const(k_stride, 1))
                        : is_const(k_stride, 1) && !is_const(o_stride, 1);
  enum { SPAN = TILE / STAGED };   /* other-index span of one q; THREADS / SPAN == BK */
  int64_t side = k_fastest ? BK : SPAN;
  LLVMValueRef fast = LLVMBuildSRem(g->b, tid, ptx_i64(g, side), "");
  LLVMValueRef slow = LLVMBuildSDiv(g->b, tid, ptx_i64(g, side), "");
  LLVMValueRef step = ptx_i64(g, (int64_t)q * SPAN);
  return k_fastest ? (mm_place){fast, ptx_add(g, slow, step)} : (mm_place){slow, ptx_add(g, fast, step)};
}

/* v times the descriptor's factor, in the source's operand order (one
 * rounding, never fused), or v itself. */
static LLVMValueRef scaled(mm_gen *w, const kn_mm_scale *s, LLVMValueRef v) {
  if (!s->on) return v;
  ptx_gen *g = w->g;
  LLVMValueRef f = g->params[s->param];
  if (w->ty.acc_kind == KN_F32) f = LLVMBuildBitCast(g->b, LLVMBuildTrunc(g->b, f, g->i32, ""), g->f32, "");
  else if (w->ty.acc_kind == KN_F64) f = LLVMBuildBitCast(g->b, f, g->f64, "");
  else f = LLVMBuildTrunc(g->b, f, w->ty.acc, "");
  LLVMValueRef x = s->first ? f : v, y = s->first ? v : f;
  return w->ty.fl ? LLVMBuildFMul(g->b, x, y, "") : LLVMBuildMul(g->b, x, y, "");
}

/* Param `param` (f32/f64 bits in an i64) as a value of the accumulator's
 * float type. */
static LLVMValueRef factor_of(mm_gen *w, unsigned param) {
  ptx_gen *g = w->g;
  LLVMValueRef f = g->params[param];
  if (w->ty.acc_kind == KN_F32) return LLVMBuildBitCast(g->b, LLVMBuildTrunc(g->b, f, g->i32, ""), g->f32, "");
  return LLVMBuildBitCast(g->b, f, g->f64, "");
}

/* A finished sum as the source combines it (kn_mm_post, then
 * kn_mm_blend): ptx_mm_combine on the operands loaded here, post's
 * factor a live value or the element of e at the output's (row, col),
 * blend's element of its e (C's own: read before the store), its factor
 * and guard live values; or the sum itself. */
static LLVMValueRef posted_op(mm_gen *w, LLVMValueRef sum, LLVMValueRef row, LLVMValueRef col) {
  const kn_matmul *m = &w->g->d->matmul;
  const kn_mm_post *p = &m->post;
  const kn_mm_blend *bl = &m->blend;
  unsigned bytes = ptx_type_bytes(w->ty.acc_kind);
  ptx_mm_operands o = {0};
  if (p->on)
    o.post = p->elem ? ptx_load(w->g, w->ty.acc, element_at(w, &p->e, bytes, row, col), w->align_c)
                     : factor_of(w, p->param);
  if (bl->on) {
    o.elem = ptx_load(w->g, w->ty.acc, element_at(w, &bl->e, bytes, row, col), w->align_c);
    if (bl->scaled) o.factor = factor_of(w, bl->param);
    if (bl->guarded) o.guard = LLVMBuildTrunc(w->g->b, w->g->params[bl->guard_param], w->g->i1, "");
  }
  return ptx_mm_combine(w->g->b, m, sum, &o);
}

/* Integer v (i32 or i64) through an empty asm statement (a `mov`) LLVM
 * cannot see into; side_effect: never merged with another such copy. */
static LLVMValueRef opaque_int(ptx_gen *g, LLVMValueRef v, bool side_effect) {
  bool wide = LLVMGetIntTypeWidth(LLVMTypeOf(v)) == 64;
  LLVMTypeRef ity = wide ? g->i64 : g->i32;
  const char *text = wide ? "mov.b64 $0, $1;" : "mov.b32 $0, $1;", *cons = wide ? "=l,l" : "=r,r";
  LLVMTypeRef fty = LLVMFunctionType(ity, &ity, 1, false);
  LLVMValueRef asm_fn = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), side_effect, false,
                                         LLVMInlineAsmDialectATT, false);
  return LLVMBuildCall2(g->b, fty, asm_fn, &v, 1, "");
}

/* The bits of a float constant of the accumulator's type, opaque. */
static LLVMValueRef opaque_bits(mm_gen *w, double v) {
  ptx_gen *g = w->g;
  LLVMTypeRef ity = w->ty.acc_kind == KN_F32 ? g->i32 : g->i64;
  return opaque_int(g, LLVMBuildBitCast(g->b, LLVMConstReal(w->ty.acc, v), ity, ""), false);
}

/* y through the source's compare with a constant and select (kn_mm_act:
 * `s > 0 ? s : 0`), the same compare and select, so NaN and -0 come out
 * as on the CPU.  The select
 * picks bits, its constant opaque: NVPTX's lowering turns a float
 * `s > 0 ? s : 0` into max.f32, and LLVM promises nothing of which zero
 * maxnum returns for -0.  With mul the other value is y * sel (a leaky
 * ReLU, one rounding in the source's operand order), with nan_add a NaN
 * y gives y + cmp (Wasm's f32.max). */
static LLVMValueRef act_on(mm_gen *w, const kn_mm_act *a, LLVMValueRef y) {
  LLVMBuilderRef b = w->g->b;
  LLVMValueRef k = LLVMConstReal(w->ty.acc, a->cmp), sel = opaque_bits(w, a->sel);
  LLVMValueRef cond = LLVMBuildFCmp(b, (LLVMRealPredicate)a->pred, a->left ? y : k, a->left ? k : y, "");
  LLVMValueRef yb = LLVMBuildBitCast(b, y, LLVMTypeOf(sel), "");
  if (a->mul) {
    LLVMValueRef f = LLVMBuildBitCast(b, sel, w->ty.acc, "");
    sel = LLVMBuildBitCast(b, LLVMBuildFMul(b, a->mul_first ? f : y, a->mul_first ? y : f, ""), LLVMTypeOf(yb), "");
  }
  LLVMValueRef out = LLVMBuildSelect(b, cond, a->when_true ? yb : sel, a->when_true ? sel : yb, "");
  if (a->nan_add) {
    LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, y, y, "");
    LLVMValueRef sum = LLVMBuildFAdd(b, a->add_first ? k : y, a->add_first ? y : k, "");
    out = LLVMBuildSelect(b, nan, LLVMBuildBitCast(b, sum, LLVMTypeOf(yb), ""), out, "");
  }
  return LLVMBuildBitCast(b, out, w->ty.acc, "");
}

/* posted_op's value through act, then act2 (a clamp: ReLU6) where the
 * descriptor has them; or that value itself. */
static LLVMValueRef posted(mm_gen *w, LLVMValueRef sum, LLVMValueRef row, LLVMValueRef col) {
  const kn_matmul *m = &w->g->d->matmul;
  LLVMValueRef y = posted_op(w, sum, row, col);
  if (m->act.on) y = act_on(w, &m->act, y);
  if (m->act.on && m->act2.on) y = act_on(w, &m->act2, y);
  return y;
}

/* Matrix mat's layout and scale: A, B, A2, B2 (kn_mm_second). */
static const kn_layout *layout_of(const kn_matmul *m, unsigned mat) {
  const kn_layout *l[4] = {&m->a, &m->b, &m->second.a, &m->second.b};
  return l[mat];
}

static const kn_mm_scale *scale_of(const kn_matmul *m, unsigned mat) {
  const kn_mm_scale *s[4] = {&m->a_scale, &m->b_scale, &m->second.a_scale, &m->second.b_scale};
  return s[mat];
}

/* widen(M[row][col]) of matrix mat, scaled where the descriptor says
 * (alpha * A). */
static LLVMValueRef load_element(mm_gen *w, unsigned mat, LLVMValueRef row, LLVMValueRef col) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  const kn_layout *l = layout_of(m, mat);
  LLVMValueRef p = element_at(w, l, ptx_type_bytes(w->ty.elem_kind), row, col);
  LLVMValueRef v = ptx_widen_operand(g, l, ptx_load(g, w->ty.elem, p, w->align_ab), w->ty.acc);
  return scaled(w, scale_of(m, mat), v);
}

/* Global -> registers: the k-tile at k0 of block tile (i0, j0).  Indices
 * past the matrix are clamped to its last row, column or k: what they load
 * is a real element (nothing outside is read; the runtime checked only the
 * ranges the loop touches) and never reaches C: rows and columns past the
 * edge are not stored, steps past K not multiplied.  So loads need no
 * branches. */
static void load_stage(mm_gen *w, LLVMValueRef i0, LLVMValueRef j0, LLVMValueRef k0) {
  ptx_gen *g = w->g;
  LLVMValueRef one = ptx_i64(g, 1);
  LLVMValueRef last_i = LLVMBuildSub(g->b, w->M, one, ""), last_j = LLVMBuildSub(g->b, w->N, one, "");
  LLVMValueRef last_k = LLVMBuildSub(g->b, w->K, one, "");
  for (unsigned pair = 0; pair < w->nmat; pair += 2)
    for (unsigned q = 0; q < STAGED; q++) {
      const mm_place *a = &w->place[pair][q], *b = &w->place[pair + 1][q];
      LLVMValueRef row = ptx_smin(g, ptx_add(g, i0, a->other), last_i);
      LLVMValueRef k = ptx_smin(g, ptx_add(g, k0, a->k), last_k);
      LLVMBuildStore(g->b, load_element(w, pair, row, k), w->staged[pair][q]);
      LLVMValueRef col = ptx_smin(g, ptx_add(g, j0, b->other), last_j);
      k = ptx_smin(g, ptx_add(g, k0, b->k), last_k);
      LLVMBuildStore(g->b, load_element(w, pair + 1, k, col), w->staged[pair + 1][q]);
    }
}

static LLVMValueRef shared_slot(mm_gen *w, unsigned mat, LLVMValueRef index) {
  return LLVMBuildGEP2(w->g->b, w->ty.acc, w->shared[mat], &index, 1, "");
}

/* Registers -> shared buffer `buf` (0 or 1), both matrices k-major. */
static void store_stage(mm_gen *w, LLVMValueRef buf) {
  ptx_gen *g = w->g;
  unsigned bytes = ptx_type_bytes(w->ty.acc_kind);
  for (unsigned mat = 0; mat < w->nmat; mat++)
    for (unsigned q = 0; q < STAGED; q++) {
      const mm_place *p = &w->place[mat][q];
      LLVMValueRef index = ptx_add(g, ptx_add(g, ptx_mul_c(g, buf, BUF), ptx_mul_c(g, p->k, PITCH)), p->other);
      LLVMValueRef v = LLVMBuildLoad2(g->b, w->ty.acc, w->staged[mat][q], "");
      ptx_store(g, v, shared_slot(w, mat, index), bytes);
    }
}

/* The MICRO values a thread needs at step kk of buffer `buf` of one matrix:
 * two runs of RUN, read as vectors. */
static void read_fragment(mm_gen *w, unsigned mat, LLVMValueRef buf, LLVMValueRef kk,
                          LLVMValueRef out[MICRO]) {
  ptx_gen *g = w->g;
  LLVMTypeRef vec = LLVMVectorType(w->ty.acc, RUN);
  unsigned vec_bytes = RUN * ptx_type_bytes(w->ty.acc_kind);
  LLVMValueRef row = ptx_add(g, ptx_mul_c(g, buf, BUF), ptx_mul_c(g, kk, PITCH));
  LLVMValueRef first = ptx_add(g, row, ptx_mul_c(g, mat % 2 == 0 ? w->trow : w->tcol, RUN));
  for (unsigned run = 0; run < 2; run++) {
    LLVMValueRef index = ptx_add(g, first, ptx_i64(g, (int64_t)run * HALF));
    LLVMValueRef v = ptx_load(g, vec, shared_slot(w, mat, index), vec_bytes);
    for (unsigned e = 0; e < RUN; e++)
      out[run * RUN + e] = LLVMBuildExtractElement(g->b, v, LLVMConstInt(g->i32, e, false), "");
  }
}

/* acc[i][j] = acc[i][j] + a[i] * b[j]: a separate multiply and add; with
 * a second product (floats only) acc[i][j] + (a[i] * b[j] + a2[i] *
 * b2[j]), each operation rounded on its own, in the source's order. */
static void multiply_step(mm_gen *w, LLVMValueRef buf, LLVMValueRef kk) {
  ptx_gen *g = w->g;
  LLVMValueRef a[MICRO], b[MICRO], a2[MICRO], b2[MICRO];
  read_fragment(w, 0, buf, kk, a);
  read_fragment(w, 1, buf, kk, b);
  if (w->nmat == 4) {
    read_fragment(w, 2, buf, kk, a2);
    read_fragment(w, 3, buf, kk, b2);
  }
  for (unsigned i = 0; i < MICRO; i++)
    for (unsigned j = 0; j < MICRO; j++) {
      LLVMValueRef *acc = &w->acc[i * MICRO + j];
      LLVMValueRef sum = LLVMBuildLoad2(g->b, w->ty.acc, *acc, "");
      if (w->nmat == 4) {
        LLVMValueRef t = LLVMBuildFAdd(g->b, LLVMBuildFMul(g->b, a[i], b[j], ""), LLVMBuildFMul(g->b, a2[i], b2[j], ""), "");
        sum = LLVMBuildFAdd(g->b, sum, t, "");
      } else {
        sum = w->ty.fl ? LLVMBuildFAdd(g->b, sum, LLVMBuildFMul(g->b, a[i], b[j], ""), "")
                       : LLVMBuildAdd(g->b, sum, LLVMBuildMul(g->b, a[i], b[j], ""), "");
      }
      LLVMBuildStore(g->b, sum, *acc);
    }
}

/* The products of the k-tile at k0 in buffer `buf`: all BK steps unrolled
 * when the tile is whole, a loop over the k < K otherwise. */
static void multiply_tile(mm_gen *w, LLVMValueRef buf, LLVMValueRef k0) {
  ptx_gen *g = w->g;
  LLVMValueRef left = LLVMBuildSub(g->b, w->K, k0, "");
  LLVMValueRef whole = LLVMBuildICmp(g->b, LLVMIntSGE, left, ptx_i64(g, BK), "");
  LLVMBasicBlockRef full = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "full");
  LLVMBasicBlockRef part = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "partial");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "multiplied");
  LLVMBuildCondBr(g->b, whole, full, part);
  LLVMPositionBuilderAtEnd(g->b, full);
  for (unsigned kk = 0; kk < BK; kk++) multiply_step(w, buf, ptx_i64(g, kk));
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, part);
  ptx_loop kk;
  ptx_loop_begin(g, &kk, ptx_i64(g, 0), left, ptx_i64(g, 1));
  multiply_step(w, buf, kk.iv);
  ptx_loop_end(g, &kk);
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
}

/* Row (column) of C of a thread's micro-tile index r, at block origin o. */
static LLVMValueRef micro_at(mm_gen *w, LLVMValueRef o, LLVMValueRef t, unsigned r) {
  ptx_gen *g = w->g;
  return ptx_add(g, ptx_add(g, o, ptx_mul_c(g, t, RUN)), ptx_i64(g, (int64_t)(r / RUN) * HALF + r % RUN));
}

/* The micro-tile's C elements inside the matrix: load (the accumulators
 * start at 0, or with accumulate at the start matrix: C or a bias) or
 * store. */
static void c_access(mm_gen *w, LLVMValueRef i0, LLVMValueRef j0, bool load) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  for (unsigned i = 0; i < MICRO; i++) {
    LLVMValueRef row = micro_at(w, i0, w->trow, i);
    for (unsigned j = 0; j < MICRO; j++) {
      LLVMValueRef col = micro_at(w, j0, w->tcol, j);
      LLVMValueRef *acc = &w->acc[i * MICRO + j];
      if (load) LLVMBuildStore(g->b, LLVMConstNull(w->ty.acc), *acc);
      if (load && !m->accumulate) continue;
      LLVMValueRef ok = LLVMBuildAnd(g->b, ptx_below(g, row, w->M), ptx_below(g, col, w->N), "");
      /* a triangle's outputs only (kn_mm_tri): the others keep their
       * values, their sums computed and dropped; an upper one's c >=
       * r + add */
      if (m->tri.on && m->tri.upper)
        ok = LLVMBuildAnd(g->b, ok, LLVMBuildNot(g->b, ptx_below(g, col, ptx_add(g, row, ptx_i64(g, m->tri.add))), ""), "");
      else if (m->tri.on)
        ok = LLVMBuildAnd(g->b, ok, ptx_below(g, col, ptx_add(g, row, ptx_i64(g, m->tri.add))), "");
      if (!load && m->tri.diag) {
        /* the source's `C[i][i] = constant` on each row i < M: the
         * element on the diagonal, no output's (kn_mm_tri's diag) */
        LLVMValueRef on = LLVMBuildAnd(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, row, col, ""), ptx_below(g, row, w->M), "");
        LLVMBasicBlockRef dj = ptx_if_begin(g, on);
        LLVMValueRef bits = LLVMConstInt(w->ty.acc_kind == KN_F32 ? g->i32 : g->i64, m->tri.diag_bits, false);
        ptx_store(g, LLVMBuildBitCast(g->b, bits, w->ty.acc, ""),
                  element_at(w, &m->c, ptx_type_bytes(w->ty.acc_kind), row, col), w->align_c);
        ptx_if_end(g, dj);
      }
      LLVMBasicBlockRef join = ptx_if_begin(g, ok);
      LLVMValueRef p = element_at(w, load ? kn_matmul_start(m) : &m->c, ptx_type_bytes(w->ty.acc_kind), row, col);
      if (load) {
        LLVMBuildStore(g->b, scaled(w, &m->start_scale, ptx_load(g, w->ty.acc, p, w->align_c)), *acc);
      } else {
        LLVMValueRef v = posted(w, LLVMBuildLoad2(g->b, w->ty.acc, *acc, ""), row, col);
        ptx_store(g, v, p, w->align_c);
        /* the source's `C[j][i] = C[i][j]` after it (kn_mm_tri's mirror) */
        if (m->tri.mirror)
          ptx_store(g, v, element_at(w, &m->c, ptx_type_bytes(w->ty.acc_kind), col, row), w->align_c);
      }
      ptx_if_end(g, join);
    }
  }
}

/* v, through an empty asm statement LLVM cannot see into: C addresses
 * computed from it after the k loop are not merged with (and kept live
 * from) those computed before it, which would cost 32 registers across the
 * loop. */
static LLVMValueRef opaque(ptx_gen *g, LLVMValueRef v) { return opaque_int(g, v, true); }

/* One 128x128 block tile of C over the whole k range.  Loop bounds depend
 * only on block indices and sizes, so every thread reaches every barrier.
 * With one buffer (a second product: four matrices in shared memory) the
 * next k-tile is stored after a barrier that ends this tile's reads. */
static void block_tile(mm_gen *w, LLVMValueRef i0, LLVMValueRef j0) {
  ptx_gen *g = w->g;
  c_access(w, i0, j0, true);
  LLVMValueRef tiles = LLVMBuildSDiv(g->b, ptx_add(g, w->K, ptx_i64(g, BK - 1)), ptx_i64(g, BK), "");
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, ptx_i64(g, 0), tiles));
  load_stage(w, i0, j0, ptx_i64(g, 0));
  store_stage(w, ptx_i64(g, 0));
  ptx_if_end(g, join);
  ptx_barrier(g);
  ptx_loop kt;
  ptx_loop_begin(g, &kt, ptx_i64(g, 0), tiles, ptx_i64(g, 1));
  LLVMValueRef k0 = ptx_mul_c(g, kt.iv, BK);
  bool two = w->nbuf == 2;
  LLVMValueRef buf = two ? LLVMBuildAnd(g->b, kt.iv, ptx_i64(g, 1), "") : ptx_i64(g, 0);
  LLVMValueRef more = ptx_below(g, ptx_add(g, kt.iv, ptx_i64(g, 1)), tiles);
  join = ptx_if_begin(g, more);
  load_stage(w, i0, j0, ptx_add(g, k0, ptx_i64(g, BK)));
  ptx_if_end(g, join);
  multiply_tile(w, buf, k0);
  if (!two) ptx_barrier(g);
  join = ptx_if_begin(g, more);
  store_stage(w, two ? LLVMBuildXor(g->b, buf, ptx_i64(g, 1), "") : buf);
  ptx_if_end(g, join);
  ptx_barrier(g);
  ptx_loop_end(g, &kt);
  c_access(w, opaque(g, i0), opaque(g, j0), false);
}

static LLVMValueRef tile_count(ptx_gen *g, kn_size s) {
  return LLVMBuildSDiv(g->b, ptx_add(g, ptx_size(g, s), ptx_i64(g, TILE - 1)), ptx_i64(g, TILE), "");
}

/* Every tile of C; with a batch, of every product, blocks striding over
 * products along z. */
static void all_tiles(mm_gen *w) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  ptx_loop tb, ti, tj;
  if (m->batched) {
    ptx_loop_begin(g, &tb, ptx_sreg(g, "ctaid.z"), ptx_size(g, m->batch), ptx_sreg(g, "nctaid.z"));
    w->batch = tb.iv;
  }
  ptx_loop_begin(g, &ti, ptx_sreg(g, "ctaid.y"), tile_count(g, m->m), ptx_sreg(g, "nctaid.y"));
  ptx_loop_begin(g, &tj, ptx_sreg(g, "ctaid.x"), tile_count(g, m->n), ptx_sreg(g, "nctaid.x"));
  LLVMValueRef i0 = ptx_mul_c(g, ti.iv, TILE), j0 = ptx_mul_c(g, tj.iv, TILE);
  if (m->tri.on) {
    /* a tile wholly above a triangle's diagonal (below an upper one's)
     * stores nothing: skipped (the test depends on block indices only:
     * every thread agrees) */
    LLVMValueRef any = m->tri.upper ? ptx_below(g, ptx_add(g, i0, ptx_i64(g, m->tri.add)), ptx_add(g, j0, ptx_i64(g, TILE)))
                                    : ptx_below(g, j0, ptx_add(g, i0, ptx_i64(g, TILE - 1 + m->tri.add)));
    LLVMBasicBlockRef join = ptx_if_begin(g, any);
    block_tile(w, i0, j0);
    ptx_if_end(g, join);
  } else {
    block_tile(w, i0, j0);
  }
  ptx_loop_end(g, &tj);
  ptx_loop_end(g, &ti);
  if (m->batched) ptx_loop_end(g, &tb);
  w->batch = NULL;
}

static void gen_init(mm_gen *w, ptx_gen *g) {
  const kn_matmul *m = &g->d->matmul;
  *w = (mm_gen){.g = g, .ty = types_of(g, m->type)};
  w->M = ptx_size(g, m->m);
  w->N = ptx_size(g, m->n);
  w->K = ptx_size(g, m->k);
  w->tcol = ptx_sreg(g, "tid.x");
  w->trow = ptx_sreg(g, "tid.y");
  LLVMValueRef tid = ptx_add(g, ptx_mul_c(g, w->trow, THREADS_X), w->tcol);
  static const char *names[4] = {"mm_a", "mm_b", "mm_a2", "mm_b2"};
  w->nmat = m->second.on ? 4 : 2;
  w->nbuf = m->second.on ? 1 : 2;
  for (unsigned mat = 0; mat < w->nmat; mat++) {
    w->shared[mat] = ptx_shared_array(g, w->ty.acc, w->nbuf * BUF, names[mat]);
    LLVMSetAlignment(w->shared[mat], 128);
    for (unsigned q = 0; q < STAGED; q++) {
      w->place[mat][q] = place_of(w, layout_of(m, mat), mat % 2 == 0, tid, q);
      w->staged[mat][q] = ptx_var(g, w->ty.acc, NULL);
    }
  }
  for (unsigned e = 0; e < MICRO * MICRO; e++) w->acc[e] = ptx_var(g, w->ty.acc, NULL);
}

static unsigned min_u(unsigned a, unsigned b) { return a < b ? a : b; }

static void annotate(ptx_gen *g, const char *key, unsigned value) {
  LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->ctx, key, strlen(key)),
                            LLVMValueAsMetadata(LLVMConstInt(g->i32, value, false))};
  LLVMValueRef node = LLVMMetadataAsValue(g->ctx, LLVMMDNodeInContext2(g->ctx, ops, 3));
  LLVMAddNamedMetadataOperand(g->mod, "nvvm.annotations", node);
}

/* .maxntid and .minnctapersm: ptxas then keeps the registers per thread
 * low enough for blocks_per_sm blocks to share an SM. */
static void launch_bounds(ptx_gen *g, unsigned blocks_per_sm) {
  annotate(g, "maxntidx", THREADS_X);
  annotate(g, "maxntidy", THREADS_X);
  annotate(g, "maxntidz", 1);
  annotate(g, "minctasm", blocks_per_sm);
}

/* With align below the element sizes (the detector cannot prove more), the
 * body comes twice: with natural alignment, taken when the three matrices
 * have it at run time, and with the descriptor's alignment otherwise. */
static bool matmul_build(ptx_gen *g) {
  const kn_matmul *m = &g->d->matmul;
  mm_gen w;
  gen_init(&w, g);
  launch_bounds(g, w.ty.acc_kind == KN_F64 ? 1 : 2);
  unsigned ab_bytes = ptx_type_bytes(w.ty.elem_kind), c_bytes = ptx_type_bytes(w.ty.acc_kind);
  unsigned align = m->align ? m->align : 1;
  w.align_ab = ab_bytes;
  w.align_c = c_bytes;
  if (align >= ab_bytes && align >= c_bytes) {
    all_tiles(&w);
  } else {
    LLVMValueRef ok = LLVMBuildAnd(g->b, ptx_layout_aligned(g, &m->a, ab_bytes),
                                   ptx_layout_aligned(g, &m->b, ab_bytes), "");
    ok = LLVMBuildAnd(g->b, ok, ptx_layout_aligned(g, &m->c, c_bytes), "");
    if (m->second.on)
      ok = LLVMBuildAnd(g->b, ok, LLVMBuildAnd(g->b, ptx_layout_aligned(g, &m->second.a, ab_bytes),
                                               ptx_layout_aligned(g, &m->second.b, ab_bytes), ""), "");
    LLVMBasicBlockRef fast = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "aligned");
    LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "unaligned");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "finished");
    LLVMBuildCondBr(g->b, ok, fast, slow);
    LLVMPositionBuilderAtEnd(g->b, fast);
    all_tiles(&w);
    LLVMBuildBr(g->b, done);
    LLVMPositionBuilderAtEnd(g->b, slow);
    w.align_ab = min_u(align, ab_bytes);
    w.align_c = min_u(align, c_bytes);
    all_tiles(&w);
    LLVMBuildBr(g->b, done);
    LLVMPositionBuilderAtEnd(g->b, done);
  }
  LLVMBuildRetVoid(g->b);
  return true;
}

static void matmul_launch(const kn_desc *d, ptx_launch *l) {
  *l = (ptx_launch){.block = {THREADS_X, THREADS_X, 1},
                    .count = {d->matmul.n, d->matmul.m, kn_mm_batch(&d->matmul)},
                    .per_block = {TILE, TILE, 1},
                    .max_grid = {65535, 65535, 65535}};
}

const ptx_kind ptx_kind_matmul = {matmul_check, matmul_build, matmul_launch, false};
