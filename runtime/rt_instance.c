/* rt_instance.c: instantiation in the spec's order (link, allocate,
 * element and data segments, start), lifetime, and exports. */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define ALLOC_ARRAY(inst, ptr, n) ((ptr) = rt_arena_alloc(&(inst)->arena, ((n) ? (n) : 1) * sizeof *(ptr)))

static void count_imports(rt_instance *inst, uint32_t counts[4]) {
  const twasm_module_abi *m = inst->module;
  for (uint32_t i = 0; i < m->nimports; i++)
    if (m->imports[i].kind < 4) counts[m->imports[i].kind]++;
}

/* The instance with its index spaces sized; imports not yet resolved. */
static rt_instance *instance_alloc(const twasm_module_abi *m) {
  rt_instance *inst = calloc(1, TWASM_OWN_GLOBALS_AT + (size_t)m->nglobals * TWASM_OWN_GLOBAL_STRIDE);
  if (!inst) return NULL;
  inst->module = inst->vm.module = m;
  inst->vm.own_globals = &rt_own_global(inst, 0)->cell;
  inst->refs = 1;
  uint32_t counts[4] = {0, 0, 0, 0};
  count_imports(inst, counts);
  uint32_t nfuncs = counts[TWASM_EXTERN_FUNC] + m->nfuncs;
  inst->ntables = counts[TWASM_EXTERN_TABLE] + m->ntables;
  inst->nmems = counts[TWASM_EXTERN_MEMORY] + m->nmemories;
  inst->nglobals = counts[TWASM_EXTERN_GLOBAL] + m->nglobals;
  uint32_t *sig_ids;
  bool ok = ALLOC_ARRAY(inst, inst->vm.funcs, nfuncs) && ALLOC_ARRAY(inst, inst->vm.tables, inst->ntables) &&
            ALLOC_ARRAY(inst, inst->mems, inst->nmems) && ALLOC_ARRAY(inst, inst->vm.globals, inst->nglobals) &&
            ALLOC_ARRAY(inst, inst->sigs, m->ntypes) && ALLOC_ARRAY(inst, sig_ids, m->ntypes) &&
            (inst->import_owners = calloc(m->nimports + 1u, sizeof *inst->import_owners)) != NULL &&
            ALLOC_ARRAY(inst, inst->elem_refs, m->nelems) && ALLOC_ARRAY(inst, inst->elem_len, m->nelems) &&
            ALLOC_ARRAY(inst, inst->data_len, m->ndatas);
  for (uint32_t t = 0; ok && t < m->ntypes; t++) {
    const twasm_functype_abi *ft = &m->types[t];
    ok = (inst->sigs[t] = rt_sig_intern(ft->nparams, ft->nresults, ft->types)) != NULL;
    if (ok) sig_ids[t] = inst->sigs[t]->id;
  }
  if (!ok) {
    rt_arena_free(&inst->arena);
    free(inst->import_owners);
    free(inst);
    return NULL;
  }
  inst->vm.sig_ids = sig_ids;
  return inst;
}

/* Wasm 2.0 constant expressions: one instruction; global.get may only name
 * globals already initialised (validation guarantees it). */
static void eval_const(const rt_instance *inst, const twasm_constexpr_abi *ce, twasm_global_cell *out) {
  memset(out, 0, sizeof *out);
  switch (ce->op) {
  case TWASM_CE_GLOBAL_GET: *out = *inst->vm.globals[ce->value]; break;
  case TWASM_CE_V128: memcpy(&out->v128, (const void *)(uintptr_t)ce->value, sizeof out->v128); break;
  case TWASM_CE_REF_NULL: break;
  case TWASM_CE_REF_FUNC: out->ref = inst->vm.funcs[ce->value]; break;
  default: out->bits = ce->value; break; /* i32 zero-extended, f32 in the low bits */
  }
}

static bool define_funcs(rt_instance *inst) {
  const twasm_module_abi *m = inst->module;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    rt_func *f = rt_arena_alloc(&inst->arena, sizeof *f);
    if (!f) return false;
    f->abi.code = m->funcs[i].code;
    f->abi.vmctx = inst;
    f->type_index = m->funcs[i].type_index;
    f->sig = inst->sigs[f->type_index];
    f->abi.sig_id = f->sig->id;
    f->kind = RT_FUNC_WASM;
    f->owner = inst;
    inst->vm.funcs[inst->nfunc_imports + i] = &f->abi;
  }
  return true;
}

