/* rt_call.c: twasm_call: calls any function from the host, turning traps
 * into values. */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define RT_INLINE_SLOTS 32u

static bool args_match(const rt_sig *sig, const twasm_val *args, uint32_t nargs, uint32_t nresults) {
  if (nargs != sig->nparams || nresults != sig->nresults) return false;
  for (uint32_t i = 0; i < nargs; i++)
    if (args[i].kind != sig->kinds[i]) return false;
  return true;
}

static void call_slots(rt_func *f, const twasm_slot *args, twasm_slot *results) {
  if (f->kind == RT_FUNC_WASM) {
    twasm_invoke_fn invoke = f->owner->module->invokers[f->type_index];
    invoke(f->abi.code, f->abi.vmctx, args, results);
  } else {
    twasm_rt_call_host(f, args, results);
  }
}

static uint32_t call_failed(twasm_trap *trap, uint32_t code, const char *message) {
  twasm_trap local;
  rt_error(trap ? trap : &local, message);
  if (trap) trap->code = code;
  return code;
}

uint32_t twasm_call(twasm_func *func, const twasm_val *args, uint32_t nargs,
                    twasm_val *results, uint32_t nresults, twasm_trap *trap) {
  rt_func *f = (rt_func *)func;
  if (!f || !args_match(f->sig, args, nargs, nresults))
    return call_failed(trap, TWASM_TRAP_HOST, "argument type mismatch");
  twasm_slot inline_slots[RT_INLINE_SLOTS];
  uint32_t narg_slots = rt_slot_count(f->sig->kinds, nargs);
  uint32_t n = narg_slots + rt_slot_count(f->sig->kinds + nargs, nresults);
  twasm_slot *slots = n <= RT_INLINE_SLOTS ? inline_slots : calloc(n, sizeof *slots);
  if (!slots) return call_failed(trap, TWASM_TRAP_HOST, "out of memory");
  rt_slots_from_vals(args, nargs, slots);
  rt_frame frame;
  rt_frame_push(&frame, f->kind == RT_FUNC_WASM ? f->owner : NULL);
  uint32_t code = TWASM_TRAP_NONE;
  if (sigsetjmp(frame.env, 1) == 0) {
    call_slots(f, slots, slots + narg_slots);
    rt_vals_from_slots(f->sig->kinds + nargs, slots + narg_slots, nresults, results);
  } else {
    code = frame.trap.code;
    if (trap) *trap = frame.trap;
  }
  rt_frame_pop(&frame);
  if (slots != inline_slots) free(slots);
  if (code == TWASM_TRAP_NONE && trap) rt_trap_fill(trap, TWASM_TRAP_NONE, NULL, UINT32_MAX, 0);
  return code;
}
