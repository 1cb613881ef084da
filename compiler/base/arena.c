/* arena.c: bump allocator behind arena.h. */
#include "arena.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tw_arena_block {
  tw_arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

void *tw_arena_alloc(tw_arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  tw_arena_block *b = a->head;
  if (!b || b->cap - b->used < size) {
    size_t cap = size > 65536 ? size : 65536;
    b = malloc(sizeof *b + cap);
    if (!b) {
      fputs("twasmc: out of memory\n", stderr);
      abort();
    }
    b->used = 0;
    b->cap = cap;
    b->next = a->head;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

void *tw_arena_dup(tw_arena *a, const void *src, size_t size) {
  void *p = tw_arena_alloc(a, size ? size : 1);
  if (size) memcpy(p, src, size);
  return p;
}

char *tw_arena_strdup(tw_arena *a, const char *s) {
  return tw_arena_dup(a, s, strlen(s) + 1);
}

void tw_arena_free(tw_arena *a) {
  tw_arena_block *b = a->head;
  while (b) {
    tw_arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
}