static bool define_storage(rt_instance *inst) {
  const twasm_module_abi *m = inst->module;
  for (uint32_t i = 0; i < m->ntables; i++) {
    const twasm_table_def_abi *d = &m->tables[i];
    rt_table *t = rt_table_create(d->elem_type, d->min, d->max, d->has_max, NULL);
    if (!t) return false;
    t->owner = inst;
    inst->vm.tables[inst->ntable_imports + i] = &t->abi;
  }
  for (uint32_t i = 0; i < m->nmemories; i++) {
    const twasm_memory_def_abi *d = &m->memories[i];
    rt_memory *mem = rt_memory_create(d->min, d->max, d->has_max, m->nkernels > 0);
    if (!mem) return false;
    mem->owner = inst;
    inst->mems[inst->nmem_imports + i] = mem;
  }
  for (uint32_t i = 0; i < m->nglobals; i++) {
    twasm_global *g = rt_own_global(inst, i);
    g->kind = (twasm_valkind)m->globals[i].valtype;
    g->mutable_ = m->globals[i].mutable_ != 0;
    g->owner = inst;
    eval_const(inst, &m->globals[i].init, &g->cell);
    inst->vm.globals[inst->nglobal_imports + i] = &g->cell;
  }
  if (inst->nmems) {
    inst->vm.mem = &inst->mems[0]->abi;
    inst->vm.mem_base = inst->mems[0]->abi.base;
  }
  return true;
}

/* Element items are references fixed at instantiation. */
static bool eval_elems(rt_instance *inst) {
  const twasm_module_abi *m = inst->module;
  for (uint32_t e = 0; e < m->nelems; e++) {
    const twasm_elem_abi *seg = &m->elems[e];
    void **refs = ALLOC_ARRAY(inst, inst->elem_refs[e], seg->count);
    if (!refs) return false;
    for (uint32_t i = 0; i < seg->count; i++) {
      twasm_global_cell cell;
      eval_const(inst, &seg->items[i], &cell);
      refs[i] = cell.ref;
    }
    inst->elem_len[e] = seg->count;
  }
  for (uint32_t d = 0; d < m->ndatas; d++) inst->data_len[d] = m->datas[d].size;
  return true;
}

static uint32_t const_offset(const rt_instance *inst, const twasm_constexpr_abi *ce) {
  twasm_global_cell cell;
  eval_const(inst, ce, &cell);
  return (uint32_t)cell.i32;
}

/* Active segments are applied in order, then dropped; a trap stops there,
 * with the writes of earlier segments kept. */
static bool init_segments(rt_instance *inst, twasm_trap *err) {
  const twasm_module_abi *m = inst->module;
  for (uint32_t e = 0; e < m->nelems; e++) {
    const twasm_elem_abi *seg = &m->elems[e];
    if (seg->mode == TWASM_SEG_PASSIVE) continue;
    uint32_t code = TWASM_TRAP_NONE;
    if (seg->mode == TWASM_SEG_ACTIVE)
      code = twasm_rt_table_init(inst, seg->table_index, e, const_offset(inst, &seg->offset), 0, seg->count);
    if (code) {
      if (err) rt_trap_fill(err, code, m, UINT32_MAX, 0);
      return false;
    }
    twasm_rt_elem_drop(inst, e);
  }
  for (uint32_t d = 0; d < m->ndatas; d++) {
    const twasm_data_abi *seg = &m->datas[d];
    if (seg->mode != TWASM_SEG_ACTIVE) continue;
    uint32_t n = seg->size > UINT32_MAX ? UINT32_MAX : (uint32_t)seg->size;
    uint32_t code = inst->nmems ? twasm_rt_memory_init(inst, d, const_offset(inst, &seg->offset), 0, n)
                                : TWASM_TRAP_MEMORY_OOB;
    if (code) {
      if (err) rt_trap_fill(err, code, m, UINT32_MAX, 0);
      return false;
    }
    twasm_rt_data_drop(inst, d);
  }
  return true;
}

