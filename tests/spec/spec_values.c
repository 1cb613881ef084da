/* spec_values.c: script values: parsing wast2json's typed values,
 * comparing results (floats by bits, NaN patterns) and printing them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

#define SV_F32_CANONICAL 0x7fc00000u
#define SV_F32_QUIET 0x00400000u
#define SV_F32_EXP 0x7f800000u
#define SV_F64_CANONICAL 0x7ff8000000000000ull
#define SV_F64_QUIET 0x0008000000000000ull
#define SV_F64_EXP 0x7ff0000000000000ull

static const struct {
  const char *name;
  twasm_valkind kind;
} sv_kinds[] = {
    {"i32", TWASM_I32}, {"i64", TWASM_I64}, {"f32", TWASM_F32},
    {"f64", TWASM_F64}, {"funcref", TWASM_FUNCREF}, {"externref", TWASM_EXTERNREF},
};

void *sv_extern_ref(uint64_t n) { return (void *)(uintptr_t)(n + 1); }

static sv_status sv_kind(const sj_value *v, twasm_valkind *kind, char *err, size_t cap) {
  const char *type = sj_str(v, "type");
  if (!type) {
    snprintf(err, cap, "value without a type");
    return SV_BAD;
  }
  for (size_t i = 0; i < sizeof sv_kinds / sizeof sv_kinds[0]; i++) {
    if (strcmp(type, sv_kinds[i].name) == 0) {
      *kind = sv_kinds[i].kind;
      return SV_OK;
    }
  }
  snprintf(err, cap, "%s values are not supported", type);
  return SV_UNSUPPORTED;
}

/* Decimal text of the value's bits (wast2json writes them unsigned). */
static bool sv_bits(const char *text, uint64_t *out) {
  char *end;
  errno = 0;
  *out = text[0] == '-' ? (uint64_t)strtoll(text, &end, 10) : strtoull(text, &end, 10);
  return text[0] && !*end && errno == 0;
}

/* Sets out from bits, for every kind but references. */
static void sv_from_bits(twasm_val *out, uint64_t bits) {
  switch (out->kind) {
  case TWASM_I32: out->of.i32 = (int32_t)(uint32_t)bits; break;
  case TWASM_F32: {
    uint32_t b = (uint32_t)bits;
    memcpy(&out->of.f32, &b, 4);
    break;
  }
  case TWASM_F64: memcpy(&out->of.f64, &bits, 8); break;
  default: out->of.i64 = (int64_t)bits; break;
  }
}

static bool sv_is_ref(twasm_valkind k) { return k == TWASM_FUNCREF || k == TWASM_EXTERNREF; }

/* The payload of a value whose "value" is a string (not a NaN pattern). */
static sv_status sv_payload(const char *text, twasm_val *out, char *err, size_t cap) {
  uint64_t bits;
  if (sv_is_ref(out->kind) && strcmp(text, "null") == 0) {
    out->of.ref = NULL;
    return SV_OK;
  }
  if (!sv_bits(text, &bits)) {
    snprintf(err, cap, "bad value \"%s\"", text);
    return SV_BAD;
  }
  if (out->kind == TWASM_FUNCREF) {
    snprintf(err, cap, "funcref values other than null cannot be written");
    return SV_UNSUPPORTED;
  }
  if (out->kind == TWASM_EXTERNREF) out->of.ref = sv_extern_ref(bits);
  else sv_from_bits(out, bits);
  return SV_OK;
}

sv_status sv_parse_arg(const sj_value *v, twasm_val *out, char *err, size_t cap) {
  memset(out, 0, sizeof *out);
  sv_status st = sv_kind(v, &out->kind, err, cap);
  if (st != SV_OK) return st;
  const char *text = sj_str(v, "value");
  if (!text) {
    snprintf(err, cap, "argument without a value");
    return SV_BAD;
  }
  return sv_payload(text, out, err, cap);
}

