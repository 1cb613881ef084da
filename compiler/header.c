/* header.c: writes the typed C header of a module compiled with -c. */
#include "header.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *buf;
  size_t len, cap;
} strbuf;

__attribute__((format(printf, 2, 3))) static void out(strbuf *s, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < s->cap - s->len) {
      s->len += (size_t)n;
      return;
    }
    s->cap = s->cap * 2 + (n > 0 ? (size_t)n : 0) + 256;
    s->buf = realloc(s->buf, s->cap);
  }
}

void hdr_ident(const char *name, unsigned len, char *o, unsigned cap) {
  unsigned n = 0;
  if (len == 0 || (name[0] >= '0' && name[0] <= '9')) o[n++] = '_';
  for (unsigned i = 0; i < len && n + 1 < cap; i++) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    o[n++] = ok ? c : '_';
  }
  o[n] = 0;
}

static const char *ctype(uint8_t vt) {
  switch (vt) {
  case VT_I32: return "int32_t ";
  case VT_I64: return "int64_t ";
  case VT_F32: return "float ";
  case VT_F64: return "double ";
  case VT_V128: return "twasm_v128 ";
  default: return "void *";
  }
}

static const char *kind_name(uint8_t vt) {
  switch (vt) {
  case VT_I32: return "TWASM_I32";
  case VT_I64: return "TWASM_I64";
  case VT_F32: return "TWASM_F32";
  case VT_F64: return "TWASM_F64";
  case VT_V128: return "TWASM_V128";
  case VT_FUNCREF: return "TWASM_FUNCREF";
  default: return "TWASM_EXTERNREF";
  }
}

static const char *field(uint8_t vt) {
  switch (vt) {
  case VT_I32: return "i32";
  case VT_I64: return "i64";
  case VT_F32: return "f32";
  case VT_F64: return "f64";
  case VT_V128: return "v128";
  default: return "ref";
  }
}

/* Words a member or wrapper name may not be: C11 and C++ keywords (C++20
 * included), macros of the headers the header includes (<stdbool.h>,
 * <stdint.h>, <stddef.h> through <twasm.h>), and the header's own names
 * (the struct's `instance`, PREFIX_instantiate, PREFIX_delete). */
static const char *const reserved_words[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "_Alignas", "_Alignof", "_Atomic", "_Bool",
    "_Complex", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
    "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch", "char8_t",
    "char16_t", "char32_t", "class", "compl", "concept", "consteval", "constexpr", "constinit",
    "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete", "dynamic_cast",
    "explicit", "export", "false", "friend", "mutable", "namespace", "new", "noexcept", "not",
    "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
    "reinterpret_cast", "requires", "static_assert", "static_cast", "template", "this",
    "thread_local", "throw", "true", "try", "typeid", "typename", "using", "virtual", "wchar_t",
    "xor", "xor_eq", "NULL", "offsetof", "errno", "assert", "SIZE_MAX", "PTRDIFF_MIN",
    "PTRDIFF_MAX", "SIG_ATOMIC_MIN", "SIG_ATOMIC_MAX", "WCHAR_MIN", "WCHAR_MAX", "WINT_MIN",
    "WINT_MAX", "INTPTR_MIN", "INTPTR_MAX", "UINTPTR_MAX", "INTMAX_MIN", "INTMAX_MAX",
    "UINTMAX_MAX", "instance", "instantiate",
};

/* <stdint.h>'s limit macros: [U]INT{,_LEAST,_FAST}{8,16,32,64}_{MIN,MAX}. */
static bool stdint_limit(const char *id) {
  const char *p = id + (id[0] == 'U');
  if (strncmp(p, "INT", 3)) return false;
  p += 3;
  if (!strncmp(p, "_LEAST", 6)) p += 6;
  else if (!strncmp(p, "_FAST", 5)) p += 5;
  static const char *const bits[] = {"8_", "16_", "32_", "64_"};
  for (int i = 0; i < 4; i++)
    if (!strncmp(p, bits[i], strlen(bits[i])))
      return !strcmp(p + strlen(bits[i]), "MIN") || !strcmp(p + strlen(bits[i]), "MAX");
  return false;
}

/* guard: the header's own macros are GUARD_IMPORT_COUNT and
 * GUARD_TWASMC_MODULE_H (and a wrapper PREFIX_IMPORT_COUNT would meet the
 * first where the prefix is all capitals). */
