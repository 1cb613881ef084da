/* Forced into every Lua source file (-include) for tests/bench/real.sh, in
 * every build (native glibc, native musl, Wasm) so that all run the same
 * code: Lua raises errors with longjmp, which wasm32-wasi lacks, so a raised
 * error aborts the process instead.  The benchmark scripts raise none. */
#include <stdio.h>
#include <stdlib.h>

#define LUAI_THROW(L, c) ((void)(L), (void)(c), abort())
#define LUAI_TRY(L, c, a) { a }
#define luai_jmpbuf int

/* wasi-libc has no tmpnam: os.tmpname fails, in every build alike */
#define LUA_TMPNAMBUFSIZE 32
#define lua_tmpnam(b, e) { (b)[0] = 0; e = 1; }

/* nor system nor tmpfile: os.execute and io.tmpfile fail, in every build */
#define system(cmd) ((void)(cmd), -1)
#define tmpfile() ((FILE *)NULL)
