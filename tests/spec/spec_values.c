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
    {"f64", TWASM_F64}, {"v128", TWASM_V128}, {"funcref", TWASM_FUNCREF},
    {"externref", TWASM_EXTERNREF},
};

/* v128 lane types: "lane_type" of wast2json. */
static const struct {
  const char *name;
  uint8_t bits;
  bool is_float;
} sv_lane_types[] = {
    {"i8", 8, false}, {"i16", 16, false}, {"i32", 32, false},
    {"i64", 64, false}, {"f32", 32, true}, {"f64", 64, true},
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

static sv_status sv_lane_type(const sj_value *v, uint8_t *bits, bool *is_float, char *err,
                              size_t cap) {
  const char *lane = sj_str(v, "lane_type");
  for (size_t i = 0; lane && i < sizeof sv_lane_types / sizeof sv_lane_types[0]; i++) {
    if (strcmp(lane, sv_lane_types[i].name) == 0) {
      *bits = sv_lane_types[i].bits;
      *is_float = sv_lane_types[i].is_float;
      return SV_OK;
    }
  }
  snprintf(err, cap, "v128 with lane type %s", lane ? lane : "(none)");
  return SV_BAD;
}

/* A v128's "value": one string per lane, the lane's bits in decimal (or,
 * in expectations of float lanes, a NaN pattern: lanes[i] set, bits 0). */
static sv_status sv_v128(const sj_value *v, sv_expect *e, bool allow_nan, char *err, size_t cap) {
  sv_status st = sv_lane_type(v, &e->lane_bits, &e->lane_float, err, cap);
  if (st != SV_OK) return st;
  const sj_value *lanes = sj_get(v, "value");
  unsigned n = 128u / e->lane_bits;
  if (!lanes || lanes->kind != SJ_ARRAY || lanes->len != n) {
    snprintf(err, cap, "v128 without %u lanes", n);
    return SV_BAD;
  }
  for (unsigned i = 0; i < n; i++) {
    const sj_value *lane = &lanes->items[i];
    uint64_t bits = 0;
    e->lanes[i] = SV_EXACT;
    if (lane->kind == SJ_STRING && allow_nan && e->lane_float && strcmp(lane->str, "nan:canonical") == 0)
      e->lanes[i] = SV_NAN_CANONICAL;
    else if (lane->kind == SJ_STRING && allow_nan && e->lane_float && strcmp(lane->str, "nan:arithmetic") == 0)
      e->lanes[i] = SV_NAN_ARITHMETIC;
    else if (lane->kind != SJ_STRING || !sv_bits(lane->str, &bits)) {
      snprintf(err, cap, "bad v128 lane %u", i);
      return SV_BAD;
    }
    memcpy(e->val.of.v128.u8 + i * (e->lane_bits / 8), &bits, e->lane_bits / 8); /* little-endian host */
  }
  return SV_OK;
}

sv_status sv_parse_arg(const sj_value *v, twasm_val *out, char *err, size_t cap) {
  memset(out, 0, sizeof *out);
  sv_status st = sv_kind(v, &out->kind, err, cap);
  if (st != SV_OK) return st;
  if (out->kind == TWASM_V128) {
    sv_expect e = {.val = *out};
    st = sv_v128(v, &e, false, err, cap);
    *out = e.val;
    return st;
  }
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
  if (k == TWASM_V128) return sv_v128(v, out, true, err, cap);
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

static uint64_t sv_lane(const twasm_v128 *v, unsigned bits, unsigned i) {
  uint64_t lane = 0;
  memcpy(&lane, v->u8 + i * (bits / 8), bits / 8); /* little-endian host */
  return lane;
}

static bool sv_v128_matches(const sv_expect *e, const twasm_val *got) {
  for (unsigned i = 0; i < 128u / e->lane_bits; i++) {
    uint64_t lane = sv_lane(&got->of.v128, e->lane_bits, i);
    if (e->lanes[i] != SV_EXACT) {
      if (!sv_nan_matches(e->lanes[i], e->lane_bits == 32 ? TWASM_F32 : TWASM_F64, lane)) return false;
    } else if (lane != sv_lane(&e->val.of.v128, e->lane_bits, i)) {
      return false;
    }
  }
  return true;
}

bool sv_matches(const sv_expect *e, const twasm_val *got) {
  if (got->kind != e->val.kind) return false;
  if (got->kind == TWASM_V128) return sv_v128_matches(e, got);
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
  case TWASM_V128: {
    const uint32_t *l = v->of.v128.u32;
    snprintf(buf, cap, "v128:i32x4 0x%08" PRIx32 " 0x%08" PRIx32 " 0x%08" PRIx32 " 0x%08" PRIx32,
             l[0], l[1], l[2], l[3]);
    break;
  }
  default:
    if (!v->of.ref) snprintf(buf, cap, "%s:null", k);
    else if (v->kind == TWASM_EXTERNREF) snprintf(buf, cap, "externref:%" PRIu64, bits - 1);
    else snprintf(buf, cap, "funcref:%p", v->of.ref);
    break;
  }
}

/* Lanes as hex of their width, NaN patterns by name. */
static void sv_format_v128_expect(const sv_expect *e, char *buf, size_t cap) {
  unsigned n = 128u / e->lane_bits;
  int at = snprintf(buf, cap, "v128:%s%ux%u", e->lane_float ? "f" : "i", e->lane_bits, n);
  for (unsigned i = 0; i < n && at > 0 && (size_t)at < cap; i++) {
    if (e->lanes[i] != SV_EXACT)
      at += snprintf(buf + at, cap - (size_t)at, " nan:%s",
                     e->lanes[i] == SV_NAN_CANONICAL ? "canonical" : "arithmetic");
    else
      at += snprintf(buf + at, cap - (size_t)at, " 0x%0*" PRIx64, (int)e->lane_bits / 4,
                     sv_lane(&e->val.of.v128, e->lane_bits, i));
  }
}

void sv_format_expect(const sv_expect *e, char *buf, size_t cap) {
  const char *k = sv_kind_name(e->val.kind);
  if (e->val.kind == TWASM_V128) {
    sv_format_v128_expect(e, buf, cap);
    return;
  }
  switch (e->match) {
  case SV_NAN_CANONICAL: snprintf(buf, cap, "%s:nan:canonical", k); break;
  case SV_NAN_ARITHMETIC: snprintf(buf, cap, "%s:nan:arithmetic", k); break;
  case SV_ANY_NONNULL: snprintf(buf, cap, "%s:non-null", k); break;
  default: sv_format(&e->val, buf, cap); break;
  }
}
