/* ir_trip.c: trip count of a counted loop from start, bound, step and test,
 * through the runtime's definition (generated code calls the same one). */
#include "ir.h"
#include "twasm_abi.h"

uint32_t ir_trip_how(const ir_trip *t) {
  uint32_t pred;
  switch (t->pred) {
  case LLVMIntNE: pred = TWASM_TRIP_NE; break;
  case LLVMIntEQ: pred = TWASM_TRIP_EQ; break;
  case LLVMIntULT: pred = TWASM_TRIP_ULT; break;
  case LLVMIntULE: pred = TWASM_TRIP_ULE; break;
  case LLVMIntUGT: pred = TWASM_TRIP_UGT; break;
  case LLVMIntUGE: pred = TWASM_TRIP_UGE; break;
  case LLVMIntSLT: pred = TWASM_TRIP_SLT; break;
  case LLVMIntSLE: pred = TWASM_TRIP_SLE; break;
  case LLVMIntSGT: pred = TWASM_TRIP_SGT; break;
  case LLVMIntSGE: pred = TWASM_TRIP_SGE; break;
  default: pred = 0xff; /* refused by twasm_rt_trip_count */
  }
  return pred | (t->cmp_next ? TWASM_TRIP_NEXT : 0) | (uint32_t)t->bits << 16;
}

bool ir_trip_eval(const ir_trip *t, int64_t start, int64_t bound, uint64_t *count) {
  int64_t n = twasm_rt_trip_count((int64_t)((uint64_t)start + (uint64_t)t->start_add), bound,
                                  t->step, ir_trip_how(t), 1);
  if (n < 0) return false;
  *count = (uint64_t)n;
  return true;
}
