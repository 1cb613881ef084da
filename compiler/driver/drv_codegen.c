/* drv_codegen.c: code generation: the whole module on this thread, or a
 * large module's parts (drv_split.c) on up to `jobs` threads, each part in
 * an LLVM context and target machine of its own.  The parts' objects come
 * back in part order, so the output does not depend on the number of
 * threads or on which thread did what. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_internal.h"

void drv_objects_free(drv_objects *objs) {
  for (unsigned i = 0; objs->parts && i < objs->n; i++) free(objs->parts[i].data);
  free(objs->parts);
  objs->parts = NULL;
  objs->n = 0;
}

/* mod -> object (or assembly) in *out. */
static bool emit(LLVMTargetMachineRef tm, LLVMModuleRef mod, bool assembly, drv_object *out,
                 tw_diag *d) {
  char *err = NULL;
  LLVMMemoryBufferRef buf;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, assembly ? LLVMAssemblyFile : LLVMObjectFile,
                                          &err, &buf)) {
    tw_fail(d, TW_DIAG_NO_OFFSET, "LLVM code generation failed: %s", err ? err : "");
    LLVMDisposeMessage(err);
    return false;
  }
  out->size = LLVMGetBufferSize(buf);
  out->data = malloc(out->size ? out->size : 1);
  memcpy(out->data, LLVMGetBufferStart(buf), out->size);
  LLVMDisposeMemoryBuffer(buf);
  return true;
}

typedef struct {
  /* read-only while the threads run */
  const char *bitcode;
  size_t size;
  const drv_split_plan *plan;
  const drv_codegen_job *job;
  drv_object *objs;          /* [nparts], each written by the thread that made it */
  /* under lock */
  pthread_mutex_t lock;
  pthread_cond_t changed;
  unsigned next, done;
  unsigned long funcs_done;
  double times[3];           /* rebuilding, passes, emission: summed over parts */
  bool failed;
  tw_diag diag;              /* the first failure */
} cg_shared;

/* One part: rebuilt, its passes run, emitted; times[] as cg_shared's. */
static bool one_part(cg_shared *s, unsigned part, tw_diag *d, double times[3]) {
  const drv_options *o = s->job->o;
  double t0 = drv_now();
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMTargetMachineRef tm = drv_host_machine(o->opt_level, o->cpu, o->emit_main, d);
  LLVMModuleRef mod = tm ? drv_split_part(s->bitcode, s->size, s->plan, part, ctx, d) : NULL;
  double t1 = drv_now();
  bool ok = mod && (!s->job->passes || s->job->passes(s->job->passes_arg, mod, tm, d));
  double t2 = drv_now();
  ok = ok && emit(tm, mod, false, &s->objs[part], d);
  times[0] = t1 - t0, times[1] = t2 - t1, times[2] = drv_now() - t2;
  if (mod) LLVMDisposeModule(mod);
  if (tm) LLVMDisposeTargetMachine(tm);
  LLVMContextDispose(ctx);
  return ok;
}

static void *worker(void *arg) {
  cg_shared *s = arg;
  for (;;) {
    pthread_mutex_lock(&s->lock);
    bool stop = s->failed || s->next == s->plan->nparts;
    unsigned part = s->next;
    if (!stop) s->next++;
    pthread_mutex_unlock(&s->lock);
    if (stop) return NULL;
    tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
    double times[3] = {0};
    bool ok = one_part(s, part, &d, times);
    pthread_mutex_lock(&s->lock);
    s->done++;
    s->funcs_done += s->plan->first[part + 1] - s->plan->first[part];
    for (int i = 0; i < 3; i++) s->times[i] += times[i];
    if (!ok && !s->failed) s->failed = true, s->diag = d;
    pthread_cond_signal(&s->changed);
    pthread_mutex_unlock(&s->lock);
  }
}

/* Starts up to n workers with stacks as large as a main thread's usually
 * is (code generation of a large function recurses deeply); how many
 * started. */
