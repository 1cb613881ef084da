/* test_kernels.c: Check suite "kernels": dominators, natural loops, trip
 * counts and affine accesses on small LLVM IR modules and on clang -O2 IR. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/IRReader.h>

#include "ir.h"

/* ---- Fixture: parse, then run every analysis --------------------------- */

typedef struct {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMValueRef fn;
  tw_arena arena;
  ir_cfg cfg;
  ir_dom dom;
  ir_loops loops;
} fixture;

static void analyse(fixture *f, const char *ir) {
  memset(f, 0, sizeof *f);
  f->ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "test");
  char *msg = NULL;
  if (LLVMParseIRInContext(f->ctx, buf, &f->mod, &msg))
    ck_abort_msg("bad test IR: %s", msg);
  f->fn = LLVMGetFirstFunction(f->mod);
  while (f->fn && LLVMCountBasicBlocks(f->fn) == 0) f->fn = LLVMGetNextFunction(f->fn);
  ck_assert_msg(ir_cfg_build(&f->cfg, &f->arena, f->fn), "no function body");
  ir_dom_build(&f->dom, &f->cfg);
  ir_loops_build(&f->loops, &f->cfg, &f->dom);
  ir_indvar_build(&f->loops, &f->dom);
}

static void release(fixture *f) {
  tw_arena_free(&f->arena);
  LLVMDisposeModule(f->mod);
  LLVMContextDispose(f->ctx);
}

static int block(const fixture *f, const char *name) {
  for (int b = 0; b < f->cfg.nblocks; b++)
    if (strcmp(LLVMGetBasicBlockName(f->cfg.blocks[b].bb), name) == 0) return b;
  ck_abort_msg("no block %s", name);
  return -1;
}

/* An argument or instruction by its IR name (without the %). */
static LLVMValueRef value(const fixture *f, const char *name) {
  size_t len;
  for (LLVMValueRef a = LLVMGetFirstParam(f->fn); a; a = LLVMGetNextParam(a))
    if (strcmp(LLVMGetValueName2(a, &len), name) == 0) return a;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f->fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
      if (strcmp(LLVMGetValueName2(i, &len), name) == 0) return i;
  ck_abort_msg("no value %s", name);
  return NULL;
}

static const ir_loop *loop_at(const fixture *f, const char *header) {
  int h = block(f, header);
  for (int i = 0; i < f->loops.nloops; i++)
    if (f->loops.loops[i]->header == h) return f->loops.loops[i];
  ck_abort_msg("no loop at %s", header);
  return NULL;
}

/* ---- IR modules --------------------------------------------------------- */

static const char ir_diamond[] =
    "define void @f(i1 %c) {\n"
    "entry:\n  br i1 %c, label %l, label %r\n"
    "l:\n  br label %join\n"
    "r:\n  br label %join\n"
    "join:\n  br label %h\n"
    "h:\n  br i1 %c, label %h, label %end\n"
    "end:\n  ret void\n}\n";

static const char ir_const[] =
    "define void @f(ptr %p) {\n"
    "entry:\n  br label %loop\n"
    "loop:\n"
    "  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]\n"
    "  %i64 = zext i32 %i to i64\n"
    "  %addr = getelementptr inbounds i32, ptr %p, i64 %i64\n"
    "  store i32 %i, ptr %addr\n"
    "  %i.next = add i32 %i, 1\n"
    "  %c = icmp slt i32 %i.next, 100\n"
    "  br i1 %c, label %loop, label %exit\n"
    "exit:\n  ret void\n}\n";

/* Top-tested and counting down: the header runs once more than the body. */
static const char ir_countdown[] =
    "define void @f() {\n"
    "entry:\n  br label %head\n"
    "head:\n"
    "  %i = phi i32 [ 10, %entry ], [ %i.next, %body ]\n"
    "  %c = icmp sgt i32 %i, 0\n"
    "  br i1 %c, label %body, label %exit\n"
    "body:\n  %i.next = sub i32 %i, 2\n  br label %head\n"
    "exit:\n  ret void\n}\n";

