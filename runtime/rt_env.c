/* rt_env.c: the environment an executable's guest sees: only what it was
 * given (--env at compile time), or the host's when inheriting is asked
 * for, never the runtime's own TWASM_* settings. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

extern char **environ;

typedef struct {
  char **items;
  size_t n, cap;
} env_list;

static size_t name_len(const char *entry) {
  const char *eq = strchr(entry, '=');
  return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* Adds NAME=VALUE (copied), replacing an entry of the same name. */
static bool env_set(env_list *l, const char *name, size_t nlen, const char *value) {
  size_t vlen = strlen(value);
  char *entry = malloc(nlen + vlen + 2);
  if (!entry) return false;
  memcpy(entry, name, nlen);
  entry[nlen] = '=';
  memcpy(entry + nlen + 1, value, vlen + 1);
  for (size_t i = 0; i < l->n; i++) {
    if (name_len(l->items[i]) == nlen && !memcmp(l->items[i], name, nlen)) {
      free(l->items[i]);
      l->items[i] = entry;
      return true;
    }
  }
  if (l->n + 1 >= l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    char **grown = realloc(l->items, cap * sizeof *grown);
    if (!grown) {
      free(entry);
      return false;
    }
    l->items = grown;
    l->cap = cap;
  }
  l->items[l->n++] = entry;
  l->items[l->n] = NULL;
  return true;
}

static bool is_control(const char *entry) { return !strncmp(entry, "TWASM_", 6); }

/* The host's variables, less the runtime's own. */
static bool inherit(env_list *l) {
  for (char **e = environ; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq || is_control(*e)) continue;
    if (!env_set(l, *e, (size_t)(eq - *e), eq + 1)) return false;
  }
  return true;
}

/* baked: "NAME=VALUE" (that value) or "NAME" (the host's value, when it
 * has one) entries, each ending in a NUL, the list in an empty entry. */
static bool apply_baked(env_list *l, const char *baked) {
  for (const char *e = baked; e && *e; e += strlen(e) + 1) {
    size_t nlen = name_len(e);
    if (e[nlen] == '=') {
      if (!env_set(l, e, nlen, e + nlen + 1)) return false;
      continue;
    }
    const char *host = getenv(e);
    if (host && !env_set(l, e, nlen, host)) return false;
  }
  return true;
}

char **rt_guest_environ(const char *baked, bool inherit_env) {
  const char *setting = getenv("TWASM_INHERIT_ENV");
  if (setting && *setting) inherit_env = strcmp(setting, "0") != 0;
  env_list l = {.items = calloc(16, sizeof(char *)), .cap = 16};
  bool ok = l.items && (!inherit_env || inherit(&l)) && apply_baked(&l, baked);
  if (!ok) {
    rt_free_environ(l.items);
    return NULL;
  }
  return l.items;
}

void rt_free_environ(char **env) {
  for (char **e = env; e && *e; e++) free(*e);
  free(env);
}
