/* low_func.c: one function body: entry block, operand stack, traps, and the
 * instruction walk that hands each reachable instruction to its emitter. */
#include "low_internal.h"

/* Temporary declarations until low_internal.h carries them: */
/* Pushes the function body's frame (low_control.c). */
/* ((ptr *)vmctx->field)[index] for globals, tables and funcs. */
/* A field of a run-time object (ty at obj + byte_offset), loaded each time. */

void low_push(low_fn *f, LLVMValueRef v) {
  if (f->sp == f->stack_cap) {
    uint32_t cap = f->stack_cap ? f->stack_cap * 2 : 64;
    LLVMValueRef *grown = tw_arena_alloc(&f->mc->arena, cap * sizeof *grown);
    for (uint32_t i = 0; i < f->sp; i++) grown[i] = f->stack[i];
    f->stack = grown;
    f->stack_cap = cap;
  }
  f->stack[f->sp++] = v;
}

/* Validation guarantees reachable code never pops below its frame. */
LLVMValueRef low_pop(low_fn *f) {
  return f->stack[--f->sp];
}

/* Calls twasm_rt_trap (noreturn) and ends the current block. */
static void emit_trap_call(low_fn *f, uint32_t trap_code, uint32_t offset) {
  low_module_ctx *mc = f->mc;
  LLVMValueRef args[] = {f->vmctx, LLVMConstInt(mc->t_i32, trap_code, false),
                         LLVMConstInt(mc->t_i32, f->func_index, false),
                         LLVMConstInt(mc->t_i32, offset, false)};
  LLVMBuildCall2(f->b, mc->trap_ty, mc->trap_fn, args, 4, "");
  LLVMBuildUnreachable(f->b);
}

/* Traps almost never happen: weight the edge so they are laid out cold. */
void low_mark_unlikely(low_module_ctx *mc, LLVMValueRef condbr, bool true_edge) {
  LLVMContextRef c = mc->ctx;
  LLVMMetadataRef ops[] = {
      LLVMMDStringInContext2(c, "branch_weights", 14),
      LLVMValueAsMetadata(LLVMConstInt(mc->t_i32, true_edge ? 1 : 1048575, false)),
      LLVMValueAsMetadata(LLVMConstInt(mc->t_i32, true_edge ? 1048575 : 1, false)),
  };
  unsigned kind = LLVMGetMDKindIDInContext(c, "prof", 4);
  LLVMSetMetadata(condbr, kind, LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, ops, 3)));
}

void low_trap_if(low_fn *f, LLVMValueRef cond, uint32_t trap_code, uint32_t offset) {
  LLVMBasicBlockRef here = LLVMGetInsertBlock(f->b);
  LLVMBasicBlockRef trap = LLVMAppendBasicBlockInContext(f->mc->ctx, f->fn, "trap");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(f->mc->ctx, f->fn, "cont");
  LLVMMoveBasicBlockAfter(cont, here);
  low_mark_unlikely(f->mc, LLVMBuildCondBr(f->b, cond, trap, cont), true);
  LLVMPositionBuilderAtEnd(f->b, trap);
  emit_trap_call(f, trap_code, offset);
  LLVMPositionBuilderAtEnd(f->b, cont);
}

/* Leaves the builder in a fresh block without predecessors, so callers
 * may keep emitting (and pushing results) as if nothing happened; LLVM
 * deletes that block later. */
void low_trap(low_fn *f, uint32_t trap_code, uint32_t offset) {
  LLVMBasicBlockRef here = LLVMGetInsertBlock(f->b);
  emit_trap_call(f, trap_code, offset);
  LLVMBasicBlockRef dead = LLVMAppendBasicBlockInContext(f->mc->ctx, f->fn, "after_trap");
  LLVMMoveBasicBlockAfter(dead, here);
  LLVMPositionBuilderAtEnd(f->b, dead);
}