/* Outer bound is an argument; the inner test compares through zext. */
static const char ir_2d[] =
    "define void @f(ptr %p, i32 %n) {\n"
    "entry:\n  br label %i.head\n"
    "i.head:\n"
    "  %i = phi i32 [ 0, %entry ], [ %i.next, %i.latch ]\n"
    "  %ic = icmp slt i32 %i, %n\n"
    "  br i1 %ic, label %j.pre, label %exit\n"
    "j.pre:\n  br label %j.body\n"
    "j.body:\n"
    "  %j = phi i32 [ 0, %j.pre ], [ %j.next, %j.body ]\n"
    "  %row = mul nsw i32 %i, 16\n"
    "  %ij = add nsw i32 %row, %j\n"
    "  %ij64 = sext i32 %ij to i64\n"
    "  %q = getelementptr inbounds double, ptr %p, i64 %ij64\n"
    "  store double 0.0, ptr %q\n"
    "  %j.next = add nuw i32 %j, 1\n"
    "  %jn64 = zext i32 %j.next to i64\n"
    "  %jc = icmp ne i64 %jn64, 16\n"
    "  br i1 %jc, label %j.body, label %i.latch\n"
    "i.latch:\n  %i.next = add nsw i32 %i, 1\n  br label %i.head\n"
    "exit:\n  ret void\n}\n";

/* C[i][j] += A[i][k] * B[k][j], float, row length n, all three matrices in
 * one byte-addressed memory as twasmc addresses Wasm memory. */
static const char ir_3d[] =
    "define void @mm(ptr %base, i64 %n) {\n"
    "entry:\n  br label %i.head\n"
    "i.head:\n"
    "  %i = phi i64 [ 0, %entry ], [ %i.next, %j.exit ]\n"
    "  br label %j.head\n"
    "j.head:\n"
    "  %j = phi i64 [ 0, %i.head ], [ %j.next, %k.exit ]\n"
    "  br label %k.body\n"
    "k.body:\n"
    "  %k = phi i64 [ 0, %j.head ], [ %k.next, %k.body ]\n"
    "  %acc = phi float [ 0.0, %j.head ], [ %acc.next, %k.body ]\n"
    "  %in = mul i64 %i, %n\n"
    "  %ik = add i64 %in, %k\n"
    "  %aoff = shl i64 %ik, 2\n"
    "  %pa = getelementptr i8, ptr %base, i64 %aoff\n"
    "  %a = load float, ptr %pa\n"
    "  %kn = mul i64 %n, %k\n"
    "  %kj = add i64 %j, %kn\n"
    "  %boff0 = mul i64 %kj, 4\n"
    "  %boff = add i64 %boff0, 4096\n"
    "  %pb = getelementptr i8, ptr %base, i64 %boff\n"
    "  %b = load float, ptr %pb\n"
    "  %prod = fmul float %a, %b\n"
    "  %acc.next = fadd float %acc, %prod\n"
    "  %k.next = add i64 %k, 1\n"
    "  %kc = icmp ult i64 %k.next, %n\n"
    "  br i1 %kc, label %k.body, label %k.exit\n"
    "k.exit:\n"
    "  %in2 = mul i64 %i, %n\n"
    "  %ij = add i64 %in2, %j\n"
    "  %coff0 = shl i64 %ij, 2\n"
    "  %pc0 = getelementptr i8, ptr %base, i64 8192\n"
    "  %pc = getelementptr i8, ptr %pc0, i64 %coff0\n"
    "  store float %acc.next, ptr %pc\n"
    "  %j.next = add i64 %j, 1\n"
    "  %jc = icmp ult i64 %j.next, %n\n"
    "  br i1 %jc, label %j.head, label %j.exit\n"
    "j.exit:\n"
    "  %i.next = add i64 %i, 1\n"
    "  %ic = icmp ult i64 %i.next, %n\n"
    "  br i1 %ic, label %i.head, label %exit\n"
    "exit:\n  ret void\n}\n";