sv_status sv_parse_expect(const sj_value *v, sv_expect *out, char *err, size_t cap) {
  memset(out, 0, sizeof *out);
  sv_status st = sv_kind(v, &out->val.kind, err, cap);
  if (st != SV_OK) return st;
  twasm_valkind k = out->val.kind;
  const char *text = sj_str(v, "value");
  out->match = SV_EXACT;
  if (!text && sv_is_ref(k)) {
    out->match = SV_ANY_NONNULL; /* (ref.func) / (ref.extern) without an index */
    return SV_OK;
  }
  if (!text) {
    snprintf(err, cap, "expected value without a value");
    return SV_BAD;
  }
  bool is_float = k == TWASM_F32 || k == TWASM_F64;
  if (is_float && strcmp(text, "nan:canonical") == 0) out->match = SV_NAN_CANONICAL;
  else if (is_float && strcmp(text, "nan:arithmetic") == 0) out->match = SV_NAN_ARITHMETIC;
  else return sv_payload(text, &out->val, err, cap);
  return SV_OK;
}

static uint64_t sv_get_bits(const twasm_val *v) {
  switch (v->kind) {
  case TWASM_I32: return (uint32_t)v->of.i32;
  case TWASM_I64: return (uint64_t)v->of.i64;
  case TWASM_F32: {
    uint32_t b;
    memcpy(&b, &v->of.f32, 4);
    return b;
  }
  case TWASM_F64: {
    uint64_t b;
    memcpy(&b, &v->of.f64, 8);
    return b;
  }
  default: return (uint64_t)(uintptr_t)v->of.ref;
  }
}

static bool sv_nan_matches(sv_match match, twasm_valkind kind, uint64_t bits) {
  bool f32 = kind == TWASM_F32;
  uint64_t sign = f32 ? 0x80000000u : 0x8000000000000000ull;
  uint64_t canonical = f32 ? SV_F32_CANONICAL : SV_F64_CANONICAL;
  uint64_t quiet = f32 ? SV_F32_EXP | SV_F32_QUIET : SV_F64_EXP | SV_F64_QUIET;
  if (match == SV_NAN_CANONICAL) return (bits & ~sign) == canonical;
  return (bits & quiet) == quiet;
}

bool sv_matches(const sv_expect *e, const twasm_val *got) {
  if (got->kind != e->val.kind) return false;
  switch (e->match) {
  case SV_ANY_NONNULL: return got->of.ref != NULL;
  case SV_NAN_CANONICAL:
  case SV_NAN_ARITHMETIC: return sv_nan_matches(e->match, got->kind, sv_get_bits(got));
  default: return sv_get_bits(got) == sv_get_bits(&e->val);
  }
}

static const char *sv_kind_name(twasm_valkind k) {
  for (size_t i = 0; i < sizeof sv_kinds / sizeof sv_kinds[0]; i++)
    if (sv_kinds[i].kind == k) return sv_kinds[i].name;
  return "?";
}

/* Floats print as bits and as a number: bits decide, the number helps. */
void sv_format(const twasm_val *v, char *buf, size_t cap) {
  const char *k = sv_kind_name(v->kind);
  uint64_t bits = sv_get_bits(v);
  switch (v->kind) {
  case TWASM_I32: snprintf(buf, cap, "i32:%" PRIu32, (uint32_t)bits); break;
  case TWASM_I64: snprintf(buf, cap, "i64:%" PRIu64, bits); break;
  case TWASM_F32: snprintf(buf, cap, "f32:0x%08" PRIx32 " (%.9g)", (uint32_t)bits, (double)v->of.f32); break;
  case TWASM_F64: snprintf(buf, cap, "f64:0x%016" PRIx64 " (%.17g)", bits, v->of.f64); break;
  default:
    if (!v->of.ref) snprintf(buf, cap, "%s:null", k);
    else if (v->kind == TWASM_EXTERNREF) snprintf(buf, cap, "externref:%" PRIu64, bits - 1);
    else snprintf(buf, cap, "funcref:%p", v->of.ref);
    break;
  }
}

void sv_format_expect(const sv_expect *e, char *buf, size_t cap) {
  const char *k = sv_kind_name(e->val.kind);
  switch (e->match) {
  case SV_NAN_CANONICAL: snprintf(buf, cap, "%s:nan:canonical", k); break;
  case SV_NAN_ARITHMETIC: snprintf(buf, cap, "%s:nan:arithmetic", k); break;
  case SV_ANY_NONNULL: snprintf(buf, cap, "%s:non-null", k); break;
  default: sv_format(&e->val, buf, cap); break;
  }
}
