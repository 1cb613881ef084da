/* dec_feature.c: names the proposals past Wasm 2.0 (plus SIMD) that twasmc
 * does not implement, where their encodings first show, so that such a
 * module is refused with "<feature> (<proposal>) is not supported" rather
 * than as a malformed byte. */
#include "dec_internal.h"

#define THREADS_ATOMICS "atomic memory instructions (threads)"
#define THREADS_SHARED "shared memory (threads)"
#define EXCEPTIONS "exception handling (exception-handling)"
#define TAIL_CALLS "tail calls (tail-call)"
#define MEMORY64 "64-bit memories and tables (memory64)"
#define MULTI_MEMORY "multiple memories (multi-memory)"
#define GC "garbage collection types and instructions (gc)"
#define FUNC_REFS "typed function references (function-references)"

/* Single-byte opcodes and prefixes of those proposals (final encodings). */
static const char *const opcodes[256] = {
    [0x06] = EXCEPTIONS, /* try (legacy) */
    [0x07] = EXCEPTIONS, /* catch (legacy) */
    [0x08] = EXCEPTIONS, /* throw */
    [0x09] = EXCEPTIONS, /* rethrow (legacy) */
    [0x0A] = EXCEPTIONS, /* throw_ref */
    [0x12] = TAIL_CALLS, /* return_call */
    [0x13] = TAIL_CALLS, /* return_call_indirect */
    [0x14] = FUNC_REFS,  /* call_ref */
    [0x15] = FUNC_REFS,  /* return_call_ref */
    [0x18] = EXCEPTIONS, /* delegate (legacy) */
    [0x19] = EXCEPTIONS, /* catch_all (legacy) */
    [0x1F] = EXCEPTIONS, /* try_table */
    [0xD3] = GC,         /* ref.eq */
    [0xD4] = FUNC_REFS,  /* ref.as_non_null */
    [0xD5] = FUNC_REFS,  /* br_on_null */
    [0xD6] = FUNC_REFS,  /* br_on_non_null */
    [0xFB] = GC,         /* struct, array, i31 and cast instructions */
    [0xFE] = THREADS_ATOMICS,
};

/* Value and heap type bytes (shorthands included). */
static const char *const types[256] = {
    [0x63] = FUNC_REFS,  /* ref null ht */
    [0x64] = FUNC_REFS,  /* ref ht */
    [0x69] = EXCEPTIONS, /* exnref */
    [0x6A] = GC,         /* arrayref */
    [0x6B] = GC,         /* structref */
    [0x6C] = GC,         /* i31ref */
    [0x6D] = GC,         /* eqref */
    [0x6E] = GC,         /* anyref */
    [0x71] = GC,         /* nullref */
    [0x72] = GC,         /* nullexternref */
    [0x73] = GC,         /* nullfuncref */
    [0x74] = EXCEPTIONS, /* nullexnref */
};

bool dec_unsupported(dec_reader *r, size_t at, const char *feature) {
  return tw_fail(r->d, (uint32_t)at, "%s is not supported", feature);
}

const char *dec_opcode_feature(uint8_t op) { return opcodes[op]; }

const char *dec_type_feature(uint8_t b) { return types[b]; }

/* The type section's forms other than func (0x60): all GC's. */
const char *dec_form_feature(int64_t form) {
  switch (form) {
  case -0x21: /* 0x5F struct */
  case -0x22: /* 0x5E array */
  case -0x30: /* 0x50 sub */
  case -0x31: /* 0x4F sub final */
  case -0x32: /* 0x4E rec */
    return GC;
  default:
    return NULL;
  }
}

/* Limits flags past 2.0's 0 and 1: bit 2 is memory64's 64-bit index,
 * bit 1 the threads proposal's shared memory.  Only a single byte 2..7
 * is named; anything else is left to the LEB reader's messages. */
const char *dec_limits_feature(dec_reader *r) {
  if (r->pos >= r->end) return NULL;
  uint8_t flags = r->bytes[r->pos];
  if (flags < 2 || flags > 7) return NULL;
  return flags & 4 ? MEMORY64 : THREADS_SHARED;
}

/* A table entry starting 0x40 0x00 has an initialiser expression. */
const char *dec_table_feature(dec_reader *r) {
  return r->pos < r->end && r->bytes[r->pos] == 0x40 ? FUNC_REFS : NULL;
}

/* Import and export kind 4 (a tag), the tag section (13). */
const char *dec_tag_feature(void) { return EXCEPTIONS; }

const char *dec_multi_memory_feature(void) { return MULTI_MEMORY; }
