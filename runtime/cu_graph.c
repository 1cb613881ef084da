/* cu_graph.c: a launch seen before, replayed as a CUDA graph.  A launch
 * on the device copy (rt_resident.c) is up to three driver calls, the
 * copy in, the kernel and the copy back (each a launch of its own when
 * the copy goes by kernel), and their host time is on the critical path:
 * the device runs the kernel only once its launch has been queued.  An
 * LLM's token repeats the same 85 launches with the same parameters and
 * the same copies every token.  So each single launch is remembered by
 * everything that makes it what it is (the function, grid, block, shared
 * bytes, every parameter's 8 bytes, every copy's host and device
 * addresses and length); seen again, it becomes a graph of its copy
 * kernels and kernel in order, instantiated once, and from then on runs
 * as one cuGraphLaunch.  The graph holds the same values a direct launch
 * would pass, so running it is that launch.
 *
 * Only launches whose copies all go by kernel (cu_kcopy_plan) become
 * graphs; the others are launched as before, as are new launches once
 * CU_GRAPH_MAX of them have graphs.  TWASM_GPU_GRAPH=0 turns graphs off
 * (for measurements).
 *
 * TWASM_GPU_GRAPH_UPDATE=1 (off by default: not yet measured on a GPU)
 * also replays launches whose kernel parameters change every time (an
 * LLM's k and v products write row pos of their caches): a launch not
 * replayed by its whole key is looked up by its shape, the key without
 * the kernel's parameter values; a shape seen twice gets a graph of its
 * own, kept with its kernel node, and each later launch of that shape
 * sets the node's parameters (cuGraphExecKernelNodeSetParams, which
 * leaves launches already queued as they were) where they differ from the
 * last ones, then launches it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

#define CU_GRAPH_SLOTS 512u   /* a power of two */
#define CU_GRAPH_MAX 256u     /* entries at most (graphs hold device resources) */
#define CU_GRAPH_KEY_WORDS 160u
#define CU_GRAPH_NODES 16u    /* copies in, the kernel, copies back */
#define CU_GRAPH_VALS 24u     /* parameter words of a shape's graph at most */

typedef struct cu_graph_entry {
  uint64_t hash;
  uint64_t *key; /* NULL: a free slot */
  uint32_t words;
  uint32_t seen;
  void *exec;    /* the instantiated graph, once made */
  bool refused;  /* launched directly for good */
  /* A shape's graph: the graph and kernel node its parameters are set
   * through, and the parameter values it holds. */
  void *graph, *node;
  uint64_t vals[CU_GRAPH_VALS];
} cu_graph_entry;

static pthread_mutex_t cu_graph_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t cu_graph_once = PTHREAD_ONCE_INIT;
static bool cu_graph_on, cu_graph_update;
static cu_graph_entry cu_graph_table[CU_GRAPH_SLOTS];
static uint32_t cu_graph_entries;

static void cu_graph_init(void) {
  const char *v = getenv("TWASM_GPU_GRAPH");
  cu_graph_on = cu_drv.graph_create && !(v && strcmp(v, "0") == 0);
  const char *u = getenv("TWASM_GPU_GRAPH_UPDATE");
  cu_graph_update = cu_graph_on && cu_drv.graph_exec_kernel_node_set_params && u && strcmp(u, "1") == 0;
  if (!cu_drv.graph_create) cu_trace("gpu: the driver lacks the graph calls: launches are not replayed");
}

/* The launch as words, or its shape (values false: without the kernel's
 * parameter values); 0 when it does not fit. */
