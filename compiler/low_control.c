/* low_control.c: structured control flow (blocks, branches, select, drop)
 * as LLVM blocks, with phis carrying block parameters and results. */
#include <string.h>

#include "ir_pass.h"
#include "low_internal.h"

/* Defined in low_call.c; belongs in low_internal.h next to the emitters. */

static const wasm_functype no_values = {0};

static const wasm_functype *block_type(low_fn *f, const wasm_insn *insn) {
  switch (insn->u.block.kind) {
  case BT_VALTYPE: {
    wasm_functype *ft = tw_arena_alloc(&f->mc->arena, sizeof *ft);
    ft->nresults = 1;
    ft->results = &insn->valtype;
    return ft;
  }
  case BT_TYPEIDX: return &f->mc->m->types[insn->u.block.type_index];
  default: return &no_values;
  }
}

static LLVMBasicBlockRef new_block(low_fn *f, const char *name) {
  return LLVMAppendBasicBlockInContext(f->mc->ctx, f->fn, name);
}

/* Continues emitting in bb, placed after the current block so the IR reads
 * in source order. */
static void enter_block(low_fn *f, LLVMBasicBlockRef bb) {
  LLVMBasicBlockRef here = LLVMGetInsertBlock(f->b);
  if (here && here != bb) LLVMMoveBasicBlockAfter(bb, here);
  LLVMPositionBuilderAtEnd(f->b, bb);
}

/* Phis (one per type) at the top of the still empty block bb. */
static LLVMValueRef *make_phis(low_fn *f, LLVMBasicBlockRef bb, uint32_t n, const uint8_t *types) {
  LLVMValueRef *phis = tw_arena_alloc(&f->mc->arena, (n + 1) * sizeof *phis);
  LLVMBasicBlockRef here = LLVMGetInsertBlock(f->b);
  LLVMPositionBuilderAtEnd(f->b, bb);
  for (uint32_t i = 0; i < n; i++) phis[i] = LLVMBuildPhi(f->b, low_valtype(f->mc, types[i]), "");
  if (here) LLVMPositionBuilderAtEnd(f->b, here);
  return phis;
}

/* Adds the top n stack values as the incoming values of phis from the
 * current block. */
static void add_incoming(low_fn *f, LLVMValueRef *phis, uint32_t n) {
  LLVMBasicBlockRef from = LLVMGetInsertBlock(f->b);
  for (uint32_t i = 0; i < n; i++) LLVMAddIncoming(phis[i], &f->stack[f->sp - n + i], &from, 1);
}

static low_frame *push_frame(low_fn *f, uint16_t op, const wasm_functype *type) {
  if (f->nframes == f->frames_cap) {
    uint32_t cap = f->frames_cap ? f->frames_cap * 2 : 16;
    low_frame *grown = tw_arena_alloc(&f->mc->arena, cap * sizeof *grown);
    for (uint32_t i = 0; i < f->nframes; i++) grown[i] = f->frames[i];
    f->frames = grown;
    f->frames_cap = cap;
  }
  low_frame *fr = &f->frames[f->nframes++];
  *fr = (low_frame){.op = op, .type = type, .height = f->sp - type->nparams,
                    .stack_checked = f->stack_checked};
  return fr;
}

static low_frame *top_frame(low_fn *f) {
  return &f->frames[f->nframes - 1];
}

/* The rest of the current frame is dead: no block to emit into. */
static void mark_dead(low_fn *f) {
  low_frame *fr = top_frame(f);
  fr->unreachable_rest = true;
  f->sp = fr->height;
  LLVMClearInsertionPosition(f->b);
}

/* Values a branch to fr carries: a loop's parameters, else its results. */
static uint32_t branch_arity(const low_frame *fr) {
  return fr->op == OP_LOOP ? fr->type->nparams : fr->type->nresults;
}

/* Records an edge from the current block to fr's target. */
static LLVMBasicBlockRef branch_edge(low_fn *f, low_frame *fr) {
  add_incoming(f, fr->phis, branch_arity(fr));
  if (fr->op != OP_LOOP) fr->reachable_end = true;
  return fr->br_target;
}

