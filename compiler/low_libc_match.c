/* low_libc_match.c: recognises the C library's string routines in a module
 * by their exact code.  A function whose instructions (immediates, locals,
 * signature) hash to a known build of wasi-libc's memcmp, strcmp, strlen,
 * memcpy, memmove, memset or stpcpy is that routine: the same code means the same
 * semantics, so low_libc.c may run a native equivalent where it gives the
 * same result and cannot trap, and the function's own code elsewhere.
 * Only leaf code is hashed (no call, no global or table access), so a
 * function index or global that differs between modules never takes part.
 * tests/unit/test_cpu_codegen.c rebuilds the routines with the installed
 * toolchain at every optimisation level and checks that all are found. */
#include "low_internal.h"

typedef struct {
  uint64_t h;
} fp_hash;

/* FNV-1a over 64-bit words. */
static void mix(fp_hash *s, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    s->h ^= (v >> (8 * i)) & 0xff;
    s->h *= 1099511628211ull;
  }
}

static void mix_functype(fp_hash *s, const wasm_functype *ft) {
  mix(s, ft->nparams);
  for (uint32_t i = 0; i < ft->nparams; i++) mix(s, ft->params[i]);
  mix(s, ft->nresults);
  for (uint32_t i = 0; i < ft->nresults; i++) mix(s, ft->results[i]);
}

static bool is_access(uint16_t op) { return op >= OP_I32_LOAD && op <= OP_I64_STORE32; }
/* Instructions without immediates that a leaf routine may use. */
static bool is_plain(uint16_t op) {
  return op == OP_UNREACHABLE || op == OP_NOP || op == OP_ELSE || op == OP_END || op == OP_RETURN ||
         op == OP_DROP || op == OP_SELECT || (op >= OP_I32_EQZ && op <= OP_I64_EXTEND32_S) ||
         (op >= OP_I32_TRUNC_SAT_F32_S && op <= OP_I32_TRUNC_SAT_F32_S + 7) ||
         op == OP_MEMORY_COPY || op == OP_MEMORY_FILL;
}

static low_libc_kind match(const wasm_module *m, const wasm_func *fn, int depth);

/* One instruction into the hash; false when it makes the function no
 * candidate.  A call takes part by what its callee is (memmove calls
 * memcpy): a recognised routine, one level deep, whichever of its builds. */
static bool mix_insn(fp_hash *s, const wasm_module *m, const wasm_insn *in, int depth) {
  mix(s, in->op);
  switch (in->op) {
  case OP_CALL: {
    low_libc_kind callee = depth ? LOW_LIBC_NONE : match(m, &m->funcs[in->u.index], depth + 1);
    mix(s, callee);
    return callee != LOW_LIBC_NONE;
  }
  case OP_BLOCK: case OP_LOOP: case OP_IF:
    mix(s, in->u.block.kind);
    mix(s, in->valtype);
    if (in->u.block.kind == BT_TYPEIDX) mix_functype(s, &m->types[in->u.block.type_index]);
    mix(s, in->u.block.else_at);
    mix(s, in->u.block.end_at);
    return true;
  case OP_BR: case OP_BR_IF: case OP_LOCAL_GET: case OP_LOCAL_SET: case OP_LOCAL_TEE:
    mix(s, in->u.index);
    return true;
  case OP_BR_TABLE:
    mix(s, in->u.br_table.count);
    for (uint32_t i = 0; i <= in->u.br_table.count; i++) mix(s, in->u.br_table.labels[i]);
    return true;
  case OP_SELECT_T: mix(s, in->valtype); return true;
  case OP_I32_CONST: mix(s, (uint32_t)in->u.i32); return true;
  case OP_I64_CONST: mix(s, (uint64_t)in->u.i64); return true;
  case OP_F32_CONST: mix(s, in->u.f32); return true;
  case OP_F64_CONST: mix(s, in->u.f64); return true;
  default:
    if (is_access(in->op)) {
      mix(s, in->u.mem.align);
      mix(s, in->u.mem.offset);
      return true;
    }
    return is_plain(in->op);
  }
}

static uint64_t fingerprint(const wasm_module *m, const wasm_func *fn, int depth) {
  if (fn->imported || fn->ncode > 4096) return 0;
  fp_hash s = {14695981039346656037ull};
  mix_functype(&s, &m->types[fn->type_index]);
  mix(&s, fn->nlocals);
  for (uint32_t i = 0; i < fn->nlocals; i++) mix(&s, fn->locals[i]);
  for (uint32_t i = 0; i < fn->ncode; i++)
    if (!mix_insn(&s, m, &fn->code[i], depth)) return 0;
  return s.h ? s.h : 1;
}



