/* fuzz_decode.c: libFuzzer target: decode then validate arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tw_arena arena = {0};
  wasm_module m;
  tw_diag d;
  if (dec_module(&arena, data, size, "fuzz.wasm", &m, &d)) val_module(&m, &d);
  tw_arena_free(&arena);
  return 0;
}
