/* wasm32-wasi has no setjmp.h (setjmp needs Wasm exception handling, which
 * Wasm 2.0 lacks).  Lua's ldo.c includes it unconditionally; with
 * lua_nothrow.h's LUAI_TRY/LUAI_THROW nothing in it is used, so this empty
 * header, on the Wasm build's include path only, is all it needs. */
