/* api.c: a host built against the installed headers alone, as C11 and as
 * C++17, with -Wall -Wextra -Werror -pedantic (tests/install/run.sh): the
 * public API compiles without anything internal and links against the
 * shared library's exports. */
#include <stdio.h>
#include <twasm.h>
#include <twasm_wasi.h>

static int host_add(void *env, twasm_instance *caller, const twasm_val *args, twasm_val *results,
                    twasm_trap *trap) {
  (void)env;
  (void)caller;
  (void)trap;
  results[0].of.i32 = args[0].of.i32 + args[1].of.i32;
  return 0;
}

int main(void) {
  twasm_memory *mem = twasm_memory_new(1, 4, true);
  if (!mem || twasm_memory_grow(mem, 1) != 1 || twasm_memory_size(mem) != 2 * 65536) return 1;
  twasm_memory_data(mem)[0] = 42;
  twasm_valkind kinds[2] = {TWASM_I32, TWASM_I32};
  twasm_functype type = {2, 1, kinds, kinds};
  twasm_func *add = twasm_func_new_host(&type, host_add, NULL);
  twasm_val args[2], result;
  args[0].kind = TWASM_I32;
  args[0].of.i32 = 40;
  args[1].kind = TWASM_I32;
  args[1].of.i32 = 2;
  twasm_trap trap;
  if (!add || twasm_call(add, args, 2, &result, 1, &trap) != TWASM_TRAP_NONE || result.of.i32 != 42) return 2;
  twasm_wasi *wasi = twasm_wasi_new(0, NULL, NULL);
  if (!wasi) return 3;
  twasm_wasi_delete(wasi);
  twasm_func_delete(add);
  twasm_memory_delete(mem);
  printf("api: %s ok, trap codes up to %d\n", TWASM_VERSION, TWASM_TRAP_COUNT - 1);
  return 0;
}
