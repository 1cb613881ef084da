/* rt_bulk.c: bulk memory and table instructions and memory.grow, called
 * from generated code; every range is checked whole before any write. */
#include <string.h>

#include "rt_internal.h"

/* [at, at + n) within size; n = 0 is fine up to at == size. */
static bool in_range(uint64_t at, uint64_t n, uint64_t size) { return at <= size && n <= size - at; }

int32_t twasm_rt_memory_grow(void *vmctx, uint32_t mem_index, uint32_t delta_pages) {
  return twasm_memory_grow((twasm_memory *)rt_inst(vmctx)->mems[mem_index], delta_pages);
}

uint32_t twasm_rt_memory_init(void *vmctx, uint32_t data_index, uint32_t dst, uint32_t src, uint32_t n) {
  rt_instance *inst = rt_inst(vmctx);
  const twasm_memory_abi *mem = &inst->mems[0]->abi;
  if (!in_range(src, n, inst->data_len[data_index]) || !in_range(dst, n, mem->size_bytes))
    return TWASM_TRAP_MEMORY_OOB;
  if (n) memcpy(mem->base + dst, inst->module->datas[data_index].bytes + src, n);
  return TWASM_TRAP_NONE;
}

uint32_t twasm_rt_memory_copy(void *vmctx, uint32_t dst, uint32_t src, uint32_t n) {
  const twasm_memory_abi *mem = &rt_inst(vmctx)->mems[0]->abi;
  if (!in_range(src, n, mem->size_bytes) || !in_range(dst, n, mem->size_bytes))
    return TWASM_TRAP_MEMORY_OOB;
  memmove(mem->base + dst, mem->base + src, n);
  return TWASM_TRAP_NONE;
}

uint32_t twasm_rt_memory_fill(void *vmctx, uint32_t dst, uint32_t value, uint32_t n) {
  const twasm_memory_abi *mem = &rt_inst(vmctx)->mems[0]->abi;
  if (!in_range(dst, n, mem->size_bytes)) return TWASM_TRAP_MEMORY_OOB;
  memset(mem->base + dst, (int)(value & 0xff), n);
  return TWASM_TRAP_NONE;
}

void twasm_rt_data_drop(void *vmctx, uint32_t data_index) { rt_inst(vmctx)->data_len[data_index] = 0; }

uint32_t twasm_rt_table_init(void *vmctx, uint32_t table_index, uint32_t elem_index,
                             uint32_t dst, uint32_t src, uint32_t n) {
  rt_instance *inst = rt_inst(vmctx);
  twasm_table_abi *t = inst->vm.tables[table_index];
  if (!in_range(src, n, inst->elem_len[elem_index]) || !in_range(dst, n, t->size))
    return TWASM_TRAP_TABLE_OOB;
  if (n) memcpy(t->elems + dst, inst->elem_refs[elem_index] + src, n * sizeof(void *));
  return TWASM_TRAP_NONE;
}

uint32_t twasm_rt_table_copy(void *vmctx, uint32_t dst_table, uint32_t src_table,
                             uint32_t dst, uint32_t src, uint32_t n) {
  rt_instance *inst = rt_inst(vmctx);
  twasm_table_abi *td = inst->vm.tables[dst_table], *ts = inst->vm.tables[src_table];
  if (!in_range(src, n, ts->size) || !in_range(dst, n, td->size)) return TWASM_TRAP_TABLE_OOB;
  if (n) memmove(td->elems + dst, ts->elems + src, n * sizeof(void *));
  return TWASM_TRAP_NONE;
}

uint32_t twasm_rt_table_fill(void *vmctx, uint32_t table_index, uint32_t dst, void *value, uint32_t n) {
  twasm_table_abi *t = rt_inst(vmctx)->vm.tables[table_index];
  if (!in_range(dst, n, t->size)) return TWASM_TRAP_TABLE_OOB;
  for (uint32_t i = 0; i < n; i++) t->elems[dst + i] = value;
  return TWASM_TRAP_NONE;
}

void twasm_rt_elem_drop(void *vmctx, uint32_t elem_index) { rt_inst(vmctx)->elem_len[elem_index] = 0; }