static bool reserved(const char *id, const char *guard) {
  for (size_t i = 0; i < sizeof reserved_words / sizeof reserved_words[0]; i++)
    if (!strcmp(id, reserved_words[i])) return true;
  size_t g = strlen(guard);
  if (!strcmp(id, "IMPORT_COUNT") || !strcmp(id, "TWASMC_MODULE_H") ||
      (!strncmp(id, guard, g) && (!strcmp(id + g, "_IMPORT_COUNT") || !strcmp(id + g, "_TWASMC_MODULE_H"))))
    return true;
  /* twasm.h's and twasm_abi.h's macros (the caller puts "x_" before the
   * name: a suffix would leave the prefix) */
  return !strncmp(id, "TWASM_", 6) || stdint_limit(id);
}

/* The C names of the exports, all different, none reserved: the name made
 * an identifier, a '_' after a reserved word, then "_N" (N from 1) until
 * no other export has it.  (Sanitising can make different names one: "a-b"
 * and "a_b"; a suffix can meet another export's own name: "a_b_1".) */
static char **export_idents(const wasm_module *m, const char *guard) {
  char **ids = calloc(m->nexports + 1, sizeof *ids);
  char base[256], id[272];
  for (uint32_t i = 0; i < m->nexports; i++) {
    base[0] = 'x', base[1] = '_';
    hdr_ident(m->exports[i].name.bytes, m->exports[i].name.len, base + 2, sizeof base - 3);
    memmove(base, base + 2 * (strncmp(base + 2, "TWASM_", 6) != 0), strlen(base + 2) + 3);
    if (reserved(base, guard)) strcat(base, "_");
    snprintf(id, sizeof id, "%s", base);
    for (unsigned n = 1;; n++) {
      bool taken = reserved(id, guard);
      for (uint32_t k = 0; k < i && !taken; k++) taken = !strcmp(ids[k], id);
      if (!taken) break;
      snprintf(id, sizeof id, "%s_%u", base, n);
    }
    ids[i] = strdup(id);
  }
  return ids;
}

/* A name inside a comment: printable ASCII as is, other bytes and what
 * would end the comment or open another ("*" "/", "/" "*") as escapes. */
static void out_comment_name(strbuf *s, const char *name, uint32_t len) {
  for (uint32_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    char prev = i > 0 ? name[i - 1] : 0;
    if ((c == '/' && prev == '*') || (c == '*' && prev == '/')) out(s, "\\x%02x", c);
    else if (c >= 0x20 && c < 0x7f && c != '\\') out(s, "%c", c);
    else out(s, "\\x%02x", c);
  }
}

/* The wrapper of an exported function.  Plain assignments, no designated
 * initialisers: the header is C11 and C++ alike. */
static void emit_wrapper(strbuf *s, const wasm_export *ex, const char *prefix, const char *id,
                         const wasm_functype *ft) {
  out(s, "\n/* export \"");
  out_comment_name(s, ex->name.bytes, ex->name.len);
  out(s, "\" */\nstatic inline uint32_t %s_%s(%s_instance *self", prefix, id, prefix);
  for (uint32_t i = 0; i < ft->nparams; i++) out(s, ", %sp%u", ctype(ft->params[i]), i);
  for (uint32_t i = 0; i < ft->nresults; i++) out(s, ", %s*r%u", ctype(ft->results[i]), i); /* "int32_t *r0", "void **r0" */
  out(s, ", twasm_trap *trap) {\n  twasm_val args[%u];\n", ft->nparams ? ft->nparams : 1);
  for (uint32_t i = 0; i < ft->nparams; i++)
    out(s, "  args[%u].kind = %s;\n  args[%u].of.%s = p%u;\n", i, kind_name(ft->params[i]), i,
        field(ft->params[i]), i);
  out(s, "  twasm_val res[%u];\n", ft->nresults ? ft->nresults : 1);
  out(s, "  uint32_t code = twasm_call(self->%s, args, %u, res, %u, trap);\n", id, ft->nparams, ft->nresults);
  for (uint32_t i = 0; i < ft->nresults; i++)
    out(s, "  if (!code && r%u) *r%u = res[%u].of.%s;\n", i, i, i, field(ft->results[i]));
  out(s, "  (void)args;\n  (void)res;\n  return code;\n}\n");
}

