/* low_memory.c: loads, stores, memory.size/grow and the bulk memory instructions. */
#include "low_internal.h"

#include <string.h>

#include "bnd.h"

/* One load or store: bytes accessed, the Wasm value type on the stack,
 * and for narrow loads whether they sign-extend. */
typedef struct {
  uint8_t bytes;
  uint8_t valtype;
  bool is_signed;
} mem_access;

/* Indexed by opcode - OP_I32_LOAD. */
static const mem_access accesses[] = {
    {4, VT_I32, false}, {8, VT_I64, false}, {4, VT_F32, false}, {8, VT_F64, false},
    {1, VT_I32, true},  {1, VT_I32, false}, {2, VT_I32, true},  {2, VT_I32, false},
    {1, VT_I64, true},  {1, VT_I64, false}, {2, VT_I64, true},  {2, VT_I64, false},
    {4, VT_I64, true},  {4, VT_I64, false}, /* stores: */
    {4, VT_I32, false}, {8, VT_I64, false}, {4, VT_F32, false}, {8, VT_F64, false},
    {1, VT_I32, false}, {2, VT_I32, false}, {1, VT_I64, false}, {2, VT_I64, false},
    {4, VT_I64, false},
};
_Static_assert(sizeof accesses / sizeof accesses[0] == OP_I64_STORE32 - OP_I32_LOAD + 1,
               "one access per load/store opcode");

/* The size lies between the declared minimum (an imported memory is at
 * least its import's minimum; memory never shrinks) and the maximum:
 * `!range` lets LLVM fold checks of addresses below the minimum, also
 * those that only become constant after inlining. */
static void size_range(low_fn *f, LLVMValueRef size) {
  const wasm_limits *l = &f->mc->m->mems[0].limits;
  uint64_t max_pages = l->has_max && l->max < TWASM_MAX_PAGES ? l->max : TWASM_MAX_PAGES;
  uint64_t lo = l->min * TWASM_PAGE_SIZE, hi = max_pages * TWASM_PAGE_SIZE + 1;
  if (lo >= hi) return; /* an invalid import cannot instantiate anyway */
  LLVMContextRef c = f->mc->ctx;
  LLVMMetadataRef ops[] = {LLVMValueAsMetadata(LLVMConstInt(f->mc->t_i64, lo, false)),
                           LLVMValueAsMetadata(LLVMConstInt(f->mc->t_i64, hi, false))};
  LLVMSetMetadata(size, LLVMGetMDKindIDInContext(c, "range", 5),
                  LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, ops, 2)));
}

/* memory.grow changes it, so it is loaded at every use; its own TBAA tag
 * tells LLVM that stores to linear memory or globals leave it alone (only
 * calls may grow memory), so one load serves many checks. */
static LLVMValueRef mem_size_bytes(low_fn *f) {
  LLVMValueRef size = low_load_at(f, f->mc->t_i64, f->mem_obj, offsetof(twasm_memory_abi, size_bytes), "size_bytes");
  low_tbaa(f->mc, size, f->mc->tbaa_size);
  size_range(f, size);
  return size;
}

/* Traps at offset unless [start, start + len) lies in memory (all i64, so
 * nothing wraps: start and len are below 2^33). */
static void check_range(low_fn *f, LLVMValueRef start, LLVMValueRef len, uint32_t offset) {
  LLVMValueRef end = LLVMBuildAdd(f->b, start, len, "");
  LLVMValueRef out = LLVMBuildICmp(f->b, LLVMIntUGT, end, mem_size_bytes(f), "");
  low_trap_if(f, out, TWASM_TRAP_MEMORY_OOB, offset);
}

/* Not inbounds: in guard mode an out-of-bounds address is meant to reach
 * the guard region and fault. */
static LLVMValueRef mem_ptr(low_fn *f, LLVMValueRef ea) {
  return LLVMBuildGEP2(f->b, f->mc->t_i8, low_mem_base(f), &ea, 1, "");
}

