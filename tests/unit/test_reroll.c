/* test_reroll.c: Check suite "reroll": C loops compiled with clang -O2
 * (unrolled by two, by 4 or 8 with a remainder loop, or completely: a sum
 * of N terms in a chain), re-rolled by ir_reroll_loops where it proves the
 * rewrite exact, left alone elsewhere; programs print the same with the
 * re-roll on and off. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "decode.h"
#include "driver.h"
#include "ir_pass.h"
#include "lower.h"
#include "twasm_abi.h"
#include "validate.h"
#include "unit_sh.h"

#ifndef REROLL_DIR
#define REROLL_DIR "tests/unit/reroll"
#endif

static char tmpdir[64];

static bool have_tools(void) {
  return system("clang-19 --version >/dev/null 2>&1") == 0 && access(unit_twasmc(), X_OK) == 0;
}

/* NAME.c -> tmpdir/NAME.wasm.  Compiled and linked in two steps (a linking
 * clang -O2 runs wasm-opt when installed, which inlines and reshapes); with
 * `opt`, in one, as users do; with `simd`, -msimd128 (clang vectorises). */
static void wasm_of(const char *name, bool opt, bool simd) {
  char cmd[2048], out[8192];
  const char *v = simd ? "-msimd128" : "";
  if (opt)
    snprintf(cmd, sizeof cmd,
             "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 %s %s/%s.c -o %s/%s.wasm", v, REROLL_DIR,
             name, tmpdir, name);
  else
    snprintf(cmd, sizeof cmd,
             "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 %s -c %s/%s.c -o %s/%s.o && "
             "clang-19 --target=wasm32-wasi --sysroot=/usr %s/%s.o -o %s/%s.wasm",
             v, REROLL_DIR, name, tmpdir, name, tmpdir, name, tmpdir, name);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
}

