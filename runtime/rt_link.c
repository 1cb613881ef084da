/* rt_link.c: resolving an instance's imports: kind and type checks against
 * the module's declarations, and references on the exporting instances. */
#include "rt_internal.h"

/* Limits subtyping: the provided object is at least as large as declared
 * and, if a maximum is declared, promises to stay within it. */
static bool limits_match(uint64_t min, bool has_max, uint64_t max, const twasm_import_abi *im) {
  if (min < im->min) return false;
  return !im->has_max || (has_max && max <= im->max);
}

static bool link_func(rt_instance *inst, const twasm_import_abi *im, rt_func *f, rt_instance **owner) {
  if (f->sig != inst->sigs[im->type_index]) return false;
  if (f->kind == RT_FUNC_HOST && !(f = rt_func_bind_host(inst, f, im->type_index))) return false;
  *owner = f->kind == RT_FUNC_WASM ? f->owner : (f->owner == inst ? NULL : f->owner);
  inst->vm.funcs[inst->nfunc_imports++] = (twasm_func_abi *)f;
  return true;
}

static bool link_table(rt_instance *inst, const twasm_import_abi *im, rt_table *t, rt_instance **owner) {
  if (t->abi.elem_type != im->valtype || !limits_match(t->abi.size, t->has_max, t->max, im)) return false;
  *owner = t->owner;
  inst->vm.tables[inst->ntable_imports++] = &t->abi;
  return true;
}

static bool link_memory(rt_instance *inst, const twasm_import_abi *im, rt_memory *m, rt_instance **owner) {
  if (!limits_match(m->abi.size_bytes / TWASM_PAGE_SIZE, m->has_max, m->max_pages, im)) return false;
  *owner = m->owner;
  inst->mems[inst->nmem_imports++] = m;
  return true;
}

static bool link_global(rt_instance *inst, const twasm_import_abi *im, twasm_global *g, rt_instance **owner) {
  if ((uint8_t)g->kind != im->valtype || g->mutable_ != (im->mutable_ != 0)) return false;
  *owner = g->owner;
  inst->vm.globals[inst->nglobal_imports++] = &g->cell;
  return true;
}

static bool extern_present(const twasm_extern *ex) {
  return ex && ex->of.func; /* every member of the union is a pointer */
}

/* Fills the import slots of inst in import order; on failure err holds
 * "unknown import" or "incompatible import type". */
bool rt_link_imports(rt_instance *inst, const twasm_extern *imports, uint32_t nimports, twasm_trap *err) {
  const twasm_module_abi *m = inst->module;
  for (uint32_t i = 0; i < m->nimports; i++) {
    const twasm_import_abi *im = &m->imports[i];
    const twasm_extern *ex = i < nimports ? &imports[i] : NULL;
    if (!extern_present(ex)) {
      rt_error(err, "unknown import");
      return false;
    }
    rt_instance *owner = NULL;
    bool ok = (uint32_t)ex->kind == im->kind;
    if (ok) {
      switch (ex->kind) {
      case TWASM_EXTERN_FUNC: ok = link_func(inst, im, (rt_func *)ex->of.func, &owner); break;
      case TWASM_EXTERN_TABLE: ok = link_table(inst, im, (rt_table *)ex->of.table, &owner); break;
      case TWASM_EXTERN_MEMORY: ok = link_memory(inst, im, (rt_memory *)ex->of.memory, &owner); break;
      case TWASM_EXTERN_GLOBAL: ok = link_global(inst, im, ex->of.global, &owner); break;
      default: ok = false; break;
      }
    }
    if (!ok) {
      rt_error(err, "incompatible import type");
      return false;
    }
    if (owner) rt_instance_acquire(owner);
    inst->import_owners[i] = owner;
  }
  return true;
}