/* A join block with one phi per result of the frame's type. */
static void make_join(low_fn *f, low_frame *fr) {
  fr->br_target = new_block(f, "join");
  fr->phis = make_phis(f, fr->br_target, fr->type->nresults, fr->type->results);
}

/* The body's frame: its parameters are locals, not operands. */
void low_control_begin(low_fn *f) {
  low_frame *fr = push_frame(f, 0, f->type);
  fr->height = 0;
  make_join(f, fr);
}

static void emit_block(low_fn *f, const wasm_insn *insn) {
  low_frame *fr = push_frame(f, OP_BLOCK, block_type(f, insn));
  fr->end_at = insn->u.block.end_at;
  make_join(f, fr);
}

/* A loop that makes checked calls is checked once before it, not at
 * each iteration (the stack pointer is the same in all of them). */
static void check_before_loop(low_fn *f, const wasm_insn *insn) {
  uint32_t at = (uint32_t)(insn - f->func->code);
  if (!f->stack_check_at_calls || f->stack_checked ||
      !low_stack_checked_calls(f->mc, f->func, at + 1, insn->u.block.end_at))
    return;
  low_stack_check(f);
  f->stack_checked = true;
}

static void emit_loop(low_fn *f, const wasm_insn *insn) {
  check_before_loop(f, insn);
  const wasm_functype *ft = block_type(f, insn);
  LLVMBasicBlockRef header = new_block(f, "loop");
  LLVMValueRef *phis = make_phis(f, header, ft->nparams, ft->params);
  add_incoming(f, phis, ft->nparams);
  LLVMBuildBr(f->b, header);
  enter_block(f, header);
  low_frame *fr = push_frame(f, OP_LOOP, ft);
  fr->offset = insn->offset;
  fr->end_at = insn->u.block.end_at;
  fr->br_target = header;
  fr->phis = phis;
  f->sp = fr->height;
  for (uint32_t i = 0; i < ft->nparams; i++) low_push(f, phis[i]);
}

/* The else block receives the parameters through phis of its own, so the
 * then arm may overwrite their stack slots. */
static void emit_if(low_fn *f, const wasm_insn *insn) {
  LLVMValueRef cond = low_pop(f);
  const wasm_functype *ft = block_type(f, insn);
  LLVMBasicBlockRef then_bb = new_block(f, "then"), else_bb = new_block(f, "else");
  LLVMValueRef *else_params = make_phis(f, else_bb, ft->nparams, ft->params);
  add_incoming(f, else_params, ft->nparams);
  LLVMValueRef nonzero = LLVMBuildICmp(f->b, LLVMIntNE, cond, LLVMConstInt(f->mc->t_i32, 0, false), "");
  LLVMBuildCondBr(f->b, nonzero, then_bb, else_bb);
  low_frame *fr = push_frame(f, OP_IF, ft);
  fr->end_at = insn->u.block.end_at;
  fr->else_bb = else_bb;
  make_join(f, fr);
  enter_block(f, then_bb);
}

/* Switches to the else arm; else_bb becomes NULL once it is taken. */
static void start_else(low_fn *f, low_frame *fr) {
  f->sp = fr->height;
  f->stack_checked = fr->stack_checked;
  enter_block(f, fr->else_bb);
  LLVMValueRef phi = LLVMGetFirstInstruction(fr->else_bb);
  for (uint32_t i = 0; i < fr->type->nparams; i++, phi = LLVMGetNextInstruction(phi))
    low_push(f, phi);
  fr->else_bb = NULL;
  fr->unreachable_rest = false;
}

static void emit_else(low_fn *f) {
  low_frame *fr = top_frame(f);
  if (!fr->unreachable_rest) LLVMBuildBr(f->b, branch_edge(f, fr));
  start_else(f, fr);
}

/* Pushes the results of fr where its end is reached, or marks the parent
 * frame dead when nothing reaches it. */
