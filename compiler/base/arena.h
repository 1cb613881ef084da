/* arena.h: bump allocator; one per compilation, freed at once. */
#ifndef TW_ARENA_H
#define TW_ARENA_H

#include <stddef.h>

typedef struct tw_arena_block tw_arena_block;
typedef struct {
  tw_arena_block *head;
} tw_arena;

/* Zeroed memory aligned to 16; aborts on exhaustion of host memory. */
void *tw_arena_alloc(tw_arena *a, size_t size);
void *tw_arena_dup(tw_arena *a, const void *src, size_t size);
char *tw_arena_strdup(tw_arena *a, const char *s);
void tw_arena_free(tw_arena *a);

#endif