static void setup(void) {
  strcpy(tmpdir, "/tmp/twasm-rerollXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
}

/* ---- The pass on its own ------------------------------------------------ */

typedef struct {
  const char *file, *func; /* C function, @wasm_f<N>_<func> in the IR */
  bool rerolled; /* in copies.c: the loop of copies (ir_reroll_copies.c), not another re-roll */
} pass_case;

static const pass_case pass_cases[] = {
    {"maps", "saxpy", true},     /* by 2, odd element after, n == 1 bypass */
    {"matmul", "mm_ijk", true},  /* f32 sum: loads of the copies interleaved */
    {"matmul", "mm_ikj", true},  /* load-add-store, pointers stepping by 8 */
    {"matmul", "mm_rect", true}, /* f64, three preds at the join */
    {"matmul", "blur", true},    /* 2-D stencil, three rows */
    {"sums", "isum2", true},     /* i32 sum */
    {"mixed", "f2", true},       /* unsigned count: bypass n == 1 with no n > 0 guard */
    {"mixed", "f6", true},       /* stride two */
    {"products", "dot", true},    /* by 4 with a remainder loop, f32 sum in order */
    {"products", "isum", true},   /* remainder loop of pointer IVs */
    {"products", "matvec", true}, /* by 4 inside a loop, sum stored every iteration */
    {"products", "matmul", true}, /* the k loop of a product, sum kept in C */
    {"bypass", "acc_rows", true}, /* bypass `n - 1 != 0` (re-rolled before too; its odd copy now goes) */
    {"bypass", "tri_rows", true}, /* `j <= i`: bypass `i == 0`, count i + 1 a twin phi */
    {"bypass", "tri_scale", true}, /* by 4: bypass `i < 3`, remainder from (i + 1) & 3 */
    {"strength", "gram", true},   /* by 4, counter from 0 down to -(n & ~3), remainder counting bytes up */
    {"guards", "scale_if", true},  /* by 2: odd count kept out by an outer guard `on == 0 | w < 1` */
    {"guards", "grid_down", true}, /* by 2: a value stepping -10, -5 per iteration */
    {"guards", "xor_down", true},  /* by 4 with a remainder: -28, -7 per iteration (i32 sum) */
    {"guards", "rows_if", true},   /* by 4: bypass `w - 1 <u 3` hoisted, the remainder loop goes */
    {"guards", "scale_ld", true},  /* by 4: every copy loads scale[0] */
    {"guards", "dots_i64", true},  /* by 2: count select(k0 > 1, k0, 1), bypass `k0 >= 2` */
    {"ordered", "ramp", true},   /* by 4, copies stored a+12 .. a: versioned */
    {"ordered", "hashfill", true}, /* v += 2654435761 by 4: a step known from the copies */
    {"ordered", "prefix", true}, /* values after the loop in X, E's phis computed from them */
    {"walks", "mv_walk", true},  /* by 4, counter down to 0, loads at a+12 .. a off one walking i32 */
    {"walks", "mm_walk", true},  /* as mv_walk, the column pointer computed on the bypass arm */
    {"walks", "mm_walk_ikj", true}, /* by 4, counter down to 0 */
    {"walks", "mm_unsigned", true}, /* by 2 behind a br_table: k == 0, k == 1, else */
    {"walks", "mtv_size", true},    /* size_t: as mm_unsigned */
    {"walks", "copy_walk", true},   /* stores walked: behind the range test */
    {"copies", "rows_i8", true},   /* j loop of 8 k loops unrolled completely, copy 0 counted apart */
    {"copies", "batch_i8", true},  /* the same inside a batch loop */
    {"copies", "tri_i8", false},   /* copy j sums j + 30 terms */
    {"copies", "swap_i8", false},  /* copy j stores at j ^ 1 */
    {"copies", "bias_i8", false},  /* copy j's sum starts from j */
    {"vec", "rows_f32", true},     /* twelve f32x4 copies of a j loop unrolled completely */
    {"vec", "rows_i32", true},     /* five i32x4 copies */
    {"vec", "scale_f32", true},    /* copy 0's constant folded, the others' a bitcast of it */
    {"kept", "calls", false},    /* a call in the body */
    {"kept", "vol", false},      /* volatile */
    {"kept", "find", false},     /* two exits */
    {"full", "mm16", true},          /* unrolled completely: f32 chain from 0.0 + t0 */
    {"full", "mm16_i8", true},       /* i32 chain of i8 products */
    {"full", "dense8", true},        /* f64 chain from a bias */
    {"full", "perm", false},         /* terms added in the order 3, 1, 0, 2 */
    {"full", "extra_store", false},  /* a store in every copy */
    {"full", "squares", false},      /* a[p * p]: not affine in the copy */
    {"full", "coeffs", false},       /* a float constant per copy */
};

/* Built with -msimd128: clang's SLP vectoriser turns the complete
 * unrolling of an i8 dot product into i32x4 products of i8 lanes widened
 * twice, added in a chain of vectors, then across the lanes. */
static const pass_case simd_pass_cases[] = {
    {"full", "mm16_i8", true},   /* four i32x4 terms, the loop's lanes counted up */
    {"copies", "rows_i8", true}, /* eight such chains of eight terms: the sums first, then the copies */
    {"copies", "batch_i8", true}, /* the same inside a batch loop */
};

/* The function of mod whose name ends in _func. */
static LLVMValueRef function_named(LLVMModuleRef mod, const char *func) {
  size_t want = strlen(func);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    if (len > want + 1 && strcmp(name + len - want, func) == 0 && name[len - want - 1] == '_')
      return fn;
  }
  ck_abort_msg("no function %s", func);
  return NULL;
}

/* Functions whose one-block loops are counted after the pass: a remainder
 * loop merged into the re-rolled loop is gone (the checked copies of
 * round 13's versions, which keep the original loops, not counted). */
static const struct {
  const char *file, *func;
  int self_loops;
} loop_counts[] = {
    {"guards", "rows_if", 1},
};

/* Round 13: the re-rolled loop runs each iteration with copy 0's
 * instructions, so a trap at a later copy's access would name copy 0's
 * offset; a loop that touches memory is re-rolled only behind a range
 * test, the original kept as a checked copy (its back branches marked).
 * Alone: the test in L's preheader, L kept beside it (one checked loop);
 * inside a nest: the test before the nest (`reroll.nest.in`), the whole
 * nest cloned (its inner loop and remainder loop checked). */
