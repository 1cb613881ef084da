/* rt_backtrace.c: the Wasm frames of a trap, read from the unwind tables.
 * Generated code keeps no frame pointers (compiler/low_module.c) but has
 * exact unwind tables ("uwtable"="async"), so the unwinder walks it from
 * twasm_rt_trap, or from the fault handler through the signal frame to the
 * faulting instruction.  The unwinder finds the tables through glibc's
 * _dl_find_object, which takes no lock, so the fault handler may use it. */
#include <unwind.h>

#include "rt_internal.h"

typedef struct {
  twasm_trap *t;
  const rt_instance *inst;
  bool in_module;           /* a frame of the module was seen */
} bt_walk;

/* One frame: records it when its code is the module's; the first frame
 * outside the module after some inside ends the walk (the runtime or a
 * host function called the outermost Wasm frame). */
static _Unwind_Reason_Code bt_step(struct _Unwind_Context *ctx, void *arg) {
  bt_walk *w = arg;
  int before = 0;
  uintptr_t ip = (uintptr_t)_Unwind_GetIPInfo(ctx, &before);
  /* A return address lies after its call; a signal frame's pc is the
   * faulting instruction itself. */
  if (!before && ip) ip--;
  uint32_t idx = rt_func_at(w->inst, ip);
  if (idx == UINT32_MAX) return w->in_module ? _URC_END_OF_STACK : _URC_NO_REASON;
  w->in_module = true;
  if (w->t->nframes == TWASM_TRAP_MAX_FRAMES) { /* one more than fits */
    w->t->frames_truncated = true;
    return _URC_END_OF_STACK;
  }
  w->t->frames[w->t->nframes++] = idx;
  return _URC_NO_REASON;
}

void rt_backtrace(twasm_trap *t, const rt_instance *inst) {
  t->nframes = 0;
  t->frames_truncated = false;
  if (!inst) return;
  bt_walk w = {t, inst, false};
  _Unwind_Backtrace(bt_step, &w);
}