/* The counter is whatever the last load returned. */
static const char ir_while[] =
    "define i32 @f(ptr %p) {\n"
    "entry:\n  br label %loop\n"
    "loop:\n"
    "  %x = phi i32 [ 0, %entry ], [ %v, %loop ]\n"
    "  %q = getelementptr i32, ptr %p, i32 %x\n"
    "  %v = load i32, ptr %q\n"
    "  %c = icmp ne i32 %v, 0\n"
    "  br i1 %c, label %loop, label %exit\n"
    "exit:\n  ret i32 %x\n}\n";

/* A cycle entered at both a and b: no block of it dominates the other. */
static const char ir_irreducible[] =
    "define void @f(i1 %c, i1 %d, i1 %e) {\n"
    "entry:\n  br i1 %c, label %a, label %b\n"
    "a:\n  br i1 %d, label %b, label %exit\n"
    "b:\n  br i1 %e, label %a, label %exit\n"
    "exit:\n  ret void\n}\n";

static const char ir_two_exits[] =
    "define i32 @find(ptr %p, i32 %n) {\n"
    "entry:\n  br label %head\n"
    "head:\n"
    "  %i = phi i32 [ 0, %entry ], [ %i.next, %latch ]\n"
    "  %q = getelementptr inbounds i32, ptr %p, i32 %i\n"
    "  %v = load i32, ptr %q\n"
    "  %found = icmp eq i32 %v, 42\n"
    "  br i1 %found, label %hit, label %latch\n"
    "latch:\n"
    "  %i.next = add nsw i32 %i, 1\n"
    "  %c = icmp slt i32 %i.next, %n\n"
    "  br i1 %c, label %head, label %miss\n"
    "hit:\n  ret i32 %i\n"
    "miss:\n  ret i32 -1\n}\n";

/* What twasmc emits for i32.load offset=16 and i32.store8 in a loop:
 * 32-bit Wasm address arithmetic, zero-extended onto the memory base. */
static const char ir_wasm[] =
    "define void @f(ptr %vmctx, i32 %n) {\n"
    "entry:\n  %mem = load ptr, ptr %vmctx\n  br label %loop\n"
    "loop:\n"
    "  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]\n"
    "  %addr = shl i32 %i, 2\n"
    "  %addr1 = add i32 %addr, 1024\n"
    "  %ea0 = zext i32 %addr1 to i64\n"
    "  %ea = add i64 %ea0, 16\n"
    "  %p = getelementptr i8, ptr %mem, i64 %ea\n"
    "  %v = load i32, ptr %p\n"
    "  %b0 = or disjoint i32 %addr, 3\n"
    "  %b64 = zext i32 %b0 to i64\n"
    "  %pb = getelementptr i8, ptr %mem, i64 %b64\n"
    "  store i8 0, ptr %pb\n"
    "  %i.next = add i32 %i, 1\n"
    "  %c = icmp ult i32 %i.next, %n\n"
    "  br i1 %c, label %loop, label %exit\n"
    "exit:\n  ret void\n}\n";

/* indvars widens Wasm's i32 counter to i64 and truncates it back. */
static const char ir_trunc[] =
    "define void @f(ptr %mem, i32 %n) {\n"
    "entry:\n  br label %loop\n"
    "loop:\n"
    "  %iv = phi i64 [ 0, %entry ], [ %iv.next, %loop ]\n"
    "  %t = trunc nuw i64 %iv to i32\n"
    "  %a = mul i32 %t, %n\n"
    "  %a64 = zext i32 %a to i64\n"
    "  %p = getelementptr i8, ptr %mem, i64 %a64\n"
    "  %v = load i8, ptr %p\n"
    "  %t64 = zext i32 %t to i64\n"
    "  %q = getelementptr i32, ptr %mem, i64 %t64\n"
    "  store i32 0, ptr %q\n"
    "  %iv.next = add nuw nsw i64 %iv, 1\n"
    "  %c = icmp ult i64 %iv.next, 64\n"
    "  br i1 %c, label %loop, label %exit\n"
    "exit:\n  ret void\n}\n";

