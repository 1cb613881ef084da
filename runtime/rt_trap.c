/* rt_trap.c: trap unwinding: per-thread frames, twasm_rt_trap, the fault
 * handler for guard pages and stack overflow, and the stack limit. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "rt_internal.h"

#define RT_STACK_MARGIN (128u * 1024u)
#define RT_ALTSTACK_SIZE (64u * 1024u)
/* Faults this far below the thread's stack still count as overflow: a
 * large frame may skip the guard page. */
#define RT_STACK_SLACK (1u << 20)

uintptr_t twasm_rt_stack_limit;

static size_t rt_stack_budget = 4u << 20;
static _Thread_local rt_frame *rt_frame_top;
static _Thread_local uintptr_t rt_stack_lo;
static _Thread_local bool rt_thread_ready;

static pthread_once_t rt_handler_once = PTHREAD_ONCE_INIT;
static pthread_key_t rt_altstack_key;
static struct sigaction rt_prev_segv, rt_prev_bus;

static const char *const rt_trap_messages[TWASM_TRAP_COUNT] = {
    [TWASM_TRAP_NONE] = "",
    [TWASM_TRAP_UNREACHABLE] = "unreachable",
    [TWASM_TRAP_INT_DIV_ZERO] = "integer divide by zero",
    [TWASM_TRAP_INT_OVERFLOW] = "integer overflow",
    [TWASM_TRAP_INVALID_CONVERSION] = "invalid conversion to integer",
    [TWASM_TRAP_MEMORY_OOB] = "out of bounds memory access",
    [TWASM_TRAP_TABLE_OOB] = "out of bounds table access",
    [TWASM_TRAP_UNDEFINED_ELEMENT] = "undefined element",
    [TWASM_TRAP_UNINITIALIZED_ELEMENT] = "uninitialized element",
    [TWASM_TRAP_INDIRECT_TYPE_MISMATCH] = "indirect call type mismatch",
    [TWASM_TRAP_STACK_EXHAUSTED] = "call stack exhausted",
    [TWASM_TRAP_HOST] = "host function trapped",
    [TWASM_TRAP_EXIT] = "exit",
};

const char *twasm_trap_message(uint32_t code) {
  return code < TWASM_TRAP_COUNT ? rt_trap_messages[code] : "unknown trap";
}

void twasm_set_stack_budget(size_t bytes) { rt_stack_budget = bytes; }

/* Async-signal-safe: the fault handler uses it too. */
static void copy_message(char *dst, const char *src) {
  size_t n = 0;
  for (; src[n] && n + 1 < sizeof ((twasm_trap *)0)->message; n++) dst[n] = src[n];
  dst[n] = 0;
}

void rt_trap_fill(twasm_trap *t, uint32_t code, const twasm_module_abi *m,
                  uint32_t func_index, uint32_t offset) {
  t->code = code;
  copy_message(t->message, twasm_trap_message(code));
  t->func_index = func_index;
  t->offset = offset;
  t->exit_status = 0;
  t->nframes = 0;
  t->frames_truncated = false;
  t->func_name = NULL;
  if (m && m->func_names && func_index < m->nfuncs_total) t->func_name = m->func_names[func_index];
}

void rt_error(twasm_trap *t, const char *message) {
  if (!t) return;
  rt_trap_fill(t, TWASM_TRAP_NONE, NULL, UINT32_MAX, 0);
  copy_message(t->message, message);
}

/* Without an enclosing twasm_call there is nobody to return the trap to:
 * the ABI says the executable then ends with the message and status 134. */
static __attribute__((noreturn)) void trap_uncaught(const twasm_trap *t) {
  if (t->func_name)
    fprintf(stderr, "wasm trap: %s (in %s)\n", t->message, t->func_name);
  else
    fprintf(stderr, "wasm trap: %s\n", t->message);
  _exit(134);
}

/* The defined function of inst's module whose code holds pc: the one
 * starting nearest below it, where pc lies before the module's first
 * invoker or trampoline (emitted after the functions).  UINT32_MAX when
 * pc is not in the module's code. */
uint32_t rt_func_at(const rt_instance *inst, uintptr_t pc) {
  if (!inst || !pc) return UINT32_MAX;
  const twasm_module_abi *m = inst->module;
  uintptr_t best = 0, end = UINTPTR_MAX;
  uint32_t best_index = UINT32_MAX;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    uintptr_t start = (uintptr_t)m->funcs[i].code;
    if (start <= pc && start > best) {
      best = start;
      best_index = inst->nfunc_imports + i;
    }
  }
  for (uint32_t t = 0; best_index != UINT32_MAX && t < m->ntypes; t++) {
    uintptr_t a = m->invokers ? (uintptr_t)m->invokers[t] : 0;
    uintptr_t b = m->host_trampolines ? (uintptr_t)m->host_trampolines[t] : 0;
    if (a > best && a < end) end = a;
    if (b > best && b < end) end = b;
  }
  return pc < end ? best_index : UINT32_MAX;
}

void rt_trap_raise(const twasm_trap *t) {
  rt_frame *f = rt_frame_top;
  if (!f) trap_uncaught(t);
  if (&f->trap != t) f->trap = *t;
  siglongjmp(f->env, 1);
}

/* Inlined into its caller, the trapping function has no frame of its
 * own: it goes first.  Async-signal-safe. */
