/* wasm32-wasi has no setjmp.h (setjmp needs Wasm exception handling, which
 * Wasm 2.0 lacks).  Lua's ldo.c and mujs include it; with lua_bench.h and
 * mujs_bench.h, which define setjmp and longjmp away, only the type is
 * needed, on the Wasm build's include path only. */
#ifndef TWASM_BENCH_SETJMP_H
#define TWASM_BENCH_SETJMP_H
typedef long jmp_buf[8];
#endif