/* clang-19 -O2 -fno-vectorize -fno-slp-vectorize -fno-unroll-loops -S
 * -emit-llvm --target=x86_64-linux-gnu, metadata stripped, of:
 *   void matmul(int n, const float *a, const float *b, float *c) {
 *     for (int i = 0; i < n; i++)
 *       for (int j = 0; j < n; j++) {
 *         float s = 0;
 *         for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
 *         c[i * n + j] = s;
 *       }
 *   }
 */
static const char ir_clang_matmul[] =
    "target datalayout = \"e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128\"\n"
    "define dso_local void @matmul(i32 noundef %0, ptr nocapture noundef readonly %1, ptr nocapture noundef readonly %2, ptr nocapture noundef writeonly %3) local_unnamed_addr {\n"
    "  %5 = icmp sgt i32 %0, 0\n"
    "  br i1 %5, label %6, label %13\n"
    "6:\n"
    "  %7 = zext nneg i32 %0 to i64\n"
    "  br label %8\n"
    "8:\n"
    "  %9 = phi i64 [ 0, %6 ], [ %18, %17 ]\n"
    "  %10 = mul nuw nsw i64 %9, %7\n"
    "  %11 = getelementptr inbounds float, ptr %1, i64 %10\n"
    "  %12 = getelementptr inbounds float, ptr %3, i64 %10\n"
    "  br label %14\n"
    "13:\n"
    "  ret void\n"
    "14:\n"
    "  %15 = phi i64 [ 0, %8 ], [ %22, %20 ]\n"
    "  %16 = getelementptr inbounds float, ptr %2, i64 %15\n"
    "  br label %24\n"
    "17:\n"
    "  %18 = add nuw nsw i64 %9, 1\n"
    "  %19 = icmp eq i64 %18, %7\n"
    "  br i1 %19, label %13, label %8\n"
    "20:\n"
    "  %21 = getelementptr inbounds float, ptr %12, i64 %15\n"
    "  store float %32, ptr %21, align 4\n"
    "  %22 = add nuw nsw i64 %15, 1\n"
    "  %23 = icmp eq i64 %22, %7\n"
    "  br i1 %23, label %17, label %14\n"
    "24:\n"
    "  %25 = phi i64 [ 0, %14 ], [ %33, %24 ]\n"
    "  %26 = phi float [ 0.000000e+00, %14 ], [ %32, %24 ]\n"
    "  %27 = getelementptr inbounds float, ptr %11, i64 %25\n"
    "  %28 = load float, ptr %27, align 4\n"
    "  %29 = mul nuw nsw i64 %25, %7\n"
    "  %30 = getelementptr inbounds float, ptr %16, i64 %29\n"
    "  %31 = load float, ptr %30, align 4\n"
    "  %32 = tail call float @llvm.fmuladd.f32(float %28, float %31, float %26)\n"
    "  %33 = add nuw nsw i64 %25, 1\n"
    "  %34 = icmp eq i64 %33, %7\n"
    "  br i1 %34, label %20, label %24\n"
    "}\n"
    "declare float @llvm.fmuladd.f32(float, float, float)\n";

/* ---- Dominators ---------------------------------------------------------- */

static const struct {
  const char *ir, *a, *b;
  bool dominates;
} dom_cases[] = {
    {ir_diamond, "entry", "join", true},   {ir_diamond, "l", "join", false},
    {ir_diamond, "r", "join", false},      {ir_diamond, "join", "end", true},
    {ir_diamond, "h", "end", true},        {ir_diamond, "end", "h", false},
    {ir_diamond, "r", "r", true},          {ir_diamond, "l", "r", false},
    {ir_irreducible, "a", "b", false}, {ir_irreducible, "b", "a", false},
    {ir_irreducible, "entry", "exit", true}, {ir_irreducible, "a", "exit", false},
    {ir_3d, "j.head", "k.exit", true}, {ir_3d, "k.body", "j.exit", true},
    {ir_3d, "k.exit", "k.body", false},
};

