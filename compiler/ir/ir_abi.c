/* ir_abi.c: struct constants laid out by the C fields' offsets (ir_abi.h),
 * with the sizes and natural alignments of the 64-bit ABI. */
#include "ir_abi.h"

#include <stdlib.h>

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static size_t align_of(LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
  case LLVMArrayTypeKind: return align_of(LLVMGetElementType(t));
  case LLVMStructTypeKind: {
    if (LLVMIsPackedStruct(t)) return 1;
    size_t a = 1;
    for (unsigned i = 0; i < LLVMCountStructElementTypes(t); i++) {
      size_t e = align_of(LLVMStructGetTypeAtIndex(t, i));
      if (e > a) a = e;
    }
    return a;
  }
  default: return ir_abi_size(t);
  }
}

size_t ir_abi_size(LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
  case LLVMIntegerTypeKind: return (LLVMGetIntTypeWidth(t) + 7) / 8;
  case LLVMFloatTypeKind: return 4;
  case LLVMDoubleTypeKind: return 8;
  case LLVMPointerTypeKind: return 8;
  case LLVMArrayTypeKind: return LLVMGetArrayLength2(t) * ir_abi_size(LLVMGetElementType(t));
  case LLVMStructTypeKind: {
    size_t at = 0;
    bool packed = LLVMIsPackedStruct(t);
    for (unsigned i = 0; i < LLVMCountStructElementTypes(t); i++) {
      LLVMTypeRef e = LLVMStructGetTypeAtIndex(t, i);
      at = (packed ? at : align_up(at, align_of(e))) + ir_abi_size(e);
    }
    return align_up(at, align_of(t));
  }
  default: return 0;
  }
}

static LLVMValueRef zeros(LLVMContextRef ctx, size_t n) {
  return LLVMConstNull(LLVMArrayType2(LLVMInt8TypeInContext(ctx), n));
}

LLVMValueRef ir_abi_struct(LLVMContextRef ctx, size_t size, const ir_abi_field *f, unsigned n) {
  LLVMValueRef *elems = malloc((2 * (size_t)n + 1) * sizeof *elems);
  unsigned ne = 0;
  size_t at = 0, align = 1;
  bool ok = elems != NULL;
  for (unsigned i = 0; ok && i < n; i++) {
    LLVMTypeRef t = LLVMTypeOf(f[i].value);
    ok = ir_abi_size(t) == f[i].size && f[i].offset >= at && f[i].offset % align_of(t) == 0;
    if (ok && f[i].offset > at) elems[ne++] = zeros(ctx, f[i].offset - at);
    elems[ne++] = f[i].value;
    at = f[i].offset + f[i].size;
    if (align_of(t) > align) align = align_of(t);
  }
  /* the tail: alignment padding as C has it, or fields left out */
  ok = ok && at <= size;
  if (ok && align_up(at, align) != size) elems[ne++] = zeros(ctx, size - at);
  LLVMValueRef s = ok ? LLVMConstStructInContext(ctx, elems, ne, false) : NULL;
  free(elems);
  return s && ir_abi_size(LLVMTypeOf(s)) == size ? s : NULL;
}

bool ir_abi_set_field(LLVMValueRef g, size_t offset, LLVMValueRef value) {
  LLVMValueRef init = g ? LLVMGetInitializer(g) : NULL;
  LLVMTypeRef t = init ? LLVMTypeOf(init) : NULL;
  if (!t || LLVMGetTypeKind(t) != LLVMStructTypeKind || LLVMIsPackedStruct(t)) return false;
  unsigned n = LLVMCountStructElementTypes(t);
  LLVMValueRef *elems = malloc(((size_t)n + 1) * sizeof *elems);
  bool found = false;
  size_t at = 0;
  for (unsigned i = 0; elems && i < n; i++) {
    LLVMTypeRef e = LLVMStructGetTypeAtIndex(t, i);
    at = align_up(at, align_of(e));
    elems[i] = LLVMGetOperand(init, i);
    if (at == offset && e == LLVMTypeOf(value)) elems[i] = value, found = true;
    at += ir_abi_size(e);
  }
  if (found) LLVMSetInitializer(g, LLVMConstStructInContext(LLVMGetTypeContext(t), elems, n, false));
  free(elems);
  return found;
}