static LLVMValueRef zext64(low_fn *f, LLVMValueRef v) {
  return LLVMBuildZExt(f->b, v, f->mc->t_i64, "");
}

/* Address of an access: zext(address) + offset, below 2^33, which the
 * guard reservation (8 GiB + 64 KiB) covers.  Explicit mode compares it
 * with the memory size here.  Guard mode only marks the address
 * (BND_MD_ACCESS: function, offset and width) and bnd_insert.c adds the
 * same exact check later, once the IR rewrites that want plain accesses
 * (low_reroll.c, low_address.c) have run: LLVM assumes that loads and
 * stores cannot trap, so the guard pages alone are not exact.  SIMD
 * accesses come here too, with their width. */
LLVMValueRef low_access_ptr(low_fn *f, const wasm_insn *insn, LLVMValueRef address,
                            unsigned bytes) {
  LLVMValueRef ea = zext64(f, address);
  if (insn->u.mem.offset)
    ea = LLVMBuildAdd(f->b, ea, LLVMConstInt(f->mc->t_i64, insn->u.mem.offset, false), "ea");
  if (f->mc->opt->bounds_mode == TWASM_BOUNDS_EXPLICIT) {
    check_range(f, ea, LLVMConstInt(f->mc->t_i64, bytes, false), insn->offset);
    return mem_ptr(f, ea);
  }
  LLVMValueRef ptr = mem_ptr(f, ea);
  LLVMMetadataRef ops[3];
  uint32_t vals[3] = {f->func_index, insn->offset, bytes};
  for (int i = 0; i < 3; i++) ops[i] = LLVMValueAsMetadata(LLVMConstInt(f->mc->t_i32, vals[i], false));
  LLVMSetMetadata(ptr, LLVMGetMDKindIDInContext(f->mc->ctx, BND_MD_ACCESS, strlen(BND_MD_ACCESS)),
                  LLVMMetadataAsValue(f->mc->ctx, LLVMMDNodeInContext2(f->mc->ctx, ops, 3)));
  return ptr;
}

/* The type in memory: the value type itself, or a narrower integer. */
static LLVMTypeRef memory_type(low_fn *f, const mem_access *a, LLVMTypeRef value_ty) {
  unsigned value_bytes = (a->valtype == VT_I32 || a->valtype == VT_F32) ? 4 : 8;
  return a->bytes == value_bytes ? value_ty : LLVMIntTypeInContext(f->mc->ctx, a->bytes * 8u);
}

/* Wasm alignment is only a hint, so every access says align 1. */
static void emit_load(low_fn *f, const wasm_insn *insn, const mem_access *a) {
  LLVMTypeRef value_ty = low_valtype(f->mc, a->valtype);
  LLVMTypeRef mem_ty = memory_type(f, a, value_ty);
  LLVMValueRef ptr = low_access_ptr(f, insn, low_pop(f), a->bytes);
  LLVMValueRef v = LLVMBuildLoad2(f->b, mem_ty, ptr, "");
  LLVMSetAlignment(v, 1);
  low_tbaa(f->mc, v, f->mc->tbaa_memory);
  if (mem_ty != value_ty)
    v = a->is_signed ? LLVMBuildSExt(f->b, v, value_ty, "") : LLVMBuildZExt(f->b, v, value_ty, "");
  low_push(f, v);
}

static void emit_store(low_fn *f, const wasm_insn *insn, const mem_access *a) {
  LLVMTypeRef value_ty = low_valtype(f->mc, a->valtype);
  LLVMTypeRef mem_ty = memory_type(f, a, value_ty);
  LLVMValueRef v = low_pop(f);
  LLVMValueRef ptr = low_access_ptr(f, insn, low_pop(f), a->bytes);
  if (mem_ty != value_ty) v = LLVMBuildTrunc(f->b, v, mem_ty, "");
  LLVMValueRef st = LLVMBuildStore(f->b, v, ptr);
  LLVMSetAlignment(st, 1);
  low_tbaa(f->mc, st, f->mc->tbaa_memory);
}