START_TEST(dominance) {
  fixture f;
  analyse(&f, dom_cases[_i].ir);
  int a = block(&f, dom_cases[_i].a), b = block(&f, dom_cases[_i].b);
  ck_assert_msg(ir_dominates(&f.dom, a, b) == dom_cases[_i].dominates, "%s dom %s",
                dom_cases[_i].a, dom_cases[_i].b);
  release(&f);
}
END_TEST

START_TEST(immediate_dominators) {
  fixture f;
  analyse(&f, ir_diamond);
  ck_assert_int_eq(f.dom.idom[block(&f, "join")], block(&f, "entry"));
  ck_assert_int_eq(f.dom.idom[block(&f, "end")], block(&f, "h"));
  ck_assert_int_eq(f.dom.idom[block(&f, "h")], block(&f, "join"));
  ck_assert_int_eq(block(&f, "entry"), 0);
  release(&f);
}
END_TEST

/* ---- Loops, nesting and trip counts ------------------------------------ */

typedef struct {
  const char *header, *parent, *preheader; /* NULL: none */
  int depth, nlatches, nexits, nivs;
  ir_trip_kind trip;
  uint64_t count;
} loop_expect;

static const struct {
  const char *name, *ir;
  int nloops, nroots;
  loop_expect loops[3];
} loop_cases[] = {
    {"self loop", ir_diamond, 1, 1, {{"h", NULL, "join", 1, 1, 1, 0, IR_TRIP_NONE, 0}}},
    {"constant trip", ir_const, 1, 1, {{"loop", NULL, "entry", 1, 1, 1, 1, IR_TRIP_CONST, 100}}},
    {"top-tested countdown", ir_countdown, 1, 1, {{"head", NULL, "entry", 1, 1, 1, 1, IR_TRIP_CONST, 6}}},
    {"2-D symbolic outer", ir_2d, 2, 1,
     {{"i.head", NULL, "entry", 1, 1, 1, 1, IR_TRIP_SYMBOLIC, 0},
      {"j.body", "i.head", "j.pre", 2, 1, 1, 1, IR_TRIP_CONST, 16}}},
    {"3-D matmul", ir_3d, 3, 1,
     {{"i.head", NULL, "entry", 1, 1, 1, 1, IR_TRIP_SYMBOLIC, 0},
      {"j.head", "i.head", "i.head", 2, 1, 1, 1, IR_TRIP_SYMBOLIC, 0},
      {"k.body", "j.head", "j.head", 3, 1, 1, 1, IR_TRIP_SYMBOLIC, 0}}},
    {"while not countable", ir_while, 1, 1, {{"loop", NULL, "entry", 1, 1, 1, 0, IR_TRIP_NONE, 0}}},
    {"irreducible", ir_irreducible, 0, 0, {{NULL, NULL, NULL, 0, 0, 0, 0, IR_TRIP_NONE, 0}}},
    {"two exits", ir_two_exits, 1, 1, {{"head", NULL, "entry", 1, 1, 2, 1, IR_TRIP_SYMBOLIC, 0}}},
    {"wasm addressing", ir_wasm, 1, 1, {{"loop", NULL, "entry", 1, 1, 1, 1, IR_TRIP_SYMBOLIC, 0}}},
};

static void check_loop(const fixture *f, const loop_expect *e) {
  const ir_loop *l = loop_at(f, e->header);
  ck_assert_int_eq(l->depth, e->depth);
  if (e->parent) ck_assert_ptr_eq(l->parent, loop_at(f, e->parent));
  else ck_assert_ptr_null(l->parent);
  ck_assert_int_eq(l->preheader, e->preheader ? block(f, e->preheader) : -1);
  ck_assert_int_eq(l->nlatches, e->nlatches);
  ck_assert_int_eq(l->nexits, e->nexits);
  ck_assert_int_eq(l->nivs, e->nivs);
  ck_assert_int_eq(l->trip.kind, e->trip);
  if (e->trip == IR_TRIP_CONST) ck_assert_uint_eq(l->trip.count, e->count);
}

