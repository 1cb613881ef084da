/* low_scan.c: recognises the byte-set scan loop of musl's strcspn and
 * strspn (wasi-libc's), wherever it lies: wasm-opt inlines strcspn into its
 * callers (SQLite's LIKE matcher, patternCompare), so the whole-function
 * fingerprints of low_libc_match.c never see it.  The loop, as clang 19
 * writes `for (; *s && !BITOP(byteset, *s, &); s++);` (strspn: without
 * the `!`, an i32.eqz before the exit):
 *
 *   loop
 *     local.get SET  local.get C  i32.const 3  i32.shr_u  i32.const 28
 *     i32.and  i32.add  i32.load offset=0
 *     local.get C  i32.shr_u  i32.const 1  i32.and  [i32.eqz]
 *     br_if 1
 *     local.get P  i32.const 1  i32.add  local.tee P
 *     i32.load8_u offset=0  local.tee C
 *     br_if 0
 *   end
 *
 * It reads only, so running it natively (runtime/rt_libc.c,
 * twasm_rt_byteset_scan) and storing the locals it would leave is the same
 * computation; the helper says when a read would lie past the end of
 * memory, and the loop itself then runs (and traps where it should).
 * low_control.c's emit_loop puts the call before the loop, the branch to
 * the frame around the loop where the test stopped the scan, and the way
 * out at the loop's end (low_frame.after_scan) where the NUL did. */
#include <string.h>

#include "low_internal.h"

/* numeric opcodes wasm.h leaves unnamed (spec numbering) */
enum { SCAN_I32_ADD = 0x6A, SCAN_I32_AND = 0x71, SCAN_I32_SHR_U = 0x76 };

static bool is(const wasm_insn *in, uint16_t op) { return in->op == op; }
static bool is_const(const wasm_insn *in, int32_t v) { return in->op == OP_I32_CONST && in->u.i32 == v; }
static bool is_local(const wasm_insn *in, uint16_t op, uint32_t local) {
  return in->op == op && in->u.index == local;
}

bool low_scan_match(const wasm_func *fn, uint32_t at, low_scan *out) {
  const wasm_insn *loop = &fn->code[at];
  if (loop->op != OP_LOOP || loop->u.block.kind == BT_VALTYPE || loop->u.block.kind == BT_TYPEIDX) return false;
  uint32_t end = loop->u.block.end_at, n = end - at - 1;
  if (end >= fn->ncode || (n != 20 && n != 21)) return false;
  const wasm_insn *c = &fn->code[at + 1];
  bool clear = n == 21;
  uint32_t set = c[0].u.index, ch = c[1].u.index;
  if (!is(&c[0], OP_LOCAL_GET) || !is(&c[1], OP_LOCAL_GET) || !is_const(&c[2], 3) || !is(&c[3], SCAN_I32_SHR_U) ||
      !is_const(&c[4], 28) || !is(&c[5], SCAN_I32_AND) || !is(&c[6], SCAN_I32_ADD) || !is(&c[7], OP_I32_LOAD) ||
      c[7].u.mem.offset != 0 || !is_local(&c[8], OP_LOCAL_GET, ch) || !is(&c[9], SCAN_I32_SHR_U) ||
      !is_const(&c[10], 1) || !is(&c[11], SCAN_I32_AND))
    return false;
  if (clear && !is(&c[12], OP_I32_EQZ)) return false;
  c += clear;
  uint32_t p = c[13].u.index;
  if (!is(&c[12], OP_BR_IF) || c[12].u.index != 1 || !is(&c[13], OP_LOCAL_GET) || !is_const(&c[14], 1) ||
      !is(&c[15], SCAN_I32_ADD) || !is_local(&c[16], OP_LOCAL_TEE, p) || !is(&c[17], OP_I32_LOAD8_U) ||
      c[17].u.mem.offset != 0 || !is_local(&c[18], OP_LOCAL_TEE, ch) || !is(&c[19], OP_BR_IF) ||
      c[19].u.index != 0 || !is(&c[20], OP_END))
    return false;
  /* three distinct locals: the loop's meaning depends on it */
  if (set == ch || set == p || ch == p) return false;
  *out = (low_scan){.set = set, .ch = ch, .p = p, .stop_clear = clear};
  return true;
}

/* Calls the helper on the locals' values as the loop would find them. */
LLVMValueRef low_scan_call(low_fn *f, const low_scan *s, LLVMValueRef *ch_in) {
  low_module_ctx *mc = f->mc;
  LLVMTypeRef ps[] = {mc->t_ptr, mc->t_i64, mc->t_i32, mc->t_i32, mc->t_i32, mc->t_i32};
  LLVMValueRef fn = low_libc_helper(mc, "twasm_rt_byteset_scan", mc->t_i64, ps, 6);
  *ch_in = LLVMBuildLoad2(f->b, mc->t_i32, f->locals[s->ch], "");
  LLVMValueRef args[] = {low_mem_base(f), low_mem_size(f), LLVMBuildLoad2(f->b, mc->t_i32, f->locals[s->set], ""),
                         *ch_in, LLVMBuildLoad2(f->b, mc->t_i32, f->locals[s->p], ""),
                         LLVMConstInt(mc->t_i32, s->stop_clear, false)};
  return LLVMBuildCall2(f->b, LLVMGlobalGetValueType(fn), fn, args, 6, "scan");
}

/* Stores what the loop leaves in P and C; returns whether the set's test
 * stopped it (the exit through br_if 1). */
LLVMValueRef low_scan_results(low_fn *f, const low_scan *s, LLVMValueRef r, LLVMValueRef ch_in) {
  low_module_ctx *mc = f->mc;
  LLVMValueRef one = LLVMConstInt(mc->t_i64, 1, false);
  LLVMValueRef first = LLVMBuildTrunc(f->b, LLVMBuildLShr(f->b, r, LLVMConstInt(mc->t_i64, 41, false), ""), mc->t_i1, "");
  LLVMValueRef found = LLVMBuildAnd(f->b, LLVMBuildLShr(f->b, r, LLVMConstInt(mc->t_i64, 40, false), ""), one, "");
  LLVMValueRef byte = LLVMBuildAnd(f->b, LLVMBuildLShr(f->b, r, LLVMConstInt(mc->t_i64, 32, false), ""),
                                   LLVMConstInt(mc->t_i64, 0xff, false), "");
  LLVMValueRef ch = LLVMBuildSelect(f->b, first, ch_in, LLVMBuildTrunc(f->b, byte, mc->t_i32, ""), "");
  LLVMBuildStore(f->b, LLVMBuildTrunc(f->b, r, mc->t_i32, ""), f->locals[s->p]);
  LLVMBuildStore(f->b, ch, f->locals[s->ch]);
  return LLVMBuildICmp(f->b, LLVMIntNE, found, LLVMConstInt(mc->t_i64, 0, false), "found");
}
