/* rt_arena.c: bump allocator; one per instance, freed with it. */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define RT_ARENA_CHUNK 4096u

struct rt_arena_block {
  rt_arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char bytes[];
};

void *rt_arena_alloc(rt_arena *a, size_t size) {
  size = (size + 15u) & ~(size_t)15u;
  rt_arena_block *b = a->head;
  if (!b || b->cap - b->used < size) {
    size_t cap = size > RT_ARENA_CHUNK ? size : RT_ARENA_CHUNK;
    b = malloc(sizeof *b + cap);
    if (!b) return NULL;
    b->used = 0;
    b->cap = cap;
    b->next = a->head;
    a->head = b;
  }
  void *p = b->bytes + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

void rt_arena_free(rt_arena *a) {
  rt_arena_block *b = a->head;
  while (b) {
    rt_arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
}