START_TEST(loop_structure) {
  fixture f;
  analyse(&f, loop_cases[_i].ir);
  ck_assert_int_eq(f.loops.nloops, loop_cases[_i].nloops);
  ck_assert_int_eq(f.loops.nroots, loop_cases[_i].nroots);
  for (int i = 0; i < loop_cases[_i].nloops; i++) check_loop(&f, &loop_cases[_i].loops[i]);
  release(&f);
}
END_TEST

/* Symbolic trip counts evaluated from live values, as the runtime will. */
static const struct {
  const char *ir, *header, *bound;
  int64_t start, live_bound;
  uint64_t count;
} trip_cases[] = {
    {ir_2d, "i.head", "n", 0, 5, 6}, /* top-tested: header runs n + 1 times */
    {ir_2d, "i.head", "n", 0, -3, 1},
    {ir_3d, "k.body", "n", 0, 7, 7},
    {ir_3d, "i.head", "n", 0, 1, 1},
    {ir_two_exits, "head", "n", 0, 10, 10},
    {ir_wasm, "loop", "n", 0, 0, 1}, /* bottom-tested: runs at least once */
    {ir_wasm, "loop", "n", 0, -1, 4294967295u},
};

START_TEST(symbolic_trip) {
  fixture f;
  analyse(&f, trip_cases[_i].ir);
  const ir_trip *t = &loop_at(&f, trip_cases[_i].header)->trip;
  ck_assert_int_eq(t->kind, IR_TRIP_SYMBOLIC);
  ck_assert_ptr_eq(t->bound, value(&f, trip_cases[_i].bound));
  uint64_t count;
  ck_assert(ir_trip_eval(t, trip_cases[_i].start, trip_cases[_i].live_bound, &count));
  ck_assert_uint_eq(count, trip_cases[_i].count);
  release(&f);
}
END_TEST

/* The arithmetic alone: x starts at start (+ step when cmp_next) and the loop
 * stays while `x pred bound` in `bits`-wide integers. */
static const struct {
  const char *name;
  LLVMIntPredicate pred;
  bool cmp_next, countable;
  unsigned bits;
  int64_t start, bound, step;
  uint64_t count;
} eval_cases[] = {
    {"ne by one", LLVMIntNE, true, true, 32, 0, 10, 1, 10},
    {"ne by two, even gap", LLVMIntNE, true, true, 32, 0, 10, 2, 5},
    {"ne by two, odd gap never hits", LLVMIntNE, true, false, 32, 0, 9, 2, 0},
    {"ne wraps the width", LLVMIntNE, true, true, 8, 250, 4, 1, 10},
    {"slt negative range", LLVMIntSLT, false, true, 32, -5, 5, 3, 5},
    {"slt empty", LLVMIntSLT, false, true, 32, 7, 3, 1, 1},
    {"sle to max never leaves", LLVMIntSLE, false, false, 32, 0, INT32_MAX, 1, 0},
    {"ult against counting down wraps", LLVMIntULT, false, false, 32, 0, 10, -1, 0},
    {"uge down to zero never leaves", LLVMIntUGE, false, false, 32, 10, 0, -1, 0},
    {"sge down to zero", LLVMIntSGE, false, true, 32, 10, 0, -1, 12},
    {"ugt down by three", LLVMIntUGT, true, true, 64, 30, 0, -3, 10},
    {"eq holds once", LLVMIntEQ, false, true, 32, 4, 4, 1, 2},
    {"ult full i64 range overflows the count", LLVMIntULT, false, false, 64, 0, -1, 1, 0},
};

START_TEST(trip_arithmetic) {
  ir_trip t = {.kind = IR_TRIP_SYMBOLIC, .pred = eval_cases[_i].pred, .cmp_next = eval_cases[_i].cmp_next,
               .bits = eval_cases[_i].bits, .step = eval_cases[_i].step};
  uint64_t count = 0;
  bool ok = ir_trip_eval(&t, eval_cases[_i].start, eval_cases[_i].bound, &count);
  ck_assert_msg(ok == eval_cases[_i].countable, "%s", eval_cases[_i].name);
  if (ok) ck_assert_uint_eq(count, eval_cases[_i].count);
}
END_TEST