static void close_frame(low_fn *f, low_frame *fr) {
  f->nframes--;
  /* A check inside does not dominate the join (or the loop's exit). */
  f->stack_checked = fr->stack_checked;
  if (fr->op == OP_LOOP) {
    if (fr->unreachable_rest && f->nframes > 0) mark_dead(f);
    return;
  }
  f->sp = fr->height;
  if (!fr->reachable_end) {
    LLVMDeleteBasicBlock(fr->br_target);
    if (f->nframes > 0) mark_dead(f);
    return;
  }
  enter_block(f, fr->br_target);
  for (uint32_t i = 0; i < fr->type->nresults; i++) low_push(f, fr->phis[i]);
}

static void build_return(low_fn *f) {
  const wasm_functype *ft = f->type;
  if (ft->nresults == 0) {
    LLVMBuildRetVoid(f->b);
  } else if (ft->nresults == 1) {
    LLVMBuildRet(f->b, low_pop(f));
  } else {
    LLVMValueRef agg = LLVMGetUndef(LLVMGetReturnType(f->mc->fn_types[f->func->type_index]));
    for (uint32_t i = 0; i < ft->nresults; i++)
      agg = LLVMBuildInsertValue(f->b, agg, f->stack[f->sp - ft->nresults + i], i, "");
    LLVMBuildRet(f->b, agg);
  }
}

static void emit_end(low_fn *f) {
  low_frame *fr = top_frame(f);
  if (!fr->unreachable_rest && fr->op != OP_LOOP) LLVMBuildBr(f->b, branch_edge(f, fr));
  if (fr->op == OP_IF && fr->else_bb) {
    /* no else: the parameters pass through as the results */
    start_else(f, fr);
    LLVMBuildBr(f->b, branch_edge(f, fr));
  }
  close_frame(f, fr);
  if (f->nframes == 0 && fr->reachable_end) build_return(f);
}

static low_frame *label_frame(low_fn *f, uint32_t depth) {
  return &f->frames[f->nframes - 1 - depth];
}

/* A branch back to a loop's header carries the loop's file offset
 * (IR_MD_LOOP), which the offload stage keeps in the loop's metadata
 * and names in --offload-report. */
static void mark_back_edge(low_fn *f, LLVMValueRef branch, const low_frame *fr) {
  if (fr->op != OP_LOOP) return;
  LLVMContextRef c = f->mc->ctx;
  LLVMMetadataRef off = LLVMValueAsMetadata(LLVMConstInt(f->mc->t_i32, fr->offset, false));
  LLVMSetMetadata(branch, LLVMGetMDKindIDInContext(c, IR_MD_LOOP, strlen(IR_MD_LOOP)),
                  LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, &off, 1)));
}

static void emit_br(low_fn *f, uint32_t depth) {
  low_frame *fr = label_frame(f, depth);
  mark_back_edge(f, LLVMBuildBr(f->b, branch_edge(f, fr)), fr);
  mark_dead(f);
}

static void emit_br_if(low_fn *f, uint32_t depth) {
  LLVMValueRef cond = low_pop(f);
  LLVMValueRef nonzero = LLVMBuildICmp(f->b, LLVMIntNE, cond, LLVMConstInt(f->mc->t_i32, 0, false), "");
  LLVMBasicBlockRef cont = new_block(f, "br_if_cont");
  low_frame *fr = label_frame(f, depth);
  mark_back_edge(f, LLVMBuildCondBr(f->b, nonzero, branch_edge(f, fr), cont), fr);
  enter_block(f, cont);
}