/* Instantiate, delete, and the struct the exports land in. */
static void emit_instance(strbuf *s, const wasm_module *m, const char *prefix, const char *desc_symbol,
                          char **ids) {
  static const char *const types[] = {"twasm_func", "twasm_table", "twasm_memory", "twasm_global"};
  static const char *const fields[] = {"func", "table", "memory", "global"};
  out(s, "typedef struct %s_instance {\n  twasm_instance *instance;\n", prefix);
  for (uint32_t i = 0; i < m->nexports; i++) out(s, "  %s *%s;\n", types[m->exports[i].kind & 3], ids[i]);
  out(s, "} %s_instance;\n\n", prefix);
  out(s, "/* Instantiates the module (imports as listed above), finds its exports and\n"
         " * runs _initialize when the module is a WASI reactor.  0 or a trap code. */\n");
  out(s, "static inline uint32_t %s_instantiate(%s_instance *self, const twasm_extern *imports, twasm_trap *err) {\n", prefix, prefix);
  out(s, "  twasm_extern e;\n  self->instance = twasm_instance_new(&%s, imports, %uu, err);\n", desc_symbol, m->nimports);
  out(s, "  if (!self->instance) return err && err->code ? err->code : (uint32_t)TWASM_TRAP_HOST;\n");
  for (uint32_t i = 0; i < m->nexports; i++) {
    out(s, "  self->%s = twasm_instance_export(self->instance, \"", ids[i]);
    for (uint32_t k = 0; k < m->exports[i].name.len; k++) out(s, "\\x%02x", (unsigned char)m->exports[i].name.bytes[k]);
    out(s, "\", %uu, &e) ? e.of.%s : NULL;\n", m->exports[i].name.len, fields[m->exports[i].kind & 3]);
  }
  out(s, "  if (twasm_instance_export(self->instance, \"_initialize\", 11, &e) && e.kind == TWASM_EXTERN_FUNC)\n"
         "    return twasm_call(e.of.func, NULL, 0, NULL, 0, err);\n  return 0;\n}\n");
  out(s, "\nstatic inline void %s_delete(%s_instance *self) { twasm_instance_delete(self->instance); }\n", prefix, prefix);
}

char *hdr_emit(const wasm_module *m, const char *file_prefix, const char *desc_symbol) {
  strbuf s = {0};
  char prefix[272], guard[272];
  /* twasm.h's names all begin so: a module named like that would clash */
  snprintf(prefix, sizeof prefix, "%s%s", strncmp(file_prefix, "twasm", 5) ? "" : "m_", file_prefix);
  hdr_ident(prefix, (unsigned)strlen(prefix), guard, sizeof guard);
  for (char *p = guard; *p; p++) *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
  char **ids = export_idents(m, guard);
  out(&s, "/* %s.h: generated by twasmc; link %s.o with -ltwasm-rt. */\n", file_prefix, file_prefix);
  out(&s, "#ifndef %s_TWASMC_MODULE_H\n#define %s_TWASMC_MODULE_H\n\n#include <stdbool.h>\n#include <stdint.h>\n#include <twasm.h>\n\n", guard, guard);
  out(&s, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  out(&s, "extern const twasm_module %s;\n\n", desc_symbol);
  out(&s, "/* Imports, in the order %s_instantiate expects them:\n", prefix);
  for (uint32_t i = 0; i < m->nimports; i++) {
    out(&s, " *   [%u] ", i);
    out_comment_name(&s, m->imports[i].module.bytes, m->imports[i].module.len);
    out(&s, ".");
    out_comment_name(&s, m->imports[i].name.bytes, m->imports[i].name.len);
    out(&s, " (%s)\n", (const char *[]){"function", "table", "memory", "global"}[m->imports[i].kind & 3]);
  }
  out(&s, " */\n#define %s_IMPORT_COUNT %uu\n\n", guard, m->nimports);
  emit_instance(&s, m, prefix, desc_symbol, ids);
  for (uint32_t i = 0; i < m->nexports; i++) {
    if (m->exports[i].kind != EXT_FUNC) continue;
    emit_wrapper(&s, &m->exports[i], prefix, ids[i], &m->types[m->funcs[m->exports[i].index].type_index]);
  }
  out(&s, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
  for (uint32_t i = 0; i < m->nexports; i++) free(ids[i]);
  free(ids);
  return s.buf;
}
