/* host.c: a C program embedding a Wasm module compiled with twasmc -c. */
#include <stdio.h>
#include <string.h>

#include <twasm.h>
#include <twasm_wasi.h>

#include "module.h"

static int report(void *env, twasm_instance *caller, const twasm_val *args, twasm_val *results,
                  twasm_trap *trap) {
  (void)caller, (void)results, (void)trap;
  printf("%s: fib(%d) = %lld\n", (const char *)env, args[0].of.i32, (long long)args[1].of.i64);
  return 0;
}

int main(int argc, char **argv) {
  /* env.report is ours; the WASI imports of the reactor come from twasm_wasi. */
  static const twasm_valkind report_params[] = {TWASM_I32, TWASM_I64};
  twasm_functype report_type = {2, 0, report_params, NULL};
  twasm_func *report_fn = twasm_func_new_host(&report_type, report, "host");
  twasm_wasi *wasi = twasm_wasi_new(argc, argv, NULL);
  twasm_extern imports[MODULE_IMPORT_COUNT + 1] = {{0}};
  twasm_trap err = {0};
  for (uint32_t i = 0; i < MODULE_IMPORT_COUNT; i++) {
    twasm_import_info info;
    twasm_module_import(&twasm_module_module, i, &info);
    if (info.module_len == 3 && !memcmp(info.module, "env", 3))
      imports[i] = (twasm_extern){.kind = TWASM_EXTERN_FUNC, .of.func = report_fn};
  }
  module_instance m;
  if (!twasm_wasi_imports(wasi, &twasm_module_module, imports, &err) || module_instantiate(&m, imports, &err)) {
    fprintf(stderr, "instantiate: %s\n", err.message);
    return 1;
  }

  int64_t f;
  if (module_fib(&m, 50, &f, &err) == 0) printf("fib(50) = %lld\n", (long long)f);

  const char *word = "stressed";
  int32_t addr, len;
  module_buffer(&m, &addr, &err);
  memcpy(twasm_memory_data(m.memory) + addr, word, strlen(word));
  module_reverse(&m, (int32_t)strlen(word), &len, &err);
  printf("reverse(%s) = %.*s\n", word, len, (const char *)twasm_memory_data(m.memory) + addr);

  int32_t q;
  uint32_t code = module_divide(&m, 7, 0, &q, &err);
  printf("divide(7, 0): trap %u: %s\n", code, err.message);
  if (module_divide(&m, 84, 2, &q, &err) == 0) printf("divide(84, 2) = %d\n", q);

  module_delete(&m);
  twasm_func_delete(report_fn);
  twasm_wasi_delete(wasi);
  return 0;
}