static const struct {
  const char *file, *func;
  int checked_loops;
  bool hoisted;
} kept_copies[] = {
    {"products", "dot", 1, false},    /* by 4, f32 sum with its copies in order */
    {"sums", "isum2", 1, false},      /* by 4, i32 sum */
    {"maps", "saxpy", 1, false},      /* by 2 with the odd element after the loop */
    {"products", "matvec", -1, true}, /* by 4 inside the row loop: the row loop cloned */
    {"matmul", "mm_ijk", -1, true},   /* by 2, the k loop of a product */
    {"walks", "mv_walk", 0, false},   /* A's pointer carried from row to row (no IV): not hoisted, re-rolled as before */
};

static bool hoisted_test(LLVMValueRef fn) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      size_t len;
      if (!strncmp(LLVMGetValueName2(i, &len), "reroll.nest.in", 14)) return true;
    }
  return false;
}

static int checked_loops(LLVMValueRef fn) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
    bool back = false;
    for (unsigned i = 0; t && i < LLVMGetNumSuccessors(t); i++) back |= LLVMGetSuccessor(t, i) == bb;
    n += back && ir_checked_copy(bb);
  }
  return n;
}

static int self_loops(LLVMValueRef fn) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
    for (unsigned i = 0; t && i < LLVMGetNumSuccessors(t); i++) n += LLVMGetSuccessor(t, i) == bb && !ir_checked_copy(bb);
  }
  return n;
}

/* The exit test the re-roll names: reroll.stay, or reroll.jstay for the
 * loop of copies. */
static bool has_rerolled_loop(LLVMValueRef fn, const char *test) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      size_t len;
      if (strcmp(LLVMGetValueName2(i, &len), test) == 0) return true;
    }
  return false;
}

/* The lowered module, as the driver has it before its rewrites (guard
 * mode: accesses marked, their bounds checks not yet added). */
static LLVMModuleRef lowered(LLVMContextRef ctx, const char *path) {
  uint8_t *bytes;
  size_t size;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_int_eq(drv_read_input(path, &bytes, &size, &d), DRV_OK);
  tw_arena arena = {0};
  wasm_module m;
  ck_assert_msg(dec_module(&arena, bytes, size, path, &m, &d) && val_module(&m, &d), "%s", d.msg);
  low_options lo = {.bounds_mode = TWASM_BOUNDS_GUARD, .desc_symbol = "twasm_module", .module_name = "t"};
  LLVMModuleRef mod = NULL;
  ck_assert_msg(low_module(ctx, &m, &lo, &mod, &d), "%s", d.msg);
  tw_arena_free(&arena);
  free(bytes);
  return mod;
}

/* Lowered, unoptimised IR, mem2reg, then the pass. */
static void check_pass(const pass_case *c, bool simd) {
  if (!have_tools()) return;
  char path[256];
  wasm_of(c->file, false, simd);
  snprintf(path, sizeof path, "%s/%s.wasm", tmpdir, c->file);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = lowered(ctx, path);
  char *err = NULL;
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  ck_assert(LLVMRunPasses(mod, "function(mem2reg)", NULL, po) == NULL);
  LLVMDisposePassBuilderOptions(po);
  unsigned n = ir_reroll_loops(mod, true);
  ck_assert_msg(!LLVMVerifyModule(mod, LLVMReturnStatusAction, &err), "%s", err);
  LLVMDisposeMessage(err);
  const char *test = !strcmp(c->file, "copies") ? "reroll.jstay" : !strcmp(c->file, "vec") ? "reroll.vstay" : "reroll.stay";
  bool done = has_rerolled_loop(function_named(mod, c->func), test);
  ck_assert_msg(done == c->rerolled, "%s: %s %s (%u in the module)", c->file, c->func,
                done ? "re-rolled" : "left alone", n);
  for (size_t k = 0; k < sizeof loop_counts / sizeof *loop_counts; k++) {
    if (strcmp(loop_counts[k].file, c->file) || strcmp(loop_counts[k].func, c->func)) continue;
    int got = self_loops(function_named(mod, c->func));
    ck_assert_msg(got == loop_counts[k].self_loops, "%s: %s: %d one-block loops, not %d", c->file, c->func, got,
                  loop_counts[k].self_loops);
  }
  for (size_t k = 0; k < sizeof kept_copies / sizeof *kept_copies; k++) {
    if (strcmp(kept_copies[k].file, c->file) || strcmp(kept_copies[k].func, c->func)) continue;
    LLVMValueRef fn = function_named(mod, c->func);
    int got = checked_loops(fn);
    ck_assert_msg(kept_copies[k].checked_loops < 0 ? got > 0 : got == kept_copies[k].checked_loops,
                  "%s: %s: %d kept (checked) one-block loops, not %d (-1: some)", c->file, c->func, got,
                  kept_copies[k].checked_loops);
    ck_assert_msg(hoisted_test(fn) == kept_copies[k].hoisted, "%s: %s: the range test %s before the nest", c->file,
                  c->func, kept_copies[k].hoisted ? "not" : "unexpectedly");
  }
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
}