/* Functions of an instance that failed late may already sit in imported
 * tables, where the spec keeps them callable: the tables keep the instance
 * alive.  Its own references to those tables' owners would then form a
 * cycle; it outlives none of them, so it drops them. */
static void release_failed(rt_instance *inst) {
  for (uint32_t t = 0; t < inst->ntable_imports; t++) {
    rt_table *table = (rt_table *)inst->vm.tables[t];
    if (!rt_table_keep(table, inst)) continue;
    for (uint32_t i = 0; i < inst->module->nimports; i++) {
      if (!table->owner || inst->import_owners[i] != table->owner || table->owner->refs <= 1) continue;
      table->owner->refs--;
      inst->import_owners[i] = NULL;
    }
  }
  rt_instance_release(inst);
}

twasm_instance *twasm_instance_new(const twasm_module *m, const twasm_extern *imports,
                                   uint32_t nimports, twasm_trap *err) {
  if (err) rt_error(err, "");
  if (!m || m->abi_version != TWASM_ABI_VERSION) {
    rt_error(err, "module compiled for another runtime ABI version");
    return NULL;
  }
  rt_instance *inst = instance_alloc(m);
  if (!inst) {
    rt_error(err, "out of memory");
    return NULL;
  }
  if (!rt_link_imports(inst, imports, nimports, err)) goto fail;
  if (!rt_pcmap_init(inst) || !define_funcs(inst) || !define_storage(inst) || !eval_elems(inst)) {
    rt_error(err, "out of memory");
    goto fail;
  }
  if (!init_segments(inst, err)) goto fail_late;
  if (m->start_func >= 0) {
    twasm_func *start = (twasm_func *)inst->vm.funcs[m->start_func];
    if (twasm_call(start, NULL, 0, NULL, 0, err) != TWASM_TRAP_NONE) goto fail_late;
  }
  return inst;
fail_late:
  release_failed(inst);
  return NULL;
fail:
  rt_instance_release(inst);
  return NULL;
}

void rt_instance_acquire(rt_instance *inst) { inst->refs++; }

static void instance_free(rt_instance *inst) {
  for (uint32_t i = inst->ntable_imports; i < inst->ntables; i++)
    rt_table_destroy((rt_table *)inst->vm.tables[i]);
  for (uint32_t i = inst->nmem_imports; i < inst->nmems; i++) rt_memory_destroy(inst->mems[i]);
  rt_instance **owners = inst->import_owners;
  uint32_t nowners = inst->module->nimports;
  rt_arena_free(&inst->arena);
  free(inst);
  for (uint32_t i = 0; owners && i < nowners; i++) rt_instance_release(owners[i]);
  free(owners);
}

void rt_instance_release(rt_instance *inst) {
  if (inst && --inst->refs == 0) instance_free(inst);
}

void twasm_instance_delete(twasm_instance *inst) { rt_instance_release(inst); }

bool twasm_instance_export(twasm_instance *inst, const char *name, uint32_t name_len, twasm_extern *out) {
  const twasm_module_abi *m = inst->module;
  for (uint32_t i = 0; i < m->nexports; i++) {
    const twasm_export_abi *ex = &m->exports[i];
    if (ex->name_len != name_len || memcmp(ex->name, name, name_len) != 0) continue;
    out->kind = (twasm_externkind)ex->kind;
    switch (ex->kind) {
    case TWASM_EXTERN_FUNC: out->of.func = (twasm_func *)inst->vm.funcs[ex->index]; break;
    case TWASM_EXTERN_TABLE: out->of.table = (twasm_table *)inst->vm.tables[ex->index]; break;
    case TWASM_EXTERN_MEMORY: out->of.memory = (twasm_memory *)inst->mems[ex->index]; break;
    default: out->of.global = (twasm_global *)inst->vm.globals[ex->index]; break;
    }
    return true;
  }
  return false;
}

twasm_memory *twasm_instance_memory(twasm_instance *inst, uint32_t index) {
  return index < inst->nmems ? (twasm_memory *)inst->mems[index] : NULL;
}

const twasm_module *twasm_instance_module(const twasm_instance *inst) { return inst->module; }

void twasm_instance_set_user(twasm_instance *inst, void *user) { inst->user = user; }

void *twasm_instance_user(const twasm_instance *inst) { return inst->user; }