static void frame_of_inlined(twasm_trap *t) {
  if (!t->nframes || t->frames[0] == t->func_index || t->func_index == UINT32_MAX) return;
  if (t->nframes == TWASM_TRAP_MAX_FRAMES) {
    t->nframes--;
    t->frames_truncated = true;
  }
  memmove(&t->frames[1], &t->frames[0], t->nframes * sizeof t->frames[0]);
  t->frames[0] = t->func_index;
  t->nframes++;
}

void twasm_rt_trap(void *vmctx, uint32_t code, uint32_t func_index, uint32_t offset) {
  twasm_trap t;
  rt_trap_fill(&t, code, vmctx ? rt_inst(vmctx)->module : NULL, func_index, offset);
  if (vmctx) rt_backtrace(&t, rt_inst(vmctx));
  frame_of_inlined(&t);
  rt_trap_raise(&t);
}

/* ---- fault handler ------------------------------------------------------ */

static uintptr_t fault_pc(void *uctx) {
  const ucontext_t *uc = uctx;
#if defined(__x86_64__)
  return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)uc->uc_mcontext.pc;
#else
  (void)uc;
  return 0;
#endif
}

static bool fault_is_stack(uintptr_t addr) {
  return rt_stack_lo && addr < twasm_rt_stack_limit && addr + RT_STACK_SLACK >= rt_stack_lo;
}

/* Faults that are not ours go to whoever handled them before us. */
static void chain_fault(int sig, siginfo_t *si, void *uctx) {
  struct sigaction *prev = sig == SIGSEGV ? &rt_prev_segv : &rt_prev_bus;
  if (prev->sa_flags & SA_SIGINFO) {
    prev->sa_sigaction(sig, si, uctx);
  } else if (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN) {
    /* Returning re-executes the faulting instruction under the default
     * action; a signal sent by kill() must be raised again instead. */
    signal(sig, SIG_DFL);
    if (si->si_code <= 0) raise(sig);
  } else {
    prev->sa_handler(sig);
  }
}

static void on_fault(int sig, siginfo_t *si, void *uctx) {
  rt_frame *f = rt_frame_top;
  uintptr_t addr = (uintptr_t)si->si_addr;
  /* A write to a page whose device copy is kept: opened, the write goes on. */
  if (sig == SIGSEGV && si->si_code == SEGV_ACCERR && rt_resident_fault(addr)) return;
  uint32_t code = TWASM_TRAP_NONE;
  if (f && si->si_code > 0) {
    if (rt_memory_owns(addr)) code = TWASM_TRAP_MEMORY_OOB;
    else if (fault_is_stack(addr)) code = TWASM_TRAP_STACK_EXHAUSTED;
  }
  if (code == TWASM_TRAP_NONE) {
    chain_fault(sig, si, uctx);
    return;
  }
  const twasm_module_abi *m = f->inst ? f->inst->module : NULL;
  uintptr_t pc = fault_pc(uctx);
  /* an access the guard pages stand in for its check names itself; other
   * faults the function they happened in, at offset 0 */
  uint32_t func = rt_func_at(f->inst, pc), offset = 0;
  if (code == TWASM_TRAP_MEMORY_OOB) rt_pcmap_find(f->inst, pc, &func, &offset);
  rt_trap_fill(&f->trap, code, m, func, offset);
  rt_backtrace(&f->trap, f->inst);
  frame_of_inlined(&f->trap);
  siglongjmp(f->env, 1);
}

static void free_altstack(void *stack) {
  stack_t off = {.ss_flags = SS_DISABLE};
  sigaltstack(&off, NULL);
  free(stack);
}

static void install_handler(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &rt_prev_segv);
  sigaction(SIGBUS, &sa, &rt_prev_bus);
  pthread_key_create(&rt_altstack_key, free_altstack);
}

/* Overflow faults need a stack to run the handler on; keep one the
 * embedder installed. */
static void ensure_altstack(void) {
  stack_t cur;
  if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE)) return;
  stack_t ss = {.ss_sp = malloc(RT_ALTSTACK_SIZE), .ss_size = RT_ALTSTACK_SIZE};
  if (!ss.ss_sp) return;
  if (sigaltstack(&ss, NULL) != 0) {
    free(ss.ss_sp);
    return;
  }
  pthread_setspecific(rt_altstack_key, ss.ss_sp);
}

static void thread_setup(void) {
  pthread_once(&rt_handler_once, install_handler);
  ensure_altstack();
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void *lo;
    size_t size;
    if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
      rt_stack_lo = (uintptr_t)lo;
    }
    pthread_attr_destroy(&attr);
  }
  rt_thread_ready = true;
}

void rt_frame_push(rt_frame *f, rt_instance *inst) {
  if (!rt_thread_ready) thread_setup();
  f->inst = inst;
  f->prev = rt_frame_top;
  f->saved_limit = twasm_rt_stack_limit;
  if (!f->prev) {
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    uintptr_t limit = sp > rt_stack_budget ? sp - rt_stack_budget : 0;
    if (rt_stack_lo && limit < rt_stack_lo + RT_STACK_MARGIN) limit = rt_stack_lo + RT_STACK_MARGIN;
    twasm_rt_stack_limit = limit;
  }
  rt_frame_top = f;
}

void rt_frame_pop(rt_frame *f) {
  rt_frame_top = f->prev;
  twasm_rt_stack_limit = f->saved_limit;
}