START_TEST(pass_rerolls_what_it_proves) { check_pass(&pass_cases[_i], false); }
END_TEST

START_TEST(pass_rerolls_simd_sums) { check_pass(&simd_pass_cases[_i], true); }
END_TEST

/* ---- Vector copies that are not copies (ir_reroll_vec.c) --------------- */

/* The n-th (from 0) instruction of fn that pick accepts, or NULL. */
static LLVMValueRef nth(LLVMValueRef fn, bool (*pick)(LLVMValueRef), int n) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
      if (pick(i) && n-- == 0) return i;
  return NULL;
}

static bool is_const(LLVMValueRef v, uint64_t k) {
  return LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == k;
}

/* `add i64 x, 48` addressing a vector load (copy 3's b[k][12:16]) */
static bool load_offset_48(LLVMValueRef i) {
  if (LLVMGetInstructionOpcode(i) != LLVMAdd || !is_const(LLVMGetOperand(i, 1), 48)) return false;
  LLVMUseRef u = LLVMGetFirstUse(i);
  LLVMValueRef gep = u ? LLVMGetUser(u) : NULL;
  u = gep && LLVMIsAGetElementPtrInst(gep) ? LLVMGetFirstUse(gep) : NULL;
  LLVMValueRef ld = u ? LLVMGetUser(u) : NULL;
  return ld && LLVMIsALoadInst(ld) && LLVMGetTypeKind(LLVMTypeOf(ld)) == LLVMVectorTypeKind;
}

static bool vector_fmul(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMFMul && LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind;
}

static bool vector_store(LLVMValueRef i) {
  return LLVMIsAStoreInst(i) && LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(i, 0))) == LLVMVectorTypeKind;
}

/* 0: as built (re-rolled); 1: copy 3 reads b one float further; 2: copy
 * 2 subtracts; 3: a load of something else between copies 1 and 2 (the
 * copies' accesses would pass it) */
static void mutate_rows(LLVMContextRef ctx, LLVMValueRef fn, int how) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  if (how == 1) {
    LLVMValueRef add = nth(fn, load_offset_48, 0);
    ck_assert_ptr_nonnull(add);
    LLVMSetOperand(add, 1, LLVMConstInt(LLVMTypeOf(add), 52, false));
  } else if (how == 2) {
    LLVMValueRef mul = nth(fn, vector_fmul, 2);
    ck_assert_ptr_nonnull(mul);
    LLVMPositionBuilderBefore(b, mul);
    LLVMValueRef sub = LLVMBuildFSub(b, LLVMGetOperand(mul, 0), LLVMGetOperand(mul, 1), "");
    LLVMReplaceAllUsesWith(mul, sub);
    LLVMInstructionEraseFromParent(mul);
  } else if (how == 3) {
    LLVMValueRef st = nth(fn, vector_store, 1);
    ck_assert_ptr_nonnull(st);
    LLVMValueRef next = LLVMGetNextInstruction(st);
    LLVMPositionBuilderBefore(b, next);
    LLVMValueRef other = LLVMBuildLoad2(b, LLVMInt32TypeInContext(ctx), LLVMGetOperand(st, 1), "other");
    LLVMValueRef last = nth(fn, vector_store, 11);
    ck_assert_ptr_nonnull(last);
    LLVMPositionBuilderBefore(b, LLVMGetNextInstruction(last));
    LLVMBuildStore(b, other, LLVMGetOperand(last, 1));
  }
  LLVMDisposeBuilder(b);
}