LLVMValueRef low_load_at(low_fn *f, LLVMTypeRef ty, LLVMValueRef obj, uint32_t byte_offset,
                         const char *name) {
  LLVMValueRef at = obj;
  if (byte_offset) {
    LLVMValueRef off = LLVMConstInt(f->mc->t_i64, byte_offset, false);
    at = LLVMBuildInBoundsGEP2(f->b, f->mc->t_i8, obj, &off, 1, "");
  }
  return LLVMBuildLoad2(f->b, ty, at, name);
}

/* The vmctx and the pointer arrays it holds are filled before any
 * generated code runs on it and never change afterwards. */
LLVMValueRef low_mark_invariant(low_module_ctx *mc, LLVMValueRef load) {
  LLVMContextRef c = mc->ctx;
  unsigned kind = LLVMGetMDKindIDInContext(c, "invariant.load", 14);
  LLVMSetMetadata(load, kind, LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, NULL, 0)));
  return load;
}

LLVMValueRef low_vmctx_load(low_fn *f, uint32_t field_offset, LLVMTypeRef ty, const char *name) {
  return low_mark_invariant(f->mc, low_load_at(f, ty, f->vmctx, field_offset, name));
}

LLVMValueRef low_vmctx_entry(low_fn *f, uint32_t field_offset, uint32_t index, const char *name) {
  LLVMValueRef array = low_vmctx_load(f, field_offset, f->mc->t_ptr, "");
  return low_mark_invariant(f->mc, low_load_at(f, f->mc->t_ptr, array, index * 8, name));
}

LLVMValueRef low_vmctx_entry_u32(low_fn *f, uint32_t field_offset, uint32_t index, const char *name) {
  LLVMValueRef array = low_vmctx_load(f, field_offset, f->mc->t_ptr, "");
  return low_mark_invariant(f->mc, low_load_at(f, f->mc->t_i32, array, index * 4, name));
}

/* Parameters and locals live in allocas (mem2reg turns them into SSA). */
static void build_locals(low_fn *f) {
  low_module_ctx *mc = f->mc;
  const wasm_func *fn = f->func;
  f->nlocals = f->type->nparams + fn->nlocals;
  f->locals = tw_arena_alloc(&mc->arena, (f->nlocals + 1) * sizeof *f->locals);
  f->local_types = tw_arena_alloc(&mc->arena, f->nlocals + 1);
  for (uint32_t i = 0; i < f->nlocals; i++) {
    uint8_t vt = i < f->type->nparams ? f->type->params[i] : fn->locals[i - f->type->nparams];
    LLVMTypeRef ty = low_valtype(mc, vt);
    f->local_types[i] = vt;
    f->locals[i] = LLVMBuildAlloca(f->b, ty, "local");
  }
  for (uint32_t i = 0; i < f->nlocals; i++) {
    LLVMValueRef init = i < f->type->nparams ? LLVMGetParam(f->fn, i + 1)
                                             : LLVMConstNull(low_valtype(mc, f->local_types[i]));
    LLVMBuildStore(f->b, init, f->locals[i]);
  }
}

/* Traps before the native stack runs into the runtime's limit.  The stack
 * pointer itself is read (generated code keeps no frame pointer, see
 * low_module.c).  The limit is loaded at each check, not marked invariant:
 * hoisted out of a loop it would hold a callee-saved register across the
 * calls the checks guard, and a recursion pays that register's push and
 * pop at every level (measured: more instructions than the reload). */