START_TEST(two_exits_marks_upper_bound) {
  fixture f;
  analyse(&f, ir_two_exits);
  const ir_trip *t = &loop_at(&f, "head")->trip;
  ck_assert(t->other_exits);
  ck_assert_int_eq(t->exit.from, block(&f, "latch"));
  ck_assert_int_eq(t->exit.to, block(&f, "miss"));
  release(&f);
}
END_TEST

/* ---- Affine accesses ------------------------------------------------------ */

typedef struct {
  const char *iv, *inv; /* IR names; NULL: factor absent */
  int64_t coeff;
} term_expect;

typedef struct {
  bool is_store, ok, may_wrap;
  const char *base;
  unsigned size;
  int64_t constant;
  int nterms;
  term_expect terms[3];
} access_expect;

static const struct {
  const char *name, *ir, *nest;
  int naccesses;
  access_expect acc[3];
} access_cases[] = {
    {"zext of bounded IV", ir_const, "loop", 1, {{true, true, false, "p", 4, 0, 1, {{"i", NULL, 4}}}}},
    {"sext of nsw row", ir_2d, "i.head", 1,
     {{true, true, false, "p", 8, 0, 2, {{"i", NULL, 128}, {"j", NULL, 8}}}}},
    {"3-D matmul on i8 GEPs", ir_3d, "i.head", 3,
     {{false, true, false, "base", 4, 0, 2, {{"i", "n", 4}, {"k", NULL, 4}}},
      {false, true, false, "base", 4, 4096, 2, {{"k", "n", 4}, {"j", NULL, 4}}},
      {true, true, false, "base", 4, 8192, 2, {{"i", "n", 4}, {"j", NULL, 4}}}}},
    {"while loop by load", ir_while, "loop", 1, {{false, false, false, "p", 4, 0, 0, {{0}}}}},
    {"i32 GEP index", ir_two_exits, "head", 1, {{false, true, false, "p", 4, 0, 1, {{"i", NULL, 4}}}}},
    {"wasm zext may wrap", ir_wasm, "loop", 2,
     {{false, true, true, "mem", 4, 1040, 1, {{"i", NULL, 4}}},
      {true, true, true, "mem", 1, 3, 1, {{"i", NULL, 4}}}}},
    {"trunc of widened IV", ir_trunc, "loop", 2,
     {{false, true, true, "mem", 1, 0, 1, {{"iv", "n", 1}}},
      {true, true, false, "mem", 4, 0, 1, {{"iv", NULL, 4}}}}},
};

static void check_access(const fixture *f, const ir_access *a, const access_expect *e) {
  ck_assert_int_eq(a->is_store, e->is_store);
  ck_assert_ptr_eq(a->base, value(f, e->base));
  ck_assert_uint_eq(a->size, e->size);
  ck_assert_int_eq(a->offset.ok, e->ok);
  if (!e->ok) return;
  ck_assert_int_eq(a->offset.may_wrap, e->may_wrap);
  ck_assert_int_eq(a->offset.constant, e->constant);
  ck_assert_int_eq(a->offset.nterms, e->nterms);
  for (int i = 0; i < e->nterms; i++) {
    const term_expect *t = &e->terms[i];
    const ir_iv *iv = t->iv ? ir_iv_of(a->loop, value(f, t->iv)) : NULL;
    ck_assert_msg(!t->iv || iv, "%s is not an IV", t->iv);
    LLVMValueRef inv = t->inv ? value(f, t->inv) : NULL;
    ck_assert_int_eq(ir_affine_coeff(&a->offset, iv, inv), t->coeff);
  }
}

START_TEST(affine_access) {
  fixture f;
  analyse(&f, access_cases[_i].ir);
  int n;
  const ir_access *acc = ir_accesses(loop_at(&f, access_cases[_i].nest), &f.cfg,
                                     LLVMGetModuleDataLayout(f.mod), &n);
  ck_assert_int_eq(n, access_cases[_i].naccesses);
  for (int i = 0; i < n; i++) check_access(&f, &acc[i], &access_cases[_i].acc[i]);
  release(&f);
}
END_TEST