/* file.c's func (built with -msimd128 when simd), lowered, mem2reg,
 * changed by `mutate` (how), then the pass: re-rolled (the loop's exit
 * test `test`) only when unchanged (how 0). */
typedef void (*fn_mutation)(LLVMContextRef ctx, LLVMValueRef fn, int how);

static void rerolled_unless_changed(const char *file, bool simd, const char *func, fn_mutation mutate, int how,
                                    const char *test) {
  if (!have_tools()) return;
  char path[256];
  wasm_of(file, false, simd);
  snprintf(path, sizeof path, "%s/%s.wasm", tmpdir, file);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = lowered(ctx, path);
  char *err = NULL;
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  ck_assert(LLVMRunPasses(mod, "function(mem2reg)", NULL, po) == NULL);
  LLVMDisposePassBuilderOptions(po);
  LLVMValueRef fn = function_named(mod, func);
  mutate(ctx, fn, how);
  ck_assert_msg(!LLVMVerifyModule(mod, LLVMReturnStatusAction, &err), "%s", err);
  LLVMDisposeMessage(err);
  ir_reroll_loops(mod, true);
  ck_assert_msg(!LLVMVerifyModule(mod, LLVMReturnStatusAction, &err), "%s", err);
  LLVMDisposeMessage(err);
  bool done = has_rerolled_loop(fn, test);
  ck_assert_msg(done == (how == 0), "%s, change %d: %s", func, how, done ? "re-rolled" : "left alone");
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
}

START_TEST(vec_copies_must_match) { rerolled_unless_changed("vec", false, "rows_f32", mutate_rows, _i, "reroll.vstay"); }
END_TEST

/* ---- Vector sums whose terms are not copies (ir_reroll_full.c) --------- */

/* `add i64 x, 12`: the address of the i32 load of A's bytes 12..15 (the
 * term of p = 12 .. 15) */
static bool a_offset_12(LLVMValueRef i) {
  if (LLVMGetInstructionOpcode(i) != LLVMAdd || LLVMTypeOf(i) != LLVMInt64TypeInContext(LLVMGetTypeContext(LLVMTypeOf(i))) ||
      !is_const(LLVMGetOperand(i, 1), 12))
    return false;
  LLVMUseRef u = LLVMGetFirstUse(i);
  LLVMValueRef gep = u ? LLVMGetUser(u) : NULL;
  u = gep && LLVMIsAGetElementPtrInst(gep) ? LLVMGetFirstUse(gep) : NULL;
  LLVMValueRef ld = u ? LLVMGetUser(u) : NULL;
  return ld && LLVMIsALoadInst(ld) && LLVMTypeOf(ld) == LLVMInt32TypeInContext(LLVMGetTypeContext(LLVMTypeOf(ld)));
}

static bool vector_mul(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMMul && LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind;
}

static bool vector_add(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMAdd && LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind;
}

/* full.c's mm16_i8 at -msimd128, 0: as built (re-rolled); 1: the term of
 * p = 12 .. 15 reads A one byte further; 2: the term of p = 8 .. 11
 * subtracts its lanes; 3: the second add of the chain a subtraction */
static void mutate_vsum(LLVMContextRef ctx, LLVMValueRef fn, int how) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  if (how == 1) {
    LLVMValueRef add = nth(fn, a_offset_12, 0);
    ck_assert_ptr_nonnull(add);
    LLVMSetOperand(add, 1, LLVMConstInt(LLVMTypeOf(add), 13, false));
  } else if (how == 2 || how == 3) {
    LLVMValueRef op = how == 2 ? nth(fn, vector_mul, 1) : nth(fn, vector_add, 1);
    ck_assert_ptr_nonnull(op);
    LLVMPositionBuilderBefore(b, op);
    LLVMValueRef sub = LLVMBuildSub(b, LLVMGetOperand(op, 0), LLVMGetOperand(op, 1), "");
    LLVMReplaceAllUsesWith(op, sub);
    LLVMInstructionEraseFromParent(op);
  }
  LLVMDisposeBuilder(b);
}

START_TEST(vsum_terms_must_match) { rerolled_unless_changed("full", true, "mm16_i8", mutate_vsum, _i, "reroll.stay"); }
END_TEST