void low_stack_check(low_fn *f) {
  low_module_ctx *mc = f->mc;
  unsigned id = LLVMLookupIntrinsicID("llvm.read_register", 18);
  LLVMTypeRef over[] = {mc->t_i64};
  LLVMValueRef decl = LLVMGetIntrinsicDeclaration(mc->mod, id, over, 1);
  LLVMTypeRef decl_ty = LLVMIntrinsicGetType(mc->ctx, id, over, 1);
  LLVMMetadataRef reg = LLVMMDStringInContext2(mc->ctx, "rsp", 3); /* x86-64: the only target */
  LLVMValueRef name = LLVMMetadataAsValue(mc->ctx, LLVMMDNodeInContext2(mc->ctx, &reg, 1));
  LLVMValueRef sp = LLVMBuildCall2(f->b, decl_ty, decl, &name, 1, "sp");
  LLVMValueRef limit = LLVMBuildLoad2(f->b, mc->t_i64, mc->stack_limit, "stack_limit");
  LLVMValueRef low = LLVMBuildICmp(f->b, LLVMIntULT, sp, limit, "");
  low_trap_if(f, low, TWASM_TRAP_STACK_EXHAUSTED, f->func->body_offset);
}

/* A function with few locals uses a small, bounded frame: the runtime
 * keeps far more than that below the limit (and turns a fault there into
 * the same trap), so such a frame need not be checked itself; only going
 * deeper must be, and low_call.c checks before each call.  A path that
 * calls nothing (the early return of a recursion) then pays nothing and
 * lets LLVM shrink-wrap the prologue.  Larger frames are checked at entry. */
static bool has_large_frame(const wasm_func *fn) { return fn->nlocals > 512; }


/* Whether function func_index may recurse and makes no call inside a
 * loop.  It may recurse when it calls a function of its own component of
 * the direct call graph, or makes a call_indirect of its own signature
 * (a tree walker's or evaluator's call through a node's function pointer,
 * which can reach it again).  Either answer is exact; this one only
 * chooses where the memory base is loaded (low_mem_base). */
static bool recursive_without_loop_calls(low_module_ctx *mc, uint32_t func_index) {
  const wasm_func *fn = &mc->m->funcs[func_index];
  bool *is_loop = tw_arena_alloc(&mc->arena, fn->ncode + 1);
  uint32_t depth = 0, loops = 0;
  uint32_t own_key = low_sealed_key(mc->m, fn->type_index);
  bool recursive = false;
  for (uint32_t i = 0; i < fn->ncode; i++) {
    const wasm_insn *in = &fn->code[i];
    switch (in->op) {
    case OP_BLOCK: case OP_IF: is_loop[depth++] = false; break;
    case OP_LOOP: is_loop[depth++] = true; loops++; break;
    case OP_END: if (depth > 0 && is_loop[--depth]) loops--; break;
    case OP_CALL:
      if (loops > 0) return false;
      recursive |= !mc->m->funcs[in->u.index].imported && mc->stack_scc[in->u.index] == mc->stack_scc[func_index];
      break;
    case OP_CALL_INDIRECT:
      if (loops > 0) return false;
      recursive |= low_sealed_key(mc->m, in->u.pair.a) == own_key;
      break;
    default: break;
    }
  }
  return recursive;
}

/* Memory never moves (the runtime reserves its whole range at
 * instantiation), so its base is loaded once at entry and kept in a
 * register.  Across a call that register is callee-saved: a push and a
 * pop on every entry, which a recursion whose levels touch memory pays
 * per level.  A recursive function without calls in loops loads it where
 * accesses need it: not invariant, so a call ends its reach (LLVM loads
 * it again after the call, from the vmctx that stays in r13) and nothing
 * lives across calls; its own TBAA tag lets one load serve every access
 * between calls, and be hoisted out of loops, past stores to memory and
 * globals. */
LLVMValueRef low_mem_base(low_fn *f) {
  if (f->mem_base) return f->mem_base;
  LLVMValueRef base = low_load_at(f, f->mc->t_ptr, f->vmctx, offsetof(twasm_vmctx, mem_base), "mem_base");
  low_tbaa(f->mc, base, f->mc->tbaa_base);
  return base;
}