static unsigned start_workers(pthread_t *threads, unsigned n, cg_shared *s) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 16u << 20);
  unsigned started = 0;
  while (started < n && pthread_create(&threads[started], &attr, worker, s) == 0) started++;
  pthread_attr_destroy(&attr);
  return started;
}

/* Waits for the workers, reporting each part done as functions done. */
static void wait_workers(cg_shared *s, pthread_t *threads, unsigned nthreads) {
  unsigned long total = s->plan->first[s->plan->nparts];
  pthread_mutex_lock(&s->lock);
  unsigned seen = 0;
  while (s->done < s->plan->nparts && !(s->failed && s->done == s->next)) {
    pthread_cond_wait(&s->changed, &s->lock);
    if (s->done == seen) continue;
    seen = s->done;
    drv_event e = {.kind = DRV_EV_COUNT, .name = "codegen", .done = s->funcs_done,
                   .total = total, .unit = "functions"};
    pthread_mutex_unlock(&s->lock);
    drv_report(s->job->o, e);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  for (unsigned i = 0; i < nthreads; i++) pthread_join(threads[i], NULL);
}

static drv_status in_parts(LLVMModuleRef *mod, const drv_codegen_job *job, const drv_split_plan *plan,
                           drv_objects *objs, char *detail, size_t cap, tw_diag *d) {
  const drv_options *o = job->o;
  LLVMMemoryBufferRef bc = drv_split_prepare(*mod, o->desc_symbol ? o->desc_symbol : "twasm_module");
  /* the parts hold what it held: no need for two copies at once */
  LLVMDisposeModule(*mod);
  *mod = NULL;
  cg_shared s = {.bitcode = LLVMGetBufferStart(bc), .size = LLVMGetBufferSize(bc), .plan = plan,
                 .job = job, .objs = calloc(plan->nparts, sizeof(drv_object)),
                 .diag = {.offset = TW_DIAG_NO_OFFSET}};
  pthread_mutex_init(&s.lock, NULL);
  pthread_cond_init(&s.changed, NULL);
  unsigned want = o->jobs > 1 ? o->jobs : 1;
  if (want > plan->nparts) want = plan->nparts;
  pthread_t threads[DRV_MAX_PARTS];
  unsigned nthreads = start_workers(threads, want, &s);
  if (nthreads) wait_workers(&s, threads, nthreads);
  else worker(&s); /* no thread could start: all on this one */
  pthread_cond_destroy(&s.changed);
  pthread_mutex_destroy(&s.lock);
  LLVMDisposeMemoryBuffer(bc);
  objs->parts = s.objs;
  objs->n = plan->nparts;
  snprintf(detail, cap,
           "%u parts of %lu instructions on %u thread%s; thread time: rebuilding %.3f s, "
           "passes %.3f s, emission %.3f s",
           plan->nparts, plan->instructions, nthreads ? nthreads : 1, nthreads > 1 ? "s" : "",
           s.times[0], s.times[1], s.times[2]);
  if (!s.failed) return DRV_OK;
  *d = s.diag;
  drv_objects_free(objs);
  return DRV_INTERNAL;
}

drv_status drv_codegen(LLVMModuleRef *mod, LLVMTargetMachineRef tm, const drv_codegen_job *job,
                       const drv_split_plan *plan, drv_objects *objs, tw_diag *d) {
  drv_report(job->o, (drv_event){.kind = DRV_EV_BEGIN, .name = "codegen"});
  double t0 = drv_now();
  char detail[160] = "";
  drv_status st = DRV_OK;
  memset(objs, 0, sizeof *objs);
  if (plan->nparts > 1) {
    st = in_parts(mod, job, plan, objs, detail, sizeof detail, d);
  } else {
    objs->parts = calloc(1, sizeof(drv_object));
    objs->n = 1;
    if (!emit(tm, *mod, job->o->emit_asm, &objs->parts[0], d)) {
      drv_objects_free(objs);
      st = DRV_INTERNAL;
    }
  }
  drv_report(job->o, (drv_event){.kind = DRV_EV_END, .name = "codegen", .seconds = drv_now() - t0,
                                 .detail = detail[0] ? detail : NULL});
  return st;
}