static uint32_t cu_graph_key(const cu_step *s, const cu_args *a, uint64_t *key, bool values) {
  uint32_t n = 0;
  if (a->param_words + 3 * (a->nin + a->nout) + 9 > CU_GRAPH_KEY_WORDS) return 0;
  key[n++] = values ? 0 : 1;
  key[n++] = (uint64_t)(uintptr_t)s->kernel->function;
  key[n++] = (uint64_t)s->grid.x | (uint64_t)s->grid.y << 32;
  key[n++] = (uint64_t)s->grid.z | (uint64_t)s->block.x << 32;
  key[n++] = (uint64_t)s->block.y | (uint64_t)s->block.z << 32;
  key[n++] = s->shared_bytes;
  key[n++] = a->param_words;
  if (values)
    for (uint32_t i = 0; i < a->param_words; i++) memcpy(&key[n++], s->params[i], 8);
  key[n++] = a->nin;
  for (size_t i = 0; i < a->nin; i++) {
    key[n++] = (uint64_t)(uintptr_t)a->in[i].host;
    key[n++] = (uint64_t)(uintptr_t)a->in[i].dev;
    key[n++] = a->in[i].len;
  }
  key[n++] = a->nout;
  for (size_t i = 0; i < a->nout; i++) {
    key[n++] = (uint64_t)(uintptr_t)a->out[i].host;
    key[n++] = (uint64_t)(uintptr_t)a->out[i].dev;
    key[n++] = a->out[i].len;
  }
  return n;
}

static uint64_t cu_graph_hash(const uint64_t *key, uint32_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint32_t i = 0; i < n; i++) {
    h ^= key[i];
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  return h;
}

/* The table full: launches seen once are forgotten (those with a
 * parameter that changes every time, as an LLM's holding the token's
 * position, would fill it), the others put back in place (under
 * cu_graph_lock). */
static void cu_graph_forget_once_seen(void) {
  cu_graph_entry kept[CU_GRAPH_MAX];
  uint32_t n = 0;
  for (uint32_t i = 0; i < CU_GRAPH_SLOTS; i++) {
    cu_graph_entry *e = &cu_graph_table[i];
    if (!e->key) continue;
    if (e->seen < 2 && !e->exec)
      free(e->key);
    else
      kept[n++] = *e;
    *e = (cu_graph_entry){0};
  }
  cu_graph_entries = n;
  for (uint32_t j = 0; j < n; j++) {
    uint32_t at = (uint32_t)kept[j].hash & (CU_GRAPH_SLOTS - 1);
    while (cu_graph_table[at].key) at = (at + 1) & (CU_GRAPH_SLOTS - 1);
    cu_graph_table[at] = kept[j];
  }
}

/* The entry of key (made on first sight), or NULL when the table is full
 * (under cu_graph_lock). */
static cu_graph_entry *cu_graph_find(const uint64_t *key, uint32_t n) {
  uint64_t h = cu_graph_hash(key, n);
  for (uint32_t probe = 0; probe < CU_GRAPH_SLOTS; probe++) {
    cu_graph_entry *e = &cu_graph_table[(h + probe) & (CU_GRAPH_SLOTS - 1)];
    if (!e->key) {
      if (cu_graph_entries >= CU_GRAPH_MAX) {
        /* once per filling: afterwards the same slot search again */
        cu_graph_forget_once_seen();
        if (cu_graph_entries >= CU_GRAPH_MAX) return NULL;
        return cu_graph_find(key, n);
      }
      e->key = malloc(n * sizeof *key);
      if (!e->key) return NULL;
      memcpy(e->key, key, n * sizeof *key);
      e->hash = h, e->words = n;
      cu_graph_entries++;
      return e;
    }
    if (e->hash == h && e->words == n && memcmp(e->key, key, n * sizeof *key) == 0) return e;
  }
  return NULL;
}

/* CUDA_KERNEL_NODE_PARAMS_v2, as the CUDA 13.0 header lays it out. */
typedef struct cu_kernel_node {
  void *func;
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  void **params;
  void **extra;
  void *kern;
  void *ctx;
} cu_kernel_node;