static void build_entry(low_fn *f) {
  LLVMPositionBuilderAtEnd(f->b, LLVMAppendBasicBlockInContext(f->mc->ctx, f->fn, "entry"));
  f->vmctx = LLVMGetParam(f->fn, 0);
  build_locals(f);
  if (has_large_frame(f->func)) low_stack_check(f);
  else f->stack_check_at_calls = low_stack_checked_calls(f->mc, f->func, 0, f->func->ncode);
  if (f->mc->m->nmems > 0) {
    if (!recursive_without_loop_calls(f->mc, f->func_index))
      f->mem_base = low_vmctx_load(f, offsetof(twasm_vmctx, mem_base), f->mc->t_ptr, "mem_base");
    f->mem_obj = low_vmctx_load(f, offsetof(twasm_vmctx, mem), f->mc->t_ptr, "mem");
  }
}

/* Emitters are tried in order; each declines opcodes outside its family. */
static bool emit_control(low_fn *f, const wasm_insn *insn, uint32_t *pc) {
  return low_emit_control(f, insn, pc);
}
static bool emit_variable(low_fn *f, const wasm_insn *insn, uint32_t *pc) {
  (void)pc;
  return low_emit_variable(f, insn);
}
static bool emit_table(low_fn *f, const wasm_insn *insn, uint32_t *pc) {
  (void)pc;
  return low_emit_table(f, insn);
}
static bool emit_numeric(low_fn *f, const wasm_insn *insn, uint32_t *pc) {
  (void)pc;
  return low_emit_numeric(f, insn);
}
static bool emit_memory(low_fn *f, const wasm_insn *insn, uint32_t *pc) {
  (void)pc;
  return low_emit_memory(f, insn);
}

static bool emit_simd(low_fn *f, const wasm_insn *insn, uint32_t *pc) {
  (void)pc;
  return low_emit_simd(f, insn);
}

static bool (*const emitters[])(low_fn *, const wasm_insn *, uint32_t *) = {
    emit_control, emit_variable, emit_numeric, emit_memory, emit_table, emit_simd,
};

static bool is_block_start(uint16_t op) {
  return op == OP_BLOCK || op == OP_LOOP || op == OP_IF;
}

/* Code after br, br_table, return or unreachable up to the frame's else or
 * end is dead: its stack is polymorphic, so no emitter may see it.  Nested
 * blocks in it are skipped whole. */
static bool walk_body(low_fn *f, tw_diag *d) {
  const wasm_func *fn = f->func;
  for (uint32_t pc = 0; pc < fn->ncode && f->nframes > 0; pc++) {
    const wasm_insn *insn = &fn->code[pc];
    if (f->frames[f->nframes - 1].unreachable_rest && insn->op != OP_ELSE && insn->op != OP_END) {
      if (is_block_start(insn->op)) {
        if (insn->u.block.end_at <= pc || insn->u.block.end_at >= fn->ncode)
          return tw_fail(d, insn->offset, "internal error: block without a matching end");
        pc = insn->u.block.end_at;
      }
      continue;
    }
    bool done = false;
    for (size_t i = 0; !done && i < sizeof emitters / sizeof emitters[0]; i++)
      done = emitters[i](f, insn, &pc);
    if (!done) return tw_fail(d, insn->offset, "internal error: cannot lower opcode 0x%x", insn->op);
  }
  if (f->nframes > 0)
    return tw_fail(d, fn->body_offset, "internal error: function body without its final end");
  return true;
}

bool low_function(low_module_ctx *mc, uint32_t func_index, tw_diag *d) {
  const wasm_func *fn = &mc->m->funcs[func_index];
  low_fn f = {
      .mc = mc,
      .b = LLVMCreateBuilderInContext(mc->ctx),
      .func_index = func_index,
      .func = fn,
      .type = &mc->m->types[fn->type_index],
      .fn = mc->funcs[func_index],
  };
  build_entry(&f);
  low_control_begin(&f);
  bool ok = walk_body(&f, d);
  LLVMDisposeBuilder(f.b);
  return ok;
}