/* Known builds: wasi-libc (Debian 0.0~git20220510) linked by clang 19,
 * as is and after wasm-opt 108 at each level clang passes it (-O1..-Oz). */
static const struct {
  uint64_t hash;
  low_libc_kind kind;
} known[] = {
    {0x98300987a32e1b54ull, LOW_LIBC_MEMCMP}, /* -O2, -O3, -Os, -Oz */
    {0xe5674ae284f00631ull, LOW_LIBC_MEMCMP}, /* -O1 */
    {0x76f17f2e15ea483aull, LOW_LIBC_MEMCMP}, /* no wasm-opt */
    {0xd04775cc46a853faull, LOW_LIBC_STRCMP}, /* -O1, -O2, -O3 */
    {0x7b0ba1567f5e0c07ull, LOW_LIBC_STRCMP}, /* -Os, -Oz */
    {0xc7ba15cd639ee4b5ull, LOW_LIBC_STRCMP}, /* no wasm-opt */
    {0xa26bc8a5b7509049ull, LOW_LIBC_STRLEN}, /* -O2, -O3, -Os, -Oz */
    {0x149e203f46f41c0dull, LOW_LIBC_STRLEN}, /* -O1 */
    {0x46ee94390329fc9bull, LOW_LIBC_STRLEN}, /* no wasm-opt */
    /* memcpy: two builds per level, told apart by what else the module
     * holds (wasm-opt's choices differ) */
    {0xfa170c85404747d5ull, LOW_LIBC_MEMCPY}, /* -O1, -O2 */
    {0x42587f4f31cc6182ull, LOW_LIBC_MEMCPY}, /* -O2 */
    {0xc617ecc88a712f6cull, LOW_LIBC_MEMCPY}, /* -O3 */
    {0xed51ace4ac775ea9ull, LOW_LIBC_MEMCPY}, /* -O3 */
    {0xddd32bb106f4d2bfull, LOW_LIBC_MEMCPY}, /* -Os, -Oz */
    {0x4f826c1facc08444ull, LOW_LIBC_MEMCPY}, /* -Os, -Oz */
    {0x3f723f57ae360be3ull, LOW_LIBC_MEMCPY}, /* no wasm-opt */
    /* memmove calls memcpy: the hash holds "a call to memcpy", whichever
     * build; its own two builds per level follow memcpy's */
    {0xf21901578f301818ull, LOW_LIBC_MEMMOVE}, /* -O1 */
    {0xa33c52be53dd582dull, LOW_LIBC_MEMMOVE}, /* -O2 */
    {0xfcaecdfc098e3256ull, LOW_LIBC_MEMMOVE}, /* -O2 */
    {0xe2651e12bb3be8deull, LOW_LIBC_MEMMOVE}, /* -O3, -Os, -Oz */
    {0xa24de5b48f93f5b5ull, LOW_LIBC_MEMMOVE}, /* -O3, -Os, -Oz */
    {0x4e25137d28be441dull, LOW_LIBC_MEMMOVE}, /* no wasm-opt */
    {0xcfca2bb35e7acfabull, LOW_LIBC_MEMSET}, /* -O1 .. -Oz */
    {0x002ee1b5f5c95124ull, LOW_LIBC_MEMSET}, /* no wasm-opt */
    /* stpcpy (musl's strcpy and strcat call it): the build that returns
     * its result, and mujs's, whose result wasm-opt dropped (no caller
     * reads it) */
    {0x4fa1e6ef625f03fbull, LOW_LIBC_STPCPY}, /* -O1 .. -Oz */
    {0xaafd9415b3609722ull, LOW_LIBC_STPCPY}, /* -O2 (mujs) */
    {0xef79406507255f81ull, LOW_LIBC_STPCPY}, /* no wasm-opt */
};

static low_libc_kind match(const wasm_module *m, const wasm_func *fn, int depth) {
  uint64_t h = fingerprint(m, fn, depth);
  for (size_t i = 0; h && i < sizeof known / sizeof known[0]; i++)
    if (known[i].hash == h) return known[i].kind;
  return LOW_LIBC_NONE;
}

uint64_t low_libc_fingerprint(const wasm_module *m, const wasm_func *fn) { return fingerprint(m, fn, 0); }

low_libc_kind low_libc_match(const wasm_module *m, const wasm_func *fn) { return match(m, fn, 0); }
