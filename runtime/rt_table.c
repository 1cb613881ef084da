/* rt_table.c: tables of references: creation, growth, host access. */
#include <stdlib.h>

#include "rt_internal.h"

rt_table *rt_table_create(uint32_t elem_type, uint64_t min, uint64_t max, bool has_max, void *init) {
  if (min > RT_MAX_TABLE_ELEMS || (has_max && max < min)) return NULL;
  rt_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->abi.elems = calloc(min ? min : 1, sizeof(void *));
  if (!t->abi.elems) {
    free(t);
    return NULL;
  }
  for (uint64_t i = 0; i < min; i++) t->abi.elems[i] = init;
  t->abi.size = (uint32_t)min;
  t->abi.elem_type = elem_type;
  t->max = max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
  t->has_max = has_max;
  return t;
}

void rt_table_destroy(rt_table *t) {
  if (!t) return;
  for (uint32_t i = 0; i < t->nkept; i++) rt_instance_release(t->kept[i]);
  free(t->kept);
  free(t->abi.elems);
  free(t);
}

bool rt_table_keep(rt_table *t, rt_instance *inst) {
  rt_instance **kept = realloc(t->kept, (t->nkept + 1) * sizeof *kept);
  if (!kept) return false;
  t->kept = kept;
  t->kept[t->nkept++] = inst;
  rt_instance_acquire(inst);
  return true;
}

static int32_t table_grow(rt_table *t, uint32_t delta, void *init) {
  uint32_t old = t->abi.size;
  uint32_t limit = t->has_max && t->max < RT_MAX_TABLE_ELEMS ? t->max : RT_MAX_TABLE_ELEMS;
  if (delta > limit - old) return -1;
  if (delta == 0) return (int32_t)old;
  void **elems = realloc(t->abi.elems, ((size_t)old + delta) * sizeof *elems);
  if (!elems) return -1;
  for (uint32_t i = old; i < old + delta; i++) elems[i] = init;
  t->abi.elems = elems;
  t->abi.size = old + delta;
  return (int32_t)old;
}

int32_t twasm_rt_table_grow(void *vmctx, uint32_t table_index, void *init, uint32_t delta) {
  return table_grow((rt_table *)rt_inst(vmctx)->vm.tables[table_index], delta, init);
}

twasm_table *twasm_table_new(twasm_valkind elem, uint32_t min, uint32_t max, bool has_max, void *init) {
  return (twasm_table *)rt_table_create(elem, min, max, has_max, init);
}

/* Tables of instances live and die with them. */
void twasm_table_delete(twasm_table *table) {
  rt_table *t = (rt_table *)table;
  if (t && !t->owner) rt_table_destroy(t);
}

uint32_t twasm_table_size(const twasm_table *t) { return ((const rt_table *)t)->abi.size; }

bool twasm_table_get(const twasm_table *table, uint32_t i, void **out) {
  const rt_table *t = (const rt_table *)table;
  if (i >= t->abi.size) return false;
  *out = t->abi.elems[i];
  return true;
}

bool twasm_table_set(twasm_table *table, uint32_t i, void *ref) {
  rt_table *t = (rt_table *)table;
  if (i >= t->abi.size) return false;
  t->abi.elems[i] = ref;
  return true;
}