/* ---- Real clang -O2 output --------------------------------------------------- */

START_TEST(clang_matmul) {
  fixture f;
  analyse(&f, ir_clang_matmul);
  ck_assert_int_eq(f.loops.nloops, 3);
  ck_assert_int_eq(f.loops.nroots, 1);
  const ir_loop *li = f.loops.roots[0];
  ck_assert_int_eq(li->nchildren, 1);
  const ir_loop *lj = li->children[0];
  ck_assert_int_eq(lj->nchildren, 1);
  const ir_loop *lk = lj->children[0];
  ck_assert_int_eq(lk->depth, 3);
  const ir_loop *nest[] = {li, lj, lk};
  LLVMValueRef n = lk->trip.bound; /* zext nneg i32 %0 to i64, in the guard */
  for (int d = 0; d < 3; d++) {
    ck_assert_int_ge(nest[d]->preheader, 0);
    ck_assert_int_eq(nest[d]->trip.kind, IR_TRIP_SYMBOLIC);
    ck_assert_ptr_eq(nest[d]->trip.bound, n);
    uint64_t count;
    ck_assert(ir_trip_eval(&nest[d]->trip, 0, 7, &count));
    ck_assert_uint_eq(count, 7);
  }
  const ir_iv *i = &li->ivs[0], *j = &lj->ivs[0], *k = &lk->ivs[0];
  int count;
  const ir_access *acc = ir_accesses(li, &f.cfg, LLVMGetModuleDataLayout(f.mod), &count);
  ck_assert_int_eq(count, 3);
  /* a[i*n + k], b[k*n + j], c[i*n + j] */
  const struct { unsigned param; const ir_iv *row, *col; } want[] = {{1, i, k}, {2, k, j}, {3, i, j}};
  for (int a = 0; a < 3; a++) {
    ck_assert_ptr_eq(acc[a].base, LLVMGetParam(f.fn, want[a].param));
    ck_assert(acc[a].offset.ok && !acc[a].offset.may_wrap);
    ck_assert_int_eq(acc[a].offset.nterms, 2);
    ck_assert_int_eq(acc[a].offset.constant, 0);
    ck_assert_int_eq(ir_affine_coeff(&acc[a].offset, want[a].row, n), 4);
    ck_assert_int_eq(ir_affine_coeff(&acc[a].offset, want[a].col, NULL), 4);
  }
  release(&f);
}
END_TEST

START_TEST(dump_names_loops_and_trips) {
  fixture f;
  analyse(&f, ir_3d);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  ir_dump_loops(out, &f.loops);
  fclose(out);
  ck_assert_ptr_nonnull(strstr(text, "loop i.head depth 1 preheader entry latches j.exit"));
  ck_assert_ptr_nonnull(strstr(text, "    loop k.body depth 3"));
  ck_assert_ptr_nonnull(strstr(text, "trip: while %k+step ult %n"));
  free(text);
  release(&f);
}
END_TEST

static Suite *kernels_suite(void) {
  Suite *s = suite_create("kernels");
  TCase *t = tcase_create("dominators");
  tcase_add_loop_test(t, dominance, 0, sizeof dom_cases / sizeof dom_cases[0]);
  tcase_add_test(t, immediate_dominators);
  suite_add_tcase(s, t);
  t = tcase_create("loops");
  tcase_add_loop_test(t, loop_structure, 0, sizeof loop_cases / sizeof loop_cases[0]);
  tcase_add_loop_test(t, symbolic_trip, 0, sizeof trip_cases / sizeof trip_cases[0]);
  tcase_add_loop_test(t, trip_arithmetic, 0, sizeof eval_cases / sizeof eval_cases[0]);
  tcase_add_test(t, two_exits_marks_upper_bound);
  tcase_add_test(t, dump_names_loops_and_trips);
  suite_add_tcase(s, t);
  t = tcase_create("affine");
  tcase_add_loop_test(t, affine_access, 0, sizeof access_cases / sizeof access_cases[0]);
  tcase_add_test(t, clang_matmul);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(kernels_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