/* A br_table's weights (emit_br_table): BR_TABLE_SHARE per target,
 * split evenly among its entries (720720 = lcm(1..16)), the default
 * counted as one more entry of its target, as a native build weighs one
 * share per case label; on tables of at most BR_TABLE_WEIGHED_MAX
 * entries, whose weights then sum below 2^32.  Only where the target of
 * the most entries (clang's wasm32 backend fills the holes of a sparse C
 * switch with one target, more than half of them) leads straight back
 * to the innermost loop around the table, as
 * Lua's luaD_precall's `default: ... goto retry` does: weighed per entry
 * its 15 holes of 17 made LLVM guess the retry loop ran 7 times a call
 * and align its header, a nop run on every call.  Where the holes go
 * elsewhere (SQLite's `if (rc) return rc` as a table on rc, an
 * interpreter's dispatch) per-target weights moved the register
 * allocation of the loop behind the switch by more than they saved
 * (speedtest1 +0.33 %, interp +2.1 %), and so they did in functions of
 * more than BR_TABLE_SHARED_MAX_CODE instructions (Lua's luaV_execute,
 * fib +2.3 %): docs/PERFORMANCE.md, "Real programs", rounds 15 and 16. */
#define BR_TABLE_SHARE 720720u
#define BR_TABLE_WEIGHED_MAX 512u
#define BR_TABLE_SHARED_MAX_CODE 6000u
#define BR_TABLE_RETRY_SCAN 64u

/* Whether the code after frame t's end runs, without leaving a loop or
 * the frames around it other than by falling out of blocks, into a `br`
 * to the innermost loop around the br_table (within BR_TABLE_RETRY_SCAN
 * instructions; nested constructs are stepped over whole, br_if taken
 * as falling through).  A way out of that loop (sqlite3_str_vappendf's
 * flags loop, whose holes end it) that comes back only through an outer
 * loop does not count: there the holes are the common way. */
static bool leads_back_to_loop(low_fn *f, uint32_t t) {
  uint32_t loop = f->nframes;
  for (uint32_t i = f->nframes; i-- > 0;)
    if (f->frames[i].op == OP_LOOP) {
      loop = i;
      break;
    }
  if (loop >= t) return false; /* no loop, or the target is inside it */
  const wasm_func *fn = f->func;
  uint32_t level = t; /* frames open after t's end: frames[0..level-1] */
  uint32_t pc = f->frames[t].end_at + 1;
  for (uint32_t steps = 0; pc < fn->ncode && steps < BR_TABLE_RETRY_SCAN; steps++) {
    const wasm_insn *in = &fn->code[pc];
    switch (in->op) {
    case OP_BLOCK:
    case OP_LOOP:
    case OP_IF: pc = in->u.block.end_at + 1; continue;
    case OP_END:
      if (level - 1 <= loop) return false; /* out of the loop (or the function) */
      level--;
      pc++;
      continue;
    case OP_BR: return in->u.index < level && level - 1 - in->u.index == loop;
    case OP_ELSE:
    case OP_BR_TABLE:
    case OP_RETURN:
    case OP_UNREACHABLE: return false;
    default: pc++; continue;
    }
  }
  return false;
}

/* Entries of the table per label depth (the default included), or NULL
 * where the entries keep equal weights (see above). */
static const uint32_t *br_table_entries(low_fn *f, const uint32_t *labels, uint32_t n) {
  if (f->func->ncode > BR_TABLE_SHARED_MAX_CODE) return NULL;
  uint32_t deepest = 0;
  for (uint32_t i = 0; i <= n; i++)
    if (labels[i] > deepest) deepest = labels[i];
  uint32_t *entries = tw_arena_alloc(&f->mc->arena, (deepest + 1) * sizeof *entries);
  memset(entries, 0, (deepest + 1) * sizeof *entries);
  uint32_t most = 0;
  for (uint32_t i = 0; i <= n; i++)
    if (++entries[labels[i]] > entries[most]) most = labels[i];
  if (2 * entries[most] <= n + 1 || !leads_back_to_loop(f, f->nframes - 1 - most)) return NULL;
  return entries;
}

/* One switch case per label; every edge (even to the same target) gets
 * its own phi entry, as LLVM counts predecessors per edge. */