/* ---- Programs: the same output with the re-roll on and off ------------ */

typedef struct {
  const char *file;
  bool wasm_opt; /* built in one step (wasm-opt runs when installed) */
} program_case;

static const program_case program_cases[] = {
    {"maps", false}, {"maps", true},   {"sums", false}, {"sums", true},
    {"matmul", false}, {"matmul", true}, {"kept", false}, {"kept", true},
    {"mixed", false},  {"mixed", true},   {"products", false}, {"products", true},
    {"full", false},   {"full", true},    {"bypass", false}, {"bypass", true},
    {"strength", false}, {"strength", true}, {"guards", false}, {"guards", true},
    {"ordered", false}, {"ordered", true}, {"walks", false}, {"walks", true},
    {"copies", false},  {"copies", true}, {"vec", false}, {"vec", true},
};

/* built with -msimd128 (the vector sums of ir_reroll_full.c) */
static const program_case simd_program_cases[] = {{"full", false}, {"copies", false}, {"copies", true}};

/* tmpdir/NAME.wasm -> tmpdir/NAME-<tag> through drv_compile. */
static void build(const char *name, bool reroll, const char *tag) {
  char path[256], obj_path[256], exe[256];
  snprintf(path, sizeof path, "%s/%s.wasm", tmpdir, name);
  snprintf(obj_path, sizeof obj_path, "%s/%s-%s.o", tmpdir, name, tag);
  snprintf(exe, sizeof exe, "%s/%s-%s", tmpdir, name, tag);
  uint8_t *bytes, *obj;
  size_t size, obj_size;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_int_eq(drv_read_input(path, &bytes, &size, &d), DRV_OK);
  drv_options o;
  drv_options_default(&o);
  o.emit_main = true;
  o.no_reroll = !reroll;
  o.offload.enabled = false;
  ck_assert_msg(drv_compile(bytes, size, path, &o, &obj, &obj_size, &d) == DRV_OK, "%s", d.msg);
  FILE *f = fopen(obj_path, "wb");
  ck_assert(f && fwrite(obj, 1, obj_size, f) == obj_size);
  fclose(f);
  ck_assert_msg(drv_link_executable(obj_path, exe, "build/lib", &d), "%s", d.msg);
  free(obj);
  free(bytes);
}

static void check_program(const program_case *c, bool simd) {
  if (!have_tools()) return;
  static char on[1 << 16], off[1 << 16];
  char cmd[512];
  wasm_of(c->file, c->wasm_opt, simd);
  build(c->file, true, "on");
  build(c->file, false, "off");
  snprintf(cmd, sizeof cmd, "%s/%s-on", tmpdir, c->file);
  ck_assert_int_eq(unit_sh(cmd, on, sizeof on), 0);
  snprintf(cmd, sizeof cmd, "%s/%s-off", tmpdir, c->file);
  ck_assert_int_eq(unit_sh(cmd, off, sizeof off), 0);
  ck_assert_msg(strlen(on) > 100, "%s: little output: %s", c->file, on);
  ck_assert_msg(strcmp(on, off) == 0, "%s: outputs differ", c->file);
}

START_TEST(programs_print_the_same) { check_program(&program_cases[_i], false); }
END_TEST

START_TEST(simd_programs_print_the_same) { check_program(&simd_program_cases[_i], true); }
END_TEST

static Suite *reroll_suite(void) {
  Suite *s = suite_create("reroll");
  TCase *tc = tcase_create("reroll");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, pass_rerolls_what_it_proves, 0, sizeof pass_cases / sizeof *pass_cases);
  tcase_add_loop_test(tc, vec_copies_must_match, 0, 4);
  tcase_add_loop_test(tc, pass_rerolls_simd_sums, 0, sizeof simd_pass_cases / sizeof *simd_pass_cases);
  tcase_add_loop_test(tc, vsum_terms_must_match, 0, 4);
  tcase_add_loop_test(tc, programs_print_the_same, 0,
                      sizeof program_cases / sizeof *program_cases);
  tcase_add_loop_test(tc, simd_programs_print_the_same, 0,
                      sizeof simd_program_cases / sizeof *simd_program_cases);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(reroll_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