static bool cu_graph_add(void *graph, void **last, const cu_step *s, void **params, cu_error *err) {
  cu_kernel_node p = {s->kernel->function, s->grid.x, s->grid.y, s->grid.z, s->block.x, s->block.y,
                      s->block.z, s->shared_bytes, params, NULL, NULL, NULL};
  void *node = NULL;
  cu_result r = cu_drv.graph_add_kernel_node(&node, graph, *last ? last : NULL, *last ? 1 : 0, &p);
  if (r != 0) return cu_check_failure(err, "cuGraphAddKernelNode", r);
  *last = node;
  return true;
}

static bool cu_graph_add_copies(void *graph, void **last, const cu_copy *c, size_t n, bool to_device,
                                cu_error *err) {
  for (size_t i = 0; i < n; i++) {
    if (!c[i].len) continue;
    cu_step s;
    uint64_t words[3];
    if (!cu_kcopy_plan(&c[i], to_device, &s, words))
      return cu_fail_msg(err, "a copy of %llu bytes goes to the copy engine", (unsigned long long)c[i].len);
    void *params[] = {&words[0], &words[1], &words[2]};
    if (!cu_graph_add(graph, last, &s, params, err)) return false;
  }
  return true;
}

/* The launch's graph, instantiated, into *exec; for a shape's entry e the
 * graph and its kernel node are kept in e. */
static bool cu_graph_make(const cu_step *s, const cu_args *a, void **exec, cu_graph_entry *shape,
                          cu_error *err) {
  if (a->nin + a->nout + 1 > CU_GRAPH_NODES) return cu_fail_msg(err, "more than %u nodes", CU_GRAPH_NODES);
  void *graph = NULL, *last = NULL;
  cu_result r = cu_drv.graph_create(&graph, 0);
  if (r != 0) return cu_check_failure(err, "cuGraphCreate", r);
  void *node = NULL;
  bool ok = cu_graph_add_copies(graph, &last, a->in, a->nin, true, err) &&
            cu_graph_add(graph, &last, s, s->params, err) && (node = last) != NULL &&
            cu_graph_add_copies(graph, &last, a->out, a->nout, false, err);
  if (ok) {
    r = cu_drv.graph_instantiate(exec, graph, 0);
    ok = r == 0 || cu_check_failure(err, "cuGraphInstantiateWithFlags", r);
  }
  if (ok && shape) {
    /* the node is the graph's: kept for the parameters' updates */
    shape->graph = graph, shape->node = node;
    for (uint32_t i = 0; i < a->param_words; i++) memcpy(&shape->vals[i], s->params[i], 8);
    return true;
  }
  cu_drv.graph_destroy(graph);
  return ok;
}

/* The entry of the launch's shape when it is to be replayed (seen twice,
 * not refused), else NULL (under cu_graph_lock). */
static cu_graph_entry *cu_graph_shape(const cu_step *s, const cu_args *a) {
  uint64_t key[CU_GRAPH_KEY_WORDS];
  uint32_t n = a->param_words <= CU_GRAPH_VALS ? cu_graph_key(s, a, key, false) : 0;
  cu_graph_entry *e = n ? cu_graph_find(key, n) : NULL;
  if (e && e->seen < 2) e->seen++;
  return e && !e->refused && e->seen >= 2 ? e : NULL;
}

/* Sets the kernel node of shape e's graph to the launch's parameters
 * where they differ from the ones it holds (under cu_graph_lock). */
static bool cu_graph_set(cu_graph_entry *e, const cu_step *s, const cu_args *a, cu_error *err) {
  bool same = true;
  for (uint32_t i = 0; i < a->param_words && same; i++) same = memcmp(&e->vals[i], s->params[i], 8) == 0;
  if (same) return true;
  cu_kernel_node p = {s->kernel->function, s->grid.x, s->grid.y, s->grid.z, s->block.x, s->block.y,
                      s->block.z, s->shared_bytes, s->params, NULL, NULL, NULL};
  cu_result r = cu_drv.graph_exec_kernel_node_set_params(e->exec, e->node, &p);
  if (r != 0) return cu_check_failure(err, "cuGraphExecKernelNodeSetParams", r);
  for (uint32_t i = 0; i < a->param_words; i++) memcpy(&e->vals[i], s->params[i], 8);
  return true;
}

