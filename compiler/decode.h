/* decode.h: binary format -> wasm_module (stage 1). */
#ifndef TW_DECODE_H
#define TW_DECODE_H

#include "arena.h"
#include "diag.h"
#include "wasm.h"

/* Decodes a whole binary module.  Everything it returns lives in arena.
 * On malformed input returns false with d->offset at the offending byte and
 * d->msg in the spec's words where it has some ("unexpected end",
 * "integer too large", "magic header not detected", ...). */
bool dec_module(tw_arena *arena, const uint8_t *bytes, size_t size,
                const char *filename, wasm_module *out, tw_diag *d);

/* LEB128 readers, exposed for unit tests: read at *pos (< end), advance
 * *pos; false with d filled on overlong/too large/truncated input. */
bool dec_u32(const uint8_t *bytes, size_t end, size_t *pos, uint32_t *out, tw_diag *d);
bool dec_s32(const uint8_t *bytes, size_t end, size_t *pos, int32_t *out, tw_diag *d);
bool dec_u64(const uint8_t *bytes, size_t end, size_t *pos, uint64_t *out, tw_diag *d);
bool dec_s64(const uint8_t *bytes, size_t end, size_t *pos, int64_t *out, tw_diag *d);
bool dec_s33(const uint8_t *bytes, size_t end, size_t *pos, int64_t *out, tw_diag *d);

#endif
