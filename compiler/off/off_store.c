/* off_store.c: the module's PTX store (ABI 8).  Every kernel's PTX, per
 * arch a record "twasm-ptx NAME sm_N ISA LENGTH\n" + LENGTH bytes + NUL
 * (what off_extract reads), goes into one buffer; the buffer is stored as
 * one zstd frame in section .twasm_ptx, after a line "twasm-ptz SIZE
 * ZSIZE\n", and the kernel table's text pointers point into a zeroed
 * (.bss) buffer of SIZE bytes that the runtime inflates the frame into,
 * once, when a GPU first loads a kernel (runtime/rt_ptx.c).  The texts of
 * the archs of a kernel, and of kernels, have much in common: the store is
 * 15 to 53 times smaller than the PTX. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "ir_abi.h"
#include "off_internal.h"

/* Level 9 with a window as large as the store (up to 2^27, the most a
 * decoder takes unasked): a module's kernels of one shape repeat far
 * apart, past level 9's own 4 MB window.  Measured on the GPU test
 * programs (docs/PERFORMANCE.md): 12.1 MB of PTX -> 268 KB in 0.04 s
 * (486 KB with level 9's window; level 19: 235 KB in 1.6 s); elsewhere
 * level 19 gains 10 to 15 % for 20 to 40 times the time. */
#define OFF_ZSTD_LEVEL 9
#define OFF_ZSTD_WINDOW_LOG 27

static void append(off_store *s, const void *data, size_t n) {
  if (s->len + n > s->cap) {
    s->cap = (s->len + n) * 2;
    s->buf = realloc(s->buf, s->cap);
  }
  memcpy(s->buf + s->len, data, n);
  s->len += n;
}

/* The twasm_ptx_store_abi constant; NULL if it disagrees with the C
 * struct (an internal error). */
static LLVMValueRef store_init(LLVMContextRef ctx, LLVMValueRef zstd, size_t zstd_size, LLVMValueRef text,
                               size_t size) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i64 = LLVMInt64TypeInContext(ctx);
#define F(field, v) IR_ABI_FIELD(twasm_ptx_store_abi, field, v)
  const ir_abi_field f[] = {F(zstd, zstd), F(zstd_size, LLVMConstInt(i64, zstd_size, false)), F(text, text),
                            F(size, LLVMConstInt(i64, size, false)), F(state, LLVMConstInt(i32, 0, false)),
                            F(pad, LLVMConstInt(i32, 0, false))};
#undef F
  return ir_abi_struct(ctx, sizeof(twasm_ptx_store_abi), f, sizeof f / sizeof f[0]);
}

void off_store_add(off_store *s, const ptx_out *px, LLVMValueRef *text_at) {
  LLVMContextRef ctx = LLVMGetModuleContext(s->mod);
  LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx);
  if (!s->store) {
    /* The text buffer's size is known at the end: until then a stand-in.
     * The store itself is final from the start (only its initialiser
     * changes): the kernel entries, constants not yet in any global, point
     * at it, and replacing it would replace them under the caller. */
    s->text = LLVMAddGlobal(s->mod, i8, "twasm_ptx_text.pending");
    LLVMValueRef null = LLVMConstNull(LLVMPointerTypeInContext(ctx, 0));
    LLVMValueRef init = store_init(ctx, null, 0, null, 0);
    s->store = LLVMAddGlobal(s->mod, init ? LLVMTypeOf(init) : i8, "twasm_ptx_store");
    LLVMSetInitializer(s->store, init ? init : LLVMConstNull(i8));
    LLVMSetLinkage(s->store, LLVMInternalLinkage);
    LLVMSetExternallyInitialized(s->store, true); /* the runtime writes state */
  }
  for (unsigned i = 0; i < px->ncodes; i++) {
    const ptx_code *c = &px->codes[i];
    char head[256];
    size_t len = strlen(c->text);
    int n = snprintf(head, sizeof head, "twasm-ptx %s sm_%u%s %u %zu\n", px->name, c->sm,
                     c->specific ? "a" : "", c->ptx_isa, len);
    append(s, head, (size_t)n);
    LLVMValueRef off = LLVMConstInt(LLVMInt64TypeInContext(ctx), s->len, false);
    text_at[i] = LLVMConstInBoundsGEP2(i8, s->text, &off, 1);
    append(s, c->text, len + 1);
  }
}

/* A constant global of bytes. */
static LLVMValueRef bytes_global(LLVMModuleRef mod, const char *name, const char *data, size_t n) {
  LLVMValueRef init = LLVMConstStringInContext2(LLVMGetModuleContext(mod), data, n, true);
  LLVMValueRef g = LLVMAddGlobal(mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, true);
  LLVMSetLinkage(g, LLVMInternalLinkage);
  LLVMSetAlignment(g, 1);
  return g;
}

LLVMValueRef off_store_finish(off_store *s, tw_diag *d) {
  if (!s->store) return NULL;
  LLVMContextRef ctx = LLVMGetModuleContext(s->mod);
  size_t bound = ZSTD_compressBound(s->len), head_cap = 64;
  char *packed = malloc(head_cap + bound);
  /* with a checksum: a damaged executable must not hand the JIT garbage */
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, OFF_ZSTD_LEVEL);
  ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, OFF_ZSTD_WINDOW_LOG); /* cut to the store's size */
  size_t z = cc ? ZSTD_compress2(cc, packed + head_cap, bound, s->buf, s->len) : (size_t)-1;
  ZSTD_freeCCtx(cc);
  if (ZSTD_isError(z)) {
    tw_fail(d, TW_DIAG_NO_OFFSET, "offload: compressing the PTX failed: %s", ZSTD_getErrorName(z));
    free(packed);
    return NULL;
  }
  char head[64];
  int hn = snprintf(head, sizeof head, "twasm-ptz %zu %zu\n", s->len, z);
  memcpy(packed + head_cap - (size_t)hn, head, (size_t)hn);
  LLVMValueRef section = bytes_global(s->mod, "twasm_ptx", packed + head_cap - (size_t)hn, (size_t)hn + z);
  LLVMSetSection(section, ".twasm_ptx");
  free(packed);
  /* the zeroed buffer the runtime fills, in place of the stand-in */
  LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx), i64 = LLVMInt64TypeInContext(ctx);
  LLVMTypeRef buf_type = LLVMArrayType2(i8, s->len);
  LLVMValueRef text = LLVMAddGlobal(s->mod, buf_type, "twasm_ptx_text");
  LLVMSetInitializer(text, LLVMConstNull(buf_type));
  LLVMSetLinkage(text, LLVMInternalLinkage);
  LLVMSetAlignment(text, 16);
  /* the runtime writes it: LLVM must not take the zeroes for its value */
  LLVMSetExternallyInitialized(text, true);
  LLVMReplaceAllUsesWith(s->text, text);
  LLVMDeleteGlobal(s->text);
  s->text = text;
  LLVMValueRef at = LLVMConstInt(i64, (unsigned long long)hn, false);
  LLVMValueRef init = store_init(ctx, LLVMConstInBoundsGEP2(i8, section, &at, 1), z, text, s->len);
  if (!init || LLVMTypeOf(init) != LLVMGlobalGetValueType(s->store)) {
    tw_fail(d, TW_DIAG_NO_OFFSET, "internal error: offload: the PTX store disagrees with twasm_abi.h");
    return NULL;
  }
  LLVMSetInitializer(s->store, init);
  free(s->buf);
  s->buf = NULL;
  return section;
}