static void emit_br_table(low_fn *f, const wasm_insn *insn) {
  LLVMValueRef index = low_pop(f);
  uint32_t n = insn->u.br_table.count;
  const uint32_t *labels = insn->u.br_table.labels;
  LLVMBasicBlockRef dflt = branch_edge(f, label_frame(f, labels[n]));
  LLVMValueRef sw = LLVMBuildSwitch(f->b, index, dflt, n);
  const low_frame *loop = label_frame(f, labels[n]);
  for (uint32_t i = 0; i < n; i++) {
    low_frame *fr = label_frame(f, labels[i]);
    LLVMAddCase(sw, LLVMConstInt(f->mc->t_i32, i, false), branch_edge(f, fr));
    if (loop->op != OP_LOOP) loop = fr;
  }
  mark_back_edge(f, sw, loop);
  /* A br_table carries no profile, and LLVM's static guesses for the
   * cases of the switch can be far off: in vm's bytecode loop (one case
   * per opcode) the one case whose memory access was left to the guard
   * pages, so without a trap branch, was guessed 77.5 % likely and peeled
   * off before the jump table (a compare and branch per dispatch for an
   * opcode never run).  Equal weights on the cases and the default give
   * one jump table (see docs/PERFORMANCE.md, issue 22); per target where
   * br_table_entries says so.  Not on very
   * large tables: LLVM keeps a switch's weights up to date case by case,
   * which made the spec's br_table.wast (a table of tens of thousands of
   * labels) take minutes to compile. */
  if (n >= 4 && n <= BR_TABLE_WEIGHED_MAX) {
    LLVMContextRef c = f->mc->ctx;
    LLVMMetadataRef *ops = tw_arena_alloc(&f->mc->arena, (n + 2) * sizeof *ops);
    ops[0] = LLVMMDStringInContext2(c, "branch_weights", 14);
    const uint32_t *entries = br_table_entries(f, labels, n);
    /* ops[1] is the default's weight, then case i's */
    for (uint32_t i = 0; i <= n; i++) {
      uint32_t w = entries ? BR_TABLE_SHARE / entries[i == 0 ? labels[n] : labels[i - 1]] : 1;
      ops[i + 1] = LLVMValueAsMetadata(LLVMConstInt(f->mc->t_i32, w, false));
    }
    LLVMSetMetadata(sw, LLVMGetMDKindIDInContext(c, "prof", 4), LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, ops, n + 2)));
  }
  mark_dead(f);
}

static void emit_select(low_fn *f) {
  LLVMValueRef cond = low_pop(f);
  LLVMValueRef v2 = low_pop(f), v1 = low_pop(f);
  LLVMValueRef nonzero = LLVMBuildICmp(f->b, LLVMIntNE, cond, LLVMConstInt(f->mc->t_i32, 0, false), "");
  low_push(f, LLVMBuildSelect(f->b, nonzero, v1, v2, "select"));
}

/* OP_UNREACHABLE: low_trap leaves an empty block for straight-line
 * callers; here the rest of the frame is skipped instead, so drop it. */
static void emit_unreachable(low_fn *f, const wasm_insn *insn) {
  low_trap(f, TWASM_TRAP_UNREACHABLE, insn->offset);
  LLVMBasicBlockRef empty = LLVMGetInsertBlock(f->b);
  mark_dead(f);
  LLVMDeleteBasicBlock(empty);
}

bool low_emit_control(low_fn *f, const wasm_insn *insn, uint32_t *pc) {
  (void)pc; /* dead code is skipped by the caller; nothing to jump over */
  switch (insn->op) {
  case OP_UNREACHABLE: emit_unreachable(f, insn); return true;
  case OP_NOP: return true;
  case OP_BLOCK: emit_block(f, insn); return true;
  case OP_LOOP: emit_loop(f, insn); return true;
  case OP_IF: emit_if(f, insn); return true;
  case OP_ELSE: emit_else(f); return true;
  case OP_END: emit_end(f); return true;
  case OP_BR: emit_br(f, insn->u.index); return true;
  case OP_BR_IF: emit_br_if(f, insn->u.index); return true;
  case OP_BR_TABLE: emit_br_table(f, insn); return true;
  case OP_RETURN: emit_br(f, f->nframes - 1); return true;
  case OP_DROP: low_pop(f); return true;
  case OP_SELECT:
  case OP_SELECT_T: emit_select(f); return true;
  default: return low_emit_call(f, insn);
  }
}
