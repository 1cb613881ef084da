/* rt_backtrace.c: the Wasm frames of a trap, read from the unwind tables.
 * Generated code keeps no frame pointers (compiler/low_module.c) but has
 * exact unwind tables ("uwtable"="async"), so the unwinder walks it from
 * twasm_rt_trap, or from the fault handler through the signal frame to the
 * faulting instruction.  The unwinder finds the tables through glibc's
 * _dl_find_object, which takes no lock, so the fault handler may use it.
 * A sibling call (`jmp`, compiler/low_tail.c) leaves no frame of the
 * function that made it; the frame of its caller shows which function
 * that was, and it is put back (callee_of_call). */
#include <string.h>
#include <unwind.h>

#include "rt_internal.h"

typedef struct {
  twasm_trap *t;
  const rt_instance *inst;
  bool in_module;           /* a frame of the module was seen */
} bt_walk;

/* The function a direct call ending at return address ra in function
 * caller entered: on x86-64, `call rel32` (0xE8) whose target is exactly
 * a function's entry.  UINT32_MAX for any other call (an indirect one, a
 * call of the runtime or of a helper that is no Wasm function).  The
 * compiler makes sibling calls only in functions entered by direct calls
 * alone, never to functions that make sibling calls (low_tail.c): when
 * the frame below is not that function, it jumped, and it goes back in. */
static uint32_t callee_of_call(const rt_instance *inst, uint32_t caller, uintptr_t ra) {
#if defined(__x86_64__)
  const twasm_module_abi *m = inst->module;
  uintptr_t start = (uintptr_t)m->funcs[caller - inst->nfunc_imports].code;
  if (ra < start + 5) return UINT32_MAX;
  const unsigned char *at = (const unsigned char *)(ra - 5);
  if (at[0] != 0xE8) return UINT32_MAX;
  int32_t rel;
  memcpy(&rel, at + 1, sizeof rel);
  uintptr_t target = ra + (uintptr_t)(intptr_t)rel;
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if ((uintptr_t)m->funcs[i].code == target) return inst->nfunc_imports + i;
  return UINT32_MAX;
#else
  (void)inst, (void)caller, (void)ra;
  return UINT32_MAX;
#endif
}

/* Appends frame idx; false when the array is full (the walk ends). */
static bool bt_record(bt_walk *w, uint32_t idx) {
  if (w->t->nframes == TWASM_TRAP_MAX_FRAMES) { /* one more than fits */
    w->t->frames_truncated = true;
    return false;
  }
  w->t->frames[w->t->nframes++] = idx;
  return true;
}

/* One frame: records it when its code is the module's; the first frame
 * outside the module after some inside ends the walk (the runtime or a
 * host function called the outermost Wasm frame). */
static _Unwind_Reason_Code bt_step(struct _Unwind_Context *ctx, void *arg) {
  bt_walk *w = arg;
  int before = 0;
  uintptr_t ip = (uintptr_t)_Unwind_GetIPInfo(ctx, &before);
  /* A return address lies after its call; a signal frame's pc is the
   * faulting instruction itself. */
  uintptr_t ra = ip;
  if (!before && ip) ip--;
  uint32_t idx = rt_func_at(w->inst, ip);
  if (idx == UINT32_MAX) return w->in_module ? _URC_END_OF_STACK : _URC_NO_REASON;
  w->in_module = true;
  if (!before) {
    uint32_t callee = callee_of_call(w->inst, idx, ra);
    twasm_trap *t = w->t;
    if (callee != UINT32_MAX && (t->nframes == 0 || t->frames[t->nframes - 1] != callee) && !bt_record(w, callee))
      return _URC_END_OF_STACK;
  }
  return bt_record(w, idx) ? _URC_NO_REASON : _URC_END_OF_STACK;
}

void rt_backtrace(twasm_trap *t, const rt_instance *inst) {
  t->nframes = 0;
  t->frames_truncated = false;
  if (!inst) return;
  bt_walk w = {t, inst, false};
  _Unwind_Backtrace(bt_step, &w);
}