static LLVMValueRef const_u32(low_fn *f, uint32_t v) {
  return LLVMConstInt(f->mc->t_i32, v, false);
}

static void emit_memory_size(low_fn *f) {
  LLVMValueRef pages = LLVMBuildLShr(f->b, mem_size_bytes(f), LLVMConstInt(f->mc->t_i64, 16, false), "");
  low_push(f, LLVMBuildTrunc(f->b, pages, f->mc->t_i32, "pages"));
}

static void emit_memory_grow(low_fn *f) {
  LLVMValueRef args[] = {f->vmctx, const_u32(f, 0), low_pop(f)};
  low_push(f, LLVMBuildCall2(f->b, f->mc->mem_grow_ty, f->mc->mem_grow_fn, args, 3, "old_pages"));
}

/* The runtime checks both the segment and the memory; its only trap is
 * an out-of-bounds access. */
static void emit_memory_init(low_fn *f, const wasm_insn *insn) {
  LLVMValueRef n = low_pop(f), src = low_pop(f), dst = low_pop(f);
  LLVMValueRef args[] = {f->vmctx, const_u32(f, insn->u.index), dst, src, n};
  LLVMValueRef code = LLVMBuildCall2(f->b, f->mc->mem_init_ty, f->mc->mem_init_fn, args, 5, "");
  LLVMValueRef failed = LLVMBuildICmp(f->b, LLVMIntNE, code, const_u32(f, 0), "");
  low_trap_if(f, failed, TWASM_TRAP_MEMORY_OOB, insn->offset);
}

static void emit_data_drop(low_fn *f, const wasm_insn *insn) {
  LLVMValueRef args[] = {f->vmctx, const_u32(f, insn->u.index)};
  LLVMBuildCall2(f->b, f->mc->data_drop_ty, f->mc->data_drop_fn, args, 2, "");
}

/* Bulk operations check their whole range before writing a byte, in both
 * bounds modes (a fault half-way would leave a partial write); n = 0 still
 * traps when an address is past the end. */
static void emit_memory_copy(low_fn *f, const wasm_insn *insn) {
  LLVMValueRef n = zext64(f, low_pop(f)), src = zext64(f, low_pop(f)), dst = zext64(f, low_pop(f));
  check_range(f, dst, n, insn->offset);
  check_range(f, src, n, insn->offset);
  LLVMBuildMemMove(f->b, mem_ptr(f, dst), 1, mem_ptr(f, src), 1, n);
}

static void emit_memory_fill(low_fn *f, const wasm_insn *insn) {
  LLVMValueRef n = zext64(f, low_pop(f)), value = low_pop(f), dst = zext64(f, low_pop(f));
  check_range(f, dst, n, insn->offset);
  LLVMValueRef byte = LLVMBuildTrunc(f->b, value, f->mc->t_i8, "");
  LLVMBuildMemSet(f->b, mem_ptr(f, dst), byte, n, 1);
}

bool low_emit_memory(low_fn *f, const wasm_insn *insn) {
  if (insn->op >= OP_I32_LOAD && insn->op <= OP_I64_LOAD32_U) {
    emit_load(f, insn, &accesses[insn->op - OP_I32_LOAD]);
    return true;
  }
  if (insn->op >= OP_I32_STORE && insn->op <= OP_I64_STORE32) {
    emit_store(f, insn, &accesses[insn->op - OP_I32_LOAD]);
    return true;
  }
  switch (insn->op) {
  case OP_MEMORY_SIZE: emit_memory_size(f); return true;
  case OP_MEMORY_GROW: emit_memory_grow(f); return true;
  case OP_MEMORY_INIT: emit_memory_init(f, insn); return true;
  case OP_DATA_DROP: emit_data_drop(f, insn); return true;
  case OP_MEMORY_COPY: emit_memory_copy(f, insn); return true;
  case OP_MEMORY_FILL: emit_memory_fill(f, insn); return true;
  default: return false;
  }
}