int cu_graph_launch(const cu_step *step, const cu_args *args, cu_error *err) {
  pthread_once(&cu_graph_once, cu_graph_init);
  if (!cu_graph_on) return 0;
  uint64_t key[CU_GRAPH_KEY_WORDS];
  uint32_t n = cu_graph_key(step, args, key, true);
  if (!n) return 0;
  /* as cu_queue_copies checks them: the device copy may have moved */
  for (int d = 0; d < 2; d++)
    for (size_t i = 0; i < (d ? args->nout : args->nin); i++) {
      const cu_copy *c = d ? &args->out[i] : &args->in[i];
      if (c->len && !cu_reachable(c->dev, c->len))
        return cu_fail_msg(err, "copy of %llu bytes to %p: not inside device memory; not launched",
                           (unsigned long long)c->len, c->dev) ? 0 : -1;
    }
  pthread_mutex_lock(&cu_graph_lock);
  cu_graph_entry *e = cu_graph_find(key, n);
  if (e && e->seen < 2) e->seen++;
  cu_graph_entry *shape = NULL;
  if ((!e || e->refused || e->seen < 2) && cu_graph_update) e = shape = cu_graph_shape(step, args);
  if (!e || e->refused || e->seen < 2) {
    pthread_mutex_unlock(&cu_graph_lock);
    return 0;
  }
  bool prof = cu_prof_on();
  double t = prof ? cu_prof_now() : 0;
  if (shape && shape->exec) {
    cu_error why;
    if (!cu_graph_set(shape, step, args, &why)) {
      shape->refused = true;
      pthread_mutex_unlock(&cu_graph_lock);
      cu_trace("gpu: launch %s not replayed by its shape: %s", step->kernel->name, why.message);
      if (!cu_available()) return *err = why, -1;
      return 0;
    }
  }
  if (!e->exec) {
    cu_error why;
    if (!cu_graph_make(step, args, &e->exec, shape, &why)) {
      e->refused = true, e->exec = NULL;
      pthread_mutex_unlock(&cu_graph_lock);
      cu_trace("gpu: launch %s not replayed as a graph: %s", step->kernel->name, why.message);
      if (!cu_available()) return *err = why, -1;
      return 0;
    }
    cu_trace("gpu: launch %s replayed as a graph from now on (%zu copies in, %zu back)", step->kernel->name,
             args->nin, args->nout);
    if (prof) cu_prof_add(CU_PROF_GRAPH_BUILD, t), t = cu_prof_now();
  }
  cu_result r = cu_drv.graph_launch(e->exec, NULL);
  if (r != 0) {
    e->refused = true;
    pthread_mutex_unlock(&cu_graph_lock);
    cu_check_failure(err, "cuGraphLaunch", r);
    if (!cu_available()) return -1;
    cu_trace("gpu: launch %s not replayed as a graph: %s", step->kernel->name, err->message);
    return 0;
  }
  pthread_mutex_unlock(&cu_graph_lock);
  if (prof) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < args->nin; i++) bytes += args->in[i].len;
    cu_prof_copies(args->nin, bytes);
    cu_prof_add(CU_PROF_GRAPH, t), t = cu_prof_now();
  }
  if (!args->no_wait) {
    if (!cu_sync(step->kernel->name, err)) return -1;
    if (prof) cu_prof_add(CU_PROF_SYNC, t);
  }
  if (cu_tracing())
    cu_trace("gpu: launch %s grid=(%u,%u,%u) block=(%u,%u,%u) shared=%u: as a graph", step->kernel->name,
             step->grid.x, step->grid.y, step->grid.z, step->block.x, step->block.y, step->block.z,
             step->shared_bytes);
  return 1;
}
